# One-rank communicators: strata serves every collective locally and says
# so, in STRATA_STATS (tests/mpi/test_one_rank.c checks the counters) and
# in STRATA_VERBOSE=1's line for each such communicator.
strata_test_program(test_one_rank mpi/test_one_rank.c)
strata_mpi_test(NAME one_rank.np2 TARGET test_one_rank RANKS 2 ENV STRATA_STATS=/dev/null)
strata_mpi_test(NAME one_rank.verbose TARGET test_one_rank RANKS 1
                ENV STRATA_STATS=stderr STRATA_VERBOSE=1)
# Verbose and the report agree: the communicator is announced as served
# locally, and the report counts every MPI_Barrier call as strata's (4 per
# communicator, 3 communicators, and the final one on a world of one rank;
# none to the host).
# (The report is written at MPI_Finalize only, after every check passed.)
set_tests_properties(one_rank.verbose PROPERTIES
  PASS_REGULAR_EXPRESSION
  "MPI_COMM_SELF \\(size 1\\): strata serves every collective locally.*MPI_Barrier +13 +0 "
  FAIL_REGULAR_EXPRESSION "FAIL rank")
