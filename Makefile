# Thin wrapper over CMake: one build per host MPI found on the machine.
#   make          build every MPI's build/<mpi>/
#   make demo     install what is missing, build, run the side-by-side benchmark
#                 (also against the newest host of each MPI laid out in build/hosts)
#   make test     install what is missing, build, run what CI runs: the whole
#                 test suite, the ASan and TSan parts below, the Debian package,
#                 then the host matrix (today's Open MPI, MPICH and Intel MPI from
#                 PyPI, and the MPI 5.0 standard ABI build: scripts/host-matrix.sh)
#   make asan     build/asan-<mpi>/: AddressSanitizer + UndefinedBehaviorSanitizer,
#                 and the tests of tests/sanitize/asan-tests.txt under them
#   make tsan     build/tsan-<mpi>/: ThreadSanitizer, and the threads tests under it
#   make valgrind node and block collectives under valgrind memcheck (2 ranks)
#   make test-cuda the device-buffer tests on a real GPU (says it skipped without one)
#   make deb      build/pkg-deb/strata_<version>_<arch>.deb: the Debian package, libstrata
#                 for both Debian MPIs (packaging/debian; docs/USAGE.md, "Installing")
JOBS ?= 2
# The host MPIs whose compilers are installed (expanded when a recipe runs,
# after deps may have installed them).
MPIS = $(foreach m,openmpi mpich,$(if $(shell command -v mpicc.$(m)),$(m)))

.PHONY: all deps build demo test asan tsan valgrind clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@$(MAKE) --no-print-directory $(foreach m,openmpi mpich,$(if $(shell command -v mpicc.$(m)),build-$(m)))

build-%:
	@cmake -S . -B build/$* -DSTRATA_MPI=$* -DCMAKE_C_COMPILER=mpicc.$* $(CMAKE_ARGS) >/dev/null
	@cmake --build build/$* -j $(JOBS)

demo: build
	@scripts/demo.sh

test: build
	@$(MAKE) --no-print-directory $(addprefix asan-,$(MPIS)) $(addprefix tsan-,$(MPIS))
	@scripts/run-tests.sh build

asan: deps
	@$(MAKE) --no-print-directory $(addprefix asan-,$(MPIS))
	@scripts/run-tests.sh --asan build

asan-%:
	@cmake -S . -B build/asan-$* -DSTRATA_MPI=$* -DCMAKE_C_COMPILER=mpicc.$* -DSTRATA_SANITIZE=ON >/dev/null
	@cmake --build build/asan-$* -j $(JOBS)

# Only what runs under ThreadSanitizer: the library and the threads tests.
tsan: deps
	@$(MAKE) --no-print-directory $(addprefix tsan-,$(MPIS))
	@scripts/run-tests.sh --tsan build

tsan-%:
	@cmake -S . -B build/tsan-$* -DSTRATA_MPI=$* -DCMAKE_C_COMPILER=mpicc.$* -DSTRATA_SANITIZE=thread >/dev/null
	@cmake --build build/tsan-$* -j $(JOBS) --target test_threads test_late_start test_wait test_nonblocking

valgrind: build
	@scripts/valgrind-check.sh build

# The fuzzer's long run (scripts/fuzz-long.sh): FUZZ_ARGS="--minutes 30 --mpi openmpi"
.PHONY: fuzz
fuzz: build
	@scripts/fuzz-long.sh $(FUZZ_ARGS)

# Collectives of more than 2 GiB per call (about 10 GiB of memory): LARGE_ARGS="--mpi openmpi"
# The device-buffer matrix on a real GPU (skipped, saying so, without one).
.PHONY: test-cuda
test-cuda: build
	@scripts/test-cuda.sh build

.PHONY: large-counts
large-counts: build
	@scripts/large-counts.sh $(LARGE_ARGS)

# The Debian package (scripts/make-deb.sh: dpkg-buildpackage, then lintian).
.PHONY: deb
deb:
	@scripts/make-deb.sh -j $(JOBS)

clean:
	rm -rf build
