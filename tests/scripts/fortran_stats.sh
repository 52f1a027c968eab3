#!/usr/bin/env bash
# A Fortran program (tests/fortran/colls.F90, user_ops.F90) with strata
# preloaded: it must pass its own checks ("PASS fortran ..."), and
# STRATA_STATS must show every collective it called counted under its C
# name, as many calls served and handed to the host MPI as it says (its
# LINES "EXPECT MPI_X <served> <host>" lines, per rank; the file counts over
# the ranks).  With STRATA_VIRTUAL_NODES above 1, MPI_Alltoall is the
# host's, as strata leaves it across nodes by design; the v-collectives
# are composed across nodes (src/net/net_vblock.c).
#   fortran_stats.sh STRATA_RUN PROGRAM RANKS LINES [VAR=VALUE...]
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: $0 STRATA_RUN PROGRAM RANKS LINES [VAR=VALUE...]"; exit 2; }
lines="$4"
# shellcheck source=launch.sh
. "$(dirname "${BASH_SOURCE[0]}")/launch.sh" "$@"
shift 4
for setting in "$@"; do export "${setting?}"; done
export STRATA_STATS="$tmp/stats.json"
timeout 120 "$run" -n "$ranks" "$prog" >"$tmp/out" 2>"$tmp/err" || fail "the program failed"
grep -q '^PASS fortran ' "$tmp/out" || fail "no PASS line"
[ -s "$STRATA_STATS" ] || fail "no STRATA_STATS file: strata never set up"
grep '^EXPECT ' "$tmp/out" >"$tmp/expect"
[ "$(wc -l <"$tmp/expect")" -eq "$lines" ] || fail "expected $lines EXPECT lines"
python3 - "$STRATA_STATS" "$tmp/expect" "$ranks" "${STRATA_VIRTUAL_NODES:-1}" <<'PY' || fail "STRATA_STATS counts differ"
import json, sys
colls = json.load(open(sys.argv[1]))["collectives"]
ranks, nodes = int(sys.argv[3]), int(sys.argv[4])
bad = 0
for line in open(sys.argv[2]):
    _, name, served, host = line.split()
    got = colls.get(name, {"calls_strata": 0, "calls_host": 0})
    want = (int(served) * ranks, int(host) * ranks)
    # Across nodes strata leaves MPI_Alltoall by design.
    if nodes > 1 and name == "MPI_Alltoall":
        want = (0, want[0] + want[1])
    have = (got["calls_strata"], got["calls_host"])
    print(f"{name}: served/host {have}, expected {want}")
    bad |= have != want
sys.exit(bad)
PY
echo "PASS fortran stats: $(basename "$prog") on $ranks ranks"
