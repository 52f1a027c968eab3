#!/usr/bin/env bash
# Installs the Debian packages strata needs, if any are missing.  gfortran:
# the MPIs' mpif90 wrappers need it for the Fortran tests and apps/cg.f90.
set -euo pipefail
need=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev mpich libmpich-dev
      hwloc libhwloc-dev python3 python3-matplotlib gfortran)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}"
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
