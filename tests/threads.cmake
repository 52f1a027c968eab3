# Concurrent collectives on different communicators under
# MPI_THREAD_MULTIPLE (tests/mpi/test_threads.c): worker threads run all
# eight collectives at sizes from 8 bytes to 312 KiB per block, every result
# checked; "create" entries add threads that make and free communicators
# (MPI_Comm_dup, MPI_Comm_split) all along.  A host MPI that does not grant
# MPI_THREAD_MULTIPLE makes the test skip (77).
#
# The same entries run under ThreadSanitizer (make tsan: build/tsan-<mpi>,
# every threads.* test) and some under AddressSanitizer
# (tests/sanitize/asan-tests.txt).  Each takes 1-3 s here when the machine
# is idle; the timeouts catch a deadlock.
strata_test_program(test_threads mpi/test_threads.c)
target_link_libraries(test_threads PRIVATE Threads::Threads)

# threads(name ranks [ENV var=value...] [ARGS option...])
function(threads name ranks)
  cmake_parse_arguments(T "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME threads.${name} TARGET test_threads RANKS ${ranks} ENV ${T_ENV}
                  ARGS ${T_ARGS})
  set_tests_properties(threads.${name} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  threads(multiple.np2 2 ARGS --threads=3)
  threads(multiple.np3 3 ARGS --threads=4)
  threads(create.np3 3 ARGS --threads=3 --creators=2)
  # No CMA: every payload takes the segment's regions, concurrently.
  threads(cma0.np2 2 ENV STRATA_CMA=0 ARGS --threads=3)
  # Two virtual nodes, [0 1] [2 3]: the compositions across nodes, whose
  # leaders talk over the host MPI while other threads do the same.
  threads(nodes2.np4 4 ENV STRATA_VIRTUAL_NODES=2 ARGS --threads=3 --creators=2)
  # Traffic accounting and per-call messages from every thread at once.
  threads(stats.np2 2 ENV STRATA_STATS=/dev/null STRATA_VERBOSE=2
          ARGS --threads=3 --creators=2 --rounds=20)
else()
  # MPICH never yields: 2 ranks.
  threads(multiple.np2 2 ARGS --threads=3)
  threads(create.np2 2 ARGS --threads=2 --creators=2)
endif()
# The nonblocking queue (its lock held across host calls) while creators
# free communicators (whose callback takes that lock inside the host's
# MPI_Comm_free): no deadlock, every result right.
threads(create-nonblocking.np2 2 ARGS --threads=2 --creators=2 --nonblocking)

# The futex wake protocol of src/shm/wait.h with threads, no MPI launch
# (tests/unit/test_wait.c): no lost wake-up, the timeout's liveness check,
# a dead owner.  Under TSan too (make tsan runs every threads.* test).
add_executable(test_wait unit/test_wait.c)
target_link_libraries(test_wait PRIVATE strata Threads::Threads)
target_include_directories(test_wait PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_test(NAME threads.wait-protocol COMMAND test_wait)
set_tests_properties(threads.wait-protocol PROPERTIES TIMEOUT 60)
