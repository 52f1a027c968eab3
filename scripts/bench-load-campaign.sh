#!/usr/bin/env bash
# Issue 15's campaign in one command, for a quiet machine: strata / host for
# every collective at a few sizes, idle, beside 1 and 2 busy processes
# (strata-bench --load), and with noise (strata-bench --noise, late form: in
# every call one random rank enters up to 10 ms late); Open MPI at 2 and 4
# ranks, MPICH at 2 (it never yields: more ranks than cores would time the
# scheduler); then the applications with and without strata beside 2 busy
# processes (scripts/app-compare.sh --load 2).  About 10 minutes with the
# defaults on the 2-core machine; --quick checks that it runs (a minute).
#
#   scripts/bench-load-campaign.sh [--out DIR] [--mpis "openmpi mpich"]
#       [--sizes 8,64K,1M,4M] [--colls LIST] [--load-kind spin|noise]
#       [--no-apps] [--quick]
#
# Writes DIR (default bench/results/load-campaign-<commit>): one strata-bench
# JSON per (mpi, ranks, condition), the application outputs, and table.md:
#   per (mpi, ranks, collective, size): strata/host medians idle, --load 1,
#   --load 2, and under noise strata's late cost / the host's; "miss" marks a
#   loaded ratio above 1.0 or above the idle ratio by more than 10% (the
#   issue's targets).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="${STRATA_BUILD_ROOT:-build}"
unset STRATA_BUILD_ROOT # strata-run hands every STRATA_ variable to the ranks
out="bench/results/load-campaign-$(git rev-parse --short HEAD 2>/dev/null || echo dev)"
mpis="openmpi mpich" sizes=8,64K,1M,4M colls="" kind=spin apps=1 iters=()
noise_args=(--noise-form late --noise-calls 20)
apps_list="asp 1024;train 100K --steps 10"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift ;;
    --mpis) mpis=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --colls) colls=$2; shift ;;
    --load-kind) kind=$2; shift ;;
    --no-apps) apps=0 ;;
    --quick) sizes=8,1M colls=bcast,allreduce,allgather,alltoall iters=(--iters 5)
             noise_args=(--noise-form late --noise-calls 3); apps_list="asp 256" ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-load-campaign: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$kind" in spin|noise) ;; *) echo "bench-load-campaign: --load-kind spin or noise" >&2; exit 2 ;; esac
coll_args=()
[ -n "$colls" ] && coll_args=(--colls "$colls")
mkdir -p "$out"
start=$(date +%s)
status=0
runs=()

# bench MPI RANKS CONDITION ARGS...: one strata-bench run into $out.
bench() {
  local mpi=$1 ranks=$2 cond=$3 bin="$root/$1/bin"
  shift 3
  local tag="$mpi-np$ranks-$cond"
  echo "== $tag: strata-bench --sizes $sizes ${coll_args[*]} ${iters[*]} $*"
  if timeout 600 "$bin/strata-run" -n "$ranks" "$bin/strata-bench" --sizes "$sizes" \
       "${coll_args[@]}" "${iters[@]}" "$@" --json "$out/$tag.json" >"$out/$tag.txt" 2>&1; then
    runs+=("$out/$tag.json")
  else
    echo "bench-load-campaign: $tag failed, see $out/$tag.txt" >&2
    status=1
  fi
}

for mpi in $mpis; do
  [ -x "$root/$mpi/bin/strata-bench" ] || { echo "skip $mpi: no $root/$mpi/bin/strata-bench"; continue; }
  ranks_list="2 4"
  [ "$mpi" = mpich ] && ranks_list=2
  for ranks in $ranks_list; do
    bench "$mpi" "$ranks" idle
    bench "$mpi" "$ranks" load1 --load 1 --load-kind "$kind"
    bench "$mpi" "$ranks" load2 --load 2 --load-kind "$kind"
    # --noise times the quiet row too; its strata_vs_native is the late cost's.
    bench "$mpi" "$ranks" noise --noise "${noise_args[@]}"
  done
done

# The table: one line per (mpi, ranks, collective, size).
python3 - "$out" "${runs[@]}" <<'PY' | tee "$out/table.md"
import json, os, sys
out, files = sys.argv[1], sys.argv[2:]
rows = {}
for path in files:
    name = os.path.basename(path)[:-5]
    mpi, np_, cond = name.split("-")
    d = json.load(open(path))
    for r in d["results"]:
        key = (mpi, int(np_[2:]), r["collective"], r["bytes"])
        if cond == "noise":
            n = r.get("noise") or {}
            rows.setdefault(key, {})["noise"] = n.get("strata_vs_native")
        else:
            rows.setdefault(key, {})[cond] = r["ratio"] if r["path"] == "strata" else None
            rows[key][cond + "_path"] = r["path"]
def f(x):
    return "-" if x is None else "%.2f" % x
print("strata / host (medians; noise: late cost), %s" % out)
print()
print("| mpi | ranks | collective | bytes | idle | load 1 | load 2 | noise | target |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
misses = 0
for key in sorted(rows):
    v = rows[key]
    idle = v.get("idle")
    miss = []
    for c in ("load1", "load2"):
        x = v.get(c)
        if x is None:
            continue
        if x > 1.0 or (idle is not None and x > idle * 1.1):
            miss.append(c)
    misses += bool(miss)
    served = "" if v.get("idle_path", "strata") == "strata" else " (host)"
    print("| %s | %d | %s%s | %d | %s | %s | %s | %s | %s |" % (
        key[0], key[1], key[2], served, key[3], f(idle), f(v.get("load1")), f(v.get("load2")),
        f(v.get("noise")), "miss: " + ",".join(miss) if miss else "ok"))
print()
print("rows missing a target under load: %d of %d" % (misses, len(rows)))
PY

if [ "$apps" = 1 ]; then
  for mpi in $mpis; do
    [ -x "$root/$mpi/bin/strata-run" ] || continue
    IFS=';' read -r -a list <<<"$apps_list"
    for entry in "${list[@]}"; do
      read -r -a words <<<"$entry"
      [ -x "$root/$mpi/bin/${words[0]}" ] || { echo "skip ${words[0]}: not built for $mpi"; continue; }
      echo "== $mpi: scripts/app-compare.sh -n 2 --reps 1 --load 2 --load-kind $kind ${words[*]}"
      scripts/app-compare.sh --build "$root/$mpi" -n 2 --reps 1 --load 2 --load-kind "$kind" \
          --timeout 300 "${words[@]}" 2>&1 | tee "$out/app-$mpi-${words[0]}-load2.txt" | tail -n 4
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
    done
  done
fi
echo "campaign: $(( $(date +%s) - start )) s; results in $out (table: $out/table.md)"
exit $status
