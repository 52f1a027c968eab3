#!/usr/bin/env bash
# mpi4py under strata: tests/python/mpi4py_collectives.py with STRATA_STATS,
# through the mpi4py built against this build's MPI (scripts/install-mpi4py.sh).
#   mpi4py_stats.sh STRATA_RUN MPI RANKS SOURCE_DIR [VAR=value...]
# 1. The buffer methods: every collective strata intercepts (Bcast, Reduce,
#    Allreduce, Allgather, Gather, Scatter, Alltoall, Barrier) must appear in
#    the JSON file exactly as often as the script called it (per rank, times
#    RANKS), all served by strata, none handed to the host MPI.
# 2. mpi4py's object methods (bcast, allreduce, gather of pickles): every
#    call of an intercepted collective they make is served.
# Also lists which entry points mpi4py's extension imports (nm), the _c
# forms on an MPI-4 MPI.  Skips (77) only when no mpi4py for MPI is found.
set -uo pipefail
run="$1" mpi="$2" ranks="$3" src="$4"
shift 4
. "$(dirname "$0")/common.sh"
for setting in "$@"; do export "${setting?}"; done

# The mpi4py of this MPI: $STRATA_MPI4PY_PYTHON, or where install-mpi4py.sh
# builds it (as root or not), or a development venv in the source tree.
python=""
for candidate in "${STRATA_MPI4PY_PYTHON:-}" "${STRATA_MPI4PY_ROOT:-/nonexistent}/$mpi/bin/python3" \
    "/opt/strata-mpi4py/$mpi/bin/python3" "${HOME:-/nonexistent}/.local/share/strata-mpi4py/$mpi/bin/python3" \
    "$src/.venv-$mpi/bin/python3"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import mpi4py' 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [ -z "$python" ]; then
  echo "SKIP: no mpi4py built for $mpi (scripts/install-mpi4py.sh builds it; it needs pip and PyPI)"
  exit 77
fi
version="$("$python" -c 'import mpi4py; print(mpi4py.__version__)')"
echo "mpi4py $version for $mpi: $python"
case "$version" in 4.*) ;; *) fail "mpi4py $version: version 4 expected" ;; esac

# Which collective entry points the extension imports (informative).
ext="$("$python" -c 'import mpi4py.MPI as m; print(m.__file__)' 2>/dev/null)" || ext=""
if [ -n "$ext" ] && command -v nm >/dev/null; then
  echo "entry points: $(nm -D --undefined-only "$ext" | awk '{print $2}' |
    grep -E '^MPI_(Bcast|Reduce|Allreduce|Allgather|Gather|Scatter|Alltoall|Barrier)(_c)?$' | tr '\n' ' ')"
fi

script="$src/tests/python/mpi4py_collectives.py"
STRATA_STATS="$tmp/stats.json" "$run" -n "$ranks" "$python" "$script" 3 >"$tmp/out" 2>"$tmp/err" ||
  fail "the mpi4py run failed"
grep -q "^PASS mpi4py" "$tmp/out" || fail "the script did not pass"
lib="$(sed -n 's/^library //p' "$tmp/out")"
echo "library: $lib"
case "$mpi:$lib" in openmpi:*"Open MPI"*|mpich:*MPICH*) ;;
  *) fail "this mpi4py runs on \"$lib\", not $mpi" ;; esac
[ -s "$tmp/stats.json" ] || fail "STRATA_STATS wrote no file"
"$python" - "$tmp/stats.json" "$tmp/out" "$ranks" <<'PY' || fail "STRATA_STATS does not show every call served"
import json, sys
stats = json.load(open(sys.argv[1]))["collectives"]
ranks = int(sys.argv[3])
called = {}
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) == 3 and f[0] == "called":
        called[f[1]] = int(f[2])
want = ["MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather", "MPI_Gather",
        "MPI_Scatter", "MPI_Alltoall", "MPI_Barrier"]
bad = [n for n in want if n not in called]
for name in want:
    s = stats.get(name, {"calls_strata": 0, "calls_host": 0})
    print("%-14s called %3d per rank, strata served %3d, host %d"
          % (name, called.get(name, 0), s["calls_strata"], s["calls_host"]))
    # the final Barrier of the script is one more than it counts
    extra = ranks if name == "MPI_Barrier" else 0
    if s["calls_strata"] != called.get(name, 0) * ranks + extra or s["calls_host"]:
        bad.append(name)
if bad:
    print("wrong: " + ", ".join(bad))
    sys.exit(1)
PY

STRATA_STATS="$tmp/objects.json" "$run" -n "$ranks" "$python" "$script" 0 --objects \
  >"$tmp/out" 2>"$tmp/err" || fail "the mpi4py run of object methods failed"
grep -q "^PASS mpi4py" "$tmp/out" || fail "the object methods' script did not pass"
"$python" - "$tmp/objects.json" <<'PY' || fail "object methods: a call went to the host MPI"
import json, sys
stats = json.load(open(sys.argv[1]))["collectives"]
for name, s in sorted(stats.items()):
    if s["calls_strata"] or s["calls_host"]:
        print("objects: %-14s strata %d, host %d" % (name, s["calls_strata"], s["calls_host"]))
if any(s["calls_host"] for s in stats.values()) or not stats["MPI_Bcast"]["calls_strata"]:
    sys.exit(1)
PY
echo "PASS mpi4py_stats $mpi"
