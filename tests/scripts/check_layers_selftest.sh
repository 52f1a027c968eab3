#!/usr/bin/env bash
# Self-test of scripts/check-layers.sh: a fake tree with one include that
# points up, an include loop in src/ and one in tools/, a call that points up,
# a function defined outside its header's folder and a loop of calls must
# fail, each named; the same tree without them must
# pass.  Usage: check_layers_selftest.sh CHECK_SCRIPT C_COMPILER
set -u
check="$1"
cc="$2"
. "$(dirname "$0")/common.sh"

make_tree() { # make_tree DIR BAD(0|1)
  local d="$1" bad="$2"
  mkdir -p "$d/docs" "$d/src/util" "$d/src/coll" "$d/tools" "$d/include"
  printf '# x\n\n## Layers and files\n\nutil → coll\n\n## Next\n\na → b\n' > "$d/docs/DESIGN.md"
  : > "$d/include/strata.h"
  printf 'int low(void);\n' > "$d/src/util/low.h"
  printf 'int high(void);\n' > "$d/src/coll/high.h"
  printf '#include "coll/c1.h"\n' > "$d/src/coll/c2.h"
  printf '#include "util/low.h"\n#include "strata.h"\nint high(void) { return low(); }\n' > "$d/src/coll/high.c"
  printf '#include "t1.h"\n' > "$d/tools/t2.h"
  printf 'int tool_a(void);\n' > "$d/tools/t1.h"
  printf '#include "t1.h"\n#include "coll/high.h"\nint tool_a(void) { return high(); }\n' > "$d/tools/a.c"
  if [ "$bad" = 1 ]; then
    # Line 2: an include that points up (util below coll).
    printf '/* low */\n#include "coll/high.h"\nint low(void) { return 1; }\n' > "$d/src/util/low.c"
    printf '#include "coll/c2.h"\n' > "$d/src/coll/c1.h"   # c1.h <-> c2.h
    printf '#include "t2.h"\nint tool_a(void);\n' > "$d/tools/t1.h"   # t1.h <-> t2.h
    # A call up through a local extern, and a loop of calls in tools/.
    printf 'extern int high(void);\nint low(void) { return high(); }\n' > "$d/src/util/up.c"
    printf 'int tool_b(void);\nint tool_a(void) { return tool_b(); }\n' > "$d/tools/a.c"
    printf 'int tool_a(void);\nint tool_b(void) { return tool_a(); }\n' > "$d/tools/b.c"
    # A function declared in util/ but defined in coll/.
    printf 'int low(void);\nint misplaced(void);\n' > "$d/src/util/low.h"
    printf '#include "util/low.h"\nint misplaced(void) { return 2; }\n' > "$d/src/coll/mis.c"
  else
    printf '#include "util/low.h"\nint low(void) { return 1; }\n' > "$d/src/util/low.c"
    : > "$d/src/coll/c1.h"
    printf 'int tool_a(void);\nint tool_b(void) { return tool_a(); }\n' > "$d/tools/b.c"
  fi
  # Objects laid out as CMake does: <build>/CMakeFiles/<target>.dir/<source>.o
  local f o
  for f in $(cd "$d" && find src tools -name '*.c'); do
    case "$f" in src/*) o="$d/build/CMakeFiles/lib.dir/$f.o" ;; *) o="$d/build/CMakeFiles/tool.dir/$f.o" ;; esac
    mkdir -p "$(dirname "$o")"
    # The objects only: the fake layers hold no real program.
    "$cc" -c -I"$d/src" -I"$d/include" -o "$o" "$d/$f" 2>"$tmp/err" || fail "cannot compile $f"
  done
}

make_tree "$tmp/good" 0
bash "$check" --objects "$tmp/good/build" "$tmp/good" > "$tmp/out" 2>&1 ||
  fail "a clean tree fails the check"

make_tree "$tmp/bad" 1
if bash "$check" --objects "$tmp/bad/build" "$tmp/bad" > "$tmp/out" 2>&1; then
  fail "a tree with an upward include and loops passes the check"
fi
cat "$tmp/out"
grep -q '^src/util/low.c:2: #include "coll/high.h" points up' "$tmp/out" ||
  fail "the upward include is not named with file and line"
grep -q 'include loop of 2 files: .*src/coll/c1.h' "$tmp/out" || fail "the include loop in src/ is not found"
grep -q 'include loop of 2 files: .*tools/t1.h' "$tmp/out" || fail "the include loop in tools/ is not found"
grep -q '^src/util/up.c: uses high, defined in src/coll/high.c: a call that points up' "$tmp/out" ||
  fail "the call that points up is not found"
grep -q 'loop of 2 files using each other' "$tmp/out" && grep -q 'tools/a.c -> tools/b.c (tool_b)' "$tmp/out" ||
  fail "the loop of calls in tools/ is not found"
grep -q '^src/coll/mis.c: defines misplaced, declared in src/util/low.h' "$tmp/out" ||
  fail "the function defined outside its header's folder is not found"
# Without the object files, the include part alone still fails.
bash "$check" "$tmp/bad" > "$tmp/out" 2>&1 && fail "the include check passes the bad tree"
echo "check-layers self-test passed"
