# MPI_Alltoallw and the neighbourhood collectives (issue 33) against the host
# MPI: Cartesian (1-D, 2-D, 3-D, periodic and not), graph and distributed-
# graph topologies with duplicate edges, self-loops, empty neighbourhoods and
# unequal degrees; blocks on both sides of the copy-in/copy-out limit, a
# type with holes, the w forms' per-pair types, Alltoallw in place; every
# form; STRATA_STATS; then a count mismatch on a ring (tests/mpi/test_neighbor.c).
strata_test_program(test_neighbor mpi/test_neighbor.c)

function(neighbor name ranks timeout)
  cmake_parse_arguments(N "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME neighbor.${name} TARGET test_neighbor RANKS ${ranks} ENV ${N_ENV}
                  ARGS ${N_ARGS})
  set_tests_properties(neighbor.${name} PROPERTIES TIMEOUT ${timeout}
                       PASS_REGULAR_EXPRESSION "PASS neighbor")
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  # One rank: every periodic dimension makes it its own neighbour twice.
  neighbor(np1 1 60)
  neighbor(np3 3 120)
  neighbor(np4 4 120)
  # The ranks agree on the route and compare what each pair sends first.
  neighbor(check-args.np3 3 120 ENV STRATA_CHECK_ARGS=1 ARGS --quick)
  # Each of Alltoallv's algorithms forced in turn (the engine these run on).
  neighbor(cico.np3 3 120 ENV STRATA_ALLTOALLV_ALGORITHM=copy-in-copy-out)
  neighbor(ring-read.np4 4 120 ENV STRATA_ALLTOALLV_ALGORITHM=ring-read)
  # Across two virtual nodes: Alltoallv's composition (neighbours on the
  # other node through the host's point-to-point).
  neighbor(nodes2.np4 4 120 ENV STRATA_VIRTUAL_NODES=2)
else()
  # MPICH never yields when oversubscribed: 4 ranks with small blocks only
  # (about 10 s at 3 ranks in full on 2 cores).
  neighbor(np2 2 120)
  neighbor(np3 3 180)
  neighbor(np4.quick 4 120 ARGS --quick)
endif()

# The large-count forms (MPI_Neighbor_allgather_c, ..., MPI_Alltoallw_c, their
# I and _init_c forms) against the host's _c functions, where the host MPI
# has them (MPICH; Open MPI 4.1 has none: the program skips, run without
# mpirun so that the skip costs nothing).  MPICH at 2 ranks (it never yields).
strata_test_program(test_neighbor_c mpi/test_neighbor_c.c)
if(STRATA_HAVE_LARGE_COUNT)
  strata_mpi_test(NAME neighbor.count-c.np2 TARGET test_neighbor_c RANKS 2)
  set_tests_properties(neighbor.count-c.np2 PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "PASS neighbor_c")
else()
  add_test(NAME neighbor.count-c COMMAND $<TARGET_FILE:test_neighbor_c>)
  set_tests_properties(neighbor.count-c PROPERTIES TIMEOUT 30 SKIP_RETURN_CODE 77)
endif()
