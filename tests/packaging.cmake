# The Spack recipe (packaging/spack/package.py), without Spack: imported
# against a stub of Spack's API, its declarations and cmake_args checked, and
# its run environment against this build installed by cmake --install into a
# temporary prefix (tests/packaging/test_spack_recipe.py).  The Debian
# package and the modules are tested by scripts/package-test.sh (root, apt).
find_program(STRATA_PYTHON3 python3)
if(STRATA_PYTHON3)
  add_test(NAME packaging.spack_recipe
           COMMAND ${STRATA_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/packaging/test_spack_recipe.py
                   --install-from ${CMAKE_BINARY_DIR})
  set_tests_properties(packaging.spack_recipe PROPERTIES TIMEOUT 120)
endif()
