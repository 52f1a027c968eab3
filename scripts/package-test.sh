#!/usr/bin/env bash
# The Debian package end to end (run by scripts/run-tests.sh --package, and so
# by make test): build it (scripts/make-deb.sh), install it into this machine
# with apt, then for each Debian MPI run a small MPI program with strata
#   - through the installed strata-run (--mpi, and the MPI it finds itself),
#   - through the installed tools' wrappers (strata-run strata-info),
#   - through the module (Lmod: module load strata/<mpi>), with strata-run and
#     with the MPI's own launcher and $STRATA_PRELOAD, and the Tcl module too,
# each checked by STRATA_STATS (the collective was served by strata, under
# that MPI); module unload must give the environment back; the header and
# pkg-config files must link a program; `cmake --install` must install the
# modules too.  Then apt remove --purge, and nothing of the package may be
# left.  Needs root and apt (skips, saying so, without them: CI has both).
#   scripts/package-test.sh [-j N]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
jobs=2
[ "${1:-}" = -j ] && jobs="${2:-2}"

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: package test: not root (it installs and removes the Debian package with apt)"; exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
  echo "SKIP: package test: no apt-get/dpkg (not a Debian system)"; exit 0
fi
status=0
fail() { echo "FAIL: package test: $*"; status=1; }
tmp="$(mktemp -d /tmp/strata-pkgtest.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# Lmod, for the module's part (Debian's; the package only suggests it).
if ! dpkg-query -W -f='${Status}' lmod 2>/dev/null | grep -q "install ok installed"; then
  echo "installing: lmod"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends lmod >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends lmod >/dev/null; } ||
    fail "apt-get install lmod"
fi

echo "== make deb"
"$here/scripts/make-deb.sh" -j "$jobs" >"$tmp/deb.log" 2>&1 || { cat "$tmp/deb.log"; fail "make deb"; exit 1; }
grep -v '^running with root' "$tmp/deb.log" | tail -n +1 | sed -n '/== lintian/,$p'
deb="$(ls "$here"/build/pkg-deb/strata_*.deb)"

echo "== apt install ./$(realpath --relative-to="$here" "$deb")"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get install $deb"; exit 1; }
dpkg -L strata >"$tmp/files"
libdir="/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/strata"

cat >"$tmp/allreduce.c" <<'CEOF'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, x, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  x = rank + 1;
  MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size + 1) / 2) { fprintf(stderr, "rank %d: sum %d\n", rank, sum); MPI_Abort(MPI_COMM_WORLD, 1); }
  MPI_Finalize();
  return 0;
}
CEOF

# served JSON MPI WHAT: the stats file says MPI ran it and strata served an
# MPI_Allreduce (or, with "any", that strata was set up under MPI).
served() {
  python3 - "$@" <<'PEOF'
import json, sys
path, mpi, what = sys.argv[1:]
try:
    d = json.load(open(path))
except (OSError, ValueError) as e:
    sys.exit(f"no STRATA_STATS file ({e})")
if d.get("host_mpi") != mpi:
    sys.exit(f"host_mpi is {d.get('host_mpi')!r}, not {mpi}")
if what == "allreduce" and d["collectives"]["MPI_Allreduce"]["calls_strata"] < 1:
    sys.exit("strata served no MPI_Allreduce: " + json.dumps(d["collectives"]["MPI_Allreduce"]))
PEOF
}
# check NAME JSON MPI WHAT COMMAND...: run COMMAND with STRATA_STATS=JSON.
check() {
  local name="$1" json="$2" mpi="$3" what="$4"; shift 4
  rm -f "$json"
  if ! STRATA_STATS="$json" timeout 120 "$@" >"$tmp/out" 2>&1; then
    cat "$tmp/out"; fail "$name: exit status"; return
  fi
  if why="$(served "$json" "$mpi" "$what" 2>&1)"; then echo "ok: $name"; else fail "$name: $why"; fi
}

