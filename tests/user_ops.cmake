# User-defined ops (MPI_Op_create) served by strata: commutative ones
# everywhere, non-commutative ones where strata combines in rank order (one
# node, groups of consecutive ranks), the rest by the host MPI; results
# against independently computed ones and the host MPI's, holes untouched,
# MPI_Op_free with cached contexts (tests/mpi/test_user_ops.c).  STRATA_STATS
# must be set: the served-call counters tell the route.
strata_test_program(test_user_ops mpi/test_user_ops.c)

# user_ops(name ranks timeout ENV var=value... ARGS option...)
function(user_ops name ranks timeout)
  cmake_parse_arguments(U "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME user_ops.${name} TARGET test_user_ops RANKS ${ranks}
                  ENV STRATA_STATS=/dev/null ${U_ENV} ARGS ${U_ARGS})
  set_tests_properties(user_ops.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

set(USER_OPS_TOPO2 "STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1")
user_ops(np2 2 120)
user_ops(np3 3 150 ARGS --counts=1,7,300,5000)
# Small segment regions and reduction chunks: chunks of 4 KiB end inside
# elements of 24 bytes unless cut at element boundaries.
user_ops(small-chunks.np2 2 120 ENV STRATA_CICO_MAX=256 STRATA_REDUCE_CHUNK=4K
         ARGS --counts=7,300,5000)
if(STRATA_MPI STREQUAL "openmpi")
  # A fake machine of three levels: L3 pairs, sockets, the node.  The
  # evens-then-odds communicator has groups out of rank order.
  user_ops(topo2.np4 4 240 ENV "${USER_OPS_TOPO2}" STRATA_MAP=core ARGS --counts=1,7,300,5000)
  # Across two virtual nodes, block and cyclic.
  user_ops(vnodes2.np4 4 240 ENV "${USER_OPS_TOPO2}" STRATA_MAP=core STRATA_VIRTUAL_NODES=2
           ARGS --counts=1,7,300,5000)
  user_ops(vnodes2.cyclic.np4 4 240 ENV STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=cyclic
           ARGS --counts=1,300,5000)
else()
  user_ops(vnodes2.np3 3 150 ENV STRATA_VIRTUAL_NODES=2 ARGS --counts=1,300)
endif()
