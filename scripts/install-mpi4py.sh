#!/usr/bin/env bash
# Builds mpi4py 4 from PyPI's source once per host MPI, each in its own
# virtual environment, against that MPI's compiler wrapper (a wheel built
# for another MPI would not do):
#   $STRATA_MPI4PY_ROOT/<mpi>/bin/python3, for mpi in openmpi mpich
# STRATA_MPI4PY_ROOT defaults to /opt/strata-mpi4py as root, otherwise
# ~/.local/share/strata-mpi4py; tests/scripts/mpi4py_stats.sh looks there.
# An environment whose mpi4py already imports is kept.  A build that fails
# (no network, no compiler) is reported and the others go on; the mpi4py
# test then says it was skipped.  Exits 1 if any build failed.
# -O1: mpi4py's MPI.c is one C file of megabytes, which takes a quarter of
# an hour at Python's default -O3 on a small machine; the MPI library does
# the work, not that code.
set -uo pipefail
if [ "$(id -u)" = 0 ]; then default_root=/opt/strata-mpi4py
else default_root="${HOME:-/tmp}/.local/share/strata-mpi4py"; fi
root="${STRATA_MPI4PY_ROOT:-$default_root}"
python="${PYTHON:-python3}"
status=0
for mpi in openmpi mpich; do
  command -v "mpicc.$mpi" >/dev/null || { echo "mpi4py for $mpi: no mpicc.$mpi, left out"; continue; }
  env_dir="$root/$mpi"
  if "$env_dir/bin/python3" -c 'import mpi4py' 2>/dev/null; then
    echo "mpi4py for $mpi: already in $env_dir"
    continue
  fi
  echo "mpi4py for $mpi: building into $env_dir (several minutes)"
  mkdir -p "$root"
  if "$python" -m venv "$env_dir" &&
     MPICC="mpicc.$mpi" CFLAGS="${CFLAGS:--O1}" "$env_dir/bin/pip" install -q --no-cache-dir --no-binary mpi4py \
       'mpi4py>=4,<5'; then
    echo "mpi4py for $mpi: $("$env_dir/bin/python3" -c 'import mpi4py; print(mpi4py.__version__)')"
  else
    echo "mpi4py for $mpi: the build failed (the mpi4py tests will be skipped)" >&2
    rm -rf "$env_dir"
    status=1
  fi
done
exit $status
