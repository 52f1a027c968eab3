# MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan and MPI_Exscan
# (issue 16), inside a node and across virtual nodes: every result compared
# with the host MPI's, every call's route checked with STRATA_STATS
# (tests/mpi/test_rs_scan.c).  One program loops over the cases; the
# timeouts are a few times the run time on the loaded machine (a route that
# differed between ranks would hang).
strata_test_program(test_rs_scan mpi/test_rs_scan.c)

function(rs_scan name ranks timeout)
  cmake_parse_arguments(R "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME rs_scan.${name} TARGET test_rs_scan RANKS ${ranks}
                  ENV STRATA_STATS=/dev/null ${R_ENV} ARGS ${R_ARGS})
  set_tests_properties(rs_scan.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  rs_scan(np3 3 60)
  rs_scan(np5 5 90 ARGS --no-large)
  # Without a single-copy transport: the segment in rounds.
  rs_scan(segment.np3 3 60 ENV STRATA_TRANSPORT=segment)
  # Every call agreed first (STRATA_CHECK_ARGS).
  rs_scan(check.np3 3 60 ENV STRATA_CHECK_ARGS=1 ARGS --no-large)
  # Virtual nodes: [0 1] [2 3 4] (block) and [0 2 4] [1 3] (cyclic: Scan and
  # Exscan go to the host, ranks of a node not consecutive).
  rs_scan(nodes2.np5 5 90 ENV STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=block ARGS --no-large)
  rs_scan(nodes2.np4.large 4 90 ENV STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=block)
  rs_scan(nodes2.np4.cyclic 4 90 ENV STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=cyclic
          ARGS --no-large)
else()
  rs_scan(np2 2 60)
  rs_scan(nodes2.np2 2 60 ENV STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=block ARGS --no-large)
  rs_scan(check.np2 2 60 ENV STRATA_CHECK_ARGS=1 ARGS --no-large)
endif()
