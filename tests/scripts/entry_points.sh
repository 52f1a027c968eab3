#!/usr/bin/env bash
# The C entry points generated from src/interpose/calls.def (issue 30): every
# row's every form is a function libstrata exports, and the table has a row
# for every collective of src/util/colls.h.  A form the generator lost, a
# row that does not compile into its functions, or a collective without a
# row fails here, naming it.
#   entry_points.sh LIB SOURCE_DIR LARGE PERSISTENT MPIX
# LARGE, PERSISTENT, MPIX: 1 where the host MPI has the large-count forms,
# MPI-4 persistent collectives, Open MPI's MPIX_ persistent collectives.
set -u
lib=$1 src=$2 large=$3 persist=$4 mpix=$5
table=$src/src/interpose/calls.def
fail=0
defined=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort -u)
[ -n "$defined" ] || { echo "FAIL: no functions read from $lib"; exit 1; }
# Name lower COLL kind, one line per row (kind: empty, _NOCOUNT or _W; a
# _NOCOUNT row has no large-count forms).
rows=$(perl -0pe 's{/\*.*?\*/}{}gs' "$table" | tr '\n' ' ' |
       grep -oE 'STRATA_CCALL(_NOCOUNT|_W)?\(\s*[A-Za-z_]+,\s*[a-z_]+,\s*[A-Z_]+' |
       sed -E 's/STRATA_CCALL(_NOCOUNT|_W)?\(\s*([A-Za-z_]+),\s*([a-z_]+),\s*([A-Z_]+)/\2 \3 \4 \1/')
[ -n "$rows" ] || { echo "FAIL: no rows read from $table"; exit 1; }
expect() {
  if grep -qx "$1" <<<"$defined"; then
    checked=$((checked + 1))
  else
    echo "FAIL: $1 (calls.def row $2) is not a function of $lib"
    fail=1
  fi
}
checked=0
while read -r name lower coll kind; do
  expect "MPI_$name" "$name"
  expect "MPI_I$lower" "$name"
  [ "$persist" = 1 ] && expect "MPI_${name}_init" "$name"
  [ "$persist" != 1 ] && [ "$mpix" = 1 ] && expect "MPIX_${name}_init" "$name"
  if [ "$large" = 1 ] && [ "$kind" != _NOCOUNT ]; then
    expect "MPI_${name}_c" "$name"
    expect "MPI_I${lower}_c" "$name"
    [ "$persist" = 1 ] && expect "MPI_${name}_init_c" "$name"
  fi
done <<<"$rows"
# Every collective has its row.
for coll in $(grep -oE '^\s*STRATA_COLL_[A-Z_]+' "$src/src/util/colls.h" | sed -E 's/\s*STRATA_COLL_//' |
              grep -vx 'COUNT'); do
  awk '{print $3}' <<<"$rows" | grep -qx "$coll" || {
    echo "FAIL: STRATA_COLL_$coll has no row in calls.def"
    fail=1
  }
done
[ "$fail" = 0 ] || exit 1
echo "PASS entry_points: $(wc -l <<<"$rows") rows, $checked functions"
