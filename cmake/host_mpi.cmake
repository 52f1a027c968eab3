# The host MPI, found from the C compiler wrapper this build is configured
# with (CMAKE_C_COMPILER), never from Debian's names:
#   STRATA_MPI          its family, openmpi or mpich (Intel MPI, MVAPICH and
#                       Cray MPICH are of MPICH's), or abi for the MPI 5.0
#                       standard ABI (an mpicc_abi, whose mpi.h defines only
#                       MPI_ABI_VERSION: one build for every MPI that ships
#                       libmpi_abi.so.1), from its mpi.h's macros.
#                       Set by hand, it must agree with them.
#   STRATA_MPI_VERSION  its version, from the same header (informative).
#   STRATA_MPI_DEBIAN   ON when the wrapper is Debian's mpicc.openmpi or
#                       mpicc.mpich (the MPIs of the top-level Makefile).
#   STRATA_MPIF90, STRATA_MPICXX, STRATA_MPIEXEC
#                       that installation's Fortran and C++ wrappers and its
#                       launcher, taken only from the directory of the C
#                       wrapper and with its suffix (mpicc.mpich gives
#                       mpif90.mpich, mpicc_abi mpicxx_abi).  Where one is not
#                       there, what needs it is left out, saying so.  Each can
#                       be given by hand (-DSTRATA_MPIF90=...).

# The wrapper's name and directory.  A link whose target is another mpicc*
# (Debian's /usr/bin/mpicc -> /etc/alternatives/mpi -> /usr/bin/mpicc.openmpi)
# is followed to the last such name, whose suffix names the siblings.
set(strata_cc "${CMAKE_C_COMPILER}")
foreach(step RANGE 8)
  if(NOT IS_SYMLINK "${strata_cc}")
    break()
  endif()
  file(READ_SYMLINK "${strata_cc}" strata_target)
  if(NOT IS_ABSOLUTE "${strata_target}")
    get_filename_component(strata_dir "${strata_cc}" DIRECTORY)
    set(strata_target "${strata_dir}/${strata_target}")
  endif()
  get_filename_component(strata_target_name "${strata_target}" NAME)
  if(NOT strata_target_name MATCHES "^mpicc")
    break()
  endif()
  set(strata_cc "${strata_target}")
endforeach()
get_filename_component(STRATA_MPI_BINDIR "${strata_cc}" DIRECTORY)
get_filename_component(strata_cc_name "${strata_cc}" NAME)
set(strata_wrapper ON)
if(strata_cc_name MATCHES "^mpicc(.*)$")
  set(STRATA_MPI_SUFFIX "${CMAKE_MATCH_1}")
else()
  # Not an mpicc (a vendor's cc, ...): its siblings cannot be guessed.
  set(STRATA_MPI_SUFFIX "")
  set(strata_wrapper OFF)
endif()

