#!/bin/bash
# issue 30's before/after: strata-bench --sweep, before (562a9e1) and after (main) alternating
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STRATA_LEARN=0
COLLS=bcast,allreduce,allgather,alltoall,gatherv,reduce_scatter
out=/tmp/sweep
for round in 1 2; do
 for cfg in "openmpi 2" "mpich 2" "openmpi 4"; do
  set -- $cfg; m=$1; n=$2
  for which in before after; do
    root=/work/$([ $which = before ] && echo before || echo main)
    $root/build/$m/bin/strata-run -n $n $root/build/$m/bin/strata-bench --sweep --colls $COLLS \
      --json $out/$which-$m-np$n-r$round.json > $out/$which-$m-np$n-r$round.txt 2>&1
    echo "$which $m np$n r$round rc=$?"
  done
 done
done
