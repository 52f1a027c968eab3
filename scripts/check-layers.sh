#!/usr/bin/env bash
# check-layers.sh [--objects BUILD_DIR] [ROOT]
#
# Checks that strata's layers point one way (issue 14).  The order of the
# folders of src/ is read from ROOT/docs/DESIGN.md, section "Layers and
# files": its first line written "a → b → c ..." (lowest first), so that the
# document and the check cannot drift apart.  Fails, naming file:line, when
#  - an #include "..." of a file in src/<a>/ reaches a file in src/<b>/ with
#    b later in the order than a (an include that points up), or reaches into
#    tools/; or names a file that does not exist; or src/ has a folder the
#    order does not name;
#  - files of src/ or of tools/ include each other in a loop (a cycle of
#    #include between files).
# With --objects BUILD_DIR (a configured and built tree), it also reads the
# object files with nm and fails when
#  - a function or variable defined in a higher folder is used from a lower
#    one (a call that points up, e.g. through a local extern), or
#  - a function is defined in another folder than the header of src/ that
#    declares it (a prototype at the start of a line), or
#  - the object files of one program or library use each other in a loop
#    (file A uses a symbol of file B and B, directly or not, one of A's):
#    such files cannot be understood or changed one at a time.
# ROOT defaults to the folder above this script.  Exit status 0: clean.
set -u
LC_ALL=C
export LC_ALL

objects=""
if [ "${1:-}" = "--objects" ]; then
  objects="${2:?--objects needs a build folder}"
  shift 2
fi
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
root="$(cd "$root" && pwd)" || exit 2

design="$root/docs/DESIGN.md"
[ -f "$design" ] || { echo "check-layers: $design is missing"; exit 2; }
# The first line with arrows after the "Layers and files" heading.
order="$(awk '/^## Layers and files/ { in_s = 1; next }
              in_s && /^## / { exit }
              in_s && /→/ { print; exit }' "$design" |
         sed 's/`//g; s/→/ /g; s/[^a-z0-9_ ]//g')"
order="$(echo $order)"   # squeeze the spaces
[ -n "$order" ] || {
  echo "check-layers: no 'a → b → ...' line in the 'Layers and files' section of $design"
  exit 2
}

cd "$root" || exit 2
# One line per quoted include: file, line, target.  Sorted, so the report is
# stable from run to run.
includes="$(find src tools -name '*.[ch]' 2>/dev/null | sort |
            xargs -r grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
            sed 's/^\([^:]*\):\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2 \3/')"
resolved=""
while read -r file line target; do
  [ -n "$file" ] || continue
  # The compiler's order: the including file's folder, then -I src, then the
  # public headers of include/.
  dir="$(dirname "$file")"
  to=""
  for cand in "$dir/$target" "src/$target" "include/$target"; do
    if [ -f "$cand" ]; then
      to="$(realpath -m --relative-to=. "$cand")"
      break
    fi
  done
  resolved+="$file $line $target ${to:--}"$'\n'
done <<< "$includes"

