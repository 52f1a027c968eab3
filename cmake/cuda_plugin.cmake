# libstrata_cuda.so: src/cuda/strata_cuda.cu, compiled by nvcc into
# ${CMAKE_BINARY_DIR}/lib beside libstrata (where strata looks for it).
#   STRATA_CUDA_PLUGIN_BUILD  AUTO (when nvcc is found), ON (nvcc required), OFF
#   STRATA_CUDA_ARCHS         nvcc -arch/-code list; the default embeds sm_75,
#                             sm_80 and sm_90 code and compute_75 PTX, which
#                             the driver compiles for any other later GPU at
#                             first load (on an H200, PTX alone cost the first
#                             calls a JIT compile: bench/results/session7).
include(GNUInstallDirs)
set(STRATA_CUDA_PLUGIN_BUILD AUTO CACHE STRING "build libstrata_cuda.so: AUTO, ON or OFF")
set(STRATA_CUDA_ARCHS "-gencode=arch=compute_75,code=[sm_75,compute_75] -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90"
    CACHE STRING "nvcc architecture flags for libstrata_cuda.so")
string(TOUPPER "${STRATA_CUDA_PLUGIN_BUILD}" strata_cuda_build)
set(STRATA_HAVE_CUDA_PLUGIN OFF)
if(NOT strata_cuda_build STREQUAL "OFF")
  find_program(STRATA_NVCC nvcc HINTS $ENV{CUDA_HOME}/bin /usr/local/cuda/bin)
  if(STRATA_NVCC)
    set(STRATA_HAVE_CUDA_PLUGIN ON)
  elseif(strata_cuda_build STREQUAL "ON")
    message(FATAL_ERROR "STRATA_CUDA_PLUGIN_BUILD=ON but no nvcc found")
  else()
    message(STATUS "no nvcc: libstrata_cuda.so is not built (device reductions run on the CPU)")
  endif()
endif()
if(STRATA_HAVE_CUDA_PLUGIN)
  set(plugin ${CMAKE_BINARY_DIR}/lib/libstrata_cuda.so)
  separate_arguments(strata_cuda_arch_flags UNIX_COMMAND "${STRATA_CUDA_ARCHS}")
  # -fmad=false: no fused multiply-add, so floating-point results are those
  # of the CPU loops (coll/ops.c), element by element.
  add_custom_command(OUTPUT ${plugin}
    COMMAND ${STRATA_NVCC} -std=c++17 -O3 --extended-lambda -fmad=false
            ${strata_cuda_arch_flags} -Xcompiler=-fPIC,-fvisibility=hidden,-Wall
            -shared -cudart=static -I${CMAKE_SOURCE_DIR}/src
            -o ${plugin} ${CMAKE_SOURCE_DIR}/src/cuda/strata_cuda.cu
    DEPENDS ${CMAKE_SOURCE_DIR}/src/cuda/strata_cuda.cu
            ${CMAKE_SOURCE_DIR}/src/transport/device_reduce.h
    COMMENT "nvcc: libstrata_cuda.so (GPU reduction plugin)" VERBATIM)
  add_custom_target(strata_cuda ALL DEPENDS ${plugin})
  install(FILES ${plugin} DESTINATION ${CMAKE_INSTALL_LIBDIR}/strata/${STRATA_MPI})
  message(STATUS "nvcc ${STRATA_NVCC}: libstrata_cuda.so will be built")
endif()
