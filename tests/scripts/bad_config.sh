#!/usr/bin/env bash
# strata's configuration messages, with PROGRAM (prog_checksum) preloaded:
#   bad_config.sh STRATA_RUN PROGRAM [RANKS [STRATA_INFO]]
# - a bad value of a STRATA_ variable stops the job (non-zero exit, before
#   the program gets anywhere) with a message naming the variable, the value
#   and what the variable accepts, as documented by `strata-info --config`
#   (STRATA_INFO, by default beside STRATA_RUN), also when only one rank has
#   it; EVERY variable `strata-info --config` lists is tried (the table
#   below must have a bad value for each, so a new variable cannot be left
#   out);
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
# The same as one process started without a launcher (an MPI singleton: a
# fraction of a launch's time): a bad value is judged at MPI_Init whatever
# the size.
lib="$(dirname "$run")/../lib/libstrata.so"
# run_one_with VAR=value [PREFIX]: output in PREFIX.out and PREFIX.err
# (default $tmp/out and $tmp/err).
run_one_with() {
  local to="${2:-}"
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LD_PRELOAD="$lib" "$1" "$prog" \
    >"${to:-$tmp/out}${to:+.out}" 2>"${to:-$tmp/err}${to:+.err}"
}
runner=run_with

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
  if "$runner" "$var=$value"; then fail "$var=$value was accepted"; fi
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
# A list is checked against the machine once its topology is known: an
# object it lacks stops the job like any bad value.
expect_rejected STRATA_MAP core:0,core:999 '"core:999" names an object this machine does not have' \
  "core 0 to"
# A rank of MPI_COMM_WORLD: checked once the job's size is known.
expect_rejected STRATA_TEST_REFUSE_RANK "$ranks" "MPI_COMM_WORLD has $ranks rank" "0 to $((ranks - 1))"

# ---- Every variable, with a bad value (one rank each: quick).
# VAR|value|how|words: how is "doc" (the message repeats the documented
# "accepts" text, and has each word), "own" (a message of its own: it names
# the variable and the value and has each word, e.g. the algorithms a
# collective has, or why a file cannot be used) or "known" (not rejected at
# start-up today: a known gap, reported; the line says what happens instead,
# and the test fails once it is fixed, so that the row is updated).
bad_values='
STRATA_DISABLE|2|doc
STRATA_VERBOSE|7|doc
STRATA_HIERARCHY|l3,bogus|doc|"bogus" is not a level
STRATA_TOPOLOGY|pack:bogus|doc
STRATA_MAP|sideways|doc
STRATA_VIRTUAL_NODES|0|doc
STRATA_VIRTUAL_LAYOUT|diagonal|doc
STRATA_TEST_REFUSE_RANK|-2|doc
STRATA_TEST_HOST_TIME_PERCENT|0|doc
STRATA_CMA|2|doc
STRATA_TRANSPORT|knem|doc
STRATA_SHARED_HEAP|2|doc
STRATA_SHARED_HEAP_MIN|1|doc
STRATA_CICO_MAX|32|doc
STRATA_CHUNK|1|doc
STRATA_REDUCE_CHUNK|1K|doc
STRATA_REDUCE_MIN_SLICE|4|doc
STRATA_THROTTLE|-1|doc
STRATA_SPIN|fast|doc
STRATA_WAIT|sleepy|doc
STRATA_PROGRESS|threads|doc
STRATA_BLOCK_AFTER|-5|doc
STRATA_NET_SEGMENT|512|doc
STRATA_NET_SENDS|0|doc
STRATA_NET_RECVS|65|doc
STRATA_NET_REDUCE_LEADERS|3|doc
STRATA_CHECK_ARGS|yes|doc
STRATA_NET_TREE|knomial:0|doc
STRATA_SHM_MAX|12Q|doc
STRATA_CMA_MAX_PER_CALL|2G|doc
STRATA_CUDA|2|doc
STRATA_CUDA_LIB||doc
STRATA_CUDA_CHUNK|1K|doc
STRATA_CUDA_PLUGIN||doc
STRATA_STATS|/nonexistent-dir/s.json|doc|cannot be written (No such file or directory)
STRATA_MODEL|/nonexistent-dir/model.conf|own|cannot open
STRATA_CALIBRATE|1|doc
STRATA_LEARN|yes|doc
STRATA_TUNING_FILE|/nonexistent-dir/tuning.json|own|cannot be opened
STRATA_BCAST_ALGORITHM|bogus|own|accepts pipelined,|knomial[:k]
STRATA_GATHER_ALGORITHM|bogus|own|accepts copy-in-copy-out,|throttled-write[:k]
STRATA_SCATTER_ALGORITHM|bogus|own|accepts copy-in-copy-out,|throttled-read[:k]
STRATA_ALLGATHER_ALGORITHM|bogus|own|accepts copy-in-copy-out,|ring-neighbour[:k]|bruck
STRATA_ALLTOALL_ALGORITHM|bogus|own|accepts copy-in-copy-out,|pairwise
'

