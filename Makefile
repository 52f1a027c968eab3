# Thin wrapper over CMake: one build per host MPI found on the machine.
#   make          build every MPI's build/<mpi>/
#   make demo     install what is missing, build, run the side-by-side benchmark
#   make test     install what is missing, build, run the whole test suite
#   make asan     the suite under AddressSanitizer + UndefinedBehaviorSanitizer
JOBS ?= 2

.PHONY: all deps build demo test asan clean

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
	@scripts/run-tests.sh build

asan: deps
	@$(MAKE) --no-print-directory $(foreach m,openmpi mpich,$(if $(shell command -v mpicc.$(m)),asan-$(m)))

asan-%:
	@cmake -S . -B build/asan-$* -DSTRATA_MPI=$* -DCMAKE_C_COMPILER=mpicc.$* -DSTRATA_SANITIZE=ON >/dev/null
	@cmake --build build/asan-$* -j $(JOBS)

clean:
	rm -rf build
