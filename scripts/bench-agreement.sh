#!/usr/bin/env bash
# The cost of the agreement (issue 29): strata-bench at 2 ranks with
# STRATA_CHECK_ARGS=0 and =auto in turn, ROUNDS rounds, then per row the
# median over the rounds of strata's median µs (and the host MPI's).
#   scripts/bench-agreement.sh MPI [ROUNDS] [SIZES]     e.g. openmpi 4 8,1K,64K,1M
set -euo pipefail
mpi=${1:?usage: $0 MPI [ROUNDS] [SIZES]}
rounds=${2:-4}
sizes=${3:-8,1K,64K,1M}
cd "$(dirname "$0")/.."
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for _ in $(seq "$rounds"); do
  for check in 0 auto; do
    STRATA_CHECK_ARGS=$check "build/$mpi/bin/strata-run" -n 2 "build/$mpi/bin/strata-bench" \
      --sizes "$sizes" --colls bcast,reduce,allreduce,gather,scatter,allgather,alltoall,barrier \
      2>/dev/null |
      awk -v c="$check" '/^collective/ { t++ }
        t == 1 && $1 ~ /^(bcast|reduce|allreduce|gather|scatter|allgather|alltoall|barrier)$/ {
          print c, $1, $2, $4, $6 }' >>"$raw"
  done
done
python3 - "$raw" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    check, coll, size, host, strata = line.split()
    rows[(coll, size, check)].append(float(strata))
    rows[(coll, size, "host")].append(float(host))
print(f"{'collective':10s} {'size':>5s} {'host':>8s} {'off':>8s} {'auto':>8s} auto/off")
for coll, size in sorted({(k[0], k[1]) for k in rows}):
    med = {c: statistics.median(rows[(coll, size, c)]) for c in ("host", "0", "auto")}
    print(f"{coll:10s} {size:>5s} {med['host']:8.2f} {med['0']:8.2f} {med['auto']:8.2f} "
          f"{med['auto'] / med['0']:8.2f}")
PY
