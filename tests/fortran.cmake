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
strata_mpi_test(NAME fortran.late-start.threads.np2 TARGET test_late_start RANKS 2
                ENV STRATA_STATS=/dev/null ARGS threads)
