#!/usr/bin/env bash
# Instructions per call of several builds of strata side by side (issue 14;
# scripts/instr-count.sh does one run):
#   instr-compare.sh NAME=BUILD_DIR...
# For each case below (collective, bytes, ranks, calls), a markdown row with,
# per build, the "work" instructions per call of each rank (rank 0, the
# root, first) and the failed polls per call of the rank with most.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# INSTR_CASES: "coll:bytes:ranks:calls ..." instead of these.
cases=${INSTR_CASES:-"reduce:8:2:2000 allreduce:8:2:2000 bcast:8:2:2000 reduce:1024:4:1000 reduce:32768:4:1000"}
header="| case |"
rule="| --- |"
for b in "$@"; do header+=" ${b%%=*} |"; rule+=" --- |"; done
echo "$header"
echo "$rule"
for c in $cases; do
  IFS=: read -r coll bytes ranks calls <<<"$c"
  row="| $coll $bytes B, $ranks ranks |"
  for b in "$@"; do
    out="$("$here/instr-count.sh" "${b#*=}" "$coll" "$bytes" "$ranks" "$calls")"
    work="$(sed -n 's/.* work \([0-9.]*\),.*/\1/p' <<<"$out" | awk '{ printf "%s%.0f", (NR > 1 ? " / " : ""), $1 }')"
    polls="$(sed -n 's/.*failed polls \([0-9.]*\)\/call.*/\1/p' <<<"$out" | sort -g | tail -n 1)"
    row+=" $work ($polls) |"
  done
  echo "$row"
done
