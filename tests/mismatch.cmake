# Count mismatches between ranks (issue 29, tests/mpi/test_mismatch.c): one
# rank passes a count half or double the others' in eleven collectives, 16 B
# to 1 MiB per block, the root or another rank odd, roots first and last,
# each algorithm that can run forced in turn, on the world and a reversed
# split.  No byte around any buffer may change, a rank sent more
# than it posted gets MPI_ERR_TRUNCATE (a receive buffer may hold what a
# small call copied before it found out), and the same collective with
# matching counts right after it must be served and right.  A hang is this
# timeout.  (Before the fix of issue 29 every entry but the control fails.)
strata_test_program(test_mismatch mpi/test_mismatch.c)

function(mismatch name ranks)
  cmake_parse_arguments(M "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME mismatch.${name} TARGET test_mismatch RANKS ${ranks} ENV ${M_ENV}
                  ARGS ${M_ARGS})
  set_tests_properties(mismatch.${name} PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "PASS mismatch" FAIL_REGULAR_EXPRESSION "FAIL rank")
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  mismatch(np2 2)
  mismatch(np3 3)
  # Copies through the segment only: the single-copy algorithms are refused.
  mismatch(segment.np3 3 ENV STRATA_TRANSPORT=segment)
  # The harness itself, counts matching everywhere: it must pass on any build,
  # so that the entries above fail only for what strata does.
  mismatch(control.np3 3 ARGS --control --algos=model)
  # The nonblocking forms: the agreement runs when the operation reaches
  # its plane, and the error comes through the communicator's handler.
  mismatch(nonblocking.np3 3 ARGS --nonblocking)
else()
  # MPICH never yields the CPU: 2 ranks on this 2-core machine.
  mismatch(np2 2)
  mismatch(segment.np2 2 ENV STRATA_TRANSPORT=segment)
endif()
mismatch(nonblocking.np2 2 ARGS --nonblocking)
