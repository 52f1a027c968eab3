#!/usr/bin/env bash
# Collectives of more than 2 GiB per call through strata (outside the suite:
# about 4.5 GiB of memory per rank, 2 ranks): Bcast and Allreduce whose
# count * type size passes 2^31 bytes (8- and 16-byte types) and a Bcast of
# more than 2 GiB with holes, every element checked (test_large_count
# --huge).  Then the suite's large-count entry (CMA calls cut small, derived
# types whose count * extent passes INT_MAX) for comparison.
#
#   scripts/large-counts.sh [--mpi openmpi|mpich|all] [--builds PREFIX]
#
#   --mpi     which builds (default all: those of Open MPI and MPICH that exist)
#   --builds  the builds are PREFIXopenmpi and PREFIXmpich (default build/)
#
# Exits 0 when every run passed, 77 when the machine has too little free
# memory (10 GiB), 1 otherwise.
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
mpi=all builds="$here/build/"
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi="$2"; shift 2 ;;
    --builds) builds="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "large-counts.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$mpi" in all) mpis=(openmpi mpich) ;; openmpi|mpich) mpis=("$mpi") ;;
  *) echo "large-counts.sh: --mpi takes openmpi, mpich or all" >&2; exit 2 ;; esac

need_kib=$((10 * 1024 * 1024))
avail_kib=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
if [ "${avail_kib:-0}" -lt "$need_kib" ]; then
  echo "SKIP: $((avail_kib / 1024)) MiB of memory available, the runs need 10 GiB"
  exit 77
fi

export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}"
status=0 ran=0
for m in "${mpis[@]}"; do
  dir="${builds}$m"
  if [ ! -x "$dir/bin/test_large_count" ]; then
    [ "$mpi" = all ] && continue
    echo "FAIL: no $dir/bin/test_large_count (build $m first: make build-$m)"
    exit 1
  fi
  ran=$((ran + 1))
  for args in "--huge" ""; do
    echo "== $m: test_large_count ${args:-(suite part, STRATA_CMA_MAX_PER_CALL=12345)}"
    start=$(date +%s)
    # shellcheck disable=SC2086 # args is one option or none
    if STRATA_CMA_MAX_PER_CALL=$([ -n "$args" ] && echo 1G || echo 12345) \
       timeout 1800 "$dir/bin/strata-run" --native -n 2 "$dir/bin/test_large_count" $args; then
      echo "   passed in $(($(date +%s) - start)) s"
    else
      echo "FAIL: $m: test_large_count $args (exit status $?)"
      status=1
    fi
  done
done
[ "$ran" -gt 0 ] || { echo "FAIL: no build of test_large_count under ${builds}"; exit 1; }
exit "$status"
