#!/usr/bin/env bash
# make deb: strata's Debian package, from this tree, with Debian's tools
# (dpkg-buildpackage, debhelper; packaging/debian/rules says how), checked by
# lintian (errors fail; warnings are listed in docs/USAGE.md, "Installing").
#   scripts/make-deb.sh [-j N]      -> build/pkg-deb/strata_<version>_<arch>.deb
# The tree is copied (rsync, build/ and .git left out) to build/pkg-deb/strata/
# with packaging/debian/ as its debian/; the copy's build folders (obj-openmpi,
# obj-mpich) are kept, so a second run rebuilds only what changed.
# Installs what is missing (apt): debhelper, dpkg-dev, rsync, lintian and the
# package's build dependencies.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs="$2"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make-deb.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

need=(debhelper dpkg-dev rsync lintian build-essential cmake pkg-config libhwloc-dev
      libopenmpi-dev openmpi-bin libmpich-dev mpich)
"$(dirname "$0")/apt-need.sh" "${need[@]}"

out="$here/build/pkg-deb"
src="$out/strata"
mkdir -p "$src"
rsync -a --delete --exclude=/build/ --exclude=/.git/ --exclude='/.venv-*/' \
  --exclude=/debian/ --exclude='/obj-*/' "$here/" "$src/"
rsync -a --delete --exclude=/strata/ --exclude='/.debhelper/' --exclude=/files \
  --exclude='/*.substvars' --exclude='/debhelper-build-stamp' --exclude='/*.debhelper.log' \
  "$here/packaging/debian/" "$src/debian/"
rm -f "$out"/strata_*.deb "$out"/strata-dbgsym_*.deb "$out"/strata_*.buildinfo "$out"/strata_*.changes
(cd "$src" && dpkg-buildpackage -b -us -uc -j"$jobs" >"$out/build.log" 2>&1) || {
  tail -40 "$out/build.log"; echo "make-deb: dpkg-buildpackage failed (whole log: $out/build.log)" >&2; exit 1; }
deb="$(ls "$out"/strata_*.deb)"
echo "== lintian $(basename "$deb")"
# Errors fail; warnings and below are printed (docs/USAGE.md lists them).
lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" | tee "$out/lintian.log" || {
  echo "make-deb: lintian found errors (above)" >&2; exit 1; }
echo "$deb"
