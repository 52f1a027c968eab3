# Traffic accounting (STRATA_STATS), beyond node.stats.* (tests/node.cmake,
# bytes only): per call, the messages by distance, the served calls and the
# algorithm that served them, bytes counted under the collective the
# application called, traffic across (virtual) nodes; the JSON file read
# back; strata-info --traffic's prediction equal to what is counted.
#
# Fake machine: two sockets of two NUMA nodes, one L3 of two cores each
# (NUMA node = L3).  8 ranks by core make L3 pairs [0 1] [2 3] [4 5] [6 7],
# sockets of two pairs, the node; the Bcast tree from root 0 is 0 -> 4
# (other_socket), 0 -> 2 and 4 -> 6 (other_numa), and each pair's leader to
# its partner (same_l3); from root 5, 5 -> 0, 5 -> 6 and 0 -> 2, 5 -> 4, ...:
# the same pattern.  Messages: a copy-in/copy-out payload (up to 16 KiB) is
# one message per rank; 1 MiB moves in 256 KiB chunks, 4 messages per rank
# with children, 1 to 4 for a leaf (it copies whatever its parent has ready).
# Calls count once per rank.  Each run takes about a second.
set(STATS_TOPO2 "STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1")
set(STATS_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/scripts)
set(STATS_BCAST_BYTES same_l3:4,same_numa:0,other_numa:2,other_socket:1,other_node:0)
# The distances nothing crosses on two virtual nodes of one L3 pair each.
set(STATS_NONE same_numa:0,other_numa:0,other_socket:0)

# stats_test(name ranks ENV var=value... ARGS option...)
function(stats_test name ranks)
  cmake_parse_arguments(S "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME stats.${name} TARGET test_node_stats RANKS ${ranks}
                  ENV STRATA_STATS=/dev/null ${S_ENV} ARGS ${S_ARGS})
  set_tests_properties(stats.${name} PROPERTIES TIMEOUT 60)
endfunction()

