#!/usr/bin/env bash
# An application (apps/asp.c, apps/train.c) verified against its serial
# computation with and without strata, and strata shown to have served it.
#   app_check.sh STRATA_RUN PROGRAM RANKS [VAR=VALUE...] -- APP_ARGS...
# Runs PROGRAM APP_ARGS --verify with the host MPI alone (strata-run
# --native), then with strata preloaded, STRATA_STATS and the VAR=VALUE
# settings.  Both must verify (rank 0 compares the parallel result with a
# serial one) and print the same checksum; in the strata run, strata must
# have served every call of the application's collective (the STRATA_STATS
# file counts calls per rank: calls x ranks served, none handed to the host
# MPI), all across nodes when the settings make several
# (STRATA_VIRTUAL_NODES above 1).  (Not STRATA_VERBOSE=2: Open MPI's output
# forwarding can split lines of different ranks into each other.)  The native run must not load
# strata, and PROGRAM must not be linked with it (else --native would not
# be the host MPI alone).
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: $0 STRATA_RUN PROGRAM RANKS [VAR=VALUE...] -- ARGS..."; exit 2; }
# shellcheck source=launch.sh
. "$(dirname "${BASH_SOURCE[0]}")/launch.sh" "$@"
shift 3
settings=()
nodes=1
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    STRATA_*=*) settings+=("$1") ;;
    *) fail "not a STRATA_ setting: $1" ;;
  esac
  case "$1" in STRATA_VIRTUAL_NODES=*) nodes="${1#*=}" ;; esac
  shift
done
[ "${1:-}" = "--" ] || fail "no -- before the application's arguments"
shift
name="$(basename "$prog") $* ($ranks ranks${settings[*]:+, ${settings[*]}})"

if ldd "$prog" | grep -q libstrata; then fail "$prog is linked with libstrata"; fi

# field NAME FILE: the value of NAME=... on the RESULT line of FILE.
field() { sed -n "s/^RESULT .* $1=\([^ ]*\).*/\1/p" "$2" | tail -n 1; }

"$run" --native -n "$ranks" "$prog" "$@" --verify >"$tmp/out" 2>"$tmp/err" ||
  fail "$name: the native run failed"
grep -q 'verify OK' "$tmp/out" || fail "$name: the native run did not verify"
[ "$(field verified "$tmp/out")" = yes ] || fail "$name: the native RESULT line says not verified"
if grep -q 'strata\[' "$tmp/err"; then fail "$name: strata was loaded in the --native run"; fi
native_sum="$(field checksum "$tmp/out")"
[ -n "$native_sum" ] || fail "$name: no checksum in the native run"

env "${settings[@]}" STRATA_STATS="$tmp/stats.json" "$run" -n "$ranks" "$prog" "$@" --verify \
  >"$tmp/out" 2>"$tmp/err" || fail "$name: the strata run failed"
grep -q 'verify OK' "$tmp/out" || fail "$name: the strata run did not verify"
strata_sum="$(field checksum "$tmp/out")"
[ "$strata_sum" = "$native_sum" ] ||
  fail "$name: checksum $strata_sum with strata, $native_sum without"

coll="$(field coll "$tmp/out")"
calls="$(field calls "$tmp/out")"
[ -n "$coll" ] && [ -n "$calls" ] || fail "$name: no coll= or calls= on the RESULT line"
[ -s "$tmp/stats.json" ] || fail "$name: STRATA_STATS wrote no file"
# stats NAME: the count NAME of $coll in the STRATA_STATS file (calls summed
# over the ranks), from its "MPI_X": {"calls_strata": N, ...} members.
stats() {
  tr -d ' \n' <"$tmp/stats.json" | sed -n "s/.*\"$coll\":{[^}]*\"$1\":\([0-9]*\).*/\1/p"
}
served="$(stats calls_strata)"
to_host="$(stats calls_host)"
[ -n "$served" ] && [ -n "$to_host" ] || fail "$name: no call counts for $coll in the stats file"
[ "$to_host" -eq 0 ] || fail "$name: strata handed $to_host $coll calls to the host MPI"
[ "$served" -eq $((calls * ranks)) ] ||
  fail "$name: strata served $served $coll calls, the ranks made $((calls * ranks))"
if [ "$nodes" -gt 1 ]; then
  across="$(stats calls_across_nodes)"
  [ "${across:-0}" -eq "$served" ] ||
    fail "$name: only ${across:-0} of the $served $coll calls went across $nodes nodes"
fi
echo "PASS $name: verified with and without strata, checksum $native_sum," \
     "strata served all $served $coll calls"
