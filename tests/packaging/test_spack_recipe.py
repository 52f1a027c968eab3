#!/usr/bin/env python3
"""The Spack recipe (packaging/spack/package.py), checked without Spack:
imported against tests/packaging/spack_stub (a few of spack.package's
classes and directives), its declarations checked (an MPI tool library:
depends_on mpi and hwloc, a CMake build, fortran and cuda variants), its
cmake_args run for Open MPI and MPICH specs, and its setup_run_environment
compared with what `cmake --install` lays down: with --install-from BUILD,
that build is installed into a temporary prefix and every path the
recipe's run environment names must exist there.
    test_spack_recipe.py [--install-from BUILD_DIR]"""
import importlib.util
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(here, "spack_stub"))
import spack.package as sp  # noqa: E402  (the stub)

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


spec_file = os.path.join(root, "packaging", "spack", "package.py")
mod_spec = importlib.util.spec_from_file_location("strata_recipe", spec_file)
recipe = importlib.util.module_from_spec(mod_spec)
mod_spec.loader.exec_module(recipe)
Strata = recipe.Strata
check(issubclass(Strata, sp.CMakePackage), "Strata is a CMakePackage")
check(bool(Strata.__doc__ and Strata.__doc__.strip()), "the class has a docstring (spack info)")
check(bool(getattr(Strata, "homepage", None)) and bool(getattr(Strata, "git", None)),
      "homepage and git are set")

decl = sp.DECLARED
deps = {(a[0], k.get("when"), k.get("type")) for n, a, k in decl if n == "depends_on"}
dep_names = {d[0] for d in deps}
check("mpi" in dep_names, 'depends_on("mpi")')
check("hwloc" in dep_names, 'depends_on("hwloc")')
check(any(d[0].startswith("cmake") and d[2] == "build" for d in deps), "cmake is a build dependency")
check(("cuda", "+cuda", None) in deps, 'depends_on("cuda", when="+cuda")')
variants = {a[0]: k for n, a, k in decl if n == "variant"}
check("fortran" in variants and "cuda" in variants, "variants fortran and cuda")
check(variants.get("cuda", {}).get("default") is False, "cuda is off by default")
check(all(k.get("description") for k in variants.values()), "every variant is described")
check(any(n == "version" for n, a, k in decl), "at least one version")
check(any(getattr(f, "run_after", None) == "install" for f in vars(Strata).values()),
      "a run_after('install') check")


class FakeMPI:
    def __init__(self, family):
        self.mpicc = "/opt/{0}/bin/mpicc".format(family)
        self.mpifc = "/opt/{0}/bin/mpif90".format(family)


class FakeSpec:
    """satisfies() of ^<mpi>, +variant, ~variant; nothing else holds."""

    def __init__(self, family, on=()):
        self.family, self.on = family, set(on)

    def satisfies(self, s):
        if s.startswith("^"):
            return s[1:] == self.family
        if s.startswith("+"):
            return s[1:] in self.on
        if s.startswith("~"):
            return s[1:] not in self.on
        return False

    def __getitem__(self, name):
        assert name == "mpi", name
        return FakeMPI(self.family)


class FakeEnv:
    def __init__(self):
        self.ops = []

    def prepend_path(self, var, path):
        self.ops.append(("prepend", var, path))

    def append_path(self, var, path):
        self.ops.append(("append", var, path))

    def set(self, var, value):
        self.ops.append(("set", var, value))


for family in ("openmpi", "mpich"):
    for on in ((), ("cuda", "fortran")):
        pkg = Strata(FakeSpec(family, on), "/spack/strata-" + family)
        args = pkg.cmake_args()
        label = "{0} {1}".format(family, "+".join(on) or "default")
        check("-DCMAKE_C_COMPILER:STRING=/opt/{0}/bin/mpicc".format(family) in args,
              label + ": built with the MPI's mpicc")
        check("-DSTRATA_MPI:STRING=" + family in args, label + ": STRATA_MPI=" + family)
        want = "ON" if "cuda" in on else "OFF"
        check("-DSTRATA_CUDA_PLUGIN_BUILD:STRING=" + want in args,
              label + ": STRATA_CUDA_PLUGIN_BUILD=" + want)
        check(("-DSTRATA_MPIF90:STRING=/opt/{0}/bin/mpif90".format(family) in args) == ("fortran" in on),
              label + ": STRATA_MPIF90 only with +fortran")

    pkg = Strata(FakeSpec(family), "/spack/strata")
    env = FakeEnv()
    pkg.setup_run_environment(env)
    seen = {(op, var) for op, var, _ in env.ops}
    for var in ("PATH", "MANPATH", "PKG_CONFIG_PATH"):
        check(("prepend", var) in seen, "{0}: setup_run_environment prepends {1}".format(family, var))
    setv = {var: val for op, var, val in env.ops if op == "set"}
    check(setv.get("STRATA_PRELOAD") == "/spack/strata/lib/strata/{0}/libstrata.so".format(family),
          family + ": STRATA_PRELOAD names lib/strata/<mpi>/libstrata.so")
    check(setv.get("STRATA_RUN_MPI") == family, family + ": STRATA_RUN_MPI")

# The run environment against a real installation laid down by cmake --install.
if len(sys.argv) == 3 and sys.argv[1] == "--install-from":
    build = sys.argv[2]
    family, libdir = None, None
    for line in open(os.path.join(build, "CMakeCache.txt")):
        if line.startswith("STRATA_MPI:"):
            family = line.strip().split("=", 1)[1]
        if line.startswith("CMAKE_INSTALL_LIBDIR:"):
            libdir = line.strip().split("=", 1)[1]
    if libdir != "lib":
        # The recipe installs with CMAKE_INSTALL_LIBDIR=lib; this build does not.
        print("SKIP: the install check: {0} has CMAKE_INSTALL_LIBDIR={1}, the recipe lib".format(build, libdir))
    else:
        with tempfile.TemporaryDirectory() as prefix:
            r = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            check(r.returncode == 0, "cmake --install {0} --prefix <tmp> {1}".format(build, r.stderr.strip()[-300:]))
            pkg = Strata(FakeSpec(family), prefix)
            env = FakeEnv()
            pkg.setup_run_environment(env)
            for op, var, path in env.ops:
                if var in ("PATH", "MANPATH", "PKG_CONFIG_PATH", "STRATA_PRELOAD"):
                    check(os.path.exists(path), "{0}: {1} {2} exists after cmake --install".format(
                        family, var, path.replace(prefix, "<tmp>")))
            check(os.path.exists(os.path.join(pkg.libstrata_dir, "bin", "strata-run")),
                  family + ": lib/strata/<mpi>/bin/strata-run installed")

if failures:
    print("{0} check(s) failed".format(len(failures)))
    sys.exit(1)
print("all checks passed")
