#!/bin/bash
# The recorded runs behind docs/PERFORMANCE.md's sweep and application
# sections, strata beside the host MPI in one run each:
#   sweep: strata-bench --sweep (every collective, 8 B to 16 MiB) at 2 ranks
#     for every host MPI built, and at 4 ranks for Open MPI (MPICH never
#     yields the CPU, so more ranks than the 2 cores would time the scheduler);
#   report: strata-report over the sweeps (PNG plots, summary.md);
#   applications: scripts/app-compare.sh with asp and train.
# Usage: scripts/bench-performance.sh [OUTDIR]  (default bench/results/<commit>)
# Run it on an idle machine: the figures are only as quiet as the machine.
set -u
cd "$(dirname "$0")/.."
out="${1:-bench/results/$(git rev-parse --short HEAD)}"
mkdir -p "$out"
run() { # name command...: the command's output, headed by the command itself
  local name="$1"; shift
  echo "== $name: $*" | tee "$out/$name.txt"
  "$@" 2>&1 | tee -a "$out/$name.txt"
}
jsons=()
for mpi in openmpi mpich; do
  bin="build/$mpi/bin"
  [ -x "$bin/strata-bench" ] || continue
  run "sweep-np2-$mpi" "$bin/strata-run" -n 2 "$bin/strata-bench" --sweep --root-shift \
      --json "$out/sweep-np2-$mpi.json" --csv "$out/sweep-np2-$mpi.csv"
  jsons+=("$out/sweep-np2-$mpi.json")
  if [ "$mpi" = openmpi ]; then
    run "sweep-np4-$mpi" "$bin/strata-run" -n 4 "$bin/strata-bench" --sweep --root-shift \
        --json "$out/sweep-np4-$mpi.json" --csv "$out/sweep-np4-$mpi.csv"
    jsons+=("$out/sweep-np4-$mpi.json")
    run "app-asp-np4-$mpi" scripts/app-compare.sh --build build/$mpi -n 4 asp 2048
    run "app-train-np4-$mpi" scripts/app-compare.sh --build build/$mpi -n 4 train 512K --steps 20
  fi
  run "app-asp-np2-$mpi" scripts/app-compare.sh --build build/$mpi -n 2 asp 2048
  run "app-train-np2-$mpi" scripts/app-compare.sh --build build/$mpi -n 2 train 512K --steps 20
done
for j in "${jsons[@]}"; do
  name="$(basename "$j" .json)"
  run "report-$name" tools/strata-report "$j" -o "$out/report-$name"
done
echo "results in $out"
