#!/usr/bin/env bash
# strata-run --native and strata-run with strata preloaded must print the
# same results for a program that knows nothing of strata.
#   native_vs_preload.sh STRATA_RUN PROGRAM [RANKS]
# PROGRAM (prog_checksum) prints one checksum line per collective from rank
# 0.  The preloaded run has STRATA_VERBOSE=2, so its stderr proves strata
# was really loaded and saw every collective; the native run's must not
# mention strata at all.
set -uo pipefail
run="$1"
prog="$2"
ranks="${3:-2}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f") (first 40 lines)"
    head -n 40 "$f"
  done
  exit 1
}

# The comparison means nothing if the program brings strata itself.
if ldd "$prog" | grep -q libstrata; then fail "$prog is linked with libstrata"; fi
# Only the settings of this test reach the ranks.
for v in $(env | sed -n 's/^\(STRATA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# A sanitizer build's libstrata cannot come before the ASan runtime in the
# preloaded programs' library lists; let ASan accept that (no effect otherwise).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

"$run" --native -n "$ranks" "$prog" >"$tmp/native.out" 2>"$tmp/native.err" ||
  fail "the native run failed"
STRATA_VERBOSE=2 "$run" -n "$ranks" "$prog" >"$tmp/preload.out" 2>"$tmp/preload.err" ||
  fail "the preloaded run failed"

for c in MPI_Bcast MPI_Reduce MPI_Allreduce MPI_Allgather MPI_Gather MPI_Scatter MPI_Alltoall \
         MPI_Barrier; do
  grep -Eq "^$c calls=[1-9][0-9]* checksum=[0-9a-f]{16}\$" "$tmp/native.out" ||
    fail "no checksum line for $c in the native output"
  grep -Eq "^strata\[[0-9]+\]: $c on communicator #[0-9]+: " "$tmp/preload.err" ||
    fail "strata was preloaded but reported no $c call"
done
[ "$(wc -l <"$tmp/native.out")" -eq 8 ] || fail "the native output is not 8 lines"
grep -q '^strata\[' "$tmp/preload.err" || fail "no strata[ line: strata was not loaded"
if grep -q 'strata\[' "$tmp/native.err"; then fail "strata was loaded in the --native run"; fi
diff -u "$tmp/native.out" "$tmp/preload.out" >"$tmp/diff" ||
  fail "results differ between the native and the preloaded run"
seen="$(grep -c ' on communicator #' "$tmp/preload.err")"
echo "PASS native vs preloaded ($ranks ranks): $seen calls seen by strata"
