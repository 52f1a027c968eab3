# Waiting for a rank that has no core (issue 15, tests/mpi/test_noise.c):
# one rank enters each of five collectives 250 ms late; the others must
# block (STRATA_STATS wait counters, CPU time of their threads under a
# quarter of the delay), with right results.  STRATA_WAIT=spin is the
# counter's negative control (no wait may block); --load=N runs N busy
# processes beside the job.  About 2 s each.  The futex protocol itself:
# threads.wait-protocol (tests/threads.cmake); a rank killed while the
# others block: faults.kill.self-block (tests/faults.cmake).
strata_test_program(test_noise mpi/test_noise.c)

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
  noise(late.np4 4)
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
