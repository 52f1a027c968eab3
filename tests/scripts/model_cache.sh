#!/usr/bin/env bash
# The cost-model cache (the file strata reads when STRATA_MODEL is unset) is
# the user's alone: with no home (HOME empty or unset) and XDG_CACHE_HOME
# unset it lives in a private directory of $TMPDIR (else /tmp), never in a
# name any user can plant.  The jobs run with HOME empty rather than unset:
# Open MPI 5 will not start without HOME ("Unable to get the user home
# directory" from opal_init, launcher and ranks alike) but takes an empty
# one, and strata treats an empty HOME as none (coll/model.c), so every host
# reaches the same $TMPDIR path.
#   model_cache.sh STRATA_RUN PROGRAM STRATA_INFO STRATA_CALIBRATE [RANKS]
# Runs as root (it plants files owned by `nobody`); as anyone else it skips
# (exit 77).  Checks, each with a 2-rank job:
# - a cache directory or file owned by another user (a bad value in it,
#   or valid values) is refused with one warning, the job completes and the
#   built-in model decides (`strata-info --explain` names its model);
# - the user's own cache file writable by others is refused the same way;
# - the user's own private cache file is used (the checks refuse no more);
# - the files planted at the old shared name /tmp/strata-model-UID-HOST.conf
#   are not read;
# - strata-calibrate writing the model never follows a symbolic link planted
#   at its temporary name (the victim's file is left as it was);
# - the same job as an unprivileged user (nobody, through runuser) against a
#   directory planted by root (skipped with a message where it cannot run).
set -uo pipefail
run=$1 prog=$2 info=$3 calibrate=$4 ranks=${5:-2}
. "$(dirname "$0")/common.sh"

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: planting files as another user needs root"
  exit 77
fi
nobody_uid=$(id -u nobody 2>/dev/null) || { echo "SKIP: no user nobody"; exit 77; }
host=$(hostname)
chmod 755 "$tmp" # the unprivileged part's job runs in it
td="$tmp/tmpdir"
mkdir -m 1777 "$td"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The old shared names, planted while no other copy of this test can plant
# them (another build's run of it), removed on exit.
legacy=()
exec 9>/tmp/strata-model-cache-test.lock
flock -w 300 9 || fail "another run of this test held its lock for 5 minutes"
trap 'rm -rf "$tmp"; rm -f "${legacy[@]}"' EXIT
# plant_legacy UID OWNER CONTENT
plant_legacy() {
  local f="/tmp/strata-model-$1-$host.conf"
  if [ -e "$f" ] || [ -L "$f" ]; then
    echo "note: $f exists already: not planted there"
    return
  fi
  printf '%s\n' "$3" >"$f" && chown "$2" "$f" && legacy+=("$f")
}

# job NAME [VAR=value...] -- COMMAND...: runs COMMAND as root with HOME empty,
# XDG_CACHE_HOME unset and the cache under $td; output in $tmp/NAME.out/.err,
# exit status in $rc.
job() {
  local name=$1
  shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env -u XDG_CACHE_HOME HOME= TMPDIR="$td" STRATA_CALIBRATE=0 "${vars[@]}" \
    timeout -k 5 120 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  cp "$tmp/$name.out" "$tmp/out"
  cp "$tmp/$name.err" "$tmp/err"
}
warnings() { grep -Ec '^strata\[[0-9]+\]: warning: .*cost model' "$tmp/$1.err"; }
# expect_refused NAME WHAT: the job completed, said so in one warning, and the
# built-in model decided.
expect_refused() {
  [ "$rc" = 0 ] || fail "$2: the job failed (exit $rc)"
  grep -q 'is not a number' "$tmp/$1.err" && fail "$2: the planted file was read"
  local n
  n=$(warnings "$1")
  [ "$n" = 1 ] || fail "$2: $n warnings about the cost model, expected 1"
  echo "ok: $2: $(grep -E '^strata\[[0-9]+\]: warning: .*cost model' "$tmp/$1.err")"
}
explain() { job "$1" -- "$run" --native -n "$ranks" "$info" --explain bcast 64K; }
expect_builtin() {
  grep -q '^Cost model: built-in defaults' "$tmp/$1.out" ||
    fail "$2: the explanation used another model: $(grep '^Cost model' "$tmp/$1.out")"
  grep -q planted "$tmp/$1.out" && fail "$2: the planted values steered the model"
  echo "ok: $2: the built-in model decided"
}

