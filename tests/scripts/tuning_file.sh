#!/usr/bin/env bash
# Tuning files (STRATA_TUNING_FILE), with PROGRAM (prog_checksum) preloaded:
#   tuning_file.sh STRATA_RUN PROGRAM DATA_DIR [RANKS [STRATA_INFO]]
# - the rules of DATA_DIR/tuning-mpi.json decide the Scatter calls they
#   match (STRATA_VERBOSE=2 names the rule and its algorithm): blocks of up
#   to 100 bytes rule 1 (copy-in-copy-out), larger ones rule 2
#   (sequential-write), never rule 3 (the first match wins); its Gather rule
#   wants 4 ranks or more, so the model decides the Gathers of this run;
# - the results are the host MPI's (the checksums of a --native run);
# - a bad tuning file, or a missing one, stops the job before the program
#   runs, with a message naming the file, the rule and the problem;
# - strata-info --explain, as a single process, shows the model's view for
#   4 ranks and says which rule or override decides instead.
set -uo pipefail
run="$1"
prog="$2"
data="$3"
ranks="${4:-3}"
info="${5:-$(dirname "$run")/strata-info}"
. "$(dirname "$0")/common.sh"

rules="$data/tuning-mpi.json"
"$run" --native -n "$ranks" "$prog" >"$tmp/native" 2>&1 || fail "the native run failed"
env STRATA_VERBOSE=2 STRATA_TUNING_FILE="$rules" "$run" -n "$ranks" "$prog" >"$tmp/out" \
  2>"$tmp/err" || fail "the run with $rules failed"
diff -u "$tmp/native" "$tmp/out" >/dev/null || fail "results differ from the native run's"

# Rule 2 needs CMA; where it is not usable the rule is refused, said once,
# and the model decides those calls.
refused=0
if grep -q 'tuning file rule 2 asks for MPI_Scatter "sequential-write".*refused' "$tmp/err"; then
  refused=1
fi
small=0
large=0
while read -r line; do
  bytes="$(sed -n 's/.*: strata, \([0-9]*\) bytes, .*/\1/p' <<<"$line")"
  [ -n "$bytes" ] || continue
  # A one-rank communicator's call is a local copy: no rule or model decides it.
  case "$line" in *"one rank: "*) continue ;; esac
  if [ "$bytes" -le 100 ]; then
    want='copy-in-copy-out (tuning file rule 1)'
    small=$((small + 1))
  elif [ "$refused" = 1 ]; then
    want='(cost model'
    large=$((large + 1))
  else
    want='sequential-write (tuning file rule 2)'
    large=$((large + 1))
  fi
  case "$line" in *"$bytes bytes, $want"*) ;; *) fail "expected \"$want\": $line" ;; esac
done < <(grep -E '^strata\[[0-9]+\]: MPI_Scatter on communicator #' "$tmp/err")
[ "$small" -gt 0 ] && [ "$large" -gt 0 ] ||
  fail "expected Scatter calls of both sizes ($small of <= 100 bytes, $large larger)"
if grep -q 'tuning file rule 3' "$tmp/err"; then fail "rule 3 decided although rules 1-2 match first"; fi
if grep -E 'MPI_Gather on communicator' "$tmp/err" | grep -q 'tuning file'; then
  fail "the Gather rule (min_ranks 4) decided on fewer ranks"
fi
grep -q 'MPI_Gather on communicator #[0-9]*: strata, .*(cost model' "$tmp/err" ||
  fail "no Gather call decided by the model"
echo "ok: rules 1 and 2 decided $small + $large Scatter calls$([ "$refused" = 1 ] &&
  echo ' (rule 2 refused: no CMA)'), the model the Gathers; results as native"

# Without CMA rule 2's algorithm cannot run: the rule is refused with a
# message and the model decides (the first matching rule decides, even by
# being refused: rule 3 is not tried).
env STRATA_CMA=0 STRATA_VERBOSE=2 STRATA_TUNING_FILE="$rules" "$run" -n "$ranks" "$prog" \
  >"$tmp/out" 2>"$tmp/err" || fail "the run with $rules and STRATA_CMA=0 failed"
diff -u "$tmp/native" "$tmp/out" >/dev/null || fail "results differ from the native run's (no CMA)"
grep -q 'tuning file rule 2 asks for MPI_Scatter "sequential-write".*refused' "$tmp/err" ||
  fail "STRATA_CMA=0: no message that rule 2 is refused"
grep -q 'MPI_Scatter on communicator #[0-9]*: strata, 4000 bytes, copy-in-copy-out (cost model' \
  "$tmp/err" || fail "STRATA_CMA=0: the model did not decide the Scatters rule 2 matches"
if grep -q 'tuning file rule [23])' "$tmp/err"; then fail "STRATA_CMA=0: rule 2 or 3 decided"; fi
echo "ok: without CMA rule 2 is refused and the model decides"

