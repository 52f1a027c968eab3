# Faults, bad input and large counts (issue 7): erroneous arguments get the
# host MPI's error class; CMA refused at run time, /dev/shm full, a rank
# killed mid-collective and bad STRATA_ values end in a right answer or a
# clear message, never a hang or a bus error; counts whose bytes pass 2 GiB.
if(STRATA_MPI STREQUAL "openmpi")
  set(FAULT_RANKS 3)
else()
  set(FAULT_RANKS 2) # MPICH never yields: 2 ranks on this 2-core machine
endif()

strata_test_program(test_bad_input mpi/test_bad_input.c)

if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME faults.bad-input.np2 TARGET test_bad_input RANKS 2)
  strata_mpi_test(NAME faults.bad-input.np3 TARGET test_bad_input RANKS 3)
  set_tests_properties(faults.bad-input.np2 faults.bad-input.np3 PROPERTIES TIMEOUT 60)
else()
  strata_mpi_test(NAME faults.bad-input.np2 TARGET test_bad_input RANKS 2)
  set_tests_properties(faults.bad-input.np2 PROPERTIES TIMEOUT 60)
endif()
# STRATA_CHECK_ARGS=1: signatures that differ across ranks go to the host MPI
# on every rank and get its error; valid calls are still served.
strata_test_program(test_check_args mpi/test_check_args.c)
strata_mpi_test(NAME faults.check-args.np2 TARGET test_check_args RANKS 2)
set(CHECK_TESTS faults.check-args.np2)
if(STRATA_MPI STREQUAL "openmpi")
  strata_mpi_test(NAME faults.check-args.np3 TARGET test_check_args RANKS 3)
  strata_mpi_test(NAME faults.check-args.vnodes.np4 TARGET test_check_args RANKS 4
                  ENV STRATA_VIRTUAL_NODES=2 ARGS --odd=3)
  strata_mpi_test(NAME faults.check-args.verbose.np2 TARGET test_check_args RANKS 2
                  ENV STRATA_VERBOSE=2)
  set_tests_properties(faults.check-args.verbose.np2 PROPERTIES PASS_REGULAR_EXPRESSION
    "MPI_Bcast on communicator #[0-9]+: type signatures differ across ranks: rank 0 sends 32 bytes per block, rank 1 receives 16; nothing was moved \\(MPI_ERR_TRUNCATE")
  list(APPEND CHECK_TESTS faults.check-args.np3 faults.check-args.vnodes.np4
       faults.check-args.verbose.np2)
endif()
set_tests_properties(${CHECK_TESTS} PROPERTIES TIMEOUT 60)
strata_test_program(test_faults mpi/test_faults.c)
strata_test_program(test_large_count mpi/test_large_count.c)

# ---- Large counts: megabytes cut in CMA calls of 12345 bytes (many calls,
# odd offsets), and derived types whose count * extent passes INT_MAX.  The
# calls above 2 GiB are scripts/large-counts.sh (outside the suite: memory).
strata_mpi_test(NAME faults.large-count.np${FAULT_RANKS} TARGET test_large_count
                RANKS ${FAULT_RANKS} ENV STRATA_CMA_MAX_PER_CALL=12345)
set_tests_properties(faults.large-count.np${FAULT_RANKS} PROPERTIES TIMEOUT 120)

set(FAULT_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/scripts)
set(FAULT_MODEL STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf)

# ---- CMA refused at run time (ranks made non-dumpable, CAP_SYS_PTRACE
# dropped): before MPI_Init, after it, before a new communicator (right
# results through the shared segment, one warning), and in the middle of a
# collective set up with CMA (the job stops with a message, no hang).
foreach(when before-init after-init before-dup mid)
  add_test(NAME faults.cma-refused.${when}
           COMMAND bash ${FAULT_SCRIPTS}/fault_cma.sh ${STRATA_RUN} $<TARGET_FILE:test_faults>
                   ${FAULT_RANKS} ${when} -1 ${FAULT_MODEL})
