#!/usr/bin/env bash
# strata-bench at 2 ranks: its files, its root shift, its sweep, its options.
#   bench_run.sh STRATA_RUN STRATA_BENCH ROOT_PROBE_SO SCHEMA MODEL
# - with --root-shift --json --csv, every collective at 24 B and 4 KiB, 10
#   calls each: the JSON is valid against SCHEMA (bench_schema_check.py) and
#   its figures agree with one another (the per-rank spread is ordered, the
#   bandwidth is the counted bytes / median, counted as --help says) and with
#   the CSV (its columns, one line per row and implementation, the same
#   medians);
# - ROOT_PROBE_SO preloaded counts the roots of the host MPI's rooted calls
#   (bench_root_probe.c): with --root-shift ranks 0 and 1 take turns, without
#   it every timed call has root 0;
# - --sweep (bcast only, 1 call per size) runs every power of 2 from 8 B to
#   16 MiB; options that do not fit together are refused.
set -uo pipefail
run="$1"
bench="$2"
probe="$3"
schema="$4"
model="$5"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/common.sh"
export STRATA_MODEL="$model" # a fixed cost model: no calibration inside the test
ranks=2
iters=10

# bench ARGS...: the 2-rank run, the probe preloaded; output in $tmp/out, $tmp/err.
bench() {
  rm -f "$tmp"/root-probe.*
  env LD_PRELOAD="$probe${LD_PRELOAD:+:$LD_PRELOAD}" ROOT_PROBE_DIR="$tmp" \
    "$run" --native -n "$ranks" "$bench" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  cat "$tmp"/root-probe.* >>"$tmp/out" 2>/dev/null
  return $rc
}

bench --sizes 24,4K --iters "$iters" --root-shift --json "$tmp/b.json" --csv "$tmp/b.csv" ||
  fail "strata-bench --root-shift --json --csv failed"
[ -s "$tmp/b.json" ] && [ -s "$tmp/b.csv" ] || fail "no JSON or CSV written"
grep -q '^root      : shifts' "$tmp/out" || fail "the header does not say the root shifts"
grep -q '^per rank: ' "$tmp/out" || fail "no per-rank table"
python3 "$here/bench_schema_check.py" "$schema" "$tmp/b.json" >"$tmp/check" 2>&1 ||
  { cat "$tmp/check"; fail "the JSON does not match $schema"; }
cat "$tmp/check"

python3 - "$tmp/b.json" "$tmp/b.csv" "$ranks" "$iters" <<'EOF' || fail "the JSON or CSV is wrong"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
ranks, iters = int(sys.argv[3]), int(sys.argv[4])
problems = []
def want(ok, what):
    if not ok:
        problems.append(what)

want(doc["method"]["root_shift"] is True, "method.root_shift is not true")
want(doc["machine"]["ranks"] == ranks, "machine.ranks")
colls = ["bcast", "reduce", "allreduce", "allgather", "gather", "scatter", "alltoall"]
rscan = ["reduce_scatter_block", "reduce_scatter", "scan", "exscan"]
vcolls = ["gatherv", "scatterv", "allgatherv", "alltoallv"]
# Alltoallw as Alltoallv; the halo exchange: the neighbourhood collectives
# on a 2-D periodic grid, 4 neighbours.
halo = ["neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
        "neighbor_alltoallw"]
expected = ([(c, s) for c in colls for s in (24, 4096)] + [("barrier", 0)] +
            [(c, s) for c in rscan + vcolls + ["alltoallw"] + halo for s in (24, 4096)])
got = [(r["collective"], r["bytes"]) for r in doc["results"]]
want(got == expected, f"rows {got}, expected {expected}")
counted = {"bcast": 1, "reduce": 1, "allreduce": 1, "allgather": ranks, "gather": ranks,
           "scatter": ranks, "alltoall": ranks, "barrier": 0, "reduce_scatter_block": ranks,
           "reduce_scatter": ranks, "scan": 1, "exscan": 1, "gatherv": ranks,
           "scatterv": ranks, "allgatherv": ranks, "alltoallv": ranks, "alltoallw": ranks,
           **{c: 4 for c in halo}}