# The awk code both checks share: the layer order (rank of each folder), a
# path's folder of src/, and the loops of the graph edge[v, 1..deg[v]] over
# node[]: Tarjan's strongly connected sets of two or more nodes, each passed
# to the program's own report_loop(k, members) and setting bad.
awk_common='
  BEGIN {
    n = split(order, names, " ")
    for (i = 1; i <= n; i++) rank[names[i]] = i
  }
  function folder(path,   p) {
    if (path !~ /^src\//) return ""
    split(path, p, "/")
    return p[2]
  }
  function visit(v,   i, w, members, k) {
    idx[v] = low[v] = ++counter
    stack[++sp] = v; onstack[v] = 1
    for (i = 1; i <= deg[v]; i++) {
      w = edge[v, i]
      if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
      else if (onstack[w] && idx[w] < low[v]) low[v] = idx[w]
    }
    if (low[v] == idx[v]) {
      members = ""; k = 0
      do { w = stack[sp--]; onstack[w] = 0; members = w " " members; k++ } while (w != v)
      if (k > 1) { report_loop(k, members); bad = 1 }
    }
  }
  function find_loops(   v) {
    for (v in node) if (!(v in idx)) visit(v)
  }
'

status=0
# Layers, then loops; awk does both on the resolved list.
printf '%s' "$resolved" | awk -v order="$order" "$awk_common"'
  function report_loop(k, members) {
    printf "include loop of %d files: %s\n", k, members
  }
  {
    file = $1; line = $2; target = $3; to = $4
    if (to == "-") {
      printf "%s:%s: #include \"%s\" names no file (looked beside it, in src/ and in include/)\n", file, line, target
      bad = 1; next
    }
    from_f = folder(file); to_f = folder(to)
    if (from_f != "" && !(from_f in rank) && !(from_f in told)) {
      printf "%s: folder src/%s/ is not in the layer order (%s); add it to docs/DESIGN.md\n", file, from_f, order
      told[from_f] = 1; bad = 1
    }
    if (from_f != "" && to ~ /^tools\//) {
      printf "%s:%s: #include \"%s\" reaches tools/ from src/\n", file, line, target
      bad = 1
    }
    if (from_f != "" && to_f != "" && (from_f in rank) && (to_f in rank) && rank[to_f] > rank[from_f]) {
      printf "%s:%s: #include \"%s\" points up: %s (layer %d) must not include %s (layer %d)\n", file, line, target, from_f, rank[from_f], to_f, rank[to_f]
      bad = 1
    }
    if (to == file) { printf "%s:%s: includes itself\n", file, line; bad = 1 }
    edge[file, ++deg[file]] = to
    node[file] = 1; node[to] = 1
  }
  END {
    find_loops()
    exit bad
  }' || status=1

if [ -n "$objects" ]; then
  # Each target's objects: BUILD/.../CMakeFiles/<target>.dir/<source path>.o
  objlist="$(find "$objects" -path '*/CMakeFiles/*.dir/*' -name '*.o' | sort)"
  [ -n "$objlist" ] || { echo "check-layers: no object files under $objects"; exit 2; }
  # Prototypes in the headers of src/ ("H name folder header"), then each
  # object's symbols ("D target source name kind", "U target source name").
  {
  find src -name '*.h' | sort | while read -r h; do
    sed -n 's/^[a-z][^(;=]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$h" |
      awk -v f="$(echo "$h" | cut -d/ -f2)" -v h="$h" '{ print "H", $1, f, h }'
  done
  while read -r o; do
    target="${o%%.dir/*}"; target="${target##*/}"
    src="${o#*.dir/}"; src="${src%.o}"
    case "$src" in src/*|tools/*) ;; *) continue ;; esac
    [ -f "$src" ] || continue          # an object of a file since removed
    nm -P --defined-only -g "$o" | awk -v t="$target" -v s="$src" '$2 ~ /^[TDBRVWGS]$/ { print "D", t, s, $1, $2 }'
    nm -P -u "$o" | awk -v t="$target" -v s="$src" '{ print "U", t, s, $1 }'
  done <<< "$objlist"
  } | awk -v order="$order" "$awk_common"'
    BEGIN {
      # The C library functions that src/heap/heap.c replaces for the
      # whole process (the shared heap): every layer calls them as the C
      # library, not as a layer above; they are not edges between files.
      nrepl = split("malloc free calloc realloc reallocarray posix_memalign aligned_alloc " \
                    "memalign valloc pvalloc malloc_usable_size", libc, " ")
      for (i = 1; i <= nrepl; i++) replaced[libc[i]] = 1
    }
    function report_loop(k, members,   m, a, b) {
      printf "loop of %d files using each other:", k
      split(members, m, " ")
      for (a = 1; a <= k; a++) for (b = 1; b <= k; b++)
        if ((m[a], m[b]) in why) printf "\n  %s -> %s (%s)", m[a], m[b], why[m[a], m[b]]
      printf "\n"
    }
    $1 == "H" { declared[$2] = $3; header[$2] = $4; next }
    $1 == "D" {
      def[$2, $4] = $3
      if ($3 ~ /^src\//) {
        libdef[$4] = $3
        if ($5 == "T" && ($4 in declared) && declared[$4] != folder($3)) {
          printf "%s: defines %s, declared in %s: a function belongs to the folder of its header\n", $3, $4, header[$4]
          bad = 1
        }
      }
      next
    }
    $1 == "U" { use[++nu] = $2 " " $3 " " $4 }
    END {
      for (i = 1; i <= nu; i++) {
        split(use[i], u, " ")
        t = u[1]; from = u[2]; sym = u[3]
        if (sym in replaced) continue
        to = ((t, sym) in def) ? def[t, sym] : ((sym in libdef) ? libdef[sym] : "")
        if (to == "" || to == from) continue
        ff = folder(from); tf = folder(to)
        if (ff != "" && tf != "" && (ff in rank) && (tf in rank) && rank[tf] > rank[ff] && !((from, sym) in said)) {
          printf "%s: uses %s, defined in %s: a call that points up (%s below %s)\n", from, sym, to, ff, tf
          said[from, sym] = 1; bad = 1
        }
        # Loops only within one target: a tool and the library never form one
        # (the library uses nothing of the tools, checked above).
        if (((t, sym) in def) && !((from, to) in seen)) {
          seen[from, to] = 1; edge[from, ++deg[from]] = to; why[from, to] = sym
          node[from] = 1; node[to] = 1
        }
      }
      find_loops()
      exit bad
    }' || status=1
fi

if [ "$status" -eq 0 ]; then
  echo "check-layers: clean (order: $order${objects:+; objects of $objects})"
fi
exit "$status"
