#!/usr/bin/env bash
# What CI runs (make test), for every host MPI whose compiler is installed:
#   --suite   the whole test suite, in build/<mpi>/
#   --asan    the tests listed in tests/sanitize/asan-tests.txt under
#             AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer,
#             in build/asan-<mpi>/
#   --tsan    the threads.* tests under ThreadSanitizer, in build/tsan-<mpi>/
#   --package the Debian package built, installed with apt, run through its
#             strata-run and its modules, and purged (scripts/package-test.sh;
#             needs root, says SKIP without; its own build in build/pkg-deb/)
#   --hosts   the host matrix: Open MPI 5.0.11, MPICH 5.0.2 and Intel MPI
#             2021.19 from PyPI, and the MPI 5.0 standard ABI build on two of
#             them, each built in build/host-*/ and run on the tests of
#             tests/hosts/host-tests.txt (scripts/host-matrix.sh; fetching
#             the wheels needs PyPI, and fails the part without it)
# With no part named, all five; then nothing of strata's may be left in
# /dev/shm.  A build that a part needs and that is missing fails the run
# (make test builds them all; make asan and make tsan their own).
#   scripts/run-tests.sh [--suite] [--asan] [--tsan] [--package] [--hosts] [ROOT]    (ROOT: build)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root=build
parts=()
for arg in "$@"; do
  case "$arg" in
    --suite|--asan|--tsan|--package|--hosts) parts+=("${arg#--}") ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-tests.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) root="$arg" ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || parts=(suite asan tsan package hosts)

# The suite's fixed cost model (tests that need another set their own).
export STRATA_MODEL="${STRATA_MODEL:-$here/tests/data/model.conf}"
mpis=()
for m in openmpi mpich; do
  if command -v "mpicc.$m" >/dev/null 2>&1; then mpis+=("$m"); fi
done
if [ ${#mpis[@]} -eq 0 ]; then
  echo "no host MPI found (mpicc.openmpi, mpicc.mpich): run make test" >&2
  exit 1
fi

status=0
# ctest in a build directory; a missing build is a failure, not a skip.
run_ctest() {
  local dir="$1" what="$2"
  shift 2
  if [ ! -f "$dir/CTestTestfile.cmake" ]; then
    echo "FAIL: no build in $dir for the $what (make test builds it)"
    return 1
  fi
  echo "== $what with $(basename "$dir") =="
  (cd "$dir" && ctest --output-on-failure --timeout 300 "$@")
}

# The ASan tests listed for an MPI, one per line.
asan_names() { awk -v m="$1" '$1 == m { print $2 }' "$here/tests/sanitize/asan-tests.txt"; }

# Their anchored ctest regex.
asan_regex() { printf '^(%s)$' "$(asan_names "$1" | sed 's/\./\\./g' | paste -sd '|')"; }

# Every listed test must exist in the build: a renamed or removed one would
# otherwise shrink the subset silently.
asan_check_list() {
  local mpi="$1" dir="$2" missing=0
  for name in $(asan_names "$mpi"); do
    if ! (cd "$dir" && ctest -N -R "^${name//./\\.}\$" | grep -q '^Total Tests: 1$'); then
      echo "FAIL: tests/sanitize/asan-tests.txt names $name, not a test of $dir"
      missing=1
    fi
  done
  return $missing
}

for part in "${parts[@]}"; do
  if [ "$part" = hosts ]; then
    # Its own builds, one per host (not the Debian MPIs': the loop below).
    echo "== host matrix (scripts/host-matrix.sh) =="
    "$here/scripts/host-matrix.sh" "$root" || status=1
    continue
  fi
  if [ "$part" = package ]; then
    # Once for both MPIs (the package holds both).
    echo "== Debian package, modules (scripts/package-test.sh) =="
    "$here/scripts/package-test.sh" -j "${JOBS:-2}" || status=1
    continue
  fi
  for mpi in "${mpis[@]}"; do
    case "$part" in
      suite)
        run_ctest "$root/$mpi" "test suite" || status=1
        ;;
      asan)
        dir="$root/asan-$mpi"
        if [ -f "$dir/CTestTestfile.cmake" ]; then asan_check_list "$mpi" "$dir" || status=1; fi
        (. "$here/tests/sanitize/env.sh" &&
           run_ctest "$dir" "ASan+UBSan tests" -R "$(asan_regex "$mpi")") || status=1
        ;;
      tsan)
        (. "$here/tests/sanitize/env.sh" && run_ctest "$root/tsan-$mpi" "TSan tests" \
           -R '^threads\.') || status=1
        ;;
    esac
  done
done

left=$(find /dev/shm -maxdepth 1 -iname '*strata*' -printf '%f ' 2>/dev/null)
if [ -n "$left" ]; then
  echo "FAIL: strata left segments in /dev/shm: $left"
  status=1
fi
exit $status
