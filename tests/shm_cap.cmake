# STRATA_SHM_MAX is a cap per machine, shared by the job's ranks there.
strata_test_program(test_shm_cap mpi/test_shm_cap.c)
if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME shm.cap-per-machine TARGET test_shm_cap RANKS 4)
else()
  # MPICH never yields: 4 ranks on 2 cores are slow but this test makes few calls.
  strata_mpi_test(NAME shm.cap-per-machine TARGET test_shm_cap RANKS 4)
endif()
