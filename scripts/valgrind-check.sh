#!/usr/bin/env bash
# make valgrind: strata's node collectives and block collectives at 2 ranks,
# small sizes, under valgrind memcheck (leaks included), for every host MPI
# built under ROOT.  Fails on any error whose innermost frame outside libc
# lies in strata's library or test programs (tests/sanitize/valgrind_errors.py);
# the host MPI's own errors and leaks are suppressed by
# tests/sanitize/valgrind.supp, and any it misses are listed without failing.
#   scripts/valgrind-check.sh [ROOT]    (ROOT: build; valgrind installed if missing)
#
# Valgrind cannot see what another process writes into this one with
# process_vm_writev (Cross-Memory Attach): such bytes stay "undefined" to it.
# The tests therefore use datatypes without holes, whose receive buffers the
# test fills before each call, so that strata writes into defined memory;
# and reductions skip the padded types (long double, the pair types), whose
# padding strata's reduction scratch leaves unwritten (reported upstream).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-build}"
sanitize="$here/tests/sanitize"

if ! command -v valgrind >/dev/null 2>&1; then
  echo "installing valgrind"
  if [ "$(id -u)" != 0 ]; then sudo=sudo; else sudo=; fi
  export DEBIAN_FRONTEND=noninteractive
  if ! { $sudo apt-get update -qq &&
         $sudo apt-get install -y -qq --no-install-recommends valgrind; }; then
    echo "valgrind-check: could not install valgrind" >&2
    exit 1
  fi
fi

export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}"
# hwloc's x86 backend cannot run under valgrind (it says so on every rank);
# the Linux backend finds the same caches and cores in /sys.
export HWLOC_COMPONENTS=-x86
# "name|program|arguments": what runs under valgrind, at 2 ranks.
node_suites=bcast,mixed,reduce,allreduce,reduce-inplace,allreduce-inplace,barrier,alternate
node_args="--suites=$node_suites --no-large --types=int,multi,bool,byte --comms=world,reversed"
runs=(
  "node colls|test_node_colls|$node_args"
  "block colls|test_block_colls|--sizes=7,1000,4099,64K+5 --comms=world --types=byte,int"
)

status=0
ran=0
logs=$(mktemp -d /tmp/strata-valgrind.XXXXXX)
for mpi in openmpi mpich; do
  dir="$root/$mpi"
  [ -x "$dir/bin/strata-run" ] || continue
  ran=1
  for run in "${runs[@]}"; do
    IFS='|' read -r name prog args <<<"$run"
    out="$logs/$mpi-${prog}"
    mkdir -p "$out"
    echo "== valgrind: $name with $mpi =="
    # shellcheck disable=SC2086  # the arguments are words
    timeout 900 "$dir/bin/strata-run" --native -n 2 \
      valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
      --errors-for-leak-kinds=definite,indirect,possible --num-callers=40 \
      --suppressions="$sanitize/valgrind.supp" --xml=yes --xml-file="$out/rank.%p.xml" \
      --log-file="$out/rank.%p.log" "$dir/bin/$prog" $args > "$out/stdout" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL: $name with $mpi exited with status $rc under valgrind:"
      tail -20 "$out/stdout"
      status=1
    fi
    nlogs=$(find "$out" -name 'rank.*.xml' | wc -l)
    if [ "$nlogs" -ne 2 ]; then
      echo "FAIL: $nlogs valgrind logs for 2 ranks in $name with $mpi"
      status=1
    fi
    python3 "$sanitize/valgrind_errors.py" "$(cd "$dir" && pwd)" "$out"/rank.*.xml || status=1
  done
done
if [ "$ran" = 0 ]; then echo "no build found under $root: run make first" >&2; exit 1; fi
if [ $status -eq 0 ]; then
  echo "valgrind: no error in strata's code"
  rm -rf "$logs"
else
  echo "valgrind logs kept in $logs"
fi
exit $status
