# Device (GPU) buffers on a host MPI that does not know GPUs (issue 20),
# run on the fake driver of tests/fake_cuda (no GPU, no CUDA toolkit needed):
# its device memory is PROT_NONE to the host, so any path that touches device
# memory directly, in strata or in the host MPI, dies with SIGSEGV.
add_library(fakecuda SHARED fake_cuda/fake_cuda.c)
target_include_directories(fakecuda PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(fakecuda PRIVATE Threads::Threads)
set_target_properties(fakecuda PROPERTIES C_VISIBILITY_PRESET hidden)

# The fake itself: its rules hold (a host read of device memory faults,
# copies are asynchronous and ordered, IPC across processes, CUDA's errors).
add_executable(test_fake_cuda unit/test_fake_cuda.c)
target_include_directories(test_fake_cuda PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_fake_cuda PRIVATE ${CMAKE_DL_LIBS})
add_test(NAME device.fake COMMAND test_fake_cuda $<TARGET_FILE:fakecuda>)
set_tests_properties(device.fake PROPERTIES TIMEOUT 30)

strata_test_program(test_device mpi/test_device.c)
target_link_libraries(test_device PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_device fakecuda)
# device_test(name ranks timeout [ENV var=value...])
function(device_test name ranks timeout)
  cmake_parse_arguments(D "" "" "ENV" ${ARGN})
  strata_mpi_test(NAME device.${name} TARGET test_device RANKS ${ranks}
                  ENV STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda> STRATA_CUDA_CHUNK=64K
                      FAKECUDA_DELAY_US=20 ${D_ENV})
  set_tests_properties(device.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  device_test(node.np3 3 60)
  # Two simulated nodes, [0 1] [2 3]: the host path's across-node compositions.
  device_test(nodes2.np4 4 90 ENV STRATA_VIRTUAL_NODES=2)
else()
  device_test(node.np2 2 60)
  # One rank per node: no CUDA IPC to expect.
  device_test(nodes2.np2 2 60 ENV STRATA_VIRTUAL_NODES=2 TEST_DEVICE_ONE_PER_NODE=1)
endif()

# The control: with staging off (STRATA_CUDA=0) the same program hands device
# pointers to the host MPI, and the fake makes that a SIGSEGV.  Proves that
# the matrix above would catch a path that touches device memory.
add_test(NAME device.control.unstaged
         COMMAND ${STRATA_RUN} --native -n 2 $<TARGET_FILE:test_device>)
set_tests_properties(device.control.unstaged PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "signal 11|Segmentation fault|SIGSEGV|AddressSanitizer: SEGV"
  ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf;STRATA_CUDA=0;STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda>")

# A copy failing mid-call (the fake fails the 200th asynchronous copy of each
# process): the job ends with a message naming the copy and CUDA's error,
# rather than a wrong result or a hang.
add_test(NAME device.fault.copy
         COMMAND ${STRATA_RUN} --native -n 2 $<TARGET_FILE:test_device>)
set_tests_properties(device.fault.copy PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "device transport: copying [^\n]* failed: CUDA_ERROR_INVALID_VALUE"
  ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf;STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda>;STRATA_CUDA_CHUNK=64K;FAKECUDA_FAIL_COPY_AFTER=200")
