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
