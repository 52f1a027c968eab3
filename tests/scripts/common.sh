# Shared set-up of the test scripts (sourced): a private temporary folder
# removed on exit, no STRATA_ variable inherited from the caller, and fail()
# that shows the captured output ($tmp/out, $tmp/err) before failing.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for v in $(env | sed -n 's/^\(STRATA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# No correction of the model's choices by measurement (coll/learn.h): what
# a test expects must not depend on timings (learn_cache.sh turns it on).
export STRATA_LEARN=0
# A sanitizer build's libstrata cannot come before the ASan runtime in the
# preloaded programs' library lists; let ASan accept that (no effect otherwise).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

fail() {
  echo "FAIL: $*"
  for f in "$tmp"/out "$tmp"/err; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f") (first 40 lines)"
    head -n 40 "$f"
  done
  exit 1
}
