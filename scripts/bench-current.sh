#!/usr/bin/env bash
# The "Current figures" of docs/PERFORMANCE.md: every collective strata-bench
# knows, at 8 B, 1 KiB, 64 KiB, 1 MiB and 4 MiB, strata beside the host MPI
# in one process (alternating, the slowest rank's time per call), ROUNDS runs
# per configuration: 2 ranks on every host MPI built, 4 ranks on Open MPI
# (oversubscribed on 2 cores; MPICH never yields, so not there).  Then
# scripts/bench-current.py prints the table of median strata/host ratios and
# the rows that lose by more than 5%.
#   scripts/bench-current.sh [--rounds N] [--build ROOT] [OUTDIR]
# OUTDIR defaults to bench/results/current-<commit>.  Run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
root=build
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --build) root="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) out="$1"; shift ;;
  esac
done
out="${out:-bench/results/current-$(git rev-parse --short HEAD)}"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
configs=()
for mpi in openmpi mpich; do
  [ -x "$root/$mpi/bin/strata-bench" ] || continue
  configs+=("$mpi 2")
  [ "$mpi" = openmpi ] && configs+=("$mpi 4")
done
[ ${#configs[@]} -gt 0 ] || { echo "bench-current: no build under $root (make build)" >&2; exit 1; }
{ echo "commit $(git rev-parse --short HEAD), $(date -u +%FT%TZ), rounds $rounds"
  vmstat 1 2 | tail -1 | awk '{ print "idle before: " $15 "%" }'; } > "$out/conditions.log"
for r in $(seq 1 "$rounds"); do
  # Configurations alternate within a round, so a placement that lasts
  # minutes is spread over all of them.
  for c in "${configs[@]}"; do
    set -- $c
    bin="$root/$1/bin"
    echo "== round $r: $1, $2 ranks"
    "$bin/strata-run" -n "$2" "$bin/strata-bench" --sizes 8,1K,64K,1M,4M \
      --json "$out/$1-np$2-r$r.json" > "$out/$1-np$2-r$r.txt" 2>&1
  done
done
vmstat 1 2 | tail -1 | awk '{ print "idle after: " $15 "%" }' >> "$out/conditions.log"
python3 scripts/bench-current.py "$out" | tee "$out/summary.md"
