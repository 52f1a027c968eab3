#!/usr/bin/env bash
# Installs the Debian packages strata needs, if any are missing.  gfortran:
# the MPIs' mpif90 wrappers need it for the Fortran tests and apps/cg.f90.
# python3-pip and unzip: the host matrix fetches and unpacks the PyPI wheels
# of today's MPIs (scripts/host-mpis.sh).
set -euo pipefail
need=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev
      hwloc libhwloc-dev python3 python3-matplotlib python3-venv python3-dev gfortran
      python3-pip unzip)
"$(dirname "$0")/apt-need.sh" "${need[@]}"
# mpi4py, built once per MPI (pip, from source; see the script).  Its
# failure leaves the mpi4py tests skipped, not the rest of the set-up.
"$(dirname "$0")/install-mpi4py.sh" || echo "install-deps: mpi4py is missing for some MPI" >&2