# Environment Modules conflicts with Lmod (Debian), so its modulecmd.tcl is
# taken from its package, unpacked here, and run by tclsh (Lmod's dependency).
modulecmd=
if (cd "$tmp" && apt-get download environment-modules >/dev/null 2>&1) &&
   dpkg-deb -x "$tmp"/environment-modules_*.deb "$tmp/envmod" && command -v tclsh >/dev/null; then
  modulecmd="$(ls "$tmp"/envmod/usr/lib/*/modulecmd.tcl | head -1)"
else
  echo "SKIP: the Tcl module under Environment Modules (apt-get download environment-modules failed)"
fi

mpis=()
for m in openmpi mpich; do
  if command -v "mpicc.$m" >/dev/null 2>&1; then mpis+=("$m"); fi
done
for m in "${mpis[@]}"; do
  prog="$tmp/allreduce-$m"
  "mpicc.$m" -o "$prog" "$tmp/allreduce.c" || { fail "mpicc.$m"; continue; }
  check "$m: strata-run --mpi $m" "$tmp/$m-run.json" "$m" allreduce strata-run --mpi "$m" -n 2 "$prog"
  check "$m: strata-run --mpi $m strata-info (the tools' wrapper)" "$tmp/$m-info.json" "$m" any \
    strata-run --mpi "$m" -n 2 strata-info
  # Linked instead of preloaded: the header and strata-<mpi>.pc.
  if "mpicc.$m" -o "$prog-linked" "$tmp/allreduce.c" $(pkg-config --cflags --libs "strata-$m"); then
    check "$m: linked with pkg-config strata-$m" "$tmp/$m-linked.json" "$m" allreduce \
      strata-run --mpi "$m" --native -n 2 "$prog-linked"
  else
    fail "$m: linking with pkg-config strata-$m"
  fi

  # The module, in a login shell's Lmod (/etc/profile.d/lmod.sh).  Each line
  # of env.before / env.after: what load may change; unload must restore it.
  # lua, tcl: Lmod, on the package's .lua and Tcl files; envmod: the Tcl
  # files under Environment Modules' own modulecmd.tcl (below).
  for kind in lua tcl envmod; do
    case "$kind" in
      lua) modpath=/etc/lmod/modules; init=". /etc/profile.d/lmod.sh" ;;
      tcl) modpath=/usr/share/modules/modulefiles; init=". /etc/profile.d/lmod.sh" ;;
      envmod) [ -n "$modulecmd" ] || continue
              modpath=/usr/share/modules/modulefiles
              init='module() { eval "$(tclsh '"$modulecmd"' bash "$@")"; }' ;;
    esac
    if [ "$kind" != envmod ] && [ ! -f /etc/profile.d/lmod.sh ]; then fail "no Lmod (/etc/profile.d/lmod.sh)"; break; fi
    cat >"$tmp/module-$m-$kind.sh" <<SEOF
$init
set -u
export MODULEPATH=$modpath
# Path lists as sets (Lmod itself drops duplicate and empty elements).
snap() {
  local v
  for v in PATH MANPATH PKG_CONFIG_PATH LD_PRELOAD; do
    echo "\$v=\$(printenv \$v | tr ':' '\\n' | grep -v '^\$' | sort -u | paste -sd:)"
  done
  env | grep -E '^STRATA_[A-Z_]*=' | grep -v '^STRATA_STATS=' | sort
}
snap >"$tmp/env.before"
module load strata/$m || exit 10
case ":\$PATH:" in *":$libdir/$m/bin:"*) ;; *) echo "PATH lacks $libdir/$m/bin"; exit 11 ;; esac
[ "\$(command -v strata-run)" = "$libdir/$m/bin/strata-run" ] || { echo "strata-run is \$(command -v strata-run)"; exit 12; }
[ "\${STRATA_PRELOAD:-}" = "$libdir/$m/libstrata.so" ] || { echo "STRATA_PRELOAD=\${STRATA_PRELOAD:-}"; exit 13; }
man -w strata-run >/dev/null || { echo "man strata-run: MANPATH=\${MANPATH:-}"; exit 14; }
[ "\$(pkg-config --variable=libdir strata)" = "$libdir/$m" ] || { echo "pkg-config strata: PKG_CONFIG_PATH=\${PKG_CONFIG_PATH:-}"; exit 15; }
STRATA_STATS=$tmp/$m-$kind-run.json strata-run -n 2 $prog || exit 16
if [ $m = openmpi ]; then
  STRATA_STATS=$tmp/$m-$kind-launcher.json mpirun.openmpi --allow-run-as-root -n 2 \
    -x LD_PRELOAD=\$STRATA_PRELOAD -x STRATA_STATS $prog || exit 17
