#!/bin/bash
# usage: run.sh MPI ROUNDS COLLS SIZES -> /tmp/wb/<mpi>-<model>-<round>.txt
mpi=$1 rounds=$2 colls=$3 sizes=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STRATA_LEARN=0
for r in $(seq 1 $rounds); do for m in old new; do
  STRATA_MODEL=/tmp/m_$m.conf timeout 300 build/$mpi/bin/strata-run -n 2 build/$mpi/bin/strata-bench --colls $colls --sizes $sizes > /tmp/wb/$mpi-$m-$r.txt 2>&1
done; done
