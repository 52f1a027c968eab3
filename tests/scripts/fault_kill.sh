#!/usr/bin/env bash
# A rank killed (SIGKILL) in the middle of a loop of large Bcasts and
# Allreduces (test_faults --loop): the others must not wait for it forever.
#   fault_kill.sh STRATA_RUN TEST_FAULTS RANKS VICTIM launcher|self [VAR=value|--option...]
# launcher: the launcher ends the job as it does when a rank dies (non-zero
#   exit); strata must not keep the survivors from being ended.
# self: Open MPI is told to keep the job running (orte_enable_recovery), so
#   the survivors must notice the death on their own: strata's waits check
#   that the peer they wait for is alive, and a Cross-Memory Attach copy from
#   a dead process fails with ESRCH (transport cma, or map: a mapped read);
#   either way a survivor names the cause.
# Either way every process of the job is gone within BOUND seconds of the
# kill, and no strata segment of the job's processes is left in /dev/shm.
# VAR=value settings go to the job's environment, --options to test_faults
# (--bytes=B: payload of each call, 4 MiB by default).
set -uo pipefail
run=$1 prog=$2 ranks=$3 victim=$4 mode=$5
shift 5
. "$(dirname "$0")/common.sh"
bound=30
settings=() options=()
for a in "$@"; do
  case "$a" in --*) options+=("$a") ;; *) settings+=("$a") ;; esac
done
case "$mode" in
  launcher) ;;
  self) export OMPI_MCA_orte_enable_recovery=1 ;;
  *) echo "fault_kill.sh: mode is launcher or self, not $mode" >&2; exit 2 ;;
esac

env "${settings[@]}" timeout -k 5 150 "$run" --native -n "$ranks" "$prog" --loop=60 \
  "${options[@]}" >"$tmp/out" 2>"$tmp/err" &
job=$!
for _ in $(seq 1 240); do
  grep -q '^LOOPING' "$tmp/out" && break
  kill -0 "$job" 2>/dev/null || fail "the job ended before its loop started"
  sleep 0.25
done
read -r -a pids <<<"$(sed -n 's/^PIDS //p' "$tmp/out")"
[ "${#pids[@]}" = "$ranks" ] || fail "the program did not report its $ranks processes"
sleep 1 # well inside the loop: each iteration is a few milliseconds
kill -9 "${pids[$victim]}" || fail "could not kill rank $victim (pid ${pids[$victim]})"
killed=$(date +%s)

# The job (launcher and every rank) must end within the bound.
while kill -0 "$job" 2>/dev/null && [ $(($(date +%s) - killed)) -lt "$bound" ]; do sleep 0.2; done
if kill -0 "$job" 2>/dev/null; then
  kill "$job"
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  fail "the survivors were still running $bound s after rank $victim was killed"
fi
wait "$job"
rc=$?
took=$(($(date +%s) - killed))
# A process alive after the launcher (not a zombie waiting to be reaped),
# given a few seconds to finish exiting.
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
for p in "${pids[@]}"; do
  for _ in $(seq 1 25); do alive "$p" || break; sleep 0.2; done
  alive "$p" && fail "process $p of the job outlived its launcher"
done

if [ "$mode" = launcher ]; then
  [ "$rc" != 0 ] || fail "the launcher reported success although rank $victim was killed"
else
  # Naming the dead process, or the failed copy from it.
  died='rank process [0-9]+ died during a collective'
  gone='transport [a-z]+: .* failed mid-operation: No such process'
  grep -Eq "^strata\[[0-9]+\]: error: ($died|$gone)" "$tmp/err" ||
    fail "no survivor said that a peer died"
  echo "ok: $(grep -E '^strata\[[0-9]+\]: error: ' "$tmp/err" | head -n 1)"
fi

uid=$(id -u)
for p in "${pids[@]}"; do
  for f in /dev/shm/strata-"$uid"-"$p"-*; do
    [ -e "$f" ] && { rm -f "$f"; fail "segment $f was left in /dev/shm"; }
  done
done
echo "PASS: rank $victim of $ranks killed mid-collective: the job ended in ${took} s" \
     "(exit $rc, $mode), nothing left in /dev/shm"