for r in doc["results"]:
    name = f"{r['collective']} {r['bytes']}"
    want(r["iterations"] == iters, f"{name}: {r['iterations']} iterations, not {iters}")
    want(r["bandwidth_bytes"] == counted[r["collective"]] * r["bytes"],
         f"{name}: bandwidth_bytes {r['bandwidth_bytes']}")
    for impl in ("native", "strata"):
        s = r[impl]
        spread = s["rank_mean"]
        want(0 < spread["min"] <= spread["median"] <= spread["max"],
             f"{name} {impl}: per-rank spread out of order {spread}")
        want(0 < s["min"] <= s["median"] <= s["max"], f"{name} {impl}: min/median/max")
        if r["bandwidth_bytes"]:
            bw = r["bandwidth_bytes"] / (s["median"] * 1e-6)
            want(abs(s["bandwidth_Bps"] / bw - 1) < 1e-3,
                 f"{name} {impl}: bandwidth {s['bandwidth_Bps']}, expected {bw}")
        else:
            want(s["bandwidth_Bps"] is None, f"{name} {impl}: a barrier bandwidth")

columns = ("collective,bytes,count,datatype,ranks,nodes,root_shift,cold,algorithm,k,tuned,"
           "predicted_us,implementation,path,reason,iterations,median_us,min_us,max_us,"
           "rank_min_us,rank_median_us,rank_max_us,bandwidth_bytes,bandwidth_Bps,"
           "ratio_to_native").split(",")
lines = list(csv.reader(open(sys.argv[2])))
want(lines[0] == columns, f"CSV columns {lines[0]}")
by_key = {}
for line in lines[1:]:
    want(len(line) == len(columns), f"CSV line of {len(line)} fields: {line}")
    row = dict(zip(columns, line))
    by_key[(row["collective"], int(row["bytes"]), row["implementation"])] = row
    want(row["root_shift"] == "1" and row["ranks"] == str(ranks), f"CSV line {line}")
for r in doc["results"]:
    for impl in ("native", "strata"):
        row = by_key.get((r["collective"], r["bytes"], impl))
        if not row:
            problems.append(f"CSV lacks {r['collective']} {r['bytes']} {impl}")
            continue
        want(abs(float(row["median_us"]) - r[impl]["median"]) < 1e-3,
             f"CSV {r['collective']} {r['bytes']} {impl}: median {row['median_us']}")
        want(abs(float(row["rank_max_us"]) - r[impl]["rank_mean"]["max"]) < 1e-3,
             f"CSV {r['collective']} {r['bytes']} {impl}: rank_max {row['rank_max_us']}")
copies = [k for k in by_key if k[2] == "one_copy"]
want(all(k[0] == "bcast" for k in copies), "a one_copy line for another collective")
want(len(by_key) == 2 * len(doc["results"]) + len(copies), "CSV lines are not one per row "
     "and implementation")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
EOF
echo "ok: --root-shift --json --csv: valid JSON, figures consistent, CSV columns and values"

# probe_count KIND ROOT: how many of rank 0's host-MPI calls of KIND had ROOT.
probe_count() {
  local n
  n="$(sed -n 's/^root-probe rank 0: //p' "$tmp/out" | tr ' ' '\n' |
       sed -n "/^$1\$/,/^[a-z]/s/^$2=//p")"
  echo "${n:-0}"
}
grep -q '^root-probe rank 0: ' "$tmp/out" ||
  fail "no root-probe line from rank 0 (was $probe preloaded?)"
# Per row, 5 warm-up and $iters timed iterations, iteration i with root i % 2;
# 2 sizes.  Root 0 also has strata-bench's own bookkeeping: after each row a
# PMPI_Reduce and a PMPI_Gather of the times, and a PMPI_Bcast at set-up.
root1=$((2 * ((5 + iters) / 2)))
root0=$((2 * (5 + iters) - root1))
for kind in bcast reduce gather scatter; do
  [ "$(probe_count $kind 1)" -ge "$root1" ] && [ "$(probe_count $kind 1)" -le "$((root1 + 1))" ] &&
    [ "$(probe_count $kind 0)" -ge "$root0" ] ||
    fail "--root-shift: $kind had root 0 $(probe_count $kind 0) times and root 1" \
         "$(probe_count $kind 1), expected $root0 (or more) and $root1"
