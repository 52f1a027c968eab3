#!/usr/bin/env bash
# STRATA_TRANSPORT=auto (issue 19): the cost model picks the transport at
# MPI_Init and strata-info --explain says which, why and how a call is priced.
#   transport_auto.sh STRATA_RUN STRATA_INFO DATA_DIR RANKS
# Cases: the test model (map wins: its map_alpha is far below CMA's alpha);
# the same with map_alpha above alpha (cma wins); a named transport; the
# shared heap on (a 1 MiB call priced as copies through mappings, a 4 KiB
# one not); STRATA_VERBOSE=1 naming the transport and the reason.
set -uo pipefail
run=$1 info=$2 data=$3 ranks=$4
. "$(dirname "$0")/common.sh"

explain() { # explain SIZE [VAR=value...]: strata-info --explain bcast SIZE
  local size=$1
  shift
  env STRATA_MODEL="${model:-$data/model.conf}" "$@" timeout -k 5 60 "$run" -n "$ranks" "$info" \
    --explain bcast "$size" >"$tmp/out" 2>"$tmp/err" || fail "strata-info exited with $?"
}
expect() { grep -qF -- "$1" "$tmp/out" "$tmp/err" || fail "$2: no line with \"$1\""; echo "ok: $2"; }

explain 1M
expect "transport chosen at MPI_Init: map; auto, by the cost model: map" "the test model picks map"
expect "copies priced as: CMA (transport map" "without the heap a call is priced with CMA's figures"

sed 's/^alpha_us .*/alpha_us 0.01/' "$data/model.conf" >"$tmp/slow-map.conf"
grep -q '^alpha_us 0.01' "$tmp/slow-map.conf" || fail "the test model has no alpha_us line to change"
model="$tmp/slow-map.conf" explain 1M
expect "transport chosen at MPI_Init: cma; auto, by the cost model: cma (a mapped copy starts slower" \
  "CMA's start-up below map_alpha: cma"

explain 1M STRATA_TRANSPORT=cma
expect "transport chosen at MPI_Init: cma (named by STRATA_TRANSPORT" "a named transport is kept"

explain 1M STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=64K
expect "copies priced as: memcpy through peers' mappings" "the heap on: 1 MiB priced as mapped"
explain 4K STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=64K
grep -qF "copies priced as: memcpy" "$tmp/out" && fail "a 4 KiB call below the heap's threshold priced as mapped"
echo "ok: below the heap's threshold, not priced as mapped"

explain 1M STRATA_VERBOSE=1
expect "transport: map; auto, by the cost model: map" "STRATA_VERBOSE=1 names the transport and why"
echo "PASS: transport auto"
