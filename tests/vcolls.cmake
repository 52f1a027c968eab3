# The v-collectives (MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv)
# against the host MPI: count patterns with zeros, gaps and reversed
# displacements, blocks on both sides of the copy-in/copy-out limit, roots,
# MPI_IN_PLACE, a type with holes, every algorithm forced, split
# communicators, the _c forms, and STRATA_STATS (tests/mpi/test_vcolls.c).
strata_test_program(test_vcolls mpi/test_vcolls.c)

function(vcolls name ranks timeout)
  cmake_parse_arguments(V "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME vcolls.${name} TARGET test_vcolls RANKS ${ranks} ENV ${V_ENV}
                  ARGS ${V_ARGS})
  set_tests_properties(vcolls.${name} PROPERTIES TIMEOUT ${timeout}
                       PASS_REGULAR_EXPRESSION "PASS vcolls")
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  vcolls(np3 3 60)
  vcolls(np5 5 90 ARGS --roots=some --comms=world,sub)
  # The segment transport: the single-copy algorithms are refused, copy-in/
  # copy-out serves every size.
  vcolls(segment.np3 3 60 ENV STRATA_TRANSPORT=segment ARGS --roots=some --comms=world)
  # Across virtual nodes (src/net/net_vblock.c): all four by strata's
  # compositions (Alltoallv: node part on the plane beside point-to-point
  # streams between nodes).  Two nodes [0 1 2] [3 4], every root, the
  # reversed and all-but-last communicators ([0 1 2] [3]); three nodes
  # cyclic [0 3] [1] [2] (leaders not the lowest ranks in order, nodes of
  # one rank); then about a MiB per block, the cost model's choice only.
  vcolls(nodes2.np5 5 90 ENV STRATA_VIRTUAL_NODES=2 ARGS --comms=world,reversed,sub)
  vcolls(nodes3.np4.cyclic 4 90 ENV STRATA_VIRTUAL_NODES=3 STRATA_VIRTUAL_LAYOUT=cyclic
         ARGS --comms=world --model)
  vcolls(large.nodes2.np3 3 90 ENV STRATA_VIRTUAL_NODES=2 ARGS --large --model --roots=some
         --comms=world)
else()
  # MPICH never yields when oversubscribed: 2 ranks; across two virtual
  # nodes 3 ([0 1] [2]), the cost model's choice only.
  vcolls(np2 2 60)
  vcolls(nodes2.np3 3 90 ENV STRATA_VIRTUAL_NODES=2 ARGS --roots=some --comms=world --model)
endif()
