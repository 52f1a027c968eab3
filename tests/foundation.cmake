# Foundation tests: context lifecycle, agreement of the verdict (and of the
# settings ranks compute with together), every collective through strata
# against the host MPI, native against preloaded runs, configuration errors
# and verbose messages.
#
# Open MPI yields when oversubscribed: 1, 2, 3, 4, 5 and 8 ranks.  MPICH
# never yields (~8 ms a collective beyond 2 ranks on 2 cores): 2 ranks, and
# short runs at 3.
strata_test_program(test_lifecycle mpi/test_lifecycle.c)
strata_test_program(test_agreement mpi/test_agreement.c)
strata_test_program(test_passthrough mpi/test_passthrough.c)
# Not linked with strata: run natively and preloaded, its output must match.
add_executable(prog_checksum mpi/prog_checksum.c)

set(FD_FAKE_MACHINE "STRATA_TOPOLOGY=pack:2 numa:2 l3:2 core:4 pu:1")
set(FD_SMALL_CHUNKS STRATA_CICO_MAX=64 STRATA_CHUNK=4K,1K STRATA_REDUCE_CHUNK=4K
    STRATA_REDUCE_MIN_SLICE=64 STRATA_THROTTLE=1)

# fd_script(name script ranks): a script of tests/scripts/ given strata-run,
# prog_checksum and a rank count.
function(fd_script name script ranks)
  add_test(NAME foundation.${name}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/${script} ${STRATA_RUN}
                   $<TARGET_FILE:prog_checksum> ${ranks})
  set_tests_properties(foundation.${name} PROPERTIES TIMEOUT 300)
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  foreach(n 1 2 3 4 5 8)
    strata_mpi_test(NAME foundation.lifecycle.np${n} TARGET test_lifecycle RANKS ${n})
    strata_mpi_test(NAME foundation.agreement.np${n} TARGET test_agreement RANKS ${n})
    if(n GREATER 1)
      strata_mpi_test(NAME foundation.agreement.refuse1.np${n} TARGET test_agreement RANKS ${n}
                      ENV STRATA_TEST_REFUSE_RANK=1 ARGS --refuse 1)
    endif()
    # At 8 ranks the full matrix runs on the fake machine below; 4 ranks
    # (between the full 3 and 5) take the quick one.
    if(n EQUAL 8 OR n EQUAL 4)
      strata_mpi_test(NAME foundation.passthrough.quick.np${n} TARGET test_passthrough
                      RANKS ${n} ARGS --quick)
    else()
      strata_mpi_test(NAME foundation.passthrough.np${n} TARGET test_passthrough RANKS ${n})
    endif()
  endforeach()
  strata_mpi_test(NAME foundation.agreement.refuse0.np3 TARGET test_agreement RANKS 3
                  ENV STRATA_TEST_REFUSE_RANK=0 ARGS --refuse 0)
  strata_mpi_test(NAME foundation.agreement.refuse4.np5 TARGET test_agreement RANKS 5
                  ENV STRATA_TEST_REFUSE_RANK=4 ARGS --refuse 4)
  strata_mpi_test(NAME foundation.agreement.disabled.np3 TARGET test_agreement RANKS 3
                  ENV STRATA_DISABLE=1 ARGS --disabled)
  strata_mpi_test(NAME foundation.agreement.disable_rank1.np3 TARGET test_agreement RANKS 3
                  ARGS --disable-rank 1)
  strata_mpi_test(NAME foundation.agreement.rank_env.np3 TARGET test_agreement RANKS 3
                  ARGS --rank-env 1 STRATA_CMA=0 --rank-env 2 STRATA_CICO_MAX=1M
                       --rank-env 1 STRATA_CHECK_ARGS=1 --rank-env 2 STRATA_STATS=stderr)
  strata_mpi_test(NAME foundation.agreement.rank_env_hierarchy.np5 TARGET test_agreement
                  RANKS 5 ENV "${FD_FAKE_MACHINE}"
                  ARGS --rank-env 2 STRATA_HIERARCHY=node --rank-env 3 STRATA_CHUNK=1K)
  # strata's hierarchical algorithms (two levels), its shared-memory path
  # alone, and its pipelines cut into many small pieces.
  strata_mpi_test(NAME foundation.passthrough.fake_machine.np8 TARGET test_passthrough RANKS 8
                  ENV "${FD_FAKE_MACHINE}")
  strata_mpi_test(NAME foundation.passthrough.no_cma.np3 TARGET test_passthrough RANKS 3
                  ENV STRATA_CMA=0)
  strata_mpi_test(NAME foundation.passthrough.small_chunks.np5 TARGET test_passthrough RANKS 5
                  ENV "${FD_FAKE_MACHINE};${FD_SMALL_CHUNKS}")
  foreach(n 1 3 8)
    fd_script(native_vs_preload.np${n} native_vs_preload.sh ${n})
  endforeach()
  fd_script(bad_config.np3 bad_config.sh 3)
