#!/usr/bin/env bash
# Nothing of strata's is left in /dev/shm after a job, even one that ends
# with MPI_Abort.  Runs test_node_shm and then looks for segments named after
# the job's processes (/dev/shm/strata-UID-PID-...): other jobs may run at
# the same time, so only this job's names count.
#   shm_leftovers.sh STRATA_RUN PROGRAM RANKS churn|abort|abort-create
set -uo pipefail
run=$1 prog=$2 ranks=$3 mode=$4
case "$mode" in
  churn) args=() ;;
  abort) args=(--abort) ;;
  abort-create) args=(--abort-create) ;;
  *) echo "shm_leftovers.sh: unknown mode $mode" >&2; exit 2 ;;
esac

# The program writes its processes to a file too: a launcher that kills the
# job on MPI_Abort may lose output it has not forwarded yet.
pids_file=$(mktemp)
trap 'rm -f "$pids_file"' EXIT
out=$("$run" --native -n "$ranks" "$prog" "${args[@]}" --pids="$pids_file" 2>&1)
rc=$?
printf '%s\n' "$out"
pids=$(sed -n 's/^PIDS //p' "$pids_file" | head -n 1)
if [ -z "$pids" ]; then
  echo "FAIL: the program did not report its processes (exit status $rc)"
  exit 1
fi
if [ "$mode" = churn ]; then
  if [ "$rc" != 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
elif [ "$rc" = 0 ]; then
  echo "FAIL: the job was expected to end with MPI_Abort, but exited with 0"
  exit 1
fi

# The launcher may return before every killed rank is gone.
sleep 1
uid=$(id -u)
left=()
for pid in $pids; do
  for f in /dev/shm/strata-"$uid"-"$pid"-*; do
    [ -e "$f" ] && left+=("$f")
  done
done
if [ "${#left[@]}" -gt 0 ]; then
  echo "FAIL: $mode left strata segments in /dev/shm: ${left[*]}"
  rm -f "${left[@]}"   # so that later runs start clean
  exit 1
fi
echo "PASS: no segment of processes $pids left in /dev/shm ($mode)"
