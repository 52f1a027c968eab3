#!/usr/bin/env bash
# strata's configuration messages, with PROGRAM (prog_checksum) preloaded:
#   bad_config.sh STRATA_RUN PROGRAM [RANKS [STRATA_INFO]]
# - a bad value of a STRATA_ variable stops the job (non-zero exit, before
#   the program gets anywhere) with a message naming the variable, the value
#   and what the variable accepts, as documented by `strata-info --config`
#   (STRATA_INFO, by default beside STRATA_RUN), also when only one rank has
#   it;
# - STRATA_VERBOSE=1 prints exactly one line per communicator;
# - STRATA_VERBOSE=2 prints exactly one line per collective call, naming the
#   collective and saying who served it: strata (and how) or the host MPI
#   (and why).
set -uo pipefail
run="$1"
prog="$2"
ranks="${3:-2}"
info="${4:-$(dirname "$run")/strata-info}"
. "$(dirname "$0")/common.sh"

# run VAR=value...: runs the program preloaded with those settings.
run_with() {
  env "$@" "$run" -n "$ranks" "$prog" >"$tmp/out" 2>"$tmp/err"
}

"$run" --native -n 1 "$info" --config >"$tmp/config" 2>&1 || fail "strata-info --config failed"

# What `strata-info --config` says VAR accepts.
documented_accepts() {
  awk -v var="$1" '$1 == var { found = 1; next }
                   found && $1 == "accepts" { sub(/^ *accepts /, ""); print; exit }' "$tmp/config"
}

# expect_rejected VAR VALUE WORDS...: the job fails, and one error line names
# VAR and VALUE and says "accepts" followed by the documented text, with each
# of WORDS in it.
expect_rejected() {
  local var="$1" value="$2"
  shift 2
  if run_with "$var=$value"; then fail "$var=$value was accepted"; fi
  if grep -q ' calls=' "$tmp/out"; then fail "the program ran with $var=$value"; fi
  local line
  line="$(grep -F "$var=\"$value\"" "$tmp/err" | grep -E '^strata\[[0-9]+\]: error: ' | head -n 1)"
  [ -n "$line" ] || fail "no strata error line names $var=\"$value\""
  local accepts
  accepts="$(documented_accepts "$var")"
  [ -n "$accepts" ] || fail "strata-info --config does not document $var"
  case "$line" in
    *"accepts $accepts"*) ;;
    *) fail "the message does not say what $var accepts (\"$accepts\"): $line" ;;
  esac
  for w in "$@"; do
    case "$line" in *"$w"*) ;; *) fail "the message for $var lacks \"$w\": $line" ;; esac
  done
  echo "ok: $line"
}

expect_rejected STRATA_VERBOSE 7 "0, 1 or 2"
expect_rejected STRATA_HIERARCHY l3,bogus '"bogus" is not a level' l3 numa socket node
expect_rejected STRATA_VIRTUAL_NODES 0 "1 to 4096"
expect_rejected STRATA_MAP sideways actual core numa none

# A bad value on one rank only (the last): the whole job still stops, with
# that rank's message, rather than the others waiting for it.
if [ "$ranks" -ge 2 ]; then
  last=$((ranks - 1))
  # shellcheck disable=SC2016 # expanded by the rank's shell, not here
  if "$run" -n "$ranks" sh -c 'r="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}"
      if [ "$r" = "$0" ]; then export STRATA_VIRTUAL_NODES=-3; fi
      exec "$@"' "$last" "$prog" >"$tmp/out" 2>"$tmp/err"; then
    fail "STRATA_VIRTUAL_NODES=-3 on rank $last alone was accepted"
  fi
  grep -Eq "^strata\[$last\]: error: STRATA_VIRTUAL_NODES=\"-3\" is not valid" "$tmp/err" ||
    fail "no error line from rank $last for its STRATA_VIRTUAL_NODES=-3"
  echo "ok: a bad value on rank $last alone stops the job with its message"
fi

# STRATA_VERBOSE=1: the program makes MPI_COMM_WORLD, checksum-dup and one
# of checksum-half0/checksum-half1 per rank (half1 only with 2+ ranks).
run_with STRATA_VERBOSE=1 || fail "STRATA_VERBOSE=1 run failed"
names="MPI_COMM_WORLD checksum-dup checksum-half0"
[ "$ranks" -ge 2 ] && names="$names checksum-half1"
expected=0
for name in $names; do
  n="$(grep -cE "^strata\[[0-9]+\]: communicator #[0-9]+ $name \(size " "$tmp/err")"
  [ "$n" -eq 1 ] || fail "STRATA_VERBOSE=1 announced $name $n times, expected once"
  expected=$((expected + 1))
done
n="$(grep -cE '^strata\[[0-9]+\]: communicator #[0-9]+( [^ ]+)? \(size ' "$tmp/err")"
[ "$n" -eq "$expected" ] || fail "STRATA_VERBOSE=1 announced $n communicators, expected $expected"
n="$(grep -cE '^strata\[[0-9]+\]: strata .* over .*: [0-9]+ ranks? on ' "$tmp/err")"
[ "$n" -eq 1 ] || fail "STRATA_VERBOSE=1 printed the start-up line $n times, expected once"
if grep -q ' on communicator #' "$tmp/err"; then fail "STRATA_VERBOSE=1 printed per-call lines"; fi
echo "ok: STRATA_VERBOSE=1 announced each of the $expected communicators once"

# STRATA_VERBOSE=2: one line per call.  The program prints how many calls of
# each collective all ranks made together.
run_with STRATA_VERBOSE=2 || fail "STRATA_VERBOSE=2 run failed"
served='strata, [0-9]+ bytes, .+'
handed='host MPI \(.+\)'
total=0
for c in MPI_Bcast MPI_Reduce MPI_Allreduce MPI_Allgather MPI_Gather MPI_Scatter MPI_Alltoall \
         MPI_Barrier; do
  calls="$(sed -n "s/^$c calls=\([0-9]*\) .*/\1/p" "$tmp/out")"
  [ -n "$calls" ] || fail "the program printed no call count for $c"
  n="$(grep -cE "^strata\[[0-9]+\]: $c on communicator #[0-9]+: ($served|$handed)\$" "$tmp/err")"
  [ "$n" -eq "$calls" ] ||
    fail "STRATA_VERBOSE=2 printed $n lines for $c, the program made $calls calls"
  total=$((total + calls))
done
n="$(grep -c ' on communicator #' "$tmp/err")"
[ "$n" -eq "$total" ] || fail "$n per-call lines for $total calls: some say neither who nor why"
echo "ok: STRATA_VERBOSE=2 printed one line for each of $total calls"
echo "PASS bad configuration and verbose messages ($ranks ranks)"