else()
  strata_mpi_test(NAME foundation.lifecycle.np2 TARGET test_lifecycle RANKS 2)
  strata_mpi_test(NAME foundation.lifecycle.np3 TARGET test_lifecycle RANKS 3 ARGS --cycles 20)
  strata_mpi_test(NAME foundation.agreement.np2 TARGET test_agreement RANKS 2)
  strata_mpi_test(NAME foundation.agreement.refuse1.np2 TARGET test_agreement RANKS 2
                  ENV STRATA_TEST_REFUSE_RANK=1 ARGS --refuse 1)
  strata_mpi_test(NAME foundation.agreement.refuse0.np2 TARGET test_agreement RANKS 2
                  ENV STRATA_TEST_REFUSE_RANK=0 ARGS --refuse 0)
  strata_mpi_test(NAME foundation.agreement.refuse2.np3 TARGET test_agreement RANKS 3
                  ENV STRATA_TEST_REFUSE_RANK=2 ARGS --refuse 2)
  strata_mpi_test(NAME foundation.agreement.disabled.np2 TARGET test_agreement RANKS 2
                  ENV STRATA_DISABLE=1 ARGS --disabled)
  strata_mpi_test(NAME foundation.agreement.disable_rank1.np2 TARGET test_agreement RANKS 2
                  ARGS --disable-rank 1)
  strata_mpi_test(NAME foundation.agreement.rank_env.np2 TARGET test_agreement RANKS 2
                  ARGS --rank-env 1 STRATA_CMA=0 --rank-env 1 STRATA_CICO_MAX=64
                       --rank-env 1 STRATA_CHECK_ARGS=1)
  strata_mpi_test(NAME foundation.passthrough.np2 TARGET test_passthrough RANKS 2)
  strata_mpi_test(NAME foundation.passthrough.quick.np3 TARGET test_passthrough RANKS 3
                  ARGS --quick)
  strata_mpi_test(NAME foundation.passthrough.no_cma.np2 TARGET test_passthrough RANKS 2
                  ENV STRATA_CMA=0)
  strata_mpi_test(NAME foundation.passthrough.small_chunks.np2 TARGET test_passthrough RANKS 2
                  ENV "${FD_SMALL_CHUNKS}")
  strata_mpi_test(NAME foundation.passthrough.fake_machine.np3 TARGET test_passthrough RANKS 3
                  ENV "STRATA_TOPOLOGY=pack:1 l3:2 core:2 pu:1" ARGS --quick)
  fd_script(native_vs_preload.np2 native_vs_preload.sh 2)
  fd_script(bad_config.np2 bad_config.sh 2)
endif()

# The C entry points generated from src/interpose/calls.def (issue 30):
# every row's every form this host MPI has is exported, every collective has
# its row.
foreach(feature STRATA_HAVE_LARGE_COUNT STRATA_HAVE_PERSISTENT_COLL
        STRATA_HAVE_MPIX_PERSISTENT_COLL)
  if(${feature})
    set(${feature}_01 1)
  else()
    set(${feature}_01 0)
  endif()
endforeach()
add_test(NAME foundation.entry_points
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/entry_points.sh $<TARGET_FILE:strata>
                 ${CMAKE_SOURCE_DIR} ${STRATA_HAVE_LARGE_COUNT_01}
                 ${STRATA_HAVE_PERSISTENT_COLL_01} ${STRATA_HAVE_MPIX_PERSISTENT_COLL_01})
set_tests_properties(foundation.entry_points PROPERTIES TIMEOUT 30
                     PASS_REGULAR_EXPRESSION "PASS entry_points")

# The layers of src/ point one way and no files loop (issue 14): the check on
# a fake tree that breaks every rule, which must fail naming each break.
add_test(NAME foundation.layering.selftest
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_layers_selftest.sh
                 ${CMAKE_SOURCE_DIR}/scripts/check-layers.sh ${CMAKE_C_COMPILER})
# The real tree: includes and, from this build's object files, calls.
add_test(NAME foundation.layering
         COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-layers.sh --objects ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