cache_dir="$td/strata-0"
cache="$cache_dir/model-$host.conf"
# A value that stops the job of anyone who reads it as their own cache.
planted_bad='beta_us_per_byte planted'
valid=$'machine planted-by-nobody\nshm_us_per_byte 1e-9\nbeta_us_per_byte 1'

# ---- A directory planted by another user, with a bad value in its file.
mkdir -m 755 "$cache_dir"
printf '%s\n' "$planted_bad" >"$cache"
chown -R nobody "$cache_dir"
plant_legacy 0 nobody "$planted_bad"
job foreign-dir -- "$run" -n "$ranks" "$prog"
expect_refused foreign-dir "a directory of nobody's, a bad value"
rm -f "${legacy[@]}"; legacy=()

# ---- The user's own private directory, a file of nobody's with valid values.
rm -rf "$cache_dir"
mkdir -m 700 "$cache_dir"
printf '%s\n' "$valid" >"$cache"
chown nobody "$cache"
plant_legacy 0 nobody "$valid"
explain foreign-file
expect_refused foreign-file "a file of nobody's, valid values"
expect_builtin foreign-file "a file of nobody's, valid values"
rm -f "${legacy[@]}"; legacy=()

# ---- The user's own file, writable by others.
chown root "$cache"
chmod 666 "$cache"
explain writable
expect_refused writable "the user's file, mode 666"
expect_builtin writable "the user's file, mode 666"

# ---- The user's own private file: used.
chmod 600 "$cache"
sed -i 's/planted-by-nobody/the-users-own/' "$cache"
explain own
[ "$rc" = 0 ] || fail "the user's own cache: the job failed (exit $rc)"
[ "$(warnings own)" = 0 ] || fail "the user's own cache was refused"
grep -q "^Cost model: $cache\$" "$tmp/own.out" ||
  fail "the user's own cache was not used: $(grep '^Cost model' "$tmp/own.out")"
echo "ok: the user's own private cache file is used"

# ---- The user's own cache with a key this build does not know (a newer
# strata-calibrate wrote it): skipped, named at STRATA_VERBOSE=2, the rest
# of the file used.
printf 'machine the-users-own\nnewer_key_us 1\n' >"$cache"
job own-newer -- env STRATA_VERBOSE=2 "$run" --native -n "$ranks" "$info" --explain bcast 64K
[ "$rc" = 0 ] || fail "the user's own cache with a newer key stopped the job (exit $rc)"
grep -q "has keys this build does not know.*skipped: newer_key_us" "$tmp/own-newer.err" ||
  fail "the skipped key was not named"
grep -q "^Cost model: $cache\$" "$tmp/own-newer.out" ||
  fail "the cache with a newer key was not used: $(grep '^Cost model' "$tmp/own-newer.out")"
echo "ok: a key of a newer strata-calibrate in the user's own cache is skipped"

# ---- The user's own cache with a bad value: the job stops, and the message
# says which file it is (no STRATA_MODEL named it).
printf '%s\n' "$planted_bad" >"$cache"
job own-bad -- "$run" -n "$ranks" "$prog"
[ "$rc" != 0 ] || fail "the user's own cache with a bad value was accepted"
grep -Eq "^strata\[[0-9]+\]: error: the cached cost model $cache:1: .*is not a number" "$tmp/own-bad.err" ||
  fail "the error does not name the cached cost model"