# stats_json(name ranks info_procs bytes root algorithm expect_bytes expect_messages var=value...)
function(stats_json name ranks info_procs bytes root algorithm expect_bytes expect_msgs)
  add_test(NAME stats.json.${name}
           COMMAND ${STATS_SCRIPTS}/stats_json.sh ${STRATA_RUN} $<TARGET_FILE:strata-info>
                   $<TARGET_FILE:test_node_stats> ${ranks} ${info_procs} ${bytes} ${root}
                   ${algorithm} ${expect_bytes} ${expect_msgs}
                   STRATA_MODEL=${CMAKE_SOURCE_DIR}/tests/data/model.conf ${ARGN})
  set_tests_properties(stats.json.${name} PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  # ---- One node, 8 ranks, the hierarchical tree (named: the model may
  # prefer a flat algorithm on this fake machine).
  set(STATS_PIPELINED ENV "${STATS_TOPO2}" STRATA_MAP=core STRATA_BCAST_ALGORITHM=pipelined)
  stats_test(bcast.topo2 8 ${STATS_PIPELINED}
             ARGS --coll=bcast --bytes=1048576 --roots=0,5 --expect=${STATS_BCAST_BYTES}
             --expect-messages=same_l3:4..16,same_numa:0,other_numa:8,other_socket:4,other_node:0
             --algorithm=pipelined)
  stats_test(bcast-small.topo2 8 ${STATS_PIPELINED}
             ARGS --coll=bcast --bytes=8001 --roots=0,5 --expect=${STATS_BCAST_BYTES}
             --expect-messages=same_l3:4,same_numa:0,other_numa:2,other_socket:1,other_node:0
             --algorithm=pipelined)

  # ---- Two virtual nodes of two ranks, [0 1] [2 3], each an L3 pair.
  set(STATS_VNODES ENV "${STATS_TOPO2}" STRATA_MAP=core STRATA_VIRTUAL_NODES=2)
  # Bcast of B: the root's leader sends B to the other node's leader in
  # 128 KiB segments (8 messages for 1 MiB, other_node), each leader's
  # partner pulls B from it (same_l3), whichever node holds the root.
  stats_test(bcast.vnodes 4 ${STATS_VNODES}
             ARGS --coll=bcast --bytes=1048576 --roots=0,3
             --expect=same_l3:2,${STATS_NONE},other_node:1
             --expect-messages=same_l3:2..8,${STATS_NONE},other_node:8
             "--algorithm=across nodes")
  # Allgather of b per rank: each leader gathers its partner's block (b,
  # same_l3), leaders exchange their 2b bundles (one 128 KiB segment each
  # way, other_node), each leader broadcasts the 4b result to its partner
  # (same_l3): 10b and 4b.  The node's gather and broadcast count as the
  # Allgather (the test asserts nothing is counted for MPI_Gather/Bcast).
  stats_test(allgather.vnodes 4 ${STATS_VNODES}
             ARGS --coll=allgather --bytes=65536
             --expect=same_l3:10,${STATS_NONE},other_node:4
             --expect-messages=same_l3:4,${STATS_NONE},other_node:2
             "--algorithm=across nodes")

  # Reduce of B = 1 MiB: each node reduces every 128 KiB segment to its
  # leader, the two ranks of the pair each pulling the other's half and the
  # partner writing its reduced half to the leader (3 messages of half a
  # segment: 3/2 B a node, 3 B in all, 48 messages), and the leader of the
  # node without the root sends the node's B across (8 segments).
  # Allreduce adds the broadcast from rank 0: B across again, and B pulled
  # by each leader's partner (1 to 8 messages).
  stats_test(reduce.vnodes 4 ${STATS_VNODES}
             ARGS --coll=reduce --bytes=1048576 --roots=0,3
             --expect=same_l3:3,${STATS_NONE},other_node:1
             --expect-messages=same_l3:48,${STATS_NONE},other_node:8
             "--algorithm=across nodes")
  stats_test(allreduce.vnodes 4 ${STATS_VNODES}
             ARGS --coll=allreduce --bytes=1048576
             --expect=same_l3:5,${STATS_NONE},other_node:2
             --expect-messages=same_l3:50..64,${STATS_NONE},other_node:16
             "--algorithm=across nodes")

  # Barrier: the two leaders' dissemination is one round of a zero-byte
  # message each way (other_node); nothing else crosses a distance.
  stats_test(barrier.vnodes 4 ${STATS_VNODES}
             ARGS --coll=barrier --expect=same_l3:0,${STATS_NONE},other_node:0
             --expect-messages=same_l3:0,${STATS_NONE},other_node:2
             "--algorithm=across nodes")

  # ---- The JSON file and strata-info --traffic.  strata-info assumes the
  # 8 ranks (one process, -n 8), and reads the 4 ranks of a real run.
  stats_json(topo2 8 1 1048576 5 pipelined ${STATS_BCAST_BYTES}
             same_l3:4..16,same_numa:0,other_numa:8,other_socket:4,other_node:0
             "${STATS_TOPO2}" STRATA_MAP=core STRATA_BCAST_ALGORITHM=pipelined)
  stats_json(vnodes 4 4 1048576 0 "across nodes" same_l3:2,${STATS_NONE},other_node:1
             same_l3:2..8,${STATS_NONE},other_node:8
             "${STATS_TOPO2}" STRATA_MAP=core STRATA_VIRTUAL_NODES=2)
endif()

# ---- Two ranks in different sockets (MPICH too: 2 ranks only).  Each root
# sends B to the other rank, a leaf: 1 to 4 messages.
set(STATS_SOCKET2 same_l3:0,same_numa:0,other_numa:0,other_socket:1,other_node:0)
set(STATS_SOCKET2_MSGS same_l3:0,same_numa:0,other_numa:0,other_socket:1..4,other_node:0)
stats_test(bcast.socket2 2 ENV "${STATS_TOPO2}" STRATA_MAP=socket STRATA_BCAST_ALGORITHM=pipelined
           ARGS --coll=bcast --bytes=1048576 --roots=0,1
           --expect=${STATS_SOCKET2}
           --expect-messages=${STATS_SOCKET2_MSGS}
           --algorithm=pipelined)
stats_json(socket2 2 2 1048576 1 pipelined ${STATS_SOCKET2} ${STATS_SOCKET2_MSGS}
           "${STATS_TOPO2}" STRATA_MAP=socket STRATA_BCAST_ALGORITHM=pipelined)

# ---- Host calls grouped by reason: each rank's counters for the exact
# sentence, then the JSON file's host_reasons (tests/mpi/test_host_reasons.c).
strata_test_program(test_host_reasons mpi/test_host_reasons.c)
function(stats_reasons name ranks)
  strata_mpi_test(NAME stats.reasons.${name} TARGET test_host_reasons RANKS ${ranks}
                  ENV STRATA_STATS=${CMAKE_CURRENT_BINARY_DIR}/reasons-${name}.json ${ARGN})
  set_tests_properties(stats.reasons.${name} PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "PASS host_reasons JSON"
                       FAIL_REGULAR_EXPRESSION "FAIL rank")
endfunction()
stats_reasons(np2 2)
stats_reasons(vnodes.np2 2 STRATA_VIRTUAL_NODES=2)
if(STRATA_MPI STREQUAL "openmpi")
  stats_reasons(vnodes.np4 4 "${STATS_TOPO2}" STRATA_MAP=core STRATA_VIRTUAL_NODES=2)
  stats_reasons(topo2.np4 4 "${STATS_TOPO2}" STRATA_MAP=core)
endif()
