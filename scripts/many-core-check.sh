#!/bin/bash
# The lent machine's many-core checks (16 cores, no rank sharing a core), in
# phases that fit the device tool's calls (15 minutes of machine time in all):
#   scripts/many-core-check.sh OUT PHASE...
#   setup      unpack .dev/mpi-runtime.tar.xz (Debian 12's Open MPI 4.1.4 and
#              MPICH 4.0.2 with the libraries they need, made on the Debian
#              machine by scripts/many-core-runtime.sh) under /opt/deb and point
#              the MPIs' compiled-in folders there; prints the machine
#   check      wrong and right programs at 5 and 16 ranks on both MPIs: the count
#              mismatch matrix (blocking and nonblocking), the erroneous fuzzer
#              (all three forms), the plain fuzzer, persistent starts in any order
#   bench-MPI  strata-bench, all 16 collectives, 8 B to 4 MiB, 4/8/16 ranks
#   algos-MPI  strata-bench --algorithms at 8 and 16 ranks, 64 KiB and 1 MiB
#   cuda       scripts/test-cuda.sh on build/mpich (device buffers, real GPU)
# Every phase's output lands in OUT; the model strata calibrates at first use
# lives in /root/strata-cache (kept between calls on a warm machine) and is
# copied to OUT/model at the end.  Builds: build/mpich, build/openmpi (carried).
set -u
out=${1:?usage: scripts/many-core-check.sh OUT PHASE...}
shift
mkdir -p "$out"
root=/opt/deb
export XDG_CACHE_HOME=/root/strata-cache
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH="$root/usr/bin:$PATH"
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0

# run NAME SECONDS COMMAND...: one step, its output in OUT/NAME.log, one line here.
run() {
  local name=$1 secs=$2 t0 rc
  shift 2
  t0=$(date +%s)
  timeout "$secs" "$@" >"$out/$name.log" 2>&1
  rc=$?
  printf '%-34s exit %3d  %4d s  %s\n' "$name" "$rc" $(( $(date +%s) - t0 )) \
    "$(grep -E 'PASS|FAIL|HANG|error' "$out/$name.log" | tail -n 1 | cut -c1-90)"
  [ "$rc" = 0 ] || status=1
}

setup() {
  if [ ! -e "$root/.unpacked-$(stat -c %Y .dev/mpi-runtime.tar.xz)" ]; then
    mkdir -p "$root" && tar -xJf .dev/mpi-runtime.tar.xz -C "$root" || return 1
    touch "$root/.unpacked-$(stat -c %Y .dev/mpi-runtime.tar.xz)"
    # The MPIs look for their plugins and help files where Debian put them.
    for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 \
             /usr/share/openmpi /usr/share/pmix /etc/openmpi /usr/lib/x86_64-linux-gnu/ucx \
             /usr/lib/x86_64-linux-gnu/libfabric /usr/lib/x86_64-linux-gnu/hwloc \
             /usr/share/hwloc /usr/share/mpich; do
      [ -e "$root$d" ] || continue
      [ -L "$d" ] && continue
      [ -e "$d" ] && mv "$d" "$d.image"
      mkdir -p "$(dirname "$d")" && ln -s "$root$d" "$d"
    done
  fi
  {
    date -u
    nvidia-smi -L 2>&1
    echo "cores: $(nproc)"
    grep -m1 "model name" /proc/cpuinfo
    echo "NUMA nodes: $(ls /sys/devices/system/node | grep -c '^node')"
    lscpu 2>/dev/null | grep -E "L1d|L2|L3|Socket|Thread"
    git log -1 --format='strata %h %s' 2>/dev/null
  } >"$out/machine.txt" 2>&1
  cat "$out/machine.txt"
  run smoke-mpich 30 build/mpich/bin/strata-run -n 4 build/mpich/bin/strata-info
  run smoke-openmpi 30 build/openmpi/bin/strata-run -n 4 build/openmpi/bin/strata-info
}

check() {
  local m b n
  for m in ${CHECK_MPIS:-mpich openmpi}; do
    b=build/$m/bin
    for n in 5 16; do
      run "mismatch-$m-np$n" 90 "$b/strata-run" -n "$n" "$b/test_mismatch"
      run "mismatch-nb-$m-np$n" 90 "$b/strata-run" -n "$n" "$b/test_mismatch" --nonblocking
      run "fuzz-erroneous-$m-np$n" 90 "$b/strata-run" -n "$n" "$b/strata-fuzz" --seed $((500 + n)) \
        --calls 400 --max-bytes 1M --require-strata --erroneous --call-timeout 30 \
        --forms=blocking,nonblocking,persistent
      run "fuzz-$m-np$n" 90 "$b/strata-run" -n "$n" "$b/strata-fuzz" --seed $((600 + n)) \
        --calls 600 --max-bytes 2M --require-strata --forms=blocking,nonblocking,persistent
      run "persistent-order-$m-np$n" 45 "$b/strata-run" -n "$n" "$b/test_persistent_order" --order
    done
  done
}

bench() {
  local m=$1 n
  for n in 4 8 16; do
    run "bench-$m-np$n" 150 "build/$m/bin/strata-run" -n "$n" "build/$m/bin/strata-bench" \
      --sizes 8,1K,64K,1M,4M --json "$out/bench-$m-np$n.json"
  done
}

algos() {
  local m=$1 n
  for n in 8 16; do
    run "algos-$m-np$n" 120 "build/$m/bin/strata-run" -n "$n" "build/$m/bin/strata-bench" \
      --algorithms --sizes 64K,1M --iters 40
  done
}

for phase in "$@"; do
  case "$phase" in
    setup) setup || { echo "setup failed"; exit 1; } ;;
    check) check ;;
    bench-*) bench "${phase#bench-}" ;;
    algos-*) algos "${phase#algos-}" ;;
    cuda) run test-cuda 200 bash scripts/test-cuda.sh build ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
mkdir -p "$out/model" && cp -r "$XDG_CACHE_HOME"/. "$out/model/" 2>/dev/null
exit $status
