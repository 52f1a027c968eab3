#!/usr/bin/env bash
# Today's MPI releases as test hosts, from their PyPI wheels (versions pinned
# below): fetched once into a cache, unpacked into one prefix per MPI, and
# described by an env file per MPI that the host matrix, the benchmarks and a
# user source before building or running against it.
#
#   scripts/host-mpis.sh [--cache DIR] [--dest DIR] [--list]
#     --cache DIR  where the wheels are kept (default build/hosts/wheels): a
#                  wheel already there is not fetched again
#     --dest DIR   where the MPIs are laid out (default build/hosts)
#     --list       print the env files of the hosts laid out, one a line
#
# Layout, for each host H (openmpi-5.0.11, mpich-5.0.2, impi-2021.19.0):
#   DEST/H/            the installation (bin/mpicc, bin/mpiexec, lib/, include/)
#   DEST/H.env         shell lines to source: HOST_MPI (H), HOST_MPI_CC (its
#                      mpicc), HOST_MPI_ABI_CC (its mpicc_abi, where it has
#                      one), HOST_MPI_LIB (its lib/), HOST_MPI_LAUNCHER (its
#                      mpiexec), and what its runtime needs exported (not
#                      STRATA_ names: strata-run hands those to every rank)
#   DEST/H/.strata-laid-out  the wheels' sha256 it was laid out from
# Running it again unpacks nothing unless a wheel changed (idempotent); the
# env files are written again each time.
# A fetch that fails stops the script with a non-zero status: the host matrix
# must fail, not skip, when a pinned MPI cannot be had.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/build/hosts/wheels"
dest="$root/build/hosts"
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) cache="$2"; shift 2 ;;
    --dest) dest="$2"; shift 2 ;;
    --list) list=1; shift ;;
    *) echo "host-mpis: unknown argument $1" >&2; exit 2 ;;
  esac
done

# The pinned releases: host name, then its wheels (pip requirement specs).
hosts=(
  "openmpi-5.0.11|openmpi==5.0.11"
  "mpich-5.0.2|mpich==5.0.2"
  "impi-2021.19.0|impi-rt==2021.19.0 impi-devel==2021.19.0"
)

if [ "$list" = 1 ]; then
  for h in "${hosts[@]}"; do
    f="$dest/${h%%|*}.env"
    [ -f "$f" ] && echo "$f"
  done
  exit 0
fi

mkdir -p "$cache" "$dest"
cache=$(cd "$cache" && pwd)
dest=$(cd "$dest" && pwd)

# The wheel file of a requirement (name==version) in the cache, fetched when
# missing.  pip spells impi-rt's file impi_rt-...
wheel_of() {
  local spec="$1" name ver file
  name="${spec%%==*}"; ver="${spec##*==}"
  file=$(ls "$cache/${name//-/_}-$ver-"*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$file" ]; then
    echo "host-mpis: fetching $spec into $cache" >&2
    if ! python3 -m pip download -q --no-deps --only-binary=:all: \
           --platform manylinux_2_28_x86_64 -d "$cache" "$spec" >&2; then
      echo "host-mpis: FAILED to fetch $spec from PyPI (python3 -m pip download)" >&2
      return 1
    fi
    file=$(ls "$cache/${name//-/_}-$ver-"*.whl 2>/dev/null | head -n 1 || true)
    [ -n "$file" ] || { echo "host-mpis: pip gave no wheel for $spec" >&2; return 1; }
  fi
  echo "$file"
}

# Unpacks the wheels into DIR: each wheel's installation is its
# <name>.data/data/ tree; Intel MPI's runtime and devel wheels share one.
unpack() {
  local dir="$1"; shift
  local tmp="$dir.tmp.$$" w
  rm -rf "$tmp"; mkdir -p "$tmp/unzip" "$tmp/tree"
  for w in "$@"; do
    unzip -q -o "$w" -d "$tmp/unzip"
  done
  for d in "$tmp"/unzip/*.data/data; do
    cp -a "$d/." "$tmp/tree/"
  done
  rm -rf "$dir"
  mv "$tmp/tree" "$dir"
  rm -rf "$tmp"
}

# What each host needs beyond its files, written into its env file.
layout_openmpi() {
  # A relocated Open MPI finds its help files and components through
  # OPAL_PREFIX; the wheel's own launcher guesses it, a program started
  # another way (srun, strata-run's --native) does not.
  echo "export OPAL_PREFIX=$1"
  echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
}
layout_mpich() {
  :
}
layout_impi() {
  local p="$1" f
  # Intel's wrappers name their prefix by a placeholder its installer
  # replaces (they read I_MPI_ROOT otherwise): replaced here, so that its
  # mpicc works with nothing set, as the other two do.
  for f in "$p"/bin/mpi*; do
    if grep -q I_MPI_SUBSTITUTE_INSTALLDIR "$f" 2>/dev/null; then
      sed -i "s|I_MPI_SUBSTITUTE_INSTALLDIR|$p|g" "$f"
    fi
  done
  # Its mpif90 looks for gfortran's modules in include/gfortran/<version>,
  # the wheel has them in include/mpi/gfortran/<version>.
  [ -e "$p/include/gfortran" ] || ln -s mpi/gfortran "$p/include/gfortran"
  echo "export I_MPI_ROOT=$p"
  # One machine: shared memory only (the wheel has no network provider set up).
  echo "export I_MPI_FABRICS=shm FI_PROVIDER=shm"
}

for h in "${hosts[@]}"; do
  name="${h%%|*}"
  read -r -a specs <<< "${h#*|}"
  wheels=()
  for s in "${specs[@]}"; do
    wheels+=("$(wheel_of "$s")")
  done
  sum=$(sha256sum "${wheels[@]}" | awk '{print $1}' | tr '\n' ' ')
  prefix="$dest/$name"
  stamp="$prefix/.strata-laid-out"
  family="${name%%-*}"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
    echo "host-mpis: laying out $name in $prefix" >&2
    unpack "$prefix" "${wheels[@]}"
    env_lines=$("layout_$family" "$prefix")
    echo "$sum" > "$stamp"
  else
    env_lines=$("layout_$family" "$prefix")
  fi
  {
    echo "# $name from PyPI (${specs[*]}), laid out by scripts/host-mpis.sh"
    echo "export HOST_MPI=$name"
    echo "export HOST_MPI_CC=$prefix/bin/mpicc"
    if [ -x "$prefix/bin/mpicc_abi" ]; then
      echo "export HOST_MPI_ABI_CC=$prefix/bin/mpicc_abi"
    fi
    echo "export HOST_MPI_LIB=$prefix/lib"
    echo "export HOST_MPI_LAUNCHER=$prefix/bin/mpiexec"
    echo "$env_lines"
  } > "$dest/$name.env.tmp"
  mv "$dest/$name.env.tmp" "$dest/$name.env"
done
for h in "${hosts[@]}"; do
  echo "$dest/${h%%|*}.env"
done
