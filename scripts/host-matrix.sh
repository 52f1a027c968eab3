#!/usr/bin/env bash
# The host matrix: strata built against today's MPI releases (laid out from
# their PyPI wheels by scripts/host-mpis.sh) and the tests that
# tests/hosts/host-tests.txt lists for each run there.
#   scripts/host-matrix.sh [--cache DIR] [--only HOST] [ROOT]    (ROOT: build)
# For each host H (openmpi-5.0.11, mpich-5.0.2, impi-2021.19.0): ROOT/host-H/
# configured with H's own mpicc and nothing else, only the programs its
# tests run built, the tests run.  Then ROOT/host-abi/ (MPICH 5.0.2's
# mpicc_abi, the MPI 5.0 standard ABI), its tests run on MPICH 5.0.2's
# libmpi_abi.so.1 and again on Intel MPI 2021.19's (LD_LIBRARY_PATH and its
# launcher), one library for both.
# --cache: the wheels' cache (scripts/host-mpis.sh; default ROOT/hosts/wheels).
# --only: one host (a name above, or abi).
# A wheel that cannot be fetched, a build that fails, a listed test missing
# from its build or failing: the script fails, saying which.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$here/build"
cache=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "host-matrix: unknown option $1" >&2; exit 2 ;;
    *) root="$(mkdir -p "$1" && cd "$1" && pwd)"; shift ;;
  esac
done
[ -n "$cache" ] || cache="$root/hosts/wheels"
list="$here/tests/hosts/host-tests.txt"
jobs="${JOBS:-2}"
export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}"

start=$SECONDS
if ! "$here/scripts/host-mpis.sh" --cache "$cache" --dest "$root/hosts" >/dev/null; then
  echo "FAIL: host matrix: the pinned MPIs could not be fetched or laid out (scripts/host-mpis.sh)"
  exit 1
fi
echo "host matrix: MPIs laid out in $root/hosts ($((SECONDS - start)) s)"

# The tests listed for a host key, one per line.
names_of() { awk -v h="$1" '$1 == h { print $2 }' "$list"; }
regex_of() { printf '^(%s)$' "$(names_of "$1" | sed 's/\./\\./g' | paste -sd '|')"; }

# The build targets the listed tests run: each test command's arguments that
# are files of the build's bin/ (the test programs, not strata-run, which
# configure writes).
targets_of() {
  local dir="$1" key="$2"
  (cd "$dir" && ctest --show-only=json-v1 -R "$(regex_of "$key")") |
    python3 -c '
import json, os, sys
bindir = os.path.join(sys.argv[1], "bin") + "/"
seen = set()
for t in json.load(sys.stdin)["tests"]:
    for a in t.get("command", []):
        name = os.path.basename(a)
        if a.startswith(bindir) and name != "strata-run" and name not in seen:
            seen.add(name)
            print(name)
' "$dir"
}

# Configures and builds DIR with compiler CC for the tests of KEY; checks
# that every listed test exists there.
build_for() {
  local dir="$1" cc="$2" key="$3" t0=$SECONDS
  if ! cmake -S "$here" -B "$dir" -DCMAKE_C_COMPILER="$cc" >"$dir.configure.log" 2>&1; then
    echo "FAIL: configure of $dir with $cc (log: $dir.configure.log)"
    tail -n 20 "$dir.configure.log"
    return 1
  fi
  local missing=0 name
  for name in $(names_of "$key"); do
    if ! (cd "$dir" && ctest -N -R "^${name//./\\.}\$" | grep '^Total Tests: 1$' >/dev/null); then
      echo "FAIL: tests/hosts/host-tests.txt names $name for $key, not a test of $dir"
      missing=1
    fi
  done
  [ $missing = 0 ] || return 1
  local targets
  targets=$(targets_of "$dir" "$key" | paste -sd ' ')
  # strata-bench's tools and the GPU plugin are not needed; the library is a
  # dependency of every test program.  app_fault_inject: apps.* preload it.
  if ! cmake --build "$dir" -j "$jobs" --target strata $targets >"$dir.build.log" 2>&1; then
    echo "FAIL: build of $dir (log: $dir.build.log)"
    grep -m 20 -E 'error|Error' "$dir.build.log"
    return 1
  fi
  echo "host matrix: $(basename "$dir") configured and built ($((SECONDS - t0)) s: strata $targets)"
}

run_for() {
  local dir="$1" key="$2" what="$3" t0=$SECONDS
  echo "== host matrix: $what =="
  (cd "$dir" && ctest --output-on-failure --timeout 300 -R "$(regex_of "$key")")
  local rc=$?
  echo "host matrix: $what: $((SECONDS - t0)) s"
  return $rc
}

status=0
for env in $("$here/scripts/host-mpis.sh" --dest "$root/hosts" --list); do
  host=$(basename "$env" .env)
  [ -z "$only" ] || [ "$only" = "$host" ] || continue
  dir="$root/host-$host"
  # The host's runtime settings (OPAL_PREFIX, I_MPI_ROOT, ...), in a
  # subshell: nothing of one host reaches the next.
  (
    . "$env"
    build_for "$dir" "$HOST_MPI_CC" "$host" && run_for "$dir" "$host" "$host"
  ) || { echo "FAIL: host matrix: $host"; status=1; }
done

if [ -z "$only" ] || [ "$only" = abi ]; then
  mpich_env="$root/hosts/mpich-5.0.2.env"
  impi_env="$root/hosts/impi-2021.19.0.env"
  dir="$root/host-abi"
  (
    . "$mpich_env"
    build_for "$dir" "$HOST_MPI_ABI_CC" abi || exit 1
    run_for "$dir" abi "standard ABI build on MPICH 5.0.2's libmpi_abi"
  ) || { echo "FAIL: host matrix: the standard ABI build on MPICH 5.0.2"; status=1; }
  if [ -f "$dir/CTestTestfile.cmake" ]; then
    (
      . "$impi_env"
      export LD_LIBRARY_PATH="$HOST_MPI_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      export STRATA_RUN_LAUNCHER="$HOST_MPI_LAUNCHER"
      # Proof that the runtime is Intel's, not the one the build linked.
      # (Read whole: grep -q would end the pipe early, and pipefail fail it.)
      libs=$(ldd "$dir/lib/libstrata.so")
      if ! grep "$HOST_MPI_LIB/libmpi_abi.so.1" <<<"$libs" >/dev/null; then
        echo "FAIL: $dir/lib/libstrata.so does not resolve libmpi_abi.so.1 to $HOST_MPI_LIB"
        exit 1
      fi
      run_for "$dir" abi "standard ABI build on Intel MPI 2021.19's libmpi_abi (the same library)"
    ) || { echo "FAIL: host matrix: the standard ABI build on Intel MPI 2021.19"; status=1; }
  fi
fi
echo "host matrix: $((SECONDS - start)) s in all"
exit $status
