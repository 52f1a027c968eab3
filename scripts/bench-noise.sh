#!/bin/bash
# strata beside the host MPI while other processes compete for the cores
# (issue 15).  For every host MPI built, rank count, load and wait policy:
# run strata-bench --load LOAD (LOAD competing processes beside the job for
# the run; it alternates strata and the host MPI in one process, so both see
# the same load) and print strata/host per collective and size; then a short counted run
# (STRATA_STATS) gives the waits per strata call: polls, yields, blocks,
# context switches.  The idle case is load 0.
#
# Usage: scripts/bench-noise.sh [options]
#   --out DIR         results (default bench/results/noise-<commit>)
#   --mpis LIST       default "openmpi mpich" (those built in build/<mpi>)
#   --ranks LIST      default "2 4" (MPICH: 2 only: it never yields, and more
#                     ranks than cores time the scheduler)
#   --loads LIST      competing processes, default "0 1 2"
#   --kind spin|noise spin (default): pure busy loops; noise: each busy-waits
#                     U(0,5) ms then sleeps U(0,5) ms, like OS noise
#   --pin             pin competitor i to core i mod cores (default: unpinned)
#   --policies LIST   STRATA_WAIT values, default "adaptive spin" (spin: the
#                     policy before issue 15, for the before/after ratio)
#   --sizes LIST      default 8,1M,4M      --colls LIST  default bcast,allgather,allreduce
#   --iters N         timed calls per row (default: strata-bench's adaptive)
#   --quick           --iters 5, one policy, loads "0 1": checks that it runs
# Run it on an otherwise idle machine (the competitors are the only load
# wanted); it takes about 1-2 minutes per (mpi, ranks, load, policy).
set -u
cd "$(dirname "$0")/.."
out="bench/results/noise-$(git rev-parse --short HEAD 2>/dev/null || echo dev)"
mpis="openmpi mpich" ranks_list="2 4" loads="0 1 2" kind=spin pin=0
policies="adaptive spin" sizes=8,1M,4M colls=bcast,allgather,allreduce iters=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --mpis) mpis=$2; shift ;;
    --ranks) ranks_list=$2; shift ;;
    --loads) loads=$2; shift ;;
    --kind) kind=$2; shift ;;
    --pin) pin=1 ;;
    --policies) policies=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --colls) colls=$2; shift ;;
    --iters) iters=(--iters "$2"); shift ;;
    --quick) iters=(--iters 5); policies=adaptive; loads="0 1" ;;
    *) echo "bench-noise.sh: unknown option $1 (see the header)" >&2; exit 2 ;;
  esac
  shift
done
case "$kind" in spin|noise) ;; *) echo "bench-noise.sh: --kind spin or noise" >&2; exit 2 ;; esac
mkdir -p "$out"
cores=$(nproc)
# The competitors: strata-bench --load (tools/bench_load.c) starts them after
# its set-up, per node, and they die with it.
load_args() { # n
  echo --load "$1" --load-kind "$kind"
  [ "$pin" = 1 ] && echo --load-pin
}

summary="$out/summary.txt"
: >"$summary"
echo "# strata/host under load ($kind competitors, pinned=$pin, $cores cores); commit" \
     "$(git rev-parse --short HEAD 2>/dev/null)" | tee -a "$summary"
printf '%-8s %5s %4s %-9s %-10s %9s %11s %11s %8s | %s\n' mpi ranks load policy collective \
       bytes "host µs" "strata µs" ratio "per strata call: polls yields blocks (counted run)" \
       | tee -a "$summary"
for mpi in $mpis; do
  bin="build/$mpi/bin"
  [ -x "$bin/strata-bench" ] || { echo "skip $mpi: $bin/strata-bench not built"; continue; }
  for ranks in $ranks_list; do
    [ "$mpi" = mpich ] && [ "$ranks" -gt 2 ] && continue
    for load in $loads; do
      for policy in $policies; do
        tag="$mpi-np$ranks-load$load-$kind-$policy"
        STRATA_WAIT=$policy "$bin/strata-run" -n "$ranks" "$bin/strata-bench" --sizes "$sizes" \
            --colls "$colls" "${iters[@]}" $(load_args "$load") --csv "$out/$tag.csv" --json "$out/$tag.json" \
            >"$out/$tag.txt" 2>&1
        rc=$?
        # The counted run: few calls, STRATA_STATS on (its counting is not
        # in the timed run above).
        STRATA_WAIT=$policy STRATA_STATS="$out/$tag.stats.json" "$bin/strata-run" -n "$ranks" \
            "$bin/strata-bench" --sizes "$sizes" --colls "$colls" --iters 20 $(load_args "$load") \
            >"$out/$tag.counted.txt" 2>&1
        [ $rc = 0 ] || { echo "$tag: strata-bench failed (rc $rc), see $out/$tag.txt" | tee -a "$summary"; continue; }
        python3 - "$out/$tag.csv" "$out/$tag.stats.json" "$mpi" "$ranks" "$load" "$policy" <<'EOF' | tee -a "$summary"
import csv, json, sys
path, stats, mpi, ranks, load, policy = sys.argv[1:]
rows = {}
for r in csv.DictReader(open(path)):
    rows.setdefault((r["collective"], int(r["bytes"])), {})[r["implementation"]] = r
per_call = ""
try:
    s = json.load(open(stats))
    calls = sum(c["calls_strata"] for c in s["collectives"].values())
    w = s["waits"]
    if calls:
        per_call = "%.1f %.2f %.3f  (switches vol %.2f invol %.2f per call)" % (
            w["polls"] / calls, w["yields"] / calls, w["blocks"] / calls,
            w["voluntary_switches"] / calls, w["involuntary_switches"] / calls)
except (OSError, ValueError, KeyError):
    per_call = "(no counts)"
for (coll, size), impl in sorted(rows.items()):
    if "native" not in impl or "strata" not in impl:
        continue
    h, s_ = float(impl["native"]["median_us"]), float(impl["strata"]["median_us"])
    print("%-8s %5s %4s %-9s %-10s %9d %11.2f %11.2f %8.3f | %s" % (
        mpi, ranks, load, policy, coll, size, h, s_, s_ / h if h else 0, per_call))
EOF
      done
    done
  done
done
echo "results in $out (summary: $summary)"
