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

# The device reducers (coll/device_reduce.h) against PMPI_Reduce_local, every
# predefined op and type, through the dispatch the collectives use.  On the
# fake driver the dispatch must choose the CPU reducer (the GPU plugin is
# never handed the fake's memory).
strata_test_program(test_device_reduce mpi/test_device_reduce.c)
target_link_libraries(test_device_reduce PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_device_reduce fakecuda)
strata_mpi_test(NAME device.reduce.kernels TARGET test_device_reduce RANKS 1 ARGS cpu
                ENV STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda> FAKECUDA_DELAY_US=0)
set_tests_properties(device.reduce.kernels PROPERTIES TIMEOUT 60)

# The GPU plugin, when nvcc built it: it loads with every symbol resolved and
# refuses cleanly where there is no GPU (it never runs a kernel here).
if(STRATA_HAVE_CUDA_PLUGIN)
  add_executable(test_cuda_plugin unit/test_cuda_plugin.c)
  target_include_directories(test_cuda_plugin PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_cuda_plugin PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(test_cuda_plugin strata_cuda)
  add_test(NAME device.plugin.loads COMMAND test_cuda_plugin ${CMAKE_BINARY_DIR}/lib/libstrata_cuda.so)
  set_tests_properties(device.plugin.loads PROPERTIES TIMEOUT 30)
endif()

# The eight newer collectives on device buffers (device/device_vcalls.c),
# against the host MPI on host copies.
strata_test_program(test_device_v mpi/test_device_v.c)
target_link_libraries(test_device_v PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_device_v fakecuda)
function(device_v_test name ranks)
  strata_mpi_test(NAME device.v.${name} TARGET test_device_v RANKS ${ranks}
                  ENV STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda> FAKECUDA_DELAY_US=5 ${ARGN})
  set_tests_properties(device.v.${name} PROPERTIES TIMEOUT 90)
endfunction()
if(STRATA_MPI STREQUAL "openmpi")
  device_v_test(node.np3 3)
  device_v_test(nodes2.np4 4 STRATA_VIRTUAL_NODES=2)
else()
  device_v_test(node.np2 2)
  device_v_test(nodes2.np3 3 STRATA_VIRTUAL_NODES=2)
endif()

# strata-bench --device runs on the fake device: every row printed, three
# ways each (figures are not checked: no timings in pass/fail tests); and it
# says plainly when no driver loads.
add_test(NAME device.bench.fake
         COMMAND ${STRATA_RUN} --native -n 2 $<TARGET_FILE:strata-bench> --device
                 --sizes 8,100K --iters 2)
set_tests_properties(device.bench.fake PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "MPI_Bcast +8 [^\n]*\nMPI_Bcast +102400 [^\n]*\nMPI_Allreduce +8 [^\n]*\nMPI_Allreduce +102400 "
  ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf;STRATA_CUDA_LIB=$<TARGET_FILE:fakecuda>")
add_test(NAME device.bench.no-driver
         COMMAND ${STRATA_RUN} --native -n 2 $<TARGET_FILE:strata-bench> --device --sizes 8)
set_tests_properties(device.bench.no-driver PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "--device: SKIPPED, no device on every rank"
  ENVIRONMENT "STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf;STRATA_CUDA_LIB=libstrata-no-such-driver.so")