else
  STRATA_STATS=$tmp/$m-$kind-launcher.json mpiexec.mpich -genv LD_PRELOAD \$STRATA_PRELOAD -n 2 $prog || exit 17
fi
module unload strata/$m || exit 18
snap >"$tmp/env.after"
diff "$tmp/env.before" "$tmp/env.after" || { echo "module unload left the environment changed (above)"; exit 19; }
SEOF
    bash "$tmp/module-$m-$kind.sh" >"$tmp/out" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
      for how in run launcher; do
        if why="$(served "$tmp/$m-$kind-$how.json" "$m" allreduce 2>&1)"; then
          echo "ok: $m: module load strata/$m ($([ $kind = envmod ] && echo "Tcl, Environment Modules" || echo "$kind, Lmod")), $([ $how = run ] && echo strata-run || echo "the MPI's launcher with \$STRATA_PRELOAD"); unload restores"
        else fail "$m: module ($kind), $how: $why"; fi
      done
    else
      cat "$tmp/out"; fail "$m: module load strata/$m ($kind) (status $rc)"
    fi
  done
done

# strata-run without --mpi: the MPI of the mpiexec on PATH (Debian's alternative).
fam="$(readlink -f "$(command -v mpiexec)")"
case "$fam" in *openmpi*|*orterun*) fam=openmpi ;; *mpich*|*hydra*) fam=mpich ;; *) fam= ;; esac
if [ -n "$fam" ] && [ -x "$tmp/allreduce-$fam" ]; then
  check "strata-run without --mpi picks $fam (mpiexec's)" "$tmp/default.json" "$fam" allreduce \
    strata-run -n 2 "$tmp/allreduce-$fam"
fi

# cmake --install installs the modules and the launcher too (the package's build folder).
for m in "${mpis[@]}"; do
  b="$here/build/pkg-deb/strata/obj-$m"
  DESTDIR="$tmp/destdir" cmake --install "$b" --prefix /opt/strata >/dev/null || { fail "cmake --install $b"; continue; }
  ld="$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$b/CMakeCache.txt")"
  for f in share/modulefiles/strata/$m.lua share/modulefiles/strata/$m bin/strata-run \
           "$ld/strata/$m/bin/strata-run" "$ld/strata/$m/libstrata.so" share/man/man1/strata-run.1; do
    [ -e "$tmp/destdir/opt/strata/$f" ] || fail "cmake --install ($m) lacks $f"
  done
  grep -q "/opt/strata/$ld/strata/$m" "$tmp/destdir/opt/strata/share/modulefiles/strata/$m.lua" ||
    fail "cmake --install --prefix /opt/strata ($m): the module does not name /opt/strata"
done
[ $status = 0 ] && echo "ok: cmake --install: modules, launcher, library, man pages"

echo "== apt remove --purge strata"
DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y -qq strata >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; fail "apt-get remove --purge strata"; }
left=()
while read -r f; do
  case "$f" in *strata*) [ -e "$f" ] || [ -L "$f" ] && left+=("$f") ;; esac
done <"$tmp/files"
for f in /etc/lmod/modules/strata /usr/share/modules/modulefiles/strata "$libdir" \
         /usr/share/doc/strata /usr/bin/strata-run /usr/include/strata.h; do
  [ -e "$f" ] && left+=("$f")
done
if dpkg-query -W -f='${Status}' strata 2>/dev/null | grep -q .; then
  left+=("dpkg: $(dpkg-query -W -f='${Status}' strata)")
fi
if [ ${#left[@]} -gt 0 ]; then fail "left after apt remove --purge: ${left[*]}"
else echo "ok: apt remove --purge left nothing of strata"; fi
exit $status
