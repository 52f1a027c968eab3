#!/usr/bin/env bash
# Runs one application with the host MPI alone and with strata, on the same
# input, and compares: total time, time in the application's collective,
# and the checksum of its result.
#   scripts/app-compare.sh [--build DIR] [-n RANKS] [--reps R] [--timeout S]
#                          [--load N [--load-kind spin|noise]] APP [ARGS...]
# APP is asp, train or cg (from DIR/bin; cg is Fortran) or the path of a
# program that prints a RESULT line like them; ARGS go to it (asp N [SEED],
# cg M [MAXIT] for an M x M grid, train PARAMS [SEED]
# [--steps S] ...).  R repetitions (default 3), each a native run and a
# strata run, alternating which goes first; the table shows every run and the
# medians.  Exit status: 0, 1 if a checksum differs from the first run's, 2
# for bad usage, 3 if a run failed or printed no RESULT line.  STRATA_
# variables of the environment reach the strata runs (strata-run passes them).
# --load N: every run beside N busy processes (DIR/bin/load_beside: the same
# competitors as strata-bench --load; spin by default, or noise).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/../build/openmpi"
ranks=2
reps=3
limit=600
load=0
load_kind=spin
usage() {
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
number() { case "$2" in ''|*[!0-9]*) echo "app-compare: $1 takes a number" >&2; usage ;; esac; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) [ $# -ge 2 ] || usage; build="$2"; shift 2 ;;
    -n|-np) [ $# -ge 2 ] || usage; number "$1" "$2"; ranks="$2"; shift 2 ;;
    --reps) [ $# -ge 2 ] || usage; number "$1" "$2"; reps="$2"; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage; number "$1" "$2"; limit="$2"; shift 2 ;;
    --load) [ $# -ge 2 ] || usage; number "$1" "$2"; load="$2"; shift 2 ;;
    --load-kind) [ $# -ge 2 ] || usage; load_kind="$2"; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "app-compare: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
[ "$reps" -ge 1 ] || { echo "app-compare: --reps must be at least 1" >&2; usage; }
run="$build/bin/strata-run"
[ -x "$run" ] || { echo "app-compare: no $run (build first: make)" >&2; exit 2; }
beside=()
if [ "$load" -gt 0 ]; then
  case "$load_kind" in spin|noise) ;; *) echo "app-compare: --load-kind spin or noise" >&2; usage ;; esac
  beside=("$build/bin/load_beside" "$load" "$load_kind")
  [ -x "${beside[0]}" ] || { echo "app-compare: no ${beside[0]} (build the tests)" >&2; exit 2; }
fi
app="$1"
shift
case "$app" in */*) prog="$app" ;; *) prog="$build/bin/$app" ;; esac
[ -x "$prog" ] || { echo "app-compare: no program $prog" >&2; exit 2; }
if ldd "$prog" 2>/dev/null | grep -q libstrata; then
  echo "app-compare: $prog is linked with libstrata: its native runs would use strata too" >&2
  exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run_once KIND REP ARGS...: one run; appends "KIND REP total coll checksum verified"
# to $tmp/results.
run_once() {
  local kind="$1" rep="$2" flag=() out="$tmp/$1.$2.out"
  shift 2
  [ "$kind" = native ] && flag=(--native)
  if ! timeout "$limit" "${beside[@]}" "$run" "${flag[@]}" -n "$ranks" "$prog" "$@" >"$out" 2>"$tmp/err"; then
    echo "app-compare: the $kind run $rep failed; its output:" >&2
    tail -n 20 "$out" "$tmp/err" >&2
    exit 3
  fi
  local line
  line="$(grep '^RESULT ' "$out" | tail -n 1)"
  [ -n "$line" ] || { echo "app-compare: the $kind run $rep printed no RESULT line" >&2; exit 3; }
  # RESULT key=value ...: the fields this table needs, in a fixed order.
  echo "$line" | awk -v kind="$kind" -v rep="$rep" '{
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      print kind, rep, f["total_s"], f["coll_max_s"], f["checksum"], f["verified"], f["coll"]
    }' >>"$tmp/results"
}

shift_args=("$@")
for rep in $(seq 1 "$reps"); do
  if [ $((rep % 2)) = 1 ]; then order="native strata"; else order="strata native"; fi
  for kind in $order; do run_once "$kind" "$rep" "${shift_args[@]}"; done
done

coll="$(awk 'NR == 1 { print $7 }' "$tmp/results")"
load_text=""
[ "$load" -gt 0 ] && load_text=", beside $load $load_kind processes"
echo "app-compare: $(basename "$prog") ${shift_args[*]} on $ranks ranks ($build), $reps repetitions$load_text"
awk -v coll="$coll" '
  function median(list, n,   i, j, t, a) {
    split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  BEGIN { printf "%-7s %4s %12s %16s  %-16s %s\n", "run", "rep", "total_s", coll "_s", "checksum", "verified" }
  {
    printf "%-7s %4s %12.6f %16.6f  %-16s %s\n", $1, $2, $3, $4, $5, $6
    total[$1] = total[$1] " " $3; in_coll[$1] = in_coll[$1] " " $4; n[$1]++
    if (NR == 1) first = $5; else if ($5 != first) differ = 1
  }
  END {
    for (k = 0; k < 2; k++) {
      kind = k ? "strata" : "native"
      t[kind] = median(total[kind], n[kind]); c[kind] = median(in_coll[kind], n[kind])
      printf "%-7s %4s %12.6f %16.6f\n", kind, "med", t[kind], c[kind]
    }
    printf "strata / native (medians): total %.2f, %s %.2f\n",
           (t["native"] > 0 ? t["strata"] / t["native"] : 0), coll,
           (c["native"] > 0 ? c["strata"] / c["native"] : 0)
    printf "checksums equal: %s\n", differ ? "NO" : "yes"
    exit differ
  }' "$tmp/results"
