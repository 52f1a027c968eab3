# The map transport (issue 19): collectives on MPI_Alloc_mem and shared-heap
# buffers, mixed with buffers outside any arena, across the size thresholds,
# with the arena growing under peers' mappings (tests/mpi/test_mapmem.c).
# STRATA_STATS to a file: the program checks the per-transport byte counts.
strata_test_program(test_mapmem mpi/test_mapmem.c)

function(mapmem_test name ranks)
  cmake_parse_arguments(M "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME mapmem.${name} TARGET test_mapmem RANKS ${ranks}
                  ENV STRATA_STATS=/dev/null ${M_ENV} ARGS ${M_ARGS})
  set_tests_properties(mapmem.${name} PROPERTIES TIMEOUT 60)
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  set(MAPMEM_RANKS 3)
else()
  set(MAPMEM_RANKS 2) # MPICH never yields: keep to the cores
endif()
mapmem_test(alloc.np${MAPMEM_RANKS} ${MAPMEM_RANKS} ENV STRATA_TRANSPORT=map
            ARGS --mem=alloc --expect-fallback=0)
# 16K: every buffer a single-copy algorithm exposes (above STRATA_CICO_MAX)
# comes from the heap, so nothing may go by CMA.
mapmem_test(heap.np${MAPMEM_RANKS} ${MAPMEM_RANKS} ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=16K
            ARGS --mem=heap --expect-fallback=0)
mapmem_test(mixed.np${MAPMEM_RANKS} ${MAPMEM_RANKS} ENV STRATA_TRANSPORT=map
            ARGS --mem=mixed --expect-fallback=1)

# STRATA_TRANSPORT=auto: the cost model's choice of map or cma, and how a
# call is priced, as strata-info --explain and STRATA_VERBOSE=1 say.
add_test(NAME mapmem.transport-auto.np2
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/transport_auto.sh ${STRATA_RUN}
                 $<TARGET_FILE:strata-info> ${CMAKE_CURRENT_SOURCE_DIR}/data 2)
set_tests_properties(mapmem.transport-auto.np2 PROPERTIES TIMEOUT 120)

# Safety (issue 19): blocks freed and allocated again (same range, new
# contents) while peers map the arena, MPI_Free_mem and free alike, kept and
# punched sizes; fork with the shared heap on (the child writes its copies,
# allocates from the C library, frees; the parent's blocks and collectives
# stay right).  tests/mpi/test_mapsafe.c
strata_test_program(test_mapsafe mpi/test_mapsafe.c)
strata_mpi_test(NAME mapmem.safety.np${MAPMEM_RANKS} TARGET test_mapsafe RANKS ${MAPMEM_RANKS}
                ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=16K)
set_tests_properties(mapmem.safety.np${MAPMEM_RANKS} PROPERTIES TIMEOUT 60)