listed=$(sed -n 's/^  \(STRATA_[A-Z0-9_]*\) *= .*/\1/p' "$tmp/config")
[ -n "$listed" ] || fail "strata-info --config lists no variable"

# The singletons first, several at a time (each mostly waits for the host
# MPI's start-up: 0.4 s of which a few hundredths are CPU), each into files
# of its own; run_saved then hands a run's files and status to the checks.
for var in $listed; do
  row=$(printf '%s\n' "$bad_values" | grep "^$var|" || true)
  [ -n "$row" ] ||
    fail "$var (listed by strata-info --config) has no bad value in bad_config.sh: add one"
  IFS='|' read -r _ value _ <<<"$row"
  while [ "$(jobs -rp | wc -l)" -ge 6 ]; do wait -n; done
  (
    run_one_with "$var=$value" "$tmp/$var"
    echo $? >"$tmp/$var.rc"
  ) &
done
wait
# run_saved VAR=value: the saved run of VAR's singleton.
run_saved() {
  local var="${1%%=*}"
  cp "$tmp/$var.out" "$tmp/out" && cp "$tmp/$var.err" "$tmp/err" ||
    fail "no saved run of $var"
  return "$(cat "$tmp/$var.rc")"
}
tried=0
for var in $listed; do
  row=$(printf '%s\n' "$bad_values" | grep "^$var|" || true)
  IFS='|' read -r _ value how words <<<"$row"
  IFS='|' read -r -a words <<<"$words"
  case "$how" in
    doc) runner=run_saved expect_rejected "$var" "$value" "${words[@]}" ;;
    own)
      if run_saved "$var=$value"; then fail "$var=$value was accepted"; fi
      if grep -q ' calls=' "$tmp/out"; then fail "the program ran with $var=$value"; fi
      line="$(grep -E '^strata\[[0-9]+\]: error: ' "$tmp/err" | grep -F "$var" |
              grep -F -- "$value" | head -n 1)"
      [ -n "$line" ] || fail "no strata error line names $var and $value"
      for w in "${words[@]}"; do
        case "$line" in *"$w"*) ;; *) fail "the message for $var lacks \"$w\": $line" ;; esac
      done
      echo "ok: $line"
      ;;
    known)
      run_saved "$var=$value" ||
        fail "$var=$value is rejected now: update its row in bad_config.sh"
      grep -qF "${words[0]}" "$tmp/err" || fail "$var=$value: no \"${words[0]}\" message"
      echo "KNOWN: $var=$value is not rejected at start-up; at MPI_Finalize: ${words[0]}"
      ;;
    *) fail "bad_config.sh: row of $var: unknown kind $how" ;;
  esac
  tried=$((tried + 1))
done
echo "ok: a bad value of each of the $tried variables strata-info --config lists was tried"

# A collective without algorithms to choose from: its variable is refused
# saying so, not with an empty list of accepted values.
for var in STRATA_ALLREDUCE_ALGORITHM STRATA_BARRIER_ALGORITHM; do
  if run_one_with "$var=ring"; then fail "$var=ring was accepted"; fi
  line="$(grep -E '^strata\[[0-9]+\]: error: ' "$tmp/err" | grep -F "$var=\"ring\"" | head -n 1)"
  [ -n "$line" ] || fail "no strata error line names $var=\"ring\""
  case "$line" in
    *"has no algorithms to choose from"*"accepts no value"*) ;;
    *) fail "the message for $var does not say that it accepts no value: $line" ;;
  esac
  echo "ok: $line"
done

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
