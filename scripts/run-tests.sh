#!/usr/bin/env bash
# Runs the whole test suite in every MPI's build (build/<mpi>/), then checks
# that nothing of strata's is left in /dev/shm.
set -uo pipefail
root="${1:-build}"
status=0
ran=0
# The suite's fixed cost model (tests that need another set their own).
export STRATA_MODEL="${STRATA_MODEL:-$(cd "$(dirname "$0")/.." && pwd)/tests/data/model.conf}"
for dir in "$root"/openmpi "$root"/mpich; do
  [ -f "$dir/CTestTestfile.cmake" ] || continue
  echo "== tests with $(basename "$dir") =="
  ran=1
  (cd "$dir" && ctest --output-on-failure --timeout 300) || status=1
done
if [ "$ran" = 0 ]; then echo "no build found under $root: run make first" >&2; exit 1; fi
left=$(ls /dev/shm 2>/dev/null | grep -i strata || true)
if [ -n "$left" ]; then
  echo "FAIL: strata left segments in /dev/shm: $left"
  status=1
fi
exit $status
