#!/usr/bin/env bash
# Instruction-cache misses per strata call (issue 14): callgrind's cache
# simulation (I1 32 KiB 8-way, as this machine's) of bench/instr/between.c,
# where every strata call follows a barrier and a host MPI call, as in
# strata-bench.  Machine-independent like scripts/instr-count.sh, and it
# sees what that one does not: the code lines a call fetches again.
#   icache-count.sh BUILD_DIR COLL BYTES [CALLS]    (2 ranks, Open MPI)
# Prints per rank: instructions, I1 misses, D1 read and write misses per
# call.  STRATA_WAIT=spin and STRATA_SPIN=0 on one CPU: a wait yields at
# once, so polls are few and alike in every build.  INSTR_KEEP=DIR keeps
# the callgrind files (callgrind_annotate --sort=I1mr FILE: per function).
# MPI_LOCK=FILE: run under flock FILE.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
build="$1" coll="$2" bytes="$3" calls="${4:-400}"
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${INSTR_KEEP:-$(mktemp -d)}"
mkdir -p "$out"
[ -n "${INSTR_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
mpicc.openmpi -O2 -g -o "$out/between" "$here/bench/instr/between.c"
export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}" STRATA_SPIN=0 STRATA_WAIT=spin
lock=()
if [ -n "${MPI_LOCK:-}" ]; then lock=(flock "$MPI_LOCK"); fi
"${lock[@]}" taskset -c 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n 2 \
  -x STRATA_MODEL -x STRATA_SPIN -x STRATA_WAIT \
  -x LD_PRELOAD="$(cd "$build" && pwd)/lib/libstrata.so" \
  valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no --toggle-collect=counted \
  --callgrind-out-file="$out/cg.%q{OMPI_COMM_WORLD_RANK}.out" \
  "$out/between" "$coll" "$bytes" "$calls" >"$out/log" 2>&1 ||
  { cat "$out/log"; exit 1; }
echo "# $coll $bytes B, 2 ranks, $calls calls (+100 warm-up), build $build"
echo "# rank: Ir I1mr D1mr D1mw per call"
for r in 0 1; do
  callgrind_annotate "$out/cg.$r.out" | grep "PROGRAM TOTALS" | head -1 | sed 's/([^)]*)//g' |
    awk -v r="$r" -v n="$((calls + 100))" \
      '{for (i = 1; i <= 6; i++) gsub(",", "", $i);
        printf "rank %s: %.0f %.1f %.1f %.1f\n", r, $1 / n, $4 / n, $5 / n, $6 / n}'
done
