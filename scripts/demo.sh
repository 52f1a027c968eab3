#!/usr/bin/env bash
# The side-by-side benchmark for every MPI built under build/ (make demo):
# strata against the host MPI, 2 ranks, all collectives, a few sizes.
# Prints each table and writes bench/results/demo-<mpi>.json.
#   STRATA_BUILD_ROOT  where the builds are (default build)
#   DEMO_SIZES         sizes to run (default 8,64K,1M,4M)
# Two ranks on purpose: this machine has 2 cores and MPICH never yields the
# CPU, so more ranks than cores would measure the scheduler, not MPI.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="${STRATA_BUILD_ROOT:-build}"
unset STRATA_BUILD_ROOT # strata-run hands every STRATA_ variable to the ranks
sizes="${DEMO_SIZES:-8,64K,1M,4M}"
results=bench/results
mkdir -p "$results"

status=0
ran=0
for mpi in openmpi mpich; do
  bin="$root/$mpi/bin"
  [ -x "$bin/strata-bench" ] && [ -x "$bin/strata-run" ] || continue
  ran=1
  echo "== strata-bench with $mpi: strata-run -n 2 strata-bench --sizes $sizes" \
       "--json $results/demo-$mpi.json =="
  # A bound on a stuck run; a normal one takes seconds.
  if ! timeout 300 "$bin/strata-run" -n 2 "$bin/strata-bench" --sizes "$sizes" \
       --json "$results/demo-$mpi.json"; then
    echo "demo: strata-bench with $mpi failed" >&2
    status=1
  fi
  echo
done
if [ "$ran" = 0 ]; then
  echo "demo: no build with strata-bench under $root/ (run make first)" >&2
  exit 1
fi
[ "$status" = 0 ] && echo "results: $results/demo-*.json"
exit $status
