#!/usr/bin/env bash
# Issue 31 item 1: strata-bench at 2 ranks with selection's measurements off
# (STRATA_LEARN=0, "before") and on ("after"), alternating, ROUNDS rounds, both
# with this machine's calibrated model copied into a private cache (so that a
# run neither reads nor writes the user's real cache), each "after" run from
# the model alone (what earlier runs learned is thrown away: the figure is a
# first job's).
#   bench-issue31-learn.sh BUILD_DIR OUT_DIR [ROUNDS] [SIZES] [COLLS]
# BUILD_DIR: build/openmpi or build/mpich.  Writes OUT_DIR/{before,after}-N.json
# and prints per row the median over rounds of strata/host, before and after.
set -euo pipefail
build="$1" out="$2" rounds="${3:-3}" sizes="${4:-64K,1M,4M}"
colls="${5:-bcast,gather,scatter,allgather,alltoall}"
model="${STRATA_BENCH_MODEL:-$HOME/.cache/strata/model-$(hostname).conf}"
[ -f "$model" ] || { echo "no calibrated model at $model (STRATA_BENCH_MODEL=file)" >&2; exit 2; }
mkdir -p "$out"
xdg="$(mktemp -d)"
trap 'rm -rf "$xdg"' EXIT
mkdir -m 700 "$xdg/strata"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STRATA_CALIBRATE=0
for r in $(seq 1 "$rounds"); do
  for mode in before after; do
    install -m 600 "$model" "$xdg/strata/model-$(hostname).conf"
    learn=$([ "$mode" = after ] && echo 1 || echo 0)
    env -u STRATA_MODEL XDG_CACHE_HOME="$xdg" STRATA_LEARN="$learn" \
      "$build/bin/strata-run" -n 2 "$build/bin/strata-bench" --colls "$colls" --sizes "$sizes" \
      --json "$out/$mode-$r.json" >/dev/null
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, sys, statistics as st
d, n = sys.argv[1], int(sys.argv[2])
def load(mode):
    rs = []
    for i in range(1, n + 1):
        r = json.load(open(f"{d}/{mode}-{i}.json"))
        rs.append({(x["collective"], x["bytes"]): x for x in r["results"]})
    return rs
B, A = load("before"), load("after")
lab = lambda b: f"{b} B" if b < 1024 else (f"{b>>10} KiB" if b < 1 << 20 else f"{b>>20} MiB")
print("| collective | size | strata/host, learning off | strata/host, learning on |")
print("| --- | --- | --- | --- |")
for k in B[0]:
    b = st.median(r[k]["ratio"] for r in B); a = st.median(r[k]["ratio"] for r in A)
    print(f"| {k[0]} | {lab(k[1])} | {b:.3f} | {a:.3f} |")
PY
