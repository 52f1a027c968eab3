# Collectives across (virtual) nodes: every collective on several node
# layouts, each result compared with the expected one and with the host
# MPI's, and the route checked: strata serves all but MPI_Alltoall on a
# communicator with two ranks or more on some node, nothing where each node
# holds one rank (tests/mpi/test_net_colls.c).
#
# STRATA_VIRTUAL_NODES makes one machine N nodes, block (contiguous ranks,
# unequal when N does not divide the size) or cyclic.  Open MPI yields when
# oversubscribed: up to 5 ranks with every root, 7 and 8 with fewer roots and
# communicators.  MPICH never yields: 3 ranks, no host reference calls.
# Timeouts are a few times the run time measured while other jobs shared the
# machine: a per-call decision that differed between ranks would hang, and
# the timeout is what catches it.
strata_test_program(test_net_colls mpi/test_net_colls.c mpi/blockdata.c)

# net_colls(name ranks nodes layout timeout [ENV var=value...] [ARGS option...])
function(net_colls name ranks nodes layout timeout)
  cmake_parse_arguments(N "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME net.${name} TARGET test_net_colls RANKS ${ranks}
                  ENV STRATA_VIRTUAL_NODES=${nodes} STRATA_VIRTUAL_LAYOUT=${layout} ${N_ENV}
                  ARGS ${N_ARGS})
  set_tests_properties(net.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

if(STRATA_MPI STREQUAL "openmpi")
  # Two nodes.  3 ranks: [0 1] [2]; "odd" is [0] [2], one rank per node;
  # every communicator, every root.
  net_colls(nodes2.np3 3 2 block 90)
  # [0 1] [2 3]: every root; "sub" is [0 1] [2], "odd" [0] [2 3].
  net_colls(nodes2.np4 4 2 block 120 ARGS --comms=world,reversed,sub,odd)
  # [0 2] [1 3]: the node leaders are not the lowest ranks in order.
  net_colls(nodes2.np4.cyclic 4 2 cyclic 120 ARGS --comms=world,reversed,odd --roots=some)
  # Unequal nodes, [0 1 2] [3 4]; "sub" is [0 1 2] [3].
  net_colls(nodes2.np5 5 2 block 150 ARGS --comms=world,reversed,sub --roots=some)
  # Three nodes: one rank each (the host MPI serves everything), then
  # [0 1 2] [3 4] [5 6].
  net_colls(nodes3.np3 3 3 block 90 ARGS --comms=world,sub --roots=some)
  net_colls(nodes3.np7 7 3 block 150 ARGS --comms=world,odd --roots=some)
  # Four nodes: [0 1] [2] [3] [4] ("odd" has one rank per node), and
  # [0 4] [1 5] [2 6] [3 7].
  net_colls(nodes4.np5 5 4 block 150 ARGS --comms=world,reversed,odd --roots=some)
  net_colls(nodes4.np8.cyclic 8 4 cyclic 150 ARGS --comms=world,odd --roots=some)
  # Reductions on nodes of three ranks and more use two leaders ([0 1 2]
  # above); here one leader does both jobs, and a large reduction with two
  # leaders on both nodes, [0 1 2] [3 4 5], with 1 KiB segments so that the
  # second leader's stream to the first is long.
  net_colls(leaders1.nodes2.np5 5 2 block 120 ENV STRATA_NET_REDUCE_LEADERS=1
            ARGS --comms=world,sub --roots=some --colls=reduce,allreduce)
  net_colls(leaders2.large.nodes2.np6 6 2 block 150 ENV STRATA_NET_SEGMENT=1K
            ARGS --large --sizes=1M --comms=reversed --roots=some --colls=reduce,allreduce)
  # Many 1 KiB segments, one in flight each way between leaders: every
  # payload above 1 KiB is pipelined across nodes.
  net_colls(segments.nodes4.np5 5 4 block 120
            ENV STRATA_NET_SEGMENT=1K STRATA_NET_SENDS=1 STRATA_NET_RECVS=1
            ARGS --comms=world,reversed --roots=some)
  # Each tree among the node leaders forced in turn, [0 4] [1] [2] [3].
  foreach(tree chain binomial knomial:3)
    string(REPLACE ":" "" tree_name ${tree})
    net_colls(tree-${tree_name}.nodes4.np5 5 4 cyclic 90 ENV STRATA_NET_TREE=${tree}
              ARGS --comms=world --roots=some)
  endforeach()
  # 1 MiB and 8 MiB per block (and in all for reductions), MPI_COMM_WORLD only.
  net_colls(large.nodes2.np4 4 2 block 150 ARGS --large --sizes=1M --comms=world --roots=some)
  # No CMA: the node parts take their copy-in/copy-out paths.
  net_colls(cma0.nodes2.np4 4 2 cyclic 120 ENV STRATA_CMA=0
            ARGS --comms=world,sub --roots=some)
  # Two sockets per node: 4 ranks per node in L3 pairs, so that each node's
  # part has two levels of its own under the level across nodes.
  net_colls(topo2.nodes2.np8 8 2 block 150 ENV "STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1"
            ARGS --comms=world,reversed --roots=some)
else()
  # MPICH: [0 1] [2], no host reference calls (they spin), few sizes.
  net_colls(nodes2.np3 3 2 block 120
            ARGS --no-host --comms=world,odd --roots=some --sizes=0,7,1000,64K+5,1M)
endif()