grep -q 'STRATA_MODEL:' "$tmp/own-bad.err" && fail "the error blames STRATA_MODEL, which is unset"
echo "ok: a bad value in the user's own cache: $(grep -E '^strata\[[0-9]+\]: error: ' "$tmp/own-bad.err" |
  head -c 160)"

# ---- strata-calibrate never writes through a link at its temporary name:
# the shell's pid is strata-calibrate's after exec.
printf 'the victim\n' >"$tmp/victim"
plant_and_calibrate() {
  bash -c 'ln -s "$1" "$2.tmp.$$" && exec "$3" --quiet --output "$2"' _ "$tmp/victim" "$1" \
    "$calibrate"
}
plant_and_calibrate "$tmp/out.conf" >"$tmp/out" 2>"$tmp/err"
calibrated=$?
[ "$(cat "$tmp/victim")" = 'the victim' ] ||
  fail "strata-calibrate wrote through the link at its temporary name"
[ -L "$tmp/out.conf" ] && fail "strata-calibrate renamed the planted link over its output"
[ "$calibrated" != 0 ] || fail "strata-calibrate reported success writing through a planted link"
grep -q 'cannot write' "$tmp/err" || fail "strata-calibrate did not say why it could not write"
echo "ok: a link at the temporary name: the victim's file is untouched" \
  "($(grep 'cannot write' "$tmp/err"))"

# ---- The same in a cache directory of nobody's (the default output).
rm -rf "$cache_dir"
mkdir -m 777 "$cache_dir"
chown nobody "$cache_dir"
# (Where an older strata would write instead: removed on exit.)
[ -e "/tmp/strata-model-0-$host.conf" ] || legacy+=("/tmp/strata-model-0-$host.conf")
env -u XDG_CACHE_HOME HOME= TMPDIR="$td" \
  bash -c 'ln -s "$1" "$2.tmp.$$" && exec "$3" --quiet' _ "$tmp/victim" "$cache" "$calibrate" \
  >"$tmp/out" 2>"$tmp/err"
calibrated=$?
[ "$(cat "$tmp/victim")" = 'the victim' ] ||
  fail "strata-calibrate wrote through a link in nobody's directory"
[ "$calibrated" != 0 ] || fail "strata-calibrate succeeded although its cache directory is nobody's"
[ -e "$cache" ] && fail "strata-calibrate wrote its model into a directory of nobody's"
echo "ok: strata-calibrate refuses a cache directory of nobody's"

# ---- An unprivileged user against a directory planted by root.
unpriv() {
  local d="$td/strata-$nobody_uid"
  if ! runuser -u nobody -- test -x "$prog" 2>/dev/null; then
    echo "SKIP (part): nobody cannot run $prog (runuser, or the build's permissions)"
    return
  fi
  mkdir -m 755 "$d"
  printf '%s\n' "$planted_bad" >"$d/model-$host.conf"
  plant_legacy "$nobody_uid" root "$planted_bad"
  runuser -u nobody -- env -u XDG_CACHE_HOME -u OMPI_ALLOW_RUN_AS_ROOT \
    -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM HOME= TMPDIR="$td" STRATA_CALIBRATE=0 \
    timeout -k 5 120 "$run" -n "$ranks" "$prog" >"$tmp/unpriv.out" 2>"$tmp/unpriv.err"
  rc=$?
  cp "$tmp/unpriv.out" "$tmp/out"
  cp "$tmp/unpriv.err" "$tmp/err"
  if [ "$rc" != 0 ] && grep -qiE 'session|orte_init|proxy|hydra' "$tmp/unpriv.err" &&
     ! grep -q 'is not a number' "$tmp/unpriv.err"; then
    echo "SKIP (part): the launcher cannot run as nobody here: $(head -n 3 "$tmp/unpriv.err")"
    return
  fi
  expect_refused unpriv "as nobody, a directory of root's"
}
unpriv
echo "PASS: the cost-model cache refuses what other users planted"