endforeach()
# Only rank 1 non-dumpable: some pairs work, the others must not be used.
add_test(NAME faults.cma-refused.after-init.rank1
         COMMAND bash ${FAULT_SCRIPTS}/fault_cma.sh ${STRATA_RUN} $<TARGET_FILE:test_faults>
                 ${FAULT_RANKS} after-init 1 ${FAULT_MODEL})

# ---- /dev/shm full to the brim (every page taken): with CMA off the host
# MPI serves and STRATA_VERBOSE=1 says why; with CMA on strata's segments
# are memfds and strata serves.  The small /dev/shm and STRATA_SHM_MAX
# cases are node.fallback.* (tests/node.cmake).
foreach(mode full full-cma)
  add_test(NAME faults.shm-${mode}
           COMMAND bash ${FAULT_SCRIPTS}/shm_fallback.sh ${mode} ${STRATA_RUN}
                   $<TARGET_FILE:test_node_colls> ${FAULT_RANKS}
                   --suites=bcast,mixed,allreduce,barrier --no-large --roots=some
                   --types=int,float,pair)
  set_tests_properties(faults.shm-${mode} PROPERTIES ENVIRONMENT "${FAULT_MODEL}")
endforeach()

# ---- A rank killed (SIGKILL) in a loop of 4 MiB Bcasts and Allreduces: the
# job ends within 30 s of the kill and leaves nothing in /dev/shm.
# "launcher": the launcher ends the job; "self" (Open MPI told to keep the
# job running): the survivors notice the death themselves, through their
# flag waits (STRATA_CMA=0, small payloads) or a failed CMA copy.
# fault_kill(name ranks victim mode [VAR=value|--option...])
function(fault_kill name ranks victim mode)
  add_test(NAME faults.kill.${name}
           COMMAND bash ${FAULT_SCRIPTS}/fault_kill.sh ${STRATA_RUN} $<TARGET_FILE:test_faults>
                   ${ranks} ${victim} ${mode} ${FAULT_MODEL} ${ARGN})
endfunction()
if(STRATA_MPI STREQUAL "openmpi")
  fault_kill(node 4 2 launcher)
  fault_kill(node-cma0 4 1 launcher STRATA_CMA=0)
  fault_kill(vnodes 4 2 launcher STRATA_VIRTUAL_NODES=2)
  fault_kill(self-cma 3 1 self)
  fault_kill(self-flags 3 0 self STRATA_CMA=0 --bytes=20000)
  fault_kill(self-tiny 3 2 self --bytes=64)
  # Every wait blocks in the kernel at once (shm/wait.h): the survivors are
  # asleep when rank 1 dies, and their timeouts' liveness checks end them.
  fault_kill(self-block 3 1 self STRATA_CMA=0 STRATA_SPIN=0 STRATA_BLOCK_AFTER=0 --bytes=20000)
  # Across nodes: a leader waiting in the progress engine (src/net) checks
  # the peers of its open streams; here the killed rank 3 is node 2's only
  # partner of node 1's leader, and of rank 2 inside its node.
  fault_kill(self-vnodes 4 3 self STRATA_VIRTUAL_NODES=2)
  fault_kill(self-vnodes-leader 4 2 self STRATA_VIRTUAL_NODES=2)
  # Nonblocking operations outstanding when the rank dies (issue 17): the
  # survivors' progress loop (requests.c: strata_nb_idle) checks the peers.
  fault_kill(self-nonblocking 3 1 self --nonblocking)
  fault_kill(self-nonblocking-flags 3 0 self STRATA_CMA=0 --bytes=20000 --nonblocking)
  fault_kill(self-nonblocking-vnodes 4 2 self STRATA_VIRTUAL_NODES=2 --nonblocking)
else()
  fault_kill(node 2 1 launcher)
  fault_kill(node-cma0 2 0 launcher STRATA_CMA=0)
  fault_kill(nonblocking 2 1 launcher --nonblocking)
endif()

get_property(FAULT_TESTS DIRECTORY PROPERTY TESTS)
list(FILTER FAULT_TESTS INCLUDE REGEX "^faults\\.(cma-refused|shm-|kill)")
set_tests_properties(${FAULT_TESTS} PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77)
