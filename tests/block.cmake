# Block collectives and Bcast variants: every algorithm of MPI_Gather,
# MPI_Scatter, MPI_Allgather, MPI_Alltoall and MPI_Bcast forced in turn (k =
# 1, 2, 3 and the size where it takes a factor), each result compared with
# the expected one and with the host MPI's (tests/mpi/test_block_colls.c).
#
# Open MPI yields when oversubscribed: 2 to 5 ranks, 7 and 8 once each with
# fewer roots.  MPICH never yields: 2 ranks, and 3 once without host calls.
# Timeouts are a few times the run time measured while other jobs shared
# the machine: a per-call decision that differed between ranks would hang,
# and the timeout is what catches it.
strata_test_program(test_block_colls mpi/test_block_colls.c mpi/blockdata.c)

# block_colls(name ranks timeout [ENV var=value...] [ARGS option...])
function(block_colls name ranks timeout)
  cmake_parse_arguments(B "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME block.${name} TARGET test_block_colls RANKS ${ranks} ENV ${B_ENV}
                  ARGS ${B_ARGS})
  set_tests_properties(block.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

# Blocks from 4 KiB up: where the CMA transfer loop makes more than one call.
set(BLOCK_CMA_SIZES --sizes=4099,16K,64K+5,1M)

# Every algorithm once per transport: with the segment, the single-copy ones
# are refused and the test checks the refusal and the model's replacement.
# 3 ranks on Open MPI; MPICH at 3 ranks busy-waits in every host call the
# results are compared with (15 s a run against 2.5 s), so 2 ranks there.
if(STRATA_MPI STREQUAL "openmpi")
  set(BLOCK_TRANSPORT_RANKS 3)
else()
  set(BLOCK_TRANSPORT_RANKS 2)
endif()
foreach(t cma segment)
  block_colls(transport.${t}.np${BLOCK_TRANSPORT_RANKS} ${BLOCK_TRANSPORT_RANKS} 120
              ENV STRATA_TRANSPORT=${t} ARGS --comms=world --roots=some)
endforeach()
# The map transport with the shared heap from 16 KiB: every single-copy
# algorithm reads and writes peers' buffers through mappings.
block_colls(transport.map.np${BLOCK_TRANSPORT_RANKS} ${BLOCK_TRANSPORT_RANKS} 120
            ENV STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=16K ARGS --comms=world --roots=some)

if(STRATA_MPI STREQUAL "openmpi")
  # Every root up to 4 ranks (first, middle and last at 5), on
  # MPI_COMM_WORLD, a split with the ranks reversed and all ranks but the
  # last (odd at 4 ranks).
  block_colls(np2 2 60)
  block_colls(np3 3 90)
  block_colls(np4 4 120)
  block_colls(np5 5 150 ARGS --roots=some)
  block_colls(np7 7 150 ARGS --comms=world --roots=some)
  # A two-socket machine: 8 ranks in L3 pairs, sockets of two pairs, the
  # node, so that the hierarchical Allgathers have three levels to work with;
  # reversed, the hierarchy's order is not the ranks' order, and without the
  # last rank one L3 group has a single member.
  block_colls(topo2.np8 8 180 ENV "STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1"
              ARGS --roots=some --comms=reversed,sub)
  # No CMA: every single-copy algorithm is refused, and the model's choice
  # (copy-in-copy-out, pipelined) must serve correctly instead.
  block_colls(cma0.np4 4 90 ENV STRATA_CMA=0 ARGS --comms=world,sub --roots=some)
  # CMA in 4 KiB calls: the partial-transfer loop of every single copy.
  block_colls(cma-per-call.np3 3 90 ENV STRATA_CMA_MAX_PER_CALL=4K ARGS ${BLOCK_CMA_SIZES})
  # 8 MiB blocks (and 1 MiB), on MPI_COMM_WORLD only: each case moves and
  # checks tens of megabytes on every rank.
  block_colls(large.np3 3 150 ARGS --large --sizes=1M --comms=world)
else()
  # MPICH: 2 ranks (a few seconds when nothing else runs, but MPICH's
  # busy waiting makes it many times slower on a loaded machine), and 3
  # ranks without host calls (strata's waits yield, MPICH's do not).
  block_colls(np2 2 120)
  block_colls(cma0.np2 2 120 ENV STRATA_CMA=0)
  block_colls(np3 3 120 ARGS --no-host --roots=some)
endif()

# The flag lines (test_lines.c): small Bcast, Gather, Scatter, Allgather,
# Alltoall and Allreduce in streaks, with a late rank now and then, so that a
# slot reused too early would show; a few seconds each.
strata_test_program(test_lines mpi/test_lines.c)
function(lines_test name ranks)
  strata_mpi_test(NAME block.lines.${name} TARGET test_lines RANKS ${ranks} ARGS ${ARGN})
  set_tests_properties(block.lines.${name} PROPERTIES TIMEOUT 60)
endfunction()
lines_test(np2 2)
if(STRATA_MPI STREQUAL "openmpi")
  lines_test(np3 3)
  lines_test(np4 4 --rounds=300)
endif()
