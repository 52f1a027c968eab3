# strata-bench and strata-report (tools/).  A few seconds each:
#   bench.run.np2           2 ranks: --root-shift --json --csv (schema, CSV,
#                           the host MPI's roots counted by a preloaded probe),
#                           --sweep, refused options (tests/scripts/bench_run.sh)
#   bench.report            PNGs and summary.md from tests/data/bench-sample.json
#                           (skipped without matplotlib)
#   bench.report.no-matplotlib  the message and exit status without it
# 2 ranks with either MPI: MPICH never yields, but these runs make few calls.
set(BENCH_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/scripts)

# Counts the roots of PMPI_Bcast/Reduce/Gather/Scatter (LD_PRELOAD); kept out
# of lib/, which holds what is installed.
add_library(bench_root_probe SHARED scripts/bench_root_probe.c)
target_link_libraries(bench_root_probe PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(bench_root_probe PROPERTIES
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

add_test(NAME bench.run.np2
         COMMAND bash ${BENCH_SCRIPTS}/bench_run.sh ${STRATA_RUN} $<TARGET_FILE:strata-bench>
                 $<TARGET_FILE:bench_root_probe> ${CMAKE_SOURCE_DIR}/tools/bench-schema.json
                 ${CMAKE_SOURCE_DIR}/tests/data/model.conf)
set_tests_properties(bench.run.np2 PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

foreach(mode plots no-matplotlib)
  if(mode STREQUAL "plots")
    set(name bench.report)
  else()
    set(name bench.report.${mode})
  endif()
  add_test(NAME ${name}
           COMMAND bash ${BENCH_SCRIPTS}/bench_report.sh ${mode}
                   ${CMAKE_BINARY_DIR}/bin/strata-report
                   ${CMAKE_SOURCE_DIR}/tests/data/bench-sample.json)
  set_tests_properties(${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endforeach()
