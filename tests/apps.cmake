# Applications (apps/): ASP (Floyd-Warshall, one MPI_Bcast per row) and
# data-parallel training (one large MPI_Allreduce per step), each verified
# against a serial computation with the host MPI alone and with strata
# preloaded, with the same checksum both ways, and strata shown to have
# served every call of their collective (tests/scripts/app_check.sh).  Then
# the checks themselves: a collective made to return wrong data must make
# the run fail (app_fault.sh), and scripts/app-compare.sh must reject
# different checksums (app_compare.sh).
#
# Sizes are small (the serial references are O(N^3) and O(steps x batch x
# params)), but above the copy-in/copy-out limit where it matters: Allreduces
# of 160 KB to 2.4 MB, rows of 628 bytes through the single-copy pipeline
# with STRATA_CICO_MAX=256.  Each test is two launches, a few seconds.
add_library(app_fault_inject SHARED ${CMAKE_SOURCE_DIR}/apps/fault_inject.c)

# app_test(name ranks program [ENV var=value...] ARGS app-args...)
function(app_test name ranks program)
  cmake_parse_arguments(A "" "" "ENV;ARGS" ${ARGN})
  add_test(NAME apps.${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/app_check.sh ${STRATA_RUN}
                   $<TARGET_FILE:${program}> ${ranks} ${A_ENV} -- ${A_ARGS})
  set_tests_properties(apps.${name} PROPERTIES TIMEOUT 120
                       ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
endfunction()

# app_fault(name ranks program fault-rank expected-text app-args...)
function(app_fault name ranks program victim expected)
  add_test(NAME apps.fault.${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/app_fault.sh ${STRATA_RUN}
                   $<TARGET_FILE:${program}> ${ranks} $<TARGET_FILE:app_fault_inject>
                   ${victim} ${expected} -- ${ARGN})
  set_tests_properties(apps.fault.${name} PROPERTIES TIMEOUT 120)
endfunction()

# N = 157 is prime: unequal blocks of rows at every rank count.  Batches of
# 7 and 6 give unequal shares of each step's samples.
if(STRATA_MPI STREQUAL "openmpi")
  app_test(asp.np2 2 asp ARGS 157)
  app_test(asp.cico256.np3 3 asp ENV STRATA_CICO_MAX=256 ARGS 157 7)
  app_test(asp.np4 4 asp ARGS 157 3)
  app_test(asp.nodes2.np4 4 asp ENV STRATA_VIRTUAL_NODES=2 ARGS 157)
  app_test(train.np2 2 train ARGS 20000 --steps 10)
  app_test(train.np3 3 train ARGS 100K 5 --steps 5 --batch 7)
  app_test(train.np4 4 train ARGS 300K --steps 4 --batch 6)
  app_test(train.nodes2.np4 4 train ENV STRATA_VIRTUAL_NODES=2 ARGS 300K --steps 4)
  app_fault(asp.rank1.np2 2 asp 1 "verify FAILED" 64)
  app_fault(train.all.np2 2 train -1 "verify FAILED" 5000 --steps 4)
  app_fault(train.rank1.np3 3 train 1 "parameters differ" 5000 --steps 4)
  add_test(NAME apps.compare.np2
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/app_compare.sh
                   ${CMAKE_SOURCE_DIR}/scripts/app-compare.sh ${CMAKE_BINARY_DIR} 2)
  set_tests_properties(apps.compare.np2 PROPERTIES TIMEOUT 120
                       ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
else()
  # MPICH never yields: 2 ranks.
  app_test(asp.np2 2 asp ARGS 157)
  app_test(train.np2 2 train ARGS 100K --steps 5 --batch 7)
  app_fault(train.all.np2 2 train -1 "verify FAILED" 5000 --steps 4)
endif()

# With the shared heap (issue 19): the applications' buffers from 4 KiB come
# from arenas the peers map; the checksum must equal the host MPI's alone.
app_test(asp.heap.np2 2 asp ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=4K ARGS 157)
app_test(train.heap.np2 2 train ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=4K
         ARGS 100K --steps 5 --batch 7)

# cg (apps/cg.f90, Fortran): 47 x 47 = 2209 unknowns, a prime, so unequal
# blocks at every rank count; its dot products' MPI_Allreduce is the
# collective checked (every call served), its Allgather, Bcast and Gather
# go through strata too.  The fault helper wraps C functions, which MPICH's
# Fortran bindings call but Open MPI's do not (they call PMPI_): MPICH only.
if(STRATA_FORTRAN)
  if(STRATA_MPI STREQUAL "openmpi")
    app_test(cg.np2 2 cg ARGS 47)
    app_test(cg.heap.np2 2 cg ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=4K ARGS 47)
    app_test(cg.np3 3 cg ARGS 47)
    app_test(cg.nodes2.np4 4 cg ENV STRATA_VIRTUAL_NODES=2 ARGS 47)
  else()
    app_test(cg.np2 2 cg ARGS 47)
    app_test(cg.heap.np2 2 cg ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=4K ARGS 47)
    app_fault(cg.all.np2 2 cg -1 "verify FAILED" 31)
  endif()
endif()
