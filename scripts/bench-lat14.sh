#!/usr/bin/env bash
# Issue 14, the 8-byte gap: 8155f74 (before the resumable core), main at
# b03a104 and this branch, run alternately round by round (the machine's
# placement of the two vCPUs changes every few seconds to minutes, so the
# three builds must share every period), 2 ranks, Open MPI, 8 B and 1 KiB,
# Bcast, Reduce, Allreduce, Allgather, Barrier.  Each strata-bench run
# alternates strata and the host MPI call by call, so every figure below is
# "strata minus host" of the same run; the summary is the median over the
# rounds.  About 4 minutes with the default 12 rounds on a quiet machine.
#   scripts/bench-lat14.sh                 # then: the table on stdout
# Environment: ROUNDS (default 12), OUT (default bench/results/lat14), NP (ranks, 2),
# COLLS and SIZES (strata-bench's lists; defaults below),
# BEFORE, MAIN, BRANCH: build directories (each with bin/strata-run and
# bin/strata-bench of its tree); MPI_LOCK=FILE runs each mpirun under flock.
# MAIN defaults to build/b03a104/build/openmpi, made by this script from
# git (git archive b03a104) if absent (a few minutes, before timing starts).
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
rounds=${ROUNDS:-12}
out=${OUT:-bench/results/lat14}
before=${BEFORE:-/work/before/build/openmpi}
main=${MAIN:-$here/build/b03a104/build/openmpi}
branch=${BRANCH:-$here/build/openmpi}
if [ ! -x "$main/bin/strata-bench" ] && [ -z "${MAIN:-}" ]; then
  echo "building b03a104 into build/b03a104 (once)"
  mkdir -p build/b03a104 && git archive b03a104 | tar -x -C build/b03a104 &&
    (cd build/b03a104 && cmake -S . -B build/openmpi -DSTRATA_MPI=openmpi \
       -DCMAKE_C_COMPILER=mpicc.openmpi >/dev/null &&
     cmake --build build/openmpi -j2 --target strata strata-bench >/dev/null) || exit 1
fi
for t in "$before" "$main" "$branch"; do
  [ -x "$t/bin/strata-bench" ] || { echo "no strata-bench in $t" >&2; exit 1; }
done
mkdir -p "$out"
export STRATA_MODEL="$here/tests/data/model.conf"
lock=()
[ -n "${MPI_LOCK:-}" ] && lock=(flock "$MPI_LOCK")
for r in $(seq 1 "$rounds"); do
  # The order of the three builds turns every round, so none always follows
  # the same one.
  case $((r % 3)) in
    1) order="before main branch" ;;
    2) order="main branch before" ;;
    0) order="branch before main" ;;
  esac
  for tag in $order; do
    case $tag in before) b=$before ;; main) b=$main ;; branch) b=$branch ;; esac
    "${lock[@]}" timeout 120 "$b/bin/strata-run" -n "${NP:-2}" "$b/bin/strata-bench" \
      --colls "${COLLS:-bcast,reduce,allreduce,allgather,barrier}" --sizes "${SIZES:-8,1K}" --iters 2000 \
      --json "$out/$tag.r$r.json" >"$out/$tag.r$r.txt" 2>&1 || echo "rc=$? $tag round $r" >&2
  done
  echo "round $r done $(date -u +%T)" >&2
done
python3 "$here/scripts/bench-lat14.py" "$out"
