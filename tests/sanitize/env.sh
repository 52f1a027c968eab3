# shellcheck shell=bash
# Sanitizer settings for running strata's tests by hand in a sanitizer build:
#   . tests/sanitize/env.sh && cd build/asan-openmpi && ctest -R threads
# scripts/run-tests.sh uses the same.  Every finding ends the process with a
# non-zero status (so mpirun, and the test, fail); the suppression files
# name the host MPIs' own leaks and races, one reason per entry.
sanitize_dir="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
# fast_unwind_on_malloc=0: the host MPIs are built without frame pointers,
# and a leak's stack must reach the MPI library to be recognised as its own.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$sanitize_dir/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# ignore_noninstrumented_modules=1: the host MPI is not instrumented, so
# TSan cannot see its synchronisation; what its own code does in the libc
# functions TSan intercepts (memcpy, locks) is not strata's to answer for.
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:ignore_noninstrumented_modules=1:suppressions=$sanitize_dir/tsan.supp:second_deadlock_stack=1"
# UCX (MPICH's transport) hooks madvise at thread exit, after TSan has let
# the thread go: crashes under TSan.  Its memory events are a cache
# optimisation only.
export UCX_MEM_EVENTS=no
unset sanitize_dir
