# Algorithm selection: the names of algorithms, the cost model's choice for a
# fixed model file, and tuning files (unit test, no MPI launch); then, under
# MPI, tuning-file rules deciding real calls, a bad tuning file stopping the
# job, and strata-info --explain.
add_executable(test_select unit/test_select.c)
target_link_libraries(test_select PRIVATE strata)
target_include_directories(test_select PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_test(NAME select.unit COMMAND test_select ${CMAKE_CURRENT_SOURCE_DIR}/data)

# Tuning-file rules deciding real calls of prog_checksum (foundation.cmake),
# bad and missing files stopping the job, and strata-info --explain (the reductions
# without algorithms too: both paths priced, the one the size takes marked).  MPICH
# never yields the CPU: 2 ranks there.
if(STRATA_MPI STREQUAL "openmpi")
  set(SELECT_RANKS 3)
else()
  set(SELECT_RANKS 2)
endif()
add_test(NAME select.tuning_file.np${SELECT_RANKS}
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/tuning_file.sh ${STRATA_RUN}
                 $<TARGET_FILE:prog_checksum> ${CMAKE_CURRENT_SOURCE_DIR}/data ${SELECT_RANKS}
                 $<TARGET_FILE:strata-info>)
set_tests_properties(select.tuning_file.np${SELECT_RANKS} PROPERTIES TIMEOUT 300)
