#!/usr/bin/env bash
# Instructions per collective call under callgrind (issue 14): a count that
# does not depend on the machine's load, for comparing two builds of strata
# on a shared machine where timings cannot be compared.
#   instr-count.sh BUILD_DIR COLL BYTES RANKS [CALLS] [--top N]
# BUILD_DIR: a build of strata for Open MPI (its lib/libstrata.so is
# preloaded; "none" for the host MPI alone).  COLL: reduce|allreduce|bcast|allgather|
# gather|scatter|alltoall|barrier|gatherv|scatterv|allgatherv|alltoallv|scan|exscan|
# neighbor_allgather (a periodic ring of the ranks)
# (bench/instr/colls.h; before s5-small any other name
# silently ran bcast); reduce, allreduce and bcast also with i in front (MPI_I<coll> +
# MPI_Wait) or p (MPI_Start + MPI_Wait of a persistent one).
# Runs bench/instr/calls.c (built here with mpicc.openmpi) under callgrind,
# counting only the CALLS collective calls after a warm-up, every rank on
# one CPU with STRATA_SPIN=0 STRATA_WAIT=spin: a rank that must wait yields to the other at
# once, so waits cost few, nearly fixed, polls (printed as "failed polls")
# rather than a spin as long as the other rank's delay.  Prints per rank:
# instructions per call, those spent waiting (strata_backoff & co.), the
# rest ("work"), and with --top N the functions of most self cost.
# MPI_LOCK=FILE: run under flock FILE (a machine shared by several people
# running MPI jobs one at a time).
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,18p' "$0"; exit 2; }
build="$1" coll="$2" bytes="$3" ranks="$4" calls="${5:-2000}"
shift $(($# >= 5 ? 5 : 4))
here="$(cd "$(dirname "$0")/.." && pwd)"
# INSTR_KEEP=DIR keeps the callgrind files there (for callgrind_annotate).
out="${INSTR_KEEP:-$(mktemp -d)}"
mkdir -p "$out"
[ -n "${INSTR_KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
mpicc.openmpi -O2 -g -o "$out/calls" "$here/bench/instr/calls.c"
preload=()
if [ "$build" != none ]; then preload=(-x LD_PRELOAD="$(cd "$build" && pwd)/lib/libstrata.so"); fi
# STRATA_WAIT=spin: the adaptive policy (shm/wait.h) spins without end while
# the machine's load exceeds its cores, which would count other jobs' load.
export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}" STRATA_SPIN=0 STRATA_WAIT=spin
lock=()
if [ -n "${MPI_LOCK:-}" ]; then lock=(flock "$MPI_LOCK"); fi
"${lock[@]}" taskset -c 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n "$ranks" \
  -x STRATA_MODEL -x STRATA_SPIN -x STRATA_WAIT "${preload[@]}" \
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=run_calls \
  --callgrind-out-file="$out/cg.%q{OMPI_COMM_WORLD_RANK}.out" \
  "$out/calls" "$coll" "$bytes" "$calls" >"$out/log" 2>&1 ||
  { cat "$out/log"; exit 1; }
echo "# $coll $bytes B, $ranks ranks, $calls calls, build $build"
for r in $(seq 0 $((ranks - 1))); do
  python3 "$here/scripts/callgrind-summary.py" "$calls" "$@" "$out/cg.$r.out" |
    sed "s|^$out/cg.$r.out|rank $r|"
done
