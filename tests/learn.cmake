# Selection that corrects itself (coll/learn.h): a deliberately mispriced
# model converges to the fastest measured Allgather within a bounded number
# of calls, every rank agreeing on every call, each result checked against
# the host MPI's (tests/mpi/test_learn.c); then what was learned kept in the
# model cache and the next job starting from it (tests/scripts/learn_cache.sh).
# 1 MiB blocks (the case of issue 31).  MPICH never yields the CPU: its
# 3-rank run is short (the calls of the bound and a few more).
strata_test_program(test_learn mpi/test_learn.c)
set(LEARN_MODEL ${CMAKE_CURRENT_SOURCE_DIR}/data/model-mispriced.conf)
foreach(ranks 2 3)
  set(calls 120)
  if(STRATA_MPI STREQUAL "mpich" AND ranks GREATER 2)
    set(calls 40)
  endif()
  strata_mpi_test(NAME learn.converge.np${ranks} TARGET test_learn RANKS ${ranks}
                  ENV STRATA_MODEL=${LEARN_MODEL} STRATA_LEARN=1 STRATA_STATS=/dev/null
                  ARGS --calls=${calls})
endforeach()
# The host MPI measured faster than every candidate (its time taken at 1%):
# the entry settles on it and its blocking calls go to the host; taken at
# 1000x, no call is handed to it.
strata_mpi_test(NAME learn.host.np2 TARGET test_learn RANKS 2
                ENV STRATA_MODEL=${LEARN_MODEL} STRATA_LEARN=1 STRATA_STATS=/dev/null
                    STRATA_TEST_HOST_TIME_PERCENT=1
                ARGS --calls=120 --expect-host=1)
strata_mpi_test(NAME learn.nohost.np2 TARGET test_learn RANKS 2
                ENV STRATA_MODEL=${LEARN_MODEL} STRATA_LEARN=1 STRATA_STATS=/dev/null
                    STRATA_TEST_HOST_TIME_PERCENT=100000
                ARGS --calls=120 --expect-host=0)
# STRATA_LEARN=0: the model's choice stands (no entry is made).
strata_mpi_test(NAME learn.off TARGET test_learn RANKS 2
                ENV STRATA_MODEL=${LEARN_MODEL} STRATA_LEARN=0 ARGS --calls=5 --off)
add_test(NAME learn.cache
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/learn_cache.sh ${STRATA_RUN}
                 $<TARGET_FILE:test_learn> ${LEARN_MODEL} $<TARGET_FILE:strata-info>)
set_tests_properties(learn.cache PROPERTIES TIMEOUT 300)