# expect_stopped FILE WORDS...: the job fails before the program prints, and
# a strata error line names STRATA_TUNING_FILE, FILE and each of WORDS.
expect_stopped() {
  local file="$1"
  shift
  if env STRATA_TUNING_FILE="$file" "$run" -n "$ranks" "$prog" >"$tmp/out" 2>"$tmp/err"; then
    fail "STRATA_TUNING_FILE=$file was accepted"
  fi
  if grep -q ' calls=' "$tmp/out"; then fail "the program ran with STRATA_TUNING_FILE=$file"; fi
  local line
  line="$(grep -E '^strata\[0\]: error: STRATA_TUNING_FILE: ' "$tmp/err" | grep -F "$file" |
          head -n 1)"
  [ -n "$line" ] || fail "no strata error line names STRATA_TUNING_FILE and $file"
  for w in "$@"; do
    case "$line" in *"$w"*) ;; *) fail "the message lacks \"$w\": $line" ;; esac
  done
  echo "ok: $line"
}
expect_stopped "$data/tuning-bad-rule.json" 'rule 2 (line 3, column 60)' \
  '"k" must be an integer from 1 to 4096, not 0'
expect_stopped "$tmp/missing.json" 'cannot be opened'

# strata-info --explain as one process, for 4 ranks.
explain() {
  "$run" --native -n 1 "$info" --explain scatter 1M -n 4 >"$tmp/out" 2>"$tmp/err" ||
    fail "strata-info --explain failed"
  for a in copy-in-copy-out parallel-read sequential-write throttled-read; do
    grep -qE "^[* ] $a " "$tmp/out" || fail "--explain does not list $a"
  done
  [ "$(grep -c '^\* ' "$tmp/out")" -eq 1 ] || fail "--explain does not mark exactly one choice"
  grep -q 'MPI_Scatter of 1048576 bytes per rank block on 4 ranks' "$tmp/out" ||
    fail "--explain does not restate the call"
}
explain
grep -q 'the model decides (no STRATA_SCATTER_ALGORITHM, no STRATA_TUNING_FILE)' "$tmp/out" ||
  fail "--explain without settings does not leave the choice to the model"
export STRATA_TUNING_FILE="$rules"
explain
grep -qF "tuning file rule 2 ($rules) matches: sequential-write" "$tmp/out" ||
  fail "--explain does not name tuning file rule 2"
export STRATA_SCATTER_ALGORITHM=throttled-read:2
explain
grep -q 'STRATA_SCATTER_ALGORITHM decides instead of the model: throttled-read, k=2' "$tmp/out" ||
  fail "--explain does not name the override"
unset STRATA_SCATTER_ALGORITHM STRATA_TUNING_FILE
# The reductions without algorithms: both paths priced, the size's marked.
for c in "reduce_scatter_block slice-read" "reduce_scatter slice-read" "scan pipelined-prefix" \
         "exscan pipelined-prefix"; do
  read -r coll path <<<"$c"
  "$run" --native -n 1 "$info" --explain "$coll" 1M -n 4 >"$tmp/out" 2>"$tmp/err" ||
    fail "strata-info --explain $coll failed"
  grep -qE "^[* ] copy-in-copy-out " "$tmp/out" || fail "--explain $coll does not price copy-in-copy-out"
  grep -qE "^(  |\* )$path " "$tmp/out" || fail "--explain $coll does not list $path"
  [ "$(grep -c '^\* ' "$tmp/out")" -eq 1 ] || fail "--explain $coll does not mark exactly one path"
  grep -q 'the size, not the model' "$tmp/out" || fail "--explain $coll does not say what decides"
done
# Alltoallw and the neighbourhood collectives: Alltoallv's algorithms and override.
for coll in alltoallw neighbor_allgather neighbor_alltoallw; do
  "$run" --native -n 1 "$info" --explain "$coll" 64K -n 4 >"$tmp/out" 2>"$tmp/err" ||
    fail "strata-info --explain $coll failed"
  grep -q "runs on MPI_Alltoallv's engine" "$tmp/out" || fail "--explain $coll does not say its engine"
  for a in copy-in-copy-out ring-read; do
    grep -qE "^[* ] $a " "$tmp/out" || fail "--explain $coll does not list $a"
  done
  grep -q 'no STRATA_ALLTOALLV_ALGORITHM' "$tmp/out" || fail "--explain $coll does not name its override"
done
# 1 KiB fits one window: copy-in/copy-out is taken whatever the transport.
"$run" --native -n 1 "$info" --explain scan 1K -n 4 >"$tmp/out" 2>"$tmp/err" ||
  fail "strata-info --explain scan failed"
grep -qE '^\* copy-in-copy-out ' "$tmp/out" || fail "--explain scan 1K does not take copy-in-copy-out"
# Every rank runs it; only rank 0 prints.
"$run" --native -n "$ranks" "$info" --explain allgather 4K >"$tmp/out" 2>"$tmp/err" ||
  fail "strata-info --explain on $ranks ranks failed"
[ "$(grep -c '^What decides' "$tmp/out")" -eq 1 ] || fail "--explain printed more than once"
grep -q "MPI_Allgather of 4096 bytes per rank block on $ranks ranks" "$tmp/out" ||
  fail "--explain did not take the size of MPI_COMM_WORLD"
echo "ok: strata-info --explain"
echo "PASS tuning files ($ranks ranks)"
