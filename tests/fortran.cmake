# Fortran (issue 18).  Fortran's datatypes in reductions, called from C:
# every Fortran type and pair type against the host in every predefined
# operation, with Allreduce, Reduce and in place (tests/mpi/test_fortran_types.c).
strata_test_program(test_fortran_types mpi/test_fortran_types.c)
if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME fortran.types.np3 TARGET test_fortran_types RANKS 3
                  ENV STRATA_STATS=/dev/null)
  strata_mpi_test(NAME fortran.types.nodes2.np4 TARGET test_fortran_types RANKS 4
                  ENV STRATA_STATS=/dev/null STRATA_VIRTUAL_NODES=2)
else()
  strata_mpi_test(NAME fortran.types.np2 TARGET test_fortran_types RANKS 2
                  ENV STRATA_STATS=/dev/null)
endif()

# Set-up without MPI_Init: PMPI_Init, then the first collective over the
# world sets strata up; a collective on part of the world before it is the
# host's; racing threads set up once (tests/mpi/test_late_start.c).
strata_test_program(test_late_start mpi/test_late_start.c)
strata_mpi_test(NAME fortran.late-start.np3 TARGET test_late_start RANKS 3
                ENV STRATA_STATS=/dev/null)
# (threads.*: make tsan runs it under ThreadSanitizer.)
strata_mpi_test(NAME threads.late-start.np2 TARGET test_late_start RANKS 2
                ENV STRATA_STATS=/dev/null ARGS threads)

# Fortran programs (tests/fortran/colls.F90) with strata preloaded, as an
# application gets it: use mpi, use mpi_f08, mpif.h, and mpif.h initialising
# with PMPI_Init (strata's MPI_Init never runs).  Every served collective
# checked, in place, Fortran and pair types, ierror; STRATA_STATS must count
# each call under its C name (tests/scripts/fortran_stats.sh).
# The Fortran bindings a program of this MPI can use (CMakeLists.txt finds
# whether its mpi_f08 module is readable by this compiler).
set(strata_fortran_forms use_mpi mpifh)
if(STRATA_HAVE_MPI_F08)
  list(APPEND strata_fortran_forms f08)