done
echo "ok: --root-shift: the host MPI's bcast, reduce, gather and scatter had roots 0 and 1" \
     "in turn ($root0 and $root1 times)"

bench --sizes 24,4K --iters "$iters" --colls bcast,reduce,gather,scatter ||
  fail "strata-bench without --root-shift failed"
for kind in bcast reduce gather scatter; do
  # bcast: strata-bench's set-up makes one call with root 1.
  [ "$(probe_count $kind 1)" -le "$([ $kind = bcast ] && echo 1 || echo 0)" ] &&
    [ "$(probe_count $kind 0)" -ge "$((2 * (5 + iters)))" ] ||
    fail "without --root-shift: $kind had root 1 $(probe_count $kind 1) times"
done
grep -q '^root-probe rank 0: ' "$tmp/out" || fail "no root-probe line from rank 0"
grep -q '^root      : rank 0' "$tmp/out" || fail "the header does not name root 0"
echo "ok: without --root-shift every timed call has root 0"

bench --sweep --colls bcast --iters 1 --json "$tmp/sweep.json" || fail "--sweep failed"
python3 - "$tmp/sweep.json" <<'EOF' || fail "--sweep did not run 8 B to 16 MiB"
import json, sys
doc = json.load(open(sys.argv[1]))
sizes = [r["bytes"] for r in doc["results"]]
want = [8 << i for i in range(22)]
if sizes != want or not doc["method"]["sweep"]:
    print(f"  sizes {sizes}, sweep {doc['method']['sweep']}")
    sys.exit(1)
EOF
echo "ok: --sweep: bcast at every power of 2 from 8 B to 16 MiB"

# refuse ARGS... WORDS: exit status 2 and a message with WORDS.
refuse() {
  local words="$1"
  shift
  bench "$@"
  local rc=$?
  [ "$rc" = 2 ] || fail "strata-bench $* exited $rc, not 2"
  grep -qF -- "$words" "$tmp/err" || fail "strata-bench $*: no message \"$words\""
}
refuse 'leave out --sizes' --sweep --sizes 8
refuse 'does not combine with --noise' --sweep --noise
refuse '--csv needs a value' --csv
echo "ok: --sweep with --sizes or --noise, --csv without a file: refused"

# --algorithms --fit: one "measured" line per forced row (the tuned row is
# strata's own choice and does not count), its ratio the row's strata
# median over its prediction (printed to 3 decimals, written to 4 digits).
refuse '--fit needs --algorithms' --sizes 8 --fit "$tmp/fit.conf"
bench --algorithms --colls allgather --sizes 64K --iters 3 --fit "$tmp/fit.conf" ||
  fail "strata-bench --algorithms --fit failed"
grep -E '^allgather +64K [a-z]' "$tmp/out" | grep -v ' tuned: ' | awk '{ print $3, $7 }' | sort >"$tmp/rows"
[ -s "$tmp/rows" ] || fail "--algorithms printed no forced row"
awk '$1 == "measured" && $2 == "allgather" && $3 == 2 && $6 == 17 { sub(/:.*/, "", $7); print $7, $8 }' \
  "$tmp/fit.conf" | sort >"$tmp/fitted"
[ "$(cut -d' ' -f1 "$tmp/rows")" = "$(cut -d' ' -f1 "$tmp/fitted")" ] ||
  fail "--fit wrote lines for $(cut -d' ' -f1 "$tmp/fitted" | tr '\n' ' ')against rows $(cut -d' ' -f1 "$tmp/rows" | tr '\n' ' ')"
