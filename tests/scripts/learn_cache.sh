#!/usr/bin/env bash
# What selection measured (coll/learn.h) is kept in the model cache and the
# next job starts from it:
#   learn_cache.sh STRATA_RUN TEST_LEARN MISPRICED_MODEL STRATA_INFO
# - the per-host cache (in a private XDG_CACHE_HOME) holds the mispriced
#   model; a first job of test_learn (2 ranks, Allgather of 1 MiB, results
#   checked against the host MPI) searches and settles;
# - rank 0 wrote, at MPI_Finalize, one "measured allgather 2 ..." line per
#   algorithm it measured, with the ratio the job printed, into the learned
#   file beside the cache (learned-HOST.conf), and the cache itself holds
#   only model keys, never a "measured" line (an older build on the same
#   machine keeps working);
# - a cache an earlier build wrote a "measured" line into has it moved to
#   the learned file;
# - a second job starts from those ratios (each algorithm's, as the first
#   job learned them) and its results are checked as well;
# - strata-info --explain shows the measured times beside the predictions;
# - a learned file that cannot be used (a line of another kind) is named in
#   a warning and the job goes on from the model alone;
# - a calibration at first use (no model cache yet) removes the learned file
#   (its ratios are to the old model's predictions).
# No timing is asserted: which algorithm measures fastest is the machine's.
set -uo pipefail
run="$1"
prog="$2"
model="$3"
info="$4"
. "$(dirname "$0")/common.sh"

export XDG_CACHE_HOME="$tmp/cache" STRATA_CALIBRATE=0 STRATA_LEARN=1
mkdir -m 700 -p "$XDG_CACHE_HOME/strata"
cache="$XDG_CACHE_HOME/strata/model-$(hostname).conf"
learned="$XDG_CACHE_HOME/strata/learned-$(hostname).conf"
install -m 600 "$model" "$cache"
# As the build of the merge of issue 31 item 1 left it: a record in the cache.
legacy="measured bcast 7 1 1 10 direct-read 1.5"
echo "$legacy" >>"$cache"

"$run" --native -n 2 "$prog" --print --calls=40 >"$tmp/out" 2>"$tmp/err" ||
  fail "the first job failed"
grep -q '^PASS learn' "$tmp/out" || fail "the first job did not pass"
grep '^LEARNED ' "$tmp/out" | sort >"$tmp/learned"
[ -s "$tmp/learned" ] || fail "the first job measured nothing"
[ "$(grep -c . "$tmp/learned")" -ge 2 ] || fail "the first job measured fewer than 2 algorithms"
while read -r _ algo ratio; do
  awk -v a="$algo" -v r="$ratio" 'BEGIN { s = 1 }
    $1 == "measured" && $2 == "allgather" && $3 == 2 && $4 == 1 && $6 == 21 &&
    ($7 == a || index($7, a ":") == 1) && $8 == r { s = 0 } END { exit s }' "$learned" ||
    fail "$learned has no 'measured allgather 2 1 . 21 $algo $ratio' line (what the job learned)"
done <"$tmp/learned"
grep -qx "$legacy" "$learned" || fail "the cache's earlier record is not in $learned"
# The keys of the model parser before learning (a build that refuses any
# other), and the warm-read keys added since (builds from then on skip a
# cache key they do not know, so later keys stop no build; USAGE "The cost
# model" says which builds refuse the warm keys).  Never a "measured" line.
awk '{ sub(/#.*/, "") } NF && $1 !~ /^(alpha_us|beta_us_per_byte|lock_us_per_page|page_bytes|gamma|gamma_fit|shm_us_per_byte|shm_pipe_us_per_byte|memcpy_us_per_byte|map_alpha_us|map_lookup_us|flag_us|net_alpha_us|net_beta_us_per_byte|warm_us_per_byte|warm_bytes|machine|date|cpus)$/ { print; bad = 1 }
     END { exit bad }' "$cache" >"$tmp/unknown" ||
  fail "the model cache has keys an older strata refuses: $(cat "$tmp/unknown")"
cp "$tmp/out" "$tmp/first"

# Measured ratios are all the second job may differ by: it must start from
# exactly what the first one kept.
"$run" --native -n 2 "$prog" --print --calls=40 --expect-switches=-1 >"$tmp/out" 2>"$tmp/err" ||
  fail "the second job failed"
grep -q '^PASS learn' "$tmp/out" || fail "the second job did not pass"
grep '^SEEDED ' "$tmp/out" | sed 's/^SEEDED/LEARNED/' | sort >"$tmp/seeded"
diff -u "$tmp/learned" "$tmp/seeded" >"$tmp/diff" ||
  fail "the second job did not start from what the first learned: $(cat "$tmp/diff")"

"$run" --native -n 1 "$info" --explain allgather 1M -n 2 >"$tmp/out" 2>"$tmp/err" ||
  fail "strata-info --explain failed"
grep -q 'measured us' "$tmp/out" || fail "--explain has no measured column"
while read -r _ algo _; do
  grep -qE "^[*#> ] $algo +[-0-9]+ +[0-9.]+ +[0-9.]+ " "$tmp/out" ||
    fail "--explain shows no measured time for $algo"
done <"$tmp/learned"
grep -qE '^[>#] ' "$tmp/out" || fail "--explain does not mark where selection starts"

cp "$learned" "$tmp/kept-learned"
echo "alpha_us 1" >>"$learned"
"$run" --native -n 1 "$info" --explain allgather 1M -n 2 >"$tmp/out" 2>"$tmp/err" ||
  fail "a bad learned file stopped the job: $(cat "$tmp/err")"
grep -q "what earlier jobs measured is not used: $learned:[0-9]*: only \"measured\" lines" \
  "$tmp/err" || fail "a bad learned file was not named in a warning: $(cat "$tmp/err")"
grep -qE "^[*#> ] [a-z-]+ +[-0-9]+ +[0-9.]+ +[0-9.]+ " "$tmp/out" &&
  fail "--explain shows measured times from a learned file it refused"

rm "$cache"
cp "$tmp/kept-learned" "$learned"
STRATA_CALIBRATE=auto "$run" --native -n 1 "$info" --explain allgather 1M -n 2 >"$tmp/out" \
  2>"$tmp/err" || fail "the job calibrating at first use failed: $(cat "$tmp/err")"
[ -s "$cache" ] || fail "the calibration at first use wrote no model cache"
[ -e "$learned" ] && fail "the calibration at first use kept the learned file of the old model"
echo "PASS learn_cache"
