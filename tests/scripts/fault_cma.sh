#!/usr/bin/env bash
# Cross-Memory Attach refused by the kernel at run time (test_faults makes
# ranks non-dumpable and drops CAP_SYS_PTRACE):
#   fault_cma.sh STRATA_RUN TEST_FAULTS RANKS WHEN [REFUSE_RANK [VAR=value...]]
# WHEN is before-init, after-init or before-dup: the program's checked
# collectives must pass through strata's shared-memory path with CMA off
# (the program asserts both), and exactly one warning must say that CMA is
# not used and why.  WHEN=mid: CMA is refused inside a collective strata set
# up with CMA; the job must stop (not hang, not go on) with an error naming
# the refused copy.  REFUSE_RANK: the rank made non-dumpable (-1: all).
# The host MPI is told not to use CMA itself (it cannot run without it
# otherwise).  Exits 77 (skipped) where strata never uses CMA.
set -uo pipefail
run=$1 prog=$2 ranks=$3 when=$4 refuse=${5:--1}
shift 4
[ $# -gt 0 ] && shift
. "$(dirname "$0")/common.sh"
# Open MPI's vader would print "Read -1 ... errno=1" forever; UCX fails at
# MPI_Init with its CMA transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none UCX_TLS=self,sysv
# The transport under test is cma itself (the default, auto, may pick map,
# whose messages name map; its CMA fallback is refused the same way).
export STRATA_TRANSPORT=${STRATA_TRANSPORT:-cma}

start=$(date +%s)
env "$@" timeout -k 5 120 "$run" --native -n "$ranks" "$prog" --cma-refused="$when" \
  --refuse-rank="$refuse" >"$tmp/out" 2>"$tmp/err"
rc=$?
took=$(($(date +%s) - start))
cat "$tmp/out"
[ "$rc" = 77 ] && { echo "SKIP: strata does not use CMA on this machine"; exit 77; }
if [ "$rc" = 124 ] || [ "$took" -ge 115 ]; then
  fail "$when: the job hung (killed after ${took} s)"
fi

if [ "$when" = mid ]; then
  [ "$rc" != 0 ] || fail "mid: the job ended normally although a copy was refused"
  grep -q '^UNEXPECTED' "$tmp/out" && fail "mid: the collectives went on after the refusal"
  refused='transport cma: .* failed mid-operation: Operation not permitted'
  line=$(grep -E "^strata\[[0-9]+\]: error: $refused" "$tmp/err" | head -n 1)
  [ -n "$line" ] || fail "mid: no error names the refused Cross-Memory Attach copy"
  echo "ok: $line"
  echo "PASS: CMA refused mid-collective stops the job in ${took} s with a message (exit $rc)"
  exit 0
fi

[ "$rc" = 0 ] || fail "$when: exit status $rc"
grep -q "^PASS $when" "$tmp/out" || fail "$when: the program did not pass"
n=$(grep -c 'warning: transport cma' "$tmp/err")
[ "$n" = 1 ] || fail "$when: $n warnings about transport cma, expected exactly one"
echo "ok: $(grep 'warning: transport cma' "$tmp/err")"
echo "PASS: CMA refused $when (rank ${refuse/#-1/all}): right results through shared memory," \
     "one warning"
