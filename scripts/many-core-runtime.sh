#!/bin/bash
# Packs Debian 12's two MPIs and the libraries they load into
# .dev/mpi-runtime.tar.xz (about 12 MiB), for scripts/many-core-check.sh on the
# device tool's machine (another distribution, nothing to install from there).
# Run on the Debian machine, in the repository's root; .dev/ is git-ignored
# locally (.git/info/exclude).
set -eu
packages="libopenmpi3 openmpi-bin openmpi-common libpmix2 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libevent-2.1-7 libhwloc15 libhwloc-plugins libmpich12 mpich
  libucx0 libnuma1 libfabric1 libpsm2-2 libpsm-infinipath1 libibverbs1 librdmacm1 libslurm38"
mkdir -p .dev
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for p in $packages; do dpkg -L "$p"; done |
  grep -v -E '/usr/share/(doc|man|lintian)|/include/|\.a$|\.mod$' | sort -u |
  while read -r f; do if [ -f "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done >"$list"
tar -cJf .dev/mpi-runtime.tar.xz -T "$list" 2>/dev/null
ls -l .dev/mpi-runtime.tar.xz
