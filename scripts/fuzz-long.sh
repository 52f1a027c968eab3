#!/usr/bin/env bash
# The fuzzer's long run (make fuzz): strata-fuzz again and again, each run
# with a new seed, thousands of calls, buffers up to several MiB, over many
# configurations (data-plane variables, fake machines, virtual nodes, leader
# trees) and both host MPIs, until the time is up.  A failing run's log is
# kept and its mismatch (call, smallest failing count, replay command) is
# repeated at the end.  The test suite's short run is tests/fuzz.cmake.
#
#   scripts/fuzz-long.sh [--minutes M] [--mpi openmpi|mpich|all] [--seed S]
#                        [--calls N] [--max-bytes SIZE] [--builds PREFIX] [--nice N]
#
#   --minutes   time to fuzz, all runs together (default 15; the run under
#               way when time is up finishes)
#   --mpi       which builds (default all: those of Open MPI and MPICH that exist)
#   --seed      first seed (default: from the clock); run i uses seed + i
#   --calls     calls per run (default 3000 with Open MPI, 1500 with MPICH)
#   --max-bytes largest buffer of a call (default 8M with Open MPI, 4M with MPICH)
#   --builds    the builds are PREFIXopenmpi and PREFIXmpich (default build/, as
#               make builds them; build/asan- runs the sanitizer builds)
#   --nice      niceness of the runs (default 10: the machine is shared)
#
# Logs: build/fuzz-long/<date>/ (FUZZ_LOG_DIR to change), kept for failing
# runs and for runs where the host MPI was wrong (strata right).  Exit status
# 0 when every run passed, 1 otherwise.
set -uo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
minutes=15 mpi=all seed="" calls="" max_bytes="" builds="$here/build/" niceness=10
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --mpi) mpi="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --calls) calls="$2"; shift 2 ;;
    --max-bytes) max_bytes="$2"; shift 2 ;;
    --builds) builds="$2"; shift 2 ;;
    --nice) niceness="$2"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "fuzz-long.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$minutes" in ''|*[!0-9]*) echo "fuzz-long.sh: --minutes takes a whole number" >&2; exit 2 ;; esac
[ -n "$seed" ] || seed=$(( $(date +%s) % 1000000 * 1000 ))

# The suite's fixed cost model: no calibration, the same choices as the tests.
export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}"

topo2="STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1"
topo3="STRATA_TOPOLOGY=pack:2 numa:2 l3:2 core:2 pu:1"
small="STRATA_CHUNK=4K;STRATA_REDUCE_CHUNK=4K;STRATA_CICO_MAX=256;STRATA_REDUCE_MIN_SLICE=64"

