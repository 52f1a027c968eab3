# Never silent: a process where strata is loaded but never set up (MPI_Init
# through the PMPI layer) says so once at exit when STRATA_VERBOSE or
# STRATA_STATS asks strata to talk, and stays quiet otherwise
# (tests/mpi/test_never_set_up.c).
strata_test_program(test_never_set_up mpi/test_never_set_up.c)
set(NEVER_SET_UP "strata: process [0-9]+ loaded strata, but strata was never set up: MPI_Init reached the host MPI without passing through strata")
strata_mpi_test(NAME never_silent.verbose TARGET test_never_set_up RANKS 2 ENV STRATA_VERBOSE=1)
strata_mpi_test(NAME never_silent.stats TARGET test_never_set_up RANKS 2 ENV STRATA_STATS=stderr)
foreach(t verbose stats)
  # Each rank's message, after the program's own checks passed.
  set_tests_properties(never_silent.${t} PROPERTIES TIMEOUT 60
    PASS_REGULAR_EXPRESSION "PASS never_set_up.*${NEVER_SET_UP}.*${NEVER_SET_UP}|${NEVER_SET_UP}.*PASS never_set_up.*${NEVER_SET_UP}|${NEVER_SET_UP}.*${NEVER_SET_UP}.*PASS never_set_up"
    FAIL_REGULAR_EXPRESSION "FAIL rank")
endforeach()
strata_mpi_test(NAME never_silent.quiet TARGET test_never_set_up RANKS 2 ENV STRATA_VERBOSE=0)
set_tests_properties(never_silent.quiet PROPERTIES TIMEOUT 60
  FAIL_REGULAR_EXPRESSION "never set up;FAIL rank")
