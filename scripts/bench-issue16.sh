#!/usr/bin/env bash
# Issue 16's figures: the eight newer collectives, strata beside the host MPI
# alternating in one process (strata-bench), 8 B to 16 MiB:
#   2 ranks on Open MPI and MPICH, 4 ranks on Open MPI (uniform blocks), and
#   the v-collectives' uneven patterns (one empty rank, power-law skew) at a
#   few sizes.  Writes JSON and text into OUT, then the summary against the
#   issue's targets (scripts/bench-issue16.py).
#   scripts/bench-issue16.sh [OUT]      (OUT: bench/results/issue16)
# Run it on a quiet machine: it takes about 8-10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results/issue16}"
mkdir -p "$out"
export STRATA_MODEL="${STRATA_MODEL:-$PWD/tests/data/model.conf}"
all=reduce_scatter_block,reduce_scatter,scan,exscan,gatherv,scatterv,allgatherv,alltoallv
vcolls=gatherv,scatterv,allgatherv,alltoallv
bench() { # MPI RANKS NAME ARGS...
  local mpi="$1" n="$2" name="$3"
  shift 3
  echo "== $mpi np$n $name: strata-bench $*" >&2
  build/$mpi/bin/strata-run -n "$n" build/$mpi/bin/strata-bench "$@" \
    --json "$out/$mpi-np$n-$name.json" >"$out/$mpi-np$n-$name.txt" 2>&1
}
bench openmpi 2 sweep --sweep --colls "$all"
bench mpich 2 sweep --sweep --colls "$all"
bench openmpi 4 sweep --sweep --colls "$all"
for pattern in empty skewed; do
  bench openmpi 2 "$pattern" --colls "$vcolls" --pattern "$pattern" --sizes 8,1K,64K,1M,4M
  bench mpich 2 "$pattern" --colls "$vcolls" --pattern "$pattern" --sizes 8,1K,64K,1M,4M
  bench openmpi 4 "$pattern" --colls "$vcolls" --pattern "$pattern" --sizes 8,1K,64K,1M,4M
done
python3 scripts/bench-issue16.py "$out" | tee "$out/summary.md"