# name|ranks|environment (assignments separated by ';').  Open MPI yields
# when oversubscribed: up to 5 ranks on 2 cores.
openmpi_configs=(
  "default|2|"
  "default|3|"
  "default|4|"
  "default|5|"
  "cma0|4|STRATA_CMA=0"
  "small-chunks|4|$small;STRATA_CMA_MAX_PER_CALL=4096"
  "cma-per-call|3|STRATA_CMA_MAX_PER_CALL=4096"
  "cico64-throttle1|5|STRATA_CICO_MAX=64;STRATA_THROTTLE=1"
  "spin0|4|STRATA_SPIN=0"
  "topo2-socket|4|$topo2;STRATA_MAP=socket"
  "topo2-core|5|$topo2;STRATA_MAP=core"
  "topo2-chunks|5|$topo2;STRATA_MAP=numa;STRATA_CHUNK=64K,16K;STRATA_REDUCE_CHUNK=16K"
  "topo3-numa|4|$topo3;STRATA_MAP=numa"
  "topo2-small|5|$topo2;STRATA_MAP=numa;$small;STRATA_CMA_MAX_PER_CALL=4096;STRATA_THROTTLE=1"
  "nodes2|4|STRATA_VIRTUAL_NODES=2"
  "nodes2-cyclic|5|STRATA_VIRTUAL_NODES=2;STRATA_VIRTUAL_LAYOUT=cyclic"
  "nodes2-seg1k|4|STRATA_VIRTUAL_NODES=2;STRATA_NET_SEGMENT=1K;STRATA_NET_SENDS=1;STRATA_NET_RECVS=1"
  "nodes3|5|STRATA_VIRTUAL_NODES=3"
  "nodes3-chain|5|STRATA_VIRTUAL_NODES=3;STRATA_NET_TREE=chain;STRATA_NET_SEGMENT=4K"
  "nodes4-knomial|5|STRATA_VIRTUAL_NODES=4;STRATA_NET_TREE=knomial:2"
  "nodes2-cma0|4|STRATA_VIRTUAL_NODES=2;STRATA_VIRTUAL_LAYOUT=cyclic;STRATA_CMA=0"
  "nodes2-topo2|4|STRATA_VIRTUAL_NODES=2;$topo2;STRATA_MAP=core"
  "check-args|4|STRATA_CHECK_ARGS=1"
  "nodes2-check-args|5|STRATA_VIRTUAL_NODES=2;STRATA_CHECK_ARGS=1"
)
# MPICH never yields: 2 ranks (3 for two nodes, with a third of the calls).
mpich_configs=(
  "default|2|"
  "cma0|2|STRATA_CMA=0"
  "small-chunks|2|$small;STRATA_CMA_MAX_PER_CALL=4096"
  "topo2-socket|2|$topo2;STRATA_MAP=socket"
  "cico64|2|STRATA_CICO_MAX=64"
  "nodes2|3|STRATA_VIRTUAL_NODES=2"
  "check-args|2|STRATA_CHECK_ARGS=1"
)

mpis=()
for m in openmpi mpich; do
  [ "$mpi" = all ] || [ "$mpi" = "$m" ] || continue
  if [ -x "$builds$m/bin/strata-fuzz" ]; then mpis+=("$m")
  elif [ "$mpi" = "$m" ]; then echo "fuzz-long.sh: no $builds$m/bin/strata-fuzz: build first (make)" >&2; exit 1
  fi
