#!/bin/bash
# The across-nodes benchmarks of docs/PERFORMANCE.md, strata beside the host
# MPI in one run each (strata-bench alternates them call by call):
#   virtual nodes: the ranks of this machine as 2 nodes (STRATA_VIRTUAL_NODES);
#   namespace hosts: 2 hosts of 2 ranks in network namespaces, TCP between
#   them (tests/scripts/netns_hosts.sh; root only, else skipped);
#   noise: strata-bench --noise at 10 and 20 ms on virtual nodes.
# Usage: scripts/bench-across-nodes.sh [OUTDIR]  (default bench/results/<commit>)
set -u
cd "$(dirname "$0")/.."
out="${1:-bench/results/$(git rev-parse --short HEAD)}"
mkdir -p "$out"
colls=bcast,reduce,allreduce,allgather,gather,scatter,barrier
run() { # name command...
  local name="$1"; shift
  echo "== $name: $*" | tee "$out/$name.txt"
  "$@" 2>&1 | tee -a "$out/$name.txt"
}
for mpi in openmpi mpich; do
  bin="build/$mpi/bin"
  [ -x "$bin/strata-bench" ] || continue
  # MPICH never yields: 4 oversubscribed ranks only for the two collectives
  # the targets name, few calls.
  if [ "$mpi" = openmpi ]; then c=$colls; it=(); else c=bcast,reduce; it=(--iters 15); fi
  run "vnodes2-np4-$mpi" env STRATA_VIRTUAL_NODES=2 "$bin/strata-run" -n 4 "$bin/strata-bench" \
      --sizes 64K,1M,4M --colls "$c" "${it[@]}" --json "$out/vnodes2-np4-$mpi.json"
  run "netns-2x2-$mpi" tests/scripts/netns_hosts.sh --mpi "$mpi" --hosts 2x2 -- \
      "$bin/strata-bench" --sizes 64K,1M,4M --colls "$c" "${it[@]}" \
      --json "$PWD/$out/netns-2x2-$mpi.json"
  if [ "$mpi" = openmpi ]; then
    for ms in 10 20; do
      run "noise$ms-vnodes2-np4-$mpi" env STRATA_VIRTUAL_NODES=2 "$bin/strata-run" -n 4 \
          "$bin/strata-bench" --noise=$ms --json "$out/noise$ms-vnodes2-np4-$mpi.json"
    done
  fi
done
echo "results in $out"
