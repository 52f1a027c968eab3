# The cost-model cache is the user's alone (issue 29): files another user
# planted where strata would look, or at strata-calibrate's temporary name,
# are refused with a warning and the job goes on with the built-in model.
# Needs root to plant files as `nobody` (CI runs as root); skips otherwise.
add_test(NAME model_cache.foreign_files
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/model_cache.sh ${STRATA_RUN}
                 $<TARGET_FILE:prog_checksum> $<TARGET_FILE:strata-info>
                 $<TARGET_FILE:strata-calibrate>)
set_tests_properties(model_cache.foreign_files PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