# The family and version, from what the wrapper's mpi.h defines.
set(strata_probe "${CMAKE_BINARY_DIR}/CMakeFiles/strata_host_mpi.c")
file(WRITE "${strata_probe}" "#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION)
strata_family=openmpi
strata_version=OMPI_MAJOR_VERSION OMPI_MINOR_VERSION OMPI_RELEASE_VERSION
#elif defined(MPICH_VERSION)
strata_family=mpich
strata_version=MPICH_VERSION
#elif defined(MPI_ABI_VERSION)
strata_family=abi
strata_version=MPI_ABI_VERSION MPI_ABI_SUBVERSION
#endif
#if defined(I_MPI_VERSION)
strata_flavour=Intel MPI I_MPI_VERSION
#elif defined(MVAPICH2_VERSION)
strata_flavour=MVAPICH2 MVAPICH2_VERSION
#elif defined(MVAPICH_VERSION)
strata_flavour=MVAPICH MVAPICH_VERSION
#endif
")
execute_process(COMMAND "${CMAKE_C_COMPILER}" -E -P "${strata_probe}"
                OUTPUT_VARIABLE strata_probe_out ERROR_VARIABLE strata_probe_err
                RESULT_VARIABLE strata_probe_rc)
set(strata_family "")
set(STRATA_MPI_VERSION "unknown")
if(strata_probe_rc EQUAL 0 AND strata_probe_out MATCHES "strata_family=([a-z]+)")
  set(strata_family "${CMAKE_MATCH_1}")
  if(strata_probe_out MATCHES "strata_version=([^\n]*)")
    string(STRIP "${CMAKE_MATCH_1}" strata_v)
    string(REGEX REPLACE "[\" ]+" "." strata_v "${strata_v}")
    string(REGEX REPLACE "^\\.|\\.$" "" STRATA_MPI_VERSION "${strata_v}")
  endif()
  if(strata_probe_out MATCHES "strata_flavour=([^\n]*)")
    string(REPLACE "\"" "" strata_flavour "${CMAKE_MATCH_1}")
    set(STRATA_MPI_VERSION "${STRATA_MPI_VERSION} (${strata_flavour})")
  endif()
endif()

if(NOT DEFINED STRATA_MPI OR STRATA_MPI STREQUAL "")
  if(strata_family STREQUAL "")
    message(FATAL_ERROR "${CMAKE_C_COMPILER}: its mpi.h defines neither OMPI_MAJOR_VERSION nor "
            "MPICH_VERSION (${strata_probe_err}).  Configure with an MPI's C wrapper "
            "(-DCMAKE_C_COMPILER=<its mpicc>), or name the family with -DSTRATA_MPI=openmpi|mpich|abi.")
  endif()
  set(STRATA_MPI "${strata_family}" CACHE STRING "host MPI family this build is for (openmpi, mpich or abi)")
else()
  set(STRATA_MPI "${STRATA_MPI}" CACHE STRING "host MPI family this build is for (openmpi, mpich or abi)")
  if(NOT STRATA_MPI MATCHES "^(openmpi|mpich|abi)$")
    message(FATAL_ERROR "STRATA_MPI=${STRATA_MPI}: openmpi, mpich or abi (or leave it out: it is "
            "found from the compiler's mpi.h)")
  endif()
  if(strata_family STREQUAL "")
    message(WARNING "${CMAKE_C_COMPILER}: no MPI family found in its mpi.h; trusting STRATA_MPI=${STRATA_MPI}")
  elseif(NOT strata_family STREQUAL STRATA_MPI)
    message(FATAL_ERROR "STRATA_MPI=${STRATA_MPI}, but ${CMAKE_C_COMPILER}'s mpi.h is "
            "${strata_family}'s: leave STRATA_MPI out, or give that MPI's mpicc")
  endif()
endif()
set_property(CACHE STRATA_MPI PROPERTY STRINGS openmpi mpich abi)

# STRATA_MPI_ID names this installation where a helper is kept per MPI (the
# mpi4py of scripts/install-mpi4py.sh): Debian's by their family's name,
# another by family and version (mpich-5.0.2), so that it never gets Debian's.
if(STRATA_MPI_BINDIR STREQUAL "/usr/bin" AND STRATA_MPI_SUFFIX STREQUAL ".${STRATA_MPI}")
  set(STRATA_MPI_DEBIAN ON)
  set(STRATA_MPI_ID "${STRATA_MPI}")
else()
  set(STRATA_MPI_DEBIAN OFF)
  string(REGEX REPLACE "[^A-Za-z0-9.]+.*$" "" strata_v "${STRATA_MPI_VERSION}")
  set(STRATA_MPI_ID "${STRATA_MPI}-${strata_v}${STRATA_MPI_SUFFIX}")
endif()

# The installation's other wrappers and its launcher: beside the C wrapper,
# with its suffix, and nowhere else (no PATH search, which would find another
# MPI's).  The launcher may also go without the suffix (mpicc_abi's MPICH has
# no mpiexec_abi).
if(strata_wrapper)
  find_program(STRATA_MPIF90 NAMES mpif90${STRATA_MPI_SUFFIX} mpifort${STRATA_MPI_SUFFIX}
               PATHS "${STRATA_MPI_BINDIR}" NO_DEFAULT_PATH)
  find_program(STRATA_MPICXX NAMES mpicxx${STRATA_MPI_SUFFIX} mpic++${STRATA_MPI_SUFFIX}
               PATHS "${STRATA_MPI_BINDIR}" NO_DEFAULT_PATH)
  if(STRATA_MPI STREQUAL "openmpi")
    set(strata_launchers mpirun${STRATA_MPI_SUFFIX} mpiexec${STRATA_MPI_SUFFIX} mpirun mpiexec)
  else()
    set(strata_launchers mpiexec${STRATA_MPI_SUFFIX} mpirun${STRATA_MPI_SUFFIX} mpiexec mpirun)
  endif()
  find_program(STRATA_MPIEXEC NAMES ${strata_launchers} PATHS "${STRATA_MPI_BINDIR}" NO_DEFAULT_PATH)
endif()
if(NOT STRATA_MPIEXEC)
  message(FATAL_ERROR "no MPI launcher (mpiexec, mpirun) beside ${strata_cc}: give it with "
          "-DSTRATA_MPIEXEC=<path>")
endif()
message(STATUS "Host MPI: ${STRATA_MPI} ${STRATA_MPI_VERSION}, wrapper ${CMAKE_C_COMPILER}, "
        "launcher ${STRATA_MPIEXEC}")
