#!/usr/bin/env bash
# STRATA_STATS end to end for one Bcast: strata-info --traffic predicts its
# bytes and messages by distance, the run counts them, and the JSON file
# written at MPI_Finalize is read back; all three must agree with the
# expectation computed by hand, and with each other.
#   stats_json.sh STRATA_RUN STRATA_INFO TEST_NODE_STATS RANKS INFO_PROCS BYTES ROOT
#                 ALGORITHM EXPECT_BYTES EXPECT_MESSAGES [VAR=value...]
# EXPECT_BYTES: multiples of BYTES per distance, "same_l3:4,same_numa:0,...";
# EXPECT_MESSAGES: messages per distance, "same_l3:4..16,..." (a range where
# timing decides).  INFO_PROCS: 1 has strata-info assume RANKS ranks placed
# by STRATA_MAP; RANKS has it read the placement of a real run.  The
# VAR=value settings (STRATA_TOPOLOGY, ...) reach every run.
set -uo pipefail
run="$1" info="$2" prog="$3" ranks="$4" info_procs="$5" bytes="$6" root="$7"
algorithm="$8" expect_bytes="$9" expect_msgs="${10}"
shift 10
. "$(dirname "$0")/common.sh"
for setting in "$@"; do export "${setting?}"; done
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the JSON file"; exit 77; }

# 1. The prediction, from the trees the collective follows.
"$run" --native -n "$info_procs" "$info" --traffic bcast "$bytes" --root "$root" -n "$ranks" \
  >"$tmp/out" 2>"$tmp/err" || fail "strata-info --traffic failed"
cp "$tmp/out" "$tmp/info"

# 2. The run: the program checks each call's counters itself.
STRATA_STATS="$tmp/stats.json" "$run" --native -n "$ranks" "$prog" --coll=bcast \
  --bytes="$bytes" --roots="$root" --expect="$expect_bytes" --expect-messages="$expect_msgs" \
  --algorithm="$algorithm" >"$tmp/out" 2>"$tmp/err" || fail "the counted run failed"
[ -s "$tmp/stats.json" ] || fail "STRATA_STATS wrote no file"

# 3. strata-info's table, the JSON file and the expectation side by side.
python3 - "$tmp/info" "$tmp/stats.json" "$ranks" "$bytes" "$algorithm" "$expect_bytes" \
  "$expect_msgs" <<'EOF' || fail "the prediction, the JSON file and the expectation differ"
import json, sys
from fractions import Fraction
info_path, json_path, ranks, size, algorithm, want_bytes, want_msgs = sys.argv[1:]
ranks, size = int(ranks), int(size)
dists = ["same_l3", "same_numa", "other_numa", "other_socket", "other_node"]

def pairs(text):
    return dict(item.split(":", 1) for item in text.split(","))

def span(text):
    lo, _, hi = text.partition("..")
    return int(lo), int(hi or lo)

problems = []
def check(ok, what):
    if not ok:
        problems.append(what)

want_b = {d: Fraction(v) * size for d, v in pairs(want_bytes).items()}
want_m = {d: span(v) for d, v in pairs(want_msgs).items()}

# strata-info: "  <distance>  <bytes>  <messages>" lines after the header.
predicted = {}
for line in open(info_path):
    f = line.split()
    if len(f) == 3 and f[0] in dists:
        predicted[f[0]] = (int(f[1]), span(f[2]))
check(sorted(predicted) == sorted(dists), "strata-info printed no complete table")
for d in dists:
    b, m = predicted.get(d, (None, None))
    check(b == want_b[d], f"strata-info: {d} {b} bytes, expected {want_b[d]}")
    check(m == want_m[d], f"strata-info: {d} messages {m}, expected {want_m[d]}")

stats = json.load(open(json_path))
check(stats["ranks"] == ranks, f"JSON ranks {stats['ranks']}, expected {ranks}")
colls = stats["collectives"]
bcast = colls["MPI_Bcast"]
for d in dists:
    b, m = bcast["bytes"][d], bcast["messages"][d]
    check(b == want_b[d], f"JSON: {d} {b} bytes, expected {want_b[d]}")
    lo, hi = want_m[d]
    check(lo <= m <= hi, f"JSON: {d} {m} messages, expected {lo}..{hi}")
    pb, (plo, phi) = predicted.get(d, (None, (0, -1)))
    check(b == pb and plo <= m <= phi, f"JSON {d} {b} bytes / {m} messages outside strata-info's")
check(bcast["calls_strata"] == ranks and bcast["calls_host"] == 0,
      f"JSON: Bcast calls {bcast['calls_strata']} strata, {bcast['calls_host']} host; "
      f"expected {ranks} strata (one per rank)")
check(bcast["algorithms"] == {algorithm: ranks},
      f"JSON: Bcast algorithms {bcast['algorithms']}, expected {{{algorithm!r}: {ranks}}}")
across = ranks if algorithm == "across nodes" else 0
check(bcast["calls_across_nodes"] == across,
      f"JSON: {bcast['calls_across_nodes']} Bcast calls across nodes, expected {across}")
# Every collective: served calls add up over algorithms; only Bcast moved
# bytes (the program's barriers across nodes send zero-byte messages).
for name, c in colls.items():
    check(sum(c["algorithms"].values()) == c["calls_strata"],
          f"JSON: {name}'s algorithm counts do not add up to its {c['calls_strata']} calls")
    if name != "MPI_Bcast":
        check(not any(c["bytes"].values()), f"JSON: bytes counted for {name}")
        check(name == "MPI_Barrier" or not any(c["messages"].values()),
              f"JSON: messages counted for {name}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
echo "PASS STRATA_STATS of a $bytes-byte Bcast on $ranks ranks: prediction, counters and JSON agree"
