#!/usr/bin/env bash
# strata against today's MPI releases (the host matrix's: scripts/host-mpis.sh
# lays them out from PyPI), figures for docs/PERFORMANCE.md: strata-bench
# at 2 ranks on Open MPI 5.0.11, MPICH 5.0.2 and Intel MPI 2021.19, and at
# 4 ranks on Open MPI (MPICH and Intel MPI never yield the CPU: more ranks
# than this machine's 2 cores would time the scheduler).  strata-bench
# alternates strata and the host MPI call by call in one run, as always.
#   scripts/bench-hosts.sh [--cache DIR] [--sizes LIST] [OUTDIR]
#     OUTDIR  default bench/results/hosts-<commit>
#     --sizes strata-bench's sizes (default 8,64K,1M,4M)
#     --cache the wheels' cache (default build/hosts/wheels)
# Builds build/host-<mpi>/ (strata and strata-bench only) where missing.
# Run it on an idle machine: the figures are only as quiet as the machine.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
sizes="8,64K,1M,4M"
cache="build/hosts/wheels"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --cache) cache="$2"; shift 2 ;;
    -*) echo "bench-hosts: unknown option $1" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
[ -n "$out" ] || out="bench/results/hosts-$(git rev-parse --short HEAD)"
mkdir -p "$out"
scripts/host-mpis.sh --cache "$cache" --dest build/hosts >/dev/null || exit 1
status=0
for env in $(scripts/host-mpis.sh --dest build/hosts --list); do
  host=$(basename "$env" .env)
  dir="build/host-$host"
  (
    . "$env"
    if [ ! -x "$dir/bin/strata-bench" ]; then
      cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$HOST_MPI_CC" >/dev/null &&
        cmake --build "$dir" -j "${JOBS:-2}" --target strata strata-bench >/dev/null || exit 1
    fi
    ranks=2
    case "$host" in openmpi-*) ranks="2 4" ;; esac
    for n in $ranks; do
      name="$host-np$n"
      echo "== $name: $dir/bin/strata-run -n $n $dir/bin/strata-bench --sizes $sizes" |
        tee "$out/$name.txt"
      timeout 900 "$dir/bin/strata-run" -n "$n" "$dir/bin/strata-bench" --sizes "$sizes" \
        --json "$out/$name.json" 2>&1 | tee -a "$out/$name.txt"
      [ "${PIPESTATUS[0]}" = 0 ] || exit 1
    done
  ) || { echo "bench-hosts: $host failed" >&2; status=1; }
done
echo "results in $out"
exit $status
