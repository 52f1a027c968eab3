# Concurrent collectives on different communicators under MPI_THREAD_MULTIPLE.
strata_test_program(test_threads mpi/test_threads.c)
target_link_libraries(test_threads PRIVATE Threads::Threads)
strata_mpi_test(NAME threads.multiple.np2 TARGET test_threads RANKS 2)
set_tests_properties(threads.multiple.np2 PROPERTIES SKIP_RETURN_CODE 77)
if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME threads.multiple.np3 TARGET test_threads RANKS 3)
  set_tests_properties(threads.multiple.np3 PROPERTIES SKIP_RETURN_CODE 77)
endif()