done
[ ${#mpis[@]} -gt 0 ] || { echo "fuzz-long.sh: no ${builds}openmpi or ${builds}mpich with strata-fuzz: run make first" >&2; exit 1; }

logs="${FUZZ_LOG_DIR:-$here/build/fuzz-long}/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logs"
deadline=$(( $(date +%s) + minutes * 60 ))
echo "fuzzing ${mpis[*]} for $minutes min from seed $seed; logs in $logs"

# A run that crashed or hung cannot shrink its call itself: run the call
# alone (--only) with fewer elements, smallest first, as long as it fails.
# $1 log, $2 mpi build dir, $3 ranks, $4 seed, $5 max bytes; env in assign[].
shrink_crash() {
  local log="$1" dir="$2" ranks="$3" s="$4" bytes="$5" only elems tries=0 found cand k
  local max_tries=40 shrunk=""
  grep -q '^HANG' "$log" && max_tries=8 # each failing try waits for the watchdog
  only=$(grep -m1 -A2 -E '^(CRASH|HANG)' "$log" | grep -o -- '--only [0-9]*' | head -1 | cut -d' ' -f2)
  elems=$(grep -m1 -A2 -E '^(CRASH|HANG)' "$log" | grep -o -- '--elements [0-9]*' | head -1 | cut -d' ' -f2)
  [ -n "$only" ] && [ -n "$elems" ] || return
  while :; do
    found=""
    for cand in $( { for k in 0 1 2 3 4 5 6 7 8; do echo $k; done
                     for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
                       echo $(( elems >> k )); echo $(( elems - (elems >> k) )); done
                     echo $(( elems - 1 )); } | sort -n -u ); do
      [ "$cand" -lt "$elems" ] || continue
      tries=$(( tries + 1 ))
      [ $tries -le $max_tries ] || break
      if ! timeout 300 nice -n "$niceness" env ${assign[@]+"${assign[@]}"} "$dir/bin/strata-run" \
          --native -n "$ranks" "$dir/bin/strata-fuzz" --seed "$s" --only "$only" \
          --elements "$cand" --max-bytes "$bytes" --call-timeout 60 > "$log.try" 2>&1; then
        found="$cand"
        break
      fi
    done
    [ -n "$found" ] || break
    elems="$found"
    shrunk=1
    cp "$log.try" "$log.smallest"
  done
  rm -f "$log.try"
  if [ -n "$shrunk" ]; then
    echo "   the smallest count that still fails alone: $elems elements (call $only, its output:"
    echo "   $log.smallest)"
  else
    echo "   no smaller count of call $only fails alone (tried $tries)"
  fi
}

runs=0 failures=0 total_calls=0 summary="$logs/failures.txt"
: > "$summary"
i=0
while [ "$(date +%s)" -lt "$deadline" ]; do
  m="${mpis[$(( i % ${#mpis[@]} ))]}"
  if [ "$m" = openmpi ]; then
    configs=("${openmpi_configs[@]}"); n_calls="${calls:-3000}"; n_bytes="${max_bytes:-8M}"
  else
    configs=("${mpich_configs[@]}"); n_calls="${calls:-1500}"; n_bytes="${max_bytes:-4M}"
  fi
  entry="${configs[$(( (i / ${#mpis[@]}) % ${#configs[@]} ))]}"
  IFS='|' read -r name ranks envs <<< "$entry"
  [ "$m" = mpich ] && [ "$ranks" -gt 2 ] && n_calls=$(( n_calls / 3 ))
  s=$(( seed + i ))
  i=$(( i + 1 ))
  IFS=';' read -r -a assign <<< "$envs"
  dir="$builds$m"
  log="$logs/$m-$name-np$ranks-seed$s.log"
  started=$(date +%s)
  timeout 900 nice -n "$niceness" env ${assign[@]+"${assign[@]}"} "$dir/bin/strata-run" --native \
    -n "$ranks" "$dir/bin/strata-fuzz" --seed "$s" --calls "$n_calls" --max-bytes "$n_bytes" \
    --call-timeout 120 --expect-all > "$log" 2>&1
  rc=$?
  runs=$(( runs + 1 ))
  total_calls=$(( total_calls + n_calls ))
  took=$(( $(date +%s) - started ))
  if [ $rc -eq 0 ] && grep -q '^PASS strata-fuzz' "$log"; then
    # Calls where the host MPI was wrong and strata right: the log stays.
    host_wrong=$(awk '/^  MPI_[A-Za-z]+ / { n += $NF } END { print n + 0 }' "$log")
    printf '  pass  %-8s %-18s np%s seed %-10s %4ss%s\n' "$m" "$name" "$ranks" "$s" "$took" \
      "$([ "$host_wrong" -gt 0 ] && echo ", the host MPI wrong in $host_wrong calls ($log)")"
    [ "$host_wrong" -gt 0 ] || rm -f "$log"
    continue
  fi
  failures=$(( failures + 1 ))
  printf '  FAIL  %-8s %-18s np%s seed %-10s %4ss (status %s, log %s)\n' "$m" "$name" "$ranks" \
    "$s" "$took" "$rc" "$log"
  {
    echo "== $m $name, $ranks ranks, seed $s, status $rc ($envs)"
    grep -E '^(MISMATCH|shrinking|minimal call|replay|HANG|CRASH|  call|  replay|    the|    strata|FAIL)' \
      "$log" | head -n 30
    [ $rc -eq 124 ] && echo "   (the run did not end within 900 s)"
    grep -qE '^(CRASH|HANG)' "$log" && shrink_crash "$log" "$dir" "$ranks" "$s" "$n_bytes"
    echo "   log: $log; strata-run is $dir/bin/strata-run"
  } >> "$summary"
done

echo "$runs runs, $total_calls calls, $failures failed"
# Other jobs may have segments of their own there now: a warning only.
left=$(ls /dev/shm 2>/dev/null | grep -i strata || true)
[ -z "$left" ] || echo "note: strata segments in /dev/shm now (this run's or another job's): $left"
if [ "$failures" -gt 0 ]; then
  cat "$summary"
  exit 1
fi
rm -f "$summary"
rmdir "$logs" 2>/dev/null || true # kept if a log is in it
exit 0
