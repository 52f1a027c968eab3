# Waiting for a rank that has no core (issue 15, tests/mpi/test_noise.c):
# one rank enters each of five collectives 250 ms late; the others must
# block (STRATA_STATS wait counters, CPU time of their threads under a
# quarter of the delay), with right results.  STRATA_WAIT=spin is the
# counter's negative control (no wait may block); --load=N runs N busy
# processes beside the job.  About 2 s each.  The futex protocol itself:
# threads.wait-protocol (tests/threads.cmake); a rank killed while the
# others block: faults.kill.self-block (tests/faults.cmake).
strata_test_program(test_noise mpi/test_noise.c ${CMAKE_SOURCE_DIR}/tools/bench_load.c)
target_include_directories(test_noise PRIVATE ${CMAKE_SOURCE_DIR}/tools)

# noise(name ranks [ENV var=value...] [ARGS option...])
function(noise name ranks)
  cmake_parse_arguments(N "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME noise.${name} TARGET test_noise RANKS ${ranks}
                  ENV STRATA_STATS=/dev/null ${N_ENV} ARGS ${N_ARGS})
  set_tests_properties(noise.${name} PROPERTIES TIMEOUT 60)
endfunction()

noise(late.np2 2)
noise(spin.np2 2 ENV STRATA_WAIT=spin ARGS --expect=spin)
noise(loaded.np2 2 ARGS --load=2)
if(STRATA_MPI STREQUAL "openmpi")
  # MPICH never yields: more ranks than cores only on Open MPI.
  # The algorithms that read ahead of a late peer (coll/read_ahead.h)
  # forced, so that their read-ahead runs with one rank 250 ms late.
  noise(late.np4 4 ENV STRATA_ALLTOALL_ALGORITHM=pairwise
        STRATA_ALLGATHER_ALGORITHM=ring-source-read)
  noise(cma0.np3 3 ENV STRATA_CMA=0 ARGS --load=2)
endif()

# Every wait blocks in the kernel at once (no spin, no yield): all block
# algorithms and Bcast variants, checked against the host MPI, with every
# hand-off through the futex wake protocol: a lost wake-up would stall a
# wait for its 20 ms timeout each time (slow, and counted), a wrong one give
# a wrong result.
if(STRATA_MPI STREQUAL "openmpi")
  block_colls(wait-block.np3 3 180 ENV STRATA_SPIN=0 STRATA_BLOCK_AFTER=0 STRATA_STATS=/dev/null
              ARGS --comms=world --roots=some)
else()
  block_colls(wait-block.np2 2 180 ENV STRATA_SPIN=0 STRATA_BLOCK_AFTER=0 STRATA_STATS=/dev/null
              ARGS --comms=world --roots=some)
endif()

# The node matrix with two busy processes beside it (issue 15): results
# only, no timing.  load_beside starts the competitors (tools/bench_load.c,
# the same as strata-bench --load) and reaps them when the job ends.  A
# subset, one entry per test program: every collective strata serves, at a
# few sizes and roots, checked against the host MPI or computed values.
# About 40 s together here (the competitors slow every rank down).
add_executable(load_beside load_beside.c ${CMAKE_SOURCE_DIR}/tools/bench_load.c)
target_include_directories(load_beside PRIVATE ${CMAKE_SOURCE_DIR}/tools)

# loaded(name target ranks timeout ARGS...): `target` under strata-run beside
# two spinning processes (two cores here: every rank shares a core).
function(loaded name target ranks timeout)
  add_test(NAME noise.loaded.${name}
           COMMAND $<TARGET_FILE:load_beside> 2 spin ${STRATA_RUN} --native -n ${ranks}
                   $<TARGET_FILE:${target}> ${ARGN})
  set_tests_properties(noise.loaded.${name} PROPERTIES TIMEOUT ${timeout}
                       ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf;STRATA_STATS=/dev/null")
endfunction()
# Bcast, Reduce, Allreduce, Barrier.  MPICH's own calls spin against the
# competitors (41 s once in CI against 1 s here): there the results are
# checked against the values computed from the inputs only.
if(STRATA_MPI STREQUAL "openmpi")
  set(LOADED_NODE_HOST_CHECK)
else()
  set(LOADED_NODE_HOST_CHECK --no-host)
endif()
loaded(node.np2 test_node_colls 2 120 --suites=bcast,reduce,allreduce,barrier
       --comms=world --roots=some --types=int --no-large ${LOADED_NODE_HOST_CHECK})
# Gather, Scatter, Allgather, Alltoall and the Bcast variants, every algorithm.
loaded(block.np2 test_block_colls 2 120 --comms=world --roots=some --sizes=7,64K+5)
# Reduce_scatter(_block), Scan, Exscan.
loaded(rs_scan.np2 test_rs_scan 2 120 --no-large)
# Gatherv, Scatterv, Allgatherv, Alltoallv.
loaded(vcolls.np2 test_vcolls 2 120 --roots=some --comms=world)

# MPI's progress rule across strata's waits (tests/mpi/test_host_progress.c):
# a rank waits in a collective served by strata while its partner is in an
# MPI_Ssend that only the waiting rank's host progress can match.  Without
# the host's progress inside strata's waits this hangs (both MPIs, 2 ranks:
# found 2026-11-26); the timeout is the failure.
strata_test_program(test_host_progress mpi/test_host_progress.c)
strata_mpi_test(NAME noise.host-progress.np2 TARGET test_host_progress RANKS 2
                ENV STRATA_STATS=/dev/null)
set_tests_properties(noise.host-progress.np2 PROPERTIES TIMEOUT 60)
if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME noise.host-progress.np3 TARGET test_host_progress RANKS 3
                  ENV STRATA_STATS=/dev/null)
  set_tests_properties(noise.host-progress.np3 PROPERTIES TIMEOUT 60)
endif()
