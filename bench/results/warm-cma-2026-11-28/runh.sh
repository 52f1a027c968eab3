#!/bin/bash
# usage: runh.sh HOST ROUNDS COLLS SIZES -> /tmp/wb/h-<host>-<model>-<round>.txt
h=$1 rounds=$2 colls=$3 sizes=$4
. build/hosts/$h.env
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STRATA_LEARN=0
for r in $(seq 1 $rounds); do for m in old new; do
  STRATA_MODEL=/tmp/m_$m.conf timeout 300 build/host-$h/bin/strata-run -n 2 build/host-$h/bin/strata-bench --colls $colls --sizes $sizes > /tmp/wb/h-$h-$m-$r.txt 2>&1
done; done
