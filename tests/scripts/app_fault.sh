#!/usr/bin/env bash
# The applications' checks catch a collective that returns wrong data: a
# preloaded helper (apps/fault_inject.c) zeroes the result of the third
# MPI_Bcast or MPI_Allreduce on one rank or all, and the run must fail,
# saying what it found.
#   app_fault.sh STRATA_RUN PROGRAM RANKS FAULT_LIB FAULT_RANK EXPECTED -- APP_ARGS...
# FAULT_RANK: a rank of MPI_COMM_WORLD, or -1 for every rank.  EXPECTED: a
# text the run's output must contain ("verify FAILED", "parameters differ").
# The host MPI alone runs it: the helper wraps MPI_ functions the way strata
# does, and the two would compete for them.
set -uo pipefail
[ $# -ge 7 ] || { echo "usage: $0 STRATA_RUN PROGRAM RANKS FAULT_LIB RANK EXPECTED -- ARGS..."; exit 2; }
run="$1"
prog="$2"
ranks="$3"
lib="$4"
victim="$5"
expected="$6"
[ "$7" = "--" ] || { echo "$0: no -- before the application's arguments"; exit 2; }
shift 7
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
name="$(basename "$prog") $* ($ranks ranks, result zeroed on rank $victim)"

# `env` starts each rank, so that only the application gets the helper.
if "$run" --native -n "$ranks" env LD_PRELOAD="$lib" STRATA_TEST_APP_FAULT_RANK="$victim" \
     "$prog" "$@" --verify >"$tmp/out" 2>"$tmp/err"; then
  fail "$name: the run succeeded although its collective returned wrong data"
fi
grep -q "$expected" "$tmp/out" || fail "$name: the output does not say '$expected'"
grep -q '^RESULT .* verified=no' "$tmp/out" || fail "$name: the RESULT line does not say verified=no"
echo "PASS $name: the run failed, saying '$expected'"