endif()
if(STRATA_FORTRAN)
  foreach(variant ${strata_fortran_forms} pmpi_init)
    add_executable(fortran_colls_${variant} fortran/colls.F90)
    set_target_properties(fortran_colls_${variant} PROPERTIES
                          Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mod_${variant})
    if(variant STREQUAL "f08")
      target_compile_definitions(fortran_colls_${variant} PRIVATE F08)
    elseif(variant STREQUAL "mpifh")
      target_compile_definitions(fortran_colls_${variant} PRIVATE MPIFH)
    elseif(variant STREQUAL "pmpi_init")
      target_compile_definitions(fortran_colls_${variant} PRIVATE MPIFH PMPI_INIT)
    endif()
    # Values are exact: reals are compared exactly on purpose.
    target_compile_options(fortran_colls_${variant} PRIVATE -Wno-compare-reals)
    # mpif.h declares no interfaces: gfortran 10+ rejects one routine
    # called with buffers of different types unless told otherwise, and
    # then warns at every such call (-w: that is what mpif.h programs are).
    # MPICH's use mpi declares none for buffers either.
    if(variant MATCHES "mpifh|pmpi_init" OR
       (variant STREQUAL "use_mpi" AND STRATA_MPI STREQUAL "mpich"))
      target_compile_options(fortran_colls_${variant} PRIVATE -fallow-argument-mismatch -w)
    endif()
    if(STRATA_MPI STREQUAL "openmpi")
      set(franks 3)
    else()
      set(franks 2)
    endif()
    add_test(NAME fortran.colls.${variant}.np${franks}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                     $<TARGET_FILE:fortran_colls_${variant}> ${franks} 16)
    set_tests_properties(fortran.colls.${variant}.np${franks} PROPERTIES TIMEOUT 150
                         ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
  endforeach()
  if(STRATA_HAVE_MPI_F08)
    add_test(NAME fortran.colls.f08.nodes2.np4
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                     $<TARGET_FILE:fortran_colls_f08> 4 16 STRATA_VIRTUAL_NODES=2)
    set_tests_properties(fortran.colls.f08.nodes2.np4 PROPERTIES TIMEOUT 150
                         ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
  endif()
endif()

# User-defined ops created from Fortran (issue 21; tests/fortran/user_ops.F90):
# a commutative and a non-commutative op in Reduce and Allreduce through
# use mpi, mpi_f08 and mpif.h, values computed in the program; STRATA_STATS
# must count every call as strata's, but across virtual nodes the
# non-commutative ones as the host's (its fallback then calls the Fortran
# function as the host's Fortran binding created it).
if(STRATA_FORTRAN)
  foreach(variant ${strata_fortran_forms})
    add_executable(fortran_user_ops_${variant} fortran/user_ops.F90)
    set_target_properties(fortran_user_ops_${variant} PROPERTIES
                          Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mod_uops_${variant})
    if(variant STREQUAL "f08")
      target_compile_definitions(fortran_user_ops_${variant} PRIVATE F08)
    elseif(variant STREQUAL "mpifh")
      target_compile_definitions(fortran_user_ops_${variant} PRIVATE MPIFH)
    endif()
    # As for colls.F90: mpif.h (and MPICH's use mpi) declare no buffer
    # interfaces, and buffers of different types go to one routine.
    if(variant STREQUAL "mpifh" OR
       (variant STREQUAL "use_mpi" AND STRATA_MPI STREQUAL "mpich"))
      target_compile_options(fortran_user_ops_${variant} PRIVATE -fallow-argument-mismatch -w)
    endif()
    add_test(NAME fortran.user_ops.${variant}.np${franks}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                     $<TARGET_FILE:fortran_user_ops_${variant}> ${franks} 2)
    set_tests_properties(fortran.user_ops.${variant}.np${franks} PROPERTIES TIMEOUT 60
                         ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
  endforeach()
  add_test(NAME fortran.user_ops.mpifh.nodes2.np4
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                   $<TARGET_FILE:fortran_user_ops_mpifh> 4 2 STRATA_VIRTUAL_NODES=2)
  set_tests_properties(fortran.user_ops.mpifh.nodes2.np4 PROPERTIES TIMEOUT 60
                       ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
endif()

# The Fortran entry points under every name a compiler may call (mpi_x,
# mpi_x_, mpi_x__, MPI_X, and the mpi_f08 ones), from C with Fortran
# handles: served, values, ierror (tests/mpi/test_fortran_names.c).
# (Not in the standard ABI build, which has no Fortran entry points.)
if(NOT STRATA_MPI STREQUAL "abi")
  strata_test_program(test_fortran_names mpi/test_fortran_names.c)
  strata_mpi_test(NAME fortran.names.np2 TARGET test_fortran_names RANKS 2
                  ENV STRATA_STATS=/dev/null)
  if(STRATA_HAVE_HW_SPLIT_TYPES)
    strata_mpi_test(NAME fortran.names.split.nodes2.np2 TARGET test_fortran_names RANKS 2
                    ENV STRATA_VIRTUAL_NODES=2 ARGS split)
  endif()
endif()

# Nonblocking collectives from Fortran (issue 17; tests/fortran/nonblocking.F90):
# all sixteen I-forms (and on MPI-4 hosts four _init forms with
# MPI_STARTALL) through use mpi, mpi_f08 and mpif.h, completed by
# the Fortran MPI_WAIT, MPI_TEST, MPI_WAITALL (with point-to-point),
# MPI_WAITANY, MPI_WAITSOME, MPI_TESTALL and MPI_REQUEST_FREE, which must
# progress strata's operations; values computed in the program; STRATA_STATS
# must count every call as strata's under its C name.
if(STRATA_FORTRAN)
  foreach(variant ${strata_fortran_forms})
    add_executable(fortran_nonblocking_${variant} fortran/nonblocking.F90)
    set_target_properties(fortran_nonblocking_${variant} PROPERTIES
                          Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mod_nb_${variant})
    if(variant STREQUAL "f08")
      target_compile_definitions(fortran_nonblocking_${variant} PRIVATE F08)
    elseif(variant STREQUAL "mpifh")
      target_compile_definitions(fortran_nonblocking_${variant} PRIVATE MPIFH)
    endif()
    # As for colls.F90: mpif.h (and MPICH's use mpi) declare no buffer interfaces.
    if(variant STREQUAL "mpifh" OR
       (variant STREQUAL "use_mpi" AND STRATA_MPI STREQUAL "mpich"))
      target_compile_options(fortran_nonblocking_${variant} PRIVATE -fallow-argument-mismatch -w)
    endif()
    # The persistent forms where the host defines them (MPICH): 4 more lines.
    set(nb_lines 16)
    if(STRATA_HAVE_PERSISTENT_COLL)
      target_compile_definitions(fortran_nonblocking_${variant} PRIVATE HAVE_PERSISTENT)
      set(nb_lines 20)
    endif()
    add_test(NAME fortran.nonblocking.${variant}.np${franks}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                     $<TARGET_FILE:fortran_nonblocking_${variant}> ${franks} ${nb_lines})
    set_tests_properties(fortran.nonblocking.${variant}.np${franks} PROPERTIES TIMEOUT 60
                         ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
  endforeach()
endif()

# Alltoallw and the neighbourhood collectives from Fortran (issue 33;
# tests/fortran/neighbor.F90): blocking, nonblocking and, on MPI-4 hosts,
# persistent forms through use mpi, mpi_f08 and mpif.h on a non-periodic 1-D
# Cartesian communicator, the w forms' datatype arrays mixing types per
# block, and Neighbor_alltoallw on a distributed graph of unequal degrees;
# values computed in the program; STRATA_STATS must count every call as
# strata's under its C name.  The bindings this MPI's compiler can use
# (strata_fortran_forms above: no mpi_f08 where its module is unreadable).
if(STRATA_FORTRAN)
  foreach(variant ${strata_fortran_forms})
    add_executable(fortran_neighbor_${variant} fortran/neighbor.F90)
    set_target_properties(fortran_neighbor_${variant} PROPERTIES
                          Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/mod_nbr_${variant})
    if(variant STREQUAL "f08")
      target_compile_definitions(fortran_neighbor_${variant} PRIVATE F08)
      # MPICH's own mpi_f08 MPI_Neighbor_alltoallw aborts on a Cartesian
      # communicator (it sizes the arrays from MPI_Dist_graph_neighbors_count).
      if(STRATA_MPI STREQUAL "mpich")
        target_compile_definitions(fortran_neighbor_${variant} PRIVATE NO_F08_NEIGHBOR_ALLTOALLW)
      endif()
    elseif(variant STREQUAL "mpifh")
      target_compile_definitions(fortran_neighbor_${variant} PRIVATE MPIFH)
    endif()
    # As for colls.F90: mpif.h (and MPICH's use mpi) declare no buffer interfaces.
    if(variant STREQUAL "mpifh" OR
       (variant STREQUAL "use_mpi" AND STRATA_MPI STREQUAL "mpich"))
      target_compile_options(fortran_neighbor_${variant} PRIVATE -fallow-argument-mismatch -w)
    endif()
    # Six collectives in two forms, or three where the host has the
    # persistent ones, and the closing Allreduce.
    set(nbr_lines 13)
    if(STRATA_HAVE_PERSISTENT_COLL)
      target_compile_definitions(fortran_neighbor_${variant} PRIVATE HAVE_PERSISTENT)
      set(nbr_lines 19)
    endif()
    add_test(NAME fortran.neighbor.${variant}.np${franks}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/fortran_stats.sh ${STRATA_RUN}
                     $<TARGET_FILE:fortran_neighbor_${variant}> ${franks} ${nbr_lines})
    set_tests_properties(fortran.neighbor.${variant}.np${franks} PROPERTIES TIMEOUT 60
                         ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf")
  endforeach()
endif()
