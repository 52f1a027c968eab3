#!/usr/bin/env bash
# Issue 14, final check: before (8155f74) and after (main) alternating, small rows only.
set -u
out=${OUT:-bench/results/issue14-final}; mkdir -p $out
export STRATA_MODEL=$PWD/tests/data/model.conf
for r in ${ROUNDS:-1 2 3}; do
  for n in 2 4; do
    for tree in before main; do
      bin=/work/$tree/build/openmpi/bin
      tag=$([ $tree = main ] && echo after || echo before)
      timeout 300 $bin/strata-run -n $n $bin/strata-bench --colls bcast,reduce,allreduce \
        --sizes 8,1K,32K --root-shift --json $out/$tag-np$n-openmpi.r$r.json > $out/$tag-np$n-openmpi.r$r.txt 2>&1 || echo "rc=$? $tree np$n r$r"
    done
  done
done
echo done $(date +%T)
