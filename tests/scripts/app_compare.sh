#!/usr/bin/env bash
# scripts/app-compare.sh: equal checksums give status 0 and "checksums equal:
# yes"; different ones status 1 and "NO".
#   app_compare.sh APP_COMPARE BUILD_DIR RANKS
# The second case runs a stand-in for an application that prints a RESULT
# line whose checksum says whether libstrata was preloaded: so it also shows
# that the script's strata runs have strata and its native runs do not.
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 APP_COMPARE BUILD_DIR RANKS"; exit 2; }
compare="$1"
build="$2"
ranks="$3"
model="${STRATA_MODEL:-}"
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ -n "$model" ] && export STRATA_MODEL="$model"

"$compare" --build "$build" -n "$ranks" --reps 2 asp 96 >"$tmp/out" 2>"$tmp/err" ||
  fail "app-compare.sh asp 96 failed (status $?)"
grep -q '^checksums equal: yes$' "$tmp/out" || fail "no 'checksums equal: yes' for asp"
[ "$(grep -Ec '^(native|strata) +[12] ' "$tmp/out")" -eq 4 ] ||
  fail "the table does not have two native and two strata runs"
[ "$(grep -Ec '^(native|strata) +med ' "$tmp/out")" -eq 2 ] || fail "no median rows"

cat >"$tmp/fake" <<'FAKE'
#!/bin/sh
case "${LD_PRELOAD:-}" in *libstrata*) sum=5151515151515151 ;; *) sum=0000000000000000 ;; esac
echo "RESULT app=fake ranks=1 total_s=0.1 coll=MPI_Bcast coll_max_s=0.05 coll_mean_s=0.05 calls=1 bytes=8 checksum=$sum verified=skipped"
FAKE
chmod +x "$tmp/fake"
"$compare" --build "$build" -n 1 --reps 1 "$tmp/fake" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 1 ] || fail "app-compare.sh gave status $status for different checksums, not 1"
grep -q '^checksums equal: NO$' "$tmp/out" || fail "no 'checksums equal: NO' for different checksums"
grep -Eq '^native +1 .* 0000000000000000 ' "$tmp/out" || fail "the native run had strata preloaded"
grep -Eq '^strata +1 .* 5151515151515151 ' "$tmp/out" || fail "the strata run had no strata preloaded"
echo "PASS app-compare.sh: equal checksums accepted, different ones rejected (status 1)"
