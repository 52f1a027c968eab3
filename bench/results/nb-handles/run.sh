#!/bin/bash
# Alternates the base build (8ff7a5d, unpacked and built in /tmp/nb-base) and this branch, call by call within a run, run by run across builds.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=/work/wt-nb/bench/results/nb-handles
for mpi in openmpi mpich; do
 for r in 1 2 3 4 5 6; do for p in off thread; do for b in base nb; do
  root=/tmp/nb-base; [ $b = nb ] && root=/work/wt-nb
  (cd $root && STRATA_PROGRESS=$p timeout 120 build/$mpi/bin/strata-run -n 2 build/$mpi/bin/strata-bench --nonblocking --sizes 8,1K --colls bcast,reduce,allreduce,gather,alltoallv) > $out/$mpi-$p-$b-$r.txt 2>&1
 done; done; done
done
