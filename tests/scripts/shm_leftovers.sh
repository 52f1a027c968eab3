#!/usr/bin/env bash
# Nothing of strata's is left in /dev/shm after a job, even one that ends
# with MPI_Abort.  Runs test_node_shm and then looks for segments named after
# the job's processes (/dev/shm/strata-UID-PID-...): other jobs may run at
# the same time, so only this job's names count.
#   shm_leftovers.sh STRATA_RUN PROGRAM RANKS churn|abort|abort-create|kill [REPS]
# kill: with STRATA_CMA=0 (segments named in /dev/shm), REPS jobs (10 by
# default) duplicate, Allreduce on and free communicators in a loop until one
# rank, chosen at random, is killed with SIGKILL at a random moment; then one
# clean job starts.  None of the killed jobs' segments may be left after it:
# a segment whose creator was killed before every rank had attached keeps
# its name, and the next start on the machine removes it.
set -uo pipefail
run=$1 prog=$2 ranks=$3 mode=$4
case "$mode" in
  churn) args=() ;;
  abort) args=(--abort) ;;
  abort-create) args=(--abort-create) ;;
  kill) ;;
  *) echo "shm_leftovers.sh: unknown mode $mode" >&2; exit 2 ;;
esac
uid=$(id -u)

# Names in /dev/shm of segments created by the processes $@.
segments_of() {
  local pid f
  for pid in "$@"; do
    for f in /dev/shm/strata-"$uid"-"$pid"-*; do
      [ -e "$f" ] && echo "$f"
    done
  done
}

# One job of the kill mode; appends its processes to killed_pids and says
# whether the kill left a segment.
kill_one() {
  local pids_file=$1 out=$2 job pids victim
  : >"$pids_file"
  STRATA_CMA=0 timeout -k 5 90 "$run" --native -n "$ranks" "$prog" --loop --pids="$pids_file" \
    >"$out" 2>&1 &
  job=$!
  for _ in $(seq 1 300); do
    grep -q '^PIDS ' "$pids_file" && break
    kill -0 "$job" 2>/dev/null || { echo "FAIL: the job ended before its loop"; cat "$out"; exit 1; }
    sleep 0.1
  done
  read -r -a pids <<<"$(sed -n 's/^PIDS //p' "$pids_file")"
  [ "${#pids[@]}" = "$ranks" ] || { echo "FAIL: the job did not report its processes"; exit 1; }
  # A random moment of the loop (each round takes about a millisecond).
  sleep "0.$((RANDOM % 400 + 50))"
  victim=$((RANDOM % ranks))
  kill -9 "${pids[$victim]}" || { echo "FAIL: could not kill rank $victim"; exit 1; }
  wait "$job"
  local rc=$?
  [ "$rc" = 0 ] && { echo "FAIL: the job exited with 0 although rank $victim was killed"; exit 1; }
  # The launcher may return before every killed rank is gone.
  for _ in $(seq 1 50); do
    local alive=0 p
    for p in "${pids[@]}"; do [ -e "/proc/$p" ] && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  killed_pids+=("${pids[@]}")
  local left
  left=$(segments_of "${pids[@]}" | tr '\n' ' ')
  echo "job $i: rank $victim killed (exit $rc): ${left:+left }${left:-nothing left}"
  [ -z "$left" ] || kill_left=$((kill_left + 1))
}

if [ "$mode" = kill ]; then
  reps=${5:-10}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  killed_pids=() kill_left=0
  for i in $(seq 1 "$reps"); do kill_one "$work/pids" "$work/out"; done
  # The next start on the machine: one round of the churn, CMA still off.
  STRATA_CMA=0 timeout -k 5 90 "$run" --native -n "$ranks" "$prog" --rounds=1 \
    --pids="$work/pids" >"$work/out" 2>&1 || { echo "FAIL: the clean job failed"; cat "$work/out"; exit 1; }
  left=$(segments_of "${killed_pids[@]}" | tr '\n' ' ')
  if [ -n "$left" ]; then
    echo "FAIL: the killed jobs left strata segments in /dev/shm, still there after the next" \
         "start:" $left
    rm -f $left # so that later runs start clean
    exit 1
  fi
  echo "PASS: $reps jobs killed at random ($kill_left left a segment at the kill); after the" \
       "next start nothing of theirs is in /dev/shm"
  exit 0
fi

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
