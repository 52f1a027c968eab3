# MPI-4 and other languages: the large-count collectives (MPI_Bcast_c, ...)
# where the host MPI defines them, mpi4py on both MPIs, a C++ program.
if(STRATA_HAVE_LARGE_COUNT)
  strata_test_program(test_count_c mpi/test_count_c.c)
  foreach(n 2 3)
    strata_mpi_test(NAME mpi4.count-c.np${n} TARGET test_count_c RANKS ${n})
    set_tests_properties(mpi4.count-c.np${n} PROPERTIES TIMEOUT 120
                         PASS_REGULAR_EXPRESSION "PASS count_c")
  endforeach()
  # The same through two virtual nodes (strata's composition across nodes).
  strata_mpi_test(NAME mpi4.count-c.vnodes.np4 TARGET test_count_c RANKS 4
                  ENV STRATA_VIRTUAL_NODES=2)
  set_tests_properties(mpi4.count-c.vnodes.np4 PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "PASS count_c")
endif()