# Within the two roundings: 3 decimals printed, 4 significant digits written
# (a ratio of 1151.556 is written 1152: a slow host, MPICH 5 beside other
# jobs on 2 cores, makes such ratios).
paste -d' ' "$tmp/rows" "$tmp/fitted" |
  awk '{ d = $2 - $4; if (d < 0) d = -d; a = $2 < 0 ? -$2 : $2
         tol = 0.0005 + 0.0005 * a; if (tol < 0.0015) tol = 0.0015; if (d > tol) exit 1 }' ||
  fail "--fit's ratios differ from the rows' strata/predicted: $(paste -d' ' "$tmp/rows" "$tmp/fitted")"
env STRATA_MODEL="$tmp/fit.conf" "$run" --native -n 1 "$(dirname "$bench")/strata-info" --explain allgather 64K -n 2 \
  >"$tmp/out" 2>"$tmp/err" || fail "the fitted model does not load"
echo "ok: --algorithms --fit: a measured line per forced row, loaded by strata-info"

# --nonblocking: the overlap table of the nonblocking forms, one of the first
# eight and two of the newer collectives (each posts its own I-form).
bench --nonblocking --sizes 4K --colls bcast,allreduce,scan,gatherv --iters 2 ||
  fail "--nonblocking failed"
for name in Ibcast Iallreduce Iscan Igatherv; do
  grep -Eq "^$name +4K \|" "$tmp/out" || fail "--nonblocking: no $name row"
done
grep -q '^progress: inside MPI calls only' "$tmp/out" || fail "--nonblocking: no progress line"
echo "ok: --nonblocking: a row per collective, the progress line"
refuse 'forms of bcast to barrier only' --persistent --colls scan
bench --persistent --sizes 4K --colls allreduce --iters 2 || fail "--persistent failed"
grep -Eq "^Allreduce_init +4K \|" "$tmp/out" || fail "--persistent: no Allreduce_init row"
echo "ok: --persistent: a row of MPI_Allreduce_init starts"
# --load: the competitors run beside the job, are recorded, and are gone
# after it, also when a rank is killed (they die with their parent).
gone() { # the competitors: strata-bench processes whose parent is a strata-bench
  local left
  left=$(ps -eo pid=,ppid=,args= | awk -v b="$bench" '$3 == b { pid[$1] = $2 }
         END { for (p in pid) if (pid[p] in pid) n++; print n + 0 }')
  [ "$left" = 0 ]
}
bench --sizes 8 --colls bcast --iters 3 --load 2 --load-kind noise --json "$tmp/l.json" ||
  fail "strata-bench --load 2 failed"
grep -q '^load      : 2 noise processes per node' "$tmp/out" || fail "the header does not show the load"
python3 "$here/bench_schema_check.py" "$schema" "$tmp/l.json" >"$tmp/check" 2>&1 ||
  { cat "$tmp/check"; fail "the --load JSON does not match $schema"; }
python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["method"]["load"]
sys.exit(l != {"processes": 2, "kind": "noise", "pinned": False})' "$tmp/l.json" ||
  fail "method.load is not 2 noise processes"
gone || fail "load processes left after the run"
"$run" --native -n "$ranks" "$bench" --sizes 4M --colls bcast --iters 100000 --load 2 \
  >/dev/null 2>&1 &
job=$!
for _ in $(seq 100); do
  ranks_up=$(ps -eo pid=,ppid=,args= | awk -v b="$bench" '$3 == b { pid[$1] = $2 }
             END { for (p in pid) if (pid[p] in pid) n++; print n + 0 }')
  [ "$ranks_up" -ge 2 ] && break
  sleep 0.1
done
[ "$ranks_up" -ge 2 ] || { kill "$job"; fail "the load never started"; }
# SIGKILL every rank (a strata-bench whose parent is not one): no clean-up runs.
ps -eo pid=,ppid=,args= | awk -v b="$bench" '$3 == b { pid[$1] = $2 }
  END { for (p in pid) if (!(pid[p] in pid)) print p }' | xargs -r kill -KILL
wait "$job" 2>/dev/null
for _ in $(seq 50); do gone && break; sleep 0.1; done
gone || fail "load processes left after the ranks were killed"
echo "ok: --load: header, JSON, nothing left after the run or after SIGKILL of the ranks"
echo "PASS strata-bench files, root shift, sweep"
