#!/bin/bash
# The checks that need a machine with a GPU and many cores, in one run (a
# lent machine's time is short): the device-buffer matrix and the GPU
# reduction kernels against the real driver (scripts/test-cuda.sh),
# strata-bench --device (strata's staging against staging by hand and against
# host buffers), and strata-bench on host buffers at 4, 8 and 16 ranks, where
# no rank shares a core.  Everything lands in OUTDIR; the exit status is
# test-cuda's.
#   scripts/gpu-check.sh OUTDIR [BUILD]     (BUILD: build/mpich by default)
# ITERS (default 100) sets the host-buffer benchmark's calls per size, DEVICE_ITERS
# (default 20) the device benchmark's.
set -u
out=${1:?usage: scripts/gpu-check.sh OUTDIR [BUILD]}
b=${2:-build/mpich}
mkdir -p "$out"
{
  date -u
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  echo "cores: $(nproc)"
  grep -m1 "model name" /proc/cpuinfo
  ls /sys/devices/system/node | grep -c '^node' | sed 's/^/NUMA nodes: /'
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

timeout 300 bash scripts/test-cuda.sh "$(dirname "$b")" >"$out/test-cuda.log" 2>&1
status=$?
echo "test-cuda: exit $status"
tail -n 12 "$out/test-cuda.log"

timeout 150 "$b/bin/strata-run" -n 2 "$b/bin/strata-bench" --device --sizes 8,64K,1M,16M \
  --iters "${DEVICE_ITERS:-20}" >"$out/device-np2.txt" 2>&1
echo "strata-bench --device: exit $?"
grep -A12 "^collective" "$out/device-np2.txt" | head -n 14

for n in 4 8 16; do
  timeout 100 "$b/bin/strata-run" -n "$n" "$b/bin/strata-bench" --sizes 8,1K,64K,1M \
    --colls bcast,reduce,allreduce,allgather,gather,scatter,alltoall,barrier \
    --iters "${ITERS:-100}" --json "$out/host-np$n.json" >"$out/host-np$n.txt" 2>&1
  echo "strata-bench, $n ranks: exit $?"
done
exit $status
