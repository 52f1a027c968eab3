#!/usr/bin/env bash
# Selection settling on the host MPI (issue 31 items 1 and 6): the base
# (main before it, 8fe084e) and the branch alternating run by run, ROUNDS
# rounds, each run strata-bench with strata and the host alternating call
# by call, learning on (the default) from the calibrated model cache.
#   run.sh BASE_TREE NEW_TREE OUT [ROUNDS]
# Each tree holds build/bench-<host>/ built with that host's own mpicc.
set -u
base="$1" new="$2" out="$3" rounds="${4:-3}"
mkdir -p "$out"
for host in impi-2021.19.0 openmpi-5.0.11; do
  (
    source /work/main/build/hosts/$host.env
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    for r in $(seq 1 "$rounds"); do
      for side in base new; do
        tree=$base; [ $side = new ] && tree=$new
        b=$tree/build/bench-$host
        STRATA_VERBOSE=1 timeout 600 $b/bin/strata-run -n 2 $b/bin/strata-bench \
          --colls bcast,allgather,gather,scatter,alltoall --sizes 64K,1M,4M \
          > "$out/$host-$side-$r.txt" 2>&1
      done
    done
  )
done
