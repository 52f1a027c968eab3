# Spack recipe for strata (docs/USAGE.md, "Installing"):
#   copy this file into a Spack repository as packages/strata/package.py
#   (spack repo create; spack repo add), then, in a strata source tree:
#     spack dev-build strata@main ^openmpi      (or ^mpich, ...)
#   or, with `git` below pointing at the site's copy of the repository:
#     spack install strata ^openmpi
# Checked by tests/packaging/test_spack_recipe.py against a stub of Spack's API.
import os

from spack.package import *


class Strata(CMakePackage):
    """strata: MPI collectives served through shared memory and hardware-aware
    hierarchies, preloaded (LD_PRELOAD) into unmodified MPI programs or linked;
    everything it does not serve goes to the host MPI through PMPI."""

    # strata has no public home yet: these two are placeholders, to be set to
    # the site's copy of the repository (spack dev-build needs neither).
    homepage = "https://example.org/strata"
    git = "https://example.org/strata.git"

    maintainers("strata-maintainers")

    version("main", branch="main")

    variant("fortran", default=True,
            description="Build the Fortran tests and application with the MPI's mpif90 "
                        "(libstrata's Fortran entry points need no Fortran compiler)")
    variant("cuda", default=False,
            description="Build libstrata_cuda.so, the GPU reduction plugin (needs nvcc)")

    depends_on("c", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("hwloc")
    depends_on("cuda", when="+cuda")

    conflicts("platform=darwin", msg="strata needs Linux (process_vm_readv, /dev/shm)")

    @property
    def mpi_family(self):
        """openmpi or mpich: the family of the MPI this build is for (its
        libstrata is installed under lib/strata/<family>)."""
        return "openmpi" if self.spec.satisfies("^openmpi") else "mpich"

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("CMAKE_C_COMPILER", spec["mpi"].mpicc),
            self.define("STRATA_MPI", self.mpi_family),
            self.define("STRATA_CUDA_PLUGIN_BUILD", "ON" if spec.satisfies("+cuda") else "OFF"),
        ]
        # The library lands in lib/strata/<family> (never lib64/).
        args.append(self.define("CMAKE_INSTALL_LIBDIR", "lib"))
        if spec.satisfies("+fortran"):
            # The Fortran tests and apps/cg.f90 with this MPI's own wrapper.
            args.append(self.define("STRATA_MPIF90", spec["mpi"].mpifc))
        return args

    @property
    def build_targets(self):
        # The library and the tools; the test suite is built by `make test`.
        return ["strata", "strata-info", "strata-bench", "strata-calibrate"]

    @property
    def libstrata_dir(self):
        return join_path(self.prefix.lib, "strata", self.mpi_family)

    def setup_run_environment(self, env):
        # What `module load strata` sets (spack module tcl/lmod refresh): the
        # tools on PATH, the man pages, the pkg-config file as `strata`, and the
        # library for a launcher's LD_PRELOAD:
        #   mpirun -x LD_PRELOAD=$STRATA_PRELOAD -n 4 ./app   (or strata-run -n 4 ./app)
        env.prepend_path("PATH", join_path(self.libstrata_dir, "bin"))
        env.prepend_path("MANPATH", self.prefix.share.man)
        env.prepend_path("PKG_CONFIG_PATH", join_path(self.libstrata_dir, "pkgconfig"))
        env.set("STRATA_PRELOAD", join_path(self.libstrata_dir, "libstrata.so"))
        env.set("STRATA_RUN_MPI", self.mpi_family)

    def setup_dependent_run_environment(self, env, dependent_spec):
        self.setup_run_environment(env)

    @run_after("install")
    def check_install(self):
        lib = join_path(self.libstrata_dir, "libstrata.so")
        if not os.path.exists(lib):
            raise InstallError("libstrata.so was not installed at " + lib)
