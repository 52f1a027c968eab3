#!/usr/bin/env bash
# strata-report on a recorded strata-bench run.
#   bench_report.sh plots STRATA_REPORT SAMPLE_JSON
#       PNGs and summary.md from SAMPLE_JSON: a PNG file per collective with
#       sizes, and speedup.png, every path printed; in summary.md a table per
#       collective with a row per size carrying the sample's medians and the
#       speedup (host / strata) computed here from the JSON, and the per-rank
#       spread.  Exits 77 (skipped) when matplotlib is not installed for
#       strata-report's Python.
#   bench_report.sh no-matplotlib STRATA_REPORT SAMPLE_JSON
#       with a matplotlib that fails to import: a message naming matplotlib,
#       exit status 3, summary.md still written; two files at once become two
#       runs (a "run" column); input that is not strata-bench's is refused
#       with status 2.
set -uo pipefail
mode="$1"
report="$2"
sample="$3"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/common.sh"
# The interpreter strata-report names on its first line.
python="$(sed -n '1s/^#! *//p' "$report")"
[ -x "${python%% *}" ] || { echo "SKIP: no $python for strata-report"; exit 77; }

# check_summary FILE JSON [LABEL]: a row per size of each collective, values
# from JSON (after a "run" cell LABEL when given).
check_summary() {
  "$python" - "$@" <<'EOF'
import json, sys
summary, doc = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
label = sys.argv[3] if len(sys.argv) > 3 else None
def size(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"
missing = []
for r in doc["results"]:
    if f"\n## {r['collective']}\n" not in summary:
        missing.append(f"section {r['collective']}")
    h, s = r["native"]["median"], r["strata"]["median"]
    spread = r["strata"]["rank_mean"]
    cells = ([label] if label else []) + [
        size(r["bytes"]), f"{h:.2f}", f"{s:.2f}", f"{h / s:.2f}",
        f"{r['native']['rank_mean']['min']:.2f} / {r['native']['rank_mean']['median']:.2f} / "
        f"{r['native']['rank_mean']['max']:.2f}",
        f"{spread['min']:.2f} / {spread['median']:.2f} / {spread['max']:.2f}"]
    line = "| " + " | ".join(cells) + " |"
    if line not in summary:
        missing.append(line)
for m in missing:
    print(f"  summary.md lacks: {m}")
sys.exit(1 if missing else 0)
EOF
}

case "$mode" in
  plots)
    if ! "$python" -c 'import matplotlib' 2>/dev/null; then
      echo "SKIP: matplotlib is not installed for $python (python3-matplotlib)"
      exit 77
    fi
    "$report" "$sample" -o "$tmp/r" >"$tmp/out" 2>"$tmp/err" || fail "strata-report failed"
    colls="$("$python" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
print(" ".join(dict.fromkeys(r["collective"] for r in rows if r["bytes"] > 0)))' "$sample")"
    [ -n "$colls" ] || fail "the sample has no collective with sizes"
    for name in $colls speedup; do
      png="$tmp/r/$name.png"
      grep -qxF "$png" "$tmp/out" || fail "strata-report did not print $png"
      [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$png is not a PNG file"
    done
    grep -qxF "$tmp/r/summary.md" "$tmp/out" || fail "strata-report did not print summary.md"
    check_summary "$tmp/r/summary.md" "$sample" || fail "summary.md lacks rows"
    echo "ok: $(echo $colls speedup | wc -w) PNGs ($colls speedup) and summary.md rows"
    ;;
  no-matplotlib)
    # A matplotlib package that cannot be imported, first on the path.
    mkdir -p "$tmp/fake/matplotlib"
    echo 'raise ImportError("matplotlib hidden by the test")' >"$tmp/fake/matplotlib/__init__.py"
    env PYTHONPATH="$tmp/fake" "$report" "$sample" -o "$tmp/r" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 3 ] || fail "without matplotlib strata-report exited $rc, not 3"
    grep -q 'matplotlib is missing' "$tmp/err" || fail "no message that matplotlib is missing"
    check_summary "$tmp/r/summary.md" "$sample" || fail "summary.md not written without matplotlib"
    if ls "$tmp/r"/*.png >/dev/null 2>&1; then fail "PNGs written without matplotlib"; fi
    echo "ok: without matplotlib: exit 3, a message, summary.md"
    # Two runs: the same sample as MPICH's, told apart in a "run" column.
    "$python" - "$sample" "$tmp/mpich.json" <<'EOF' || fail "cannot make the second run"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["machine"]["built_for"] = "mpich"
json.dump(doc, open(sys.argv[2], "w"))
EOF
    env PYTHONPATH="$tmp/fake" "$report" "$sample" "$tmp/mpich.json" -o "$tmp/two" >"$tmp/out" \
      2>"$tmp/err"
    [ $? = 3 ] || fail "strata-report on two files (no matplotlib) did not exit 3"
    ranks="$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["machine"]["ranks"])' \
             "$sample")"
    check_summary "$tmp/two/summary.md" "$tmp/mpich.json" "mpich, $ranks ranks" ||
      fail "summary.md of two runs lacks the second run's rows"
    grep -q '^| run | size |' "$tmp/two/summary.md" || fail "no run column for two runs"
    echo "ok: two files, two runs in one summary"
    echo '{"tool": "something else"}' >"$tmp/other.json"
    "$report" "$tmp/other.json" -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 2 ] && grep -q 'not a strata-bench' "$tmp/err" ||
      fail "a file not from strata-bench: exit $rc"
    echo "ok: a file not from strata-bench is refused (exit 2)"
    ;;
  *) echo "bench_report.sh: mode plots or no-matplotlib" >&2; exit 2 ;;
esac
echo "PASS strata-report $mode"
