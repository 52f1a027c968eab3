# Node collectives: the correctness matrix (test_node_colls), traffic
# accounting (test_node_stats), the host-MPI fallback when strata gets no
# shared segment, and nothing left in /dev/shm (test_node_shm).
#
# This machine has 2 cores: Open MPI runs up to 8 ranks oversubscribed (it
# yields); MPICH never yields, so its runs keep to 2 ranks (and one 3-rank run
# that makes few host-MPI calls).  Each entry runs a subset of the matrix
# (options in tests/mpi/test_node_colls.c) and has a timeout a few times its
# usual run time: a per-call decision that differed between ranks would
# deadlock, and the timeout is what catches it.
set(NODE_COMMON mpi/node_common.c mpi/node_bcast.c mpi/node_reduce.c)
strata_test_program(test_node_colls mpi/test_node_colls.c ${NODE_COMMON})
strata_test_program(test_node_stats mpi/test_node_stats.c ${NODE_COMMON})
strata_test_program(test_node_shm mpi/test_node_shm.c ${NODE_COMMON})

set(NODE_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/scripts)
# Fake machines.  Two sockets of two NUMA nodes, one L3 each, two cores per
# L3: 8 ranks make L3 pairs, sockets of two pairs, the node (3 levels).
set(NODE_TOPO2 "STRATA_TOPOLOGY=pack:2 numa:2 l3:1 core:2 pu:1")
# NUMA nodes of two L3s: 8 ranks by core make L3 pairs, NUMA nodes of two
# pairs, the node (NUMA distinct from L3, unlike above).
set(NODE_TOPO3 "STRATA_TOPOLOGY=pack:2 numa:2 l3:2 core:2 pu:1")

# node_colls(name ranks timeout ENV var=value... ARGS option...)
function(node_colls name ranks timeout)
  cmake_parse_arguments(N "" "" "ENV;ARGS" ${ARGN})
  strata_mpi_test(NAME node.${name} TARGET test_node_colls RANKS ${ranks} ENV ${N_ENV}
                  ARGS ${N_ARGS})
  set_tests_properties(node.${name} PROPERTIES TIMEOUT ${timeout})
endfunction()

set(NODE_ALL_REDUCE reduce,allreduce,reduce-inplace,allreduce-inplace)
# Every suite but "permuted", which has entries of its own so that its
# failure (a datatype whose layout has no holes but is out of order) does not
# hide the rest of the matrix.
set(NODE_SUITES --suites=bcast,mixed,${NODE_ALL_REDUCE},large,fp,userop,barrier,alternate)

if(STRATA_MPI STREQUAL "openmpi")
  # ---- The matrix at every size, on the real machine (one level: node).
  node_colls(colls.np1 1 60 ARGS ${NODE_SUITES} --comms=world,dup)
  node_colls(colls.np2 2 90 ARGS ${NODE_SUITES} --comms=all)
  node_colls(colls.np3 3 120 ARGS ${NODE_SUITES} --comms=world,reversed --roots=some)
  node_colls(permuted.np3 3 60 ARGS --suites=permuted --comms=world,reversed)
  node_colls(colls.np4.bcast 4 90 ARGS --suites=bcast,mixed,barrier,alternate --comms=all
             --roots=some)
  node_colls(colls.np4.reduce 4 120 ARGS --suites=${NODE_ALL_REDUCE},fp,userop
             --comms=world,evenodd)
  node_colls(colls.np4.large 4 90 ARGS --suites=large --comms=reversed --roots=some)
  node_colls(colls.np5 5 150 ARGS ${NODE_SUITES} --roots=some)
  node_colls(colls.np8.bcast 8 120 ARGS --suites=bcast,mixed,barrier,userop --huge=2)
  node_colls(colls.np8.reduce 8 120 ARGS --suites=reduce,allreduce)
  node_colls(colls.np8.inplace 8 120 ARGS --suites=reduce-inplace,allreduce-inplace,fp)
  node_colls(colls.np8.large 8 120 ARGS --suites=large --roots=some)
  node_colls(colls.np8.comms 8 120 ARGS --suites=bcast,allreduce,alternate
             --comms=reversed,evenodd,subset3,dup --no-large --types=int,float,pair)

  # ---- Data-plane variables: the paths they select, at 4 ranks.
  set(NODE_VARIANT_ARGS --suites=bcast,mixed,allreduce,large,fp,alternate --roots=some
      --no-host --types=int,float,complex,pair)
  node_colls(cma0.np4 4 120 ENV STRATA_CMA=0 ARGS ${NODE_VARIANT_ARGS})
  # Many chunks and rounds: every payload above 256 bytes leaves the segment
  # regions, and pipelines move 4 KiB at a time.
  node_colls(small-chunks.np4 4 120
             ENV STRATA_CICO_MAX=256 STRATA_CHUNK=4K STRATA_REDUCE_CHUNK=4K
             ARGS ${NODE_VARIANT_ARGS})
  # The partial-transfer loop of the CMA copies.
  node_colls(cma-per-call.np4 4 120 ENV STRATA_CMA_MAX_PER_CALL=4096
             ARGS ${NODE_VARIANT_ARGS})
  # One reader per source chunk at a time (4 children of the root at 5 ranks).
  node_colls(throttle1.np5 5 120 ENV STRATA_THROTTLE=1
             ARGS --suites=bcast,mixed,large,alternate --roots=some --no-host)

  # ---- Fake machines: hierarchies of 2 and 3 levels.
  # The large reductions once each (--lean-large): every root of every case
  # is node.colls.np8.large's, on the real machine's one level.
  set(NODE_TOPO_ARGS --suites=bcast,mixed,allreduce,large,fp,barrier,alternate --roots=some
      --no-host --types=int,float,pair --lean-large)
  node_colls(topo2.core.np8 8 150 ENV "${NODE_TOPO2}" STRATA_MAP=core ARGS ${NODE_TOPO_ARGS})
  node_colls(topo2.numa.np8 8 150 ENV "${NODE_TOPO2}" STRATA_MAP=numa
             STRATA_HIERARCHY=l3,socket,node ARGS ${NODE_TOPO_ARGS} --comms=reversed)
  node_colls(topo2.reduce.np8 8 120 ENV "${NODE_TOPO2}" STRATA_MAP=numa
             ARGS --suites=reduce,reduce-inplace --comms=world,evenodd --no-host)
  node_colls(topo3.np8 8 150 ENV "${NODE_TOPO3}" STRATA_MAP=core ARGS ${NODE_TOPO_ARGS})
  # Two levels chosen by hand (sockets of 4 ranks, the node), one chunk size
  # per level.
  node_colls(hierarchy.np8 8 150 ENV "${NODE_TOPO2}" STRATA_MAP=numa
             STRATA_HIERARCHY=socket,node STRATA_CHUNK=64K,16K
             ARGS ${NODE_TOPO_ARGS})
  # Uneven groups: L3 groups [0 1] [2] [3 4] [5].
  node_colls(uneven.np6 6 150 ENV "${NODE_TOPO2}"
             STRATA_MAP=core:0,core:1,core:2,core:4,core:5,core:7
             ARGS ${NODE_TOPO_ARGS})
  # Everything small at once on 3 levels: many chunks per level,
  # throttled readers, CMA in 4 KiB calls, 8-byte reduction slices.
  node_colls(topo-small.np8 8 150 ENV "${NODE_TOPO2}" STRATA_MAP=numa STRATA_CICO_MAX=256
             STRATA_CHUNK=4K STRATA_REDUCE_CHUNK=4K STRATA_THROTTLE=1
             STRATA_CMA_MAX_PER_CALL=4096 STRATA_REDUCE_MIN_SLICE=8
             ARGS --suites=bcast,allreduce,large,fp --no-large --no-host --types=int,float,pair)
  set(NODE_SHM_RANKS 4)
else()
  # ---- MPICH: 2 ranks (3 once, with few host calls), each run well under 30 s.
  node_colls(colls.np2.bcast 2 60 ARGS --suites=bcast,mixed,barrier,alternate --comms=all
             --huge=1)
  node_colls(colls.np2.reduce 2 60 ARGS --suites=${NODE_ALL_REDUCE},userop --comms=world,dup)
  node_colls(colls.np2.large 2 60 ARGS --suites=large,fp --comms=world,reversed)
  node_colls(colls.np3 3 90 ARGS --suites=bcast,allreduce,fp,barrier --no-large --no-host)
  node_colls(permuted.np2 2 60 ARGS --suites=permuted)
  set(NODE_VARIANT_ARGS --suites=bcast,mixed,allreduce,large,fp,alternate --no-host)
  node_colls(cma0.np2 2 60 ENV STRATA_CMA=0 ARGS ${NODE_VARIANT_ARGS})
  node_colls(small-chunks.np2 2 60 ENV STRATA_CICO_MAX=256 STRATA_CHUNK=4K
             STRATA_REDUCE_CHUNK=4K ARGS ${NODE_VARIANT_ARGS})
  node_colls(cma-per-call.np2 2 60 ENV STRATA_CMA_MAX_PER_CALL=4096 ARGS ${NODE_VARIANT_ARGS})
  # Two ranks in different sockets of a fake machine (one level, the node).
  node_colls(topo2.np2 2 60 ENV "${NODE_TOPO2}" STRATA_MAP=socket
             ARGS --suites=bcast,mixed,reduce,allreduce,large,fp,barrier,alternate --no-host)
  # 8 ranks, 3 levels: strata's own calls (it yields) and almost no host
  # calls, so MPICH's busy waiting costs little.
  node_colls(topo2.np8 8 90 ENV "${NODE_TOPO2}" STRATA_MAP=numa
             ARGS --suites=bcast,allreduce,alternate --roots=some --no-host
             --types=int,float,pair)
  node_colls(topo2.fp.np8 8 90 ENV "${NODE_TOPO2}" STRATA_MAP=core
             ARGS --suites=fp,barrier,reduce-inplace --no-large --roots=some --no-host
             --types=float,pair)
  set(NODE_SHM_RANKS 2)
endif()

# ---- The matrix once per transport (src/transport/registry.c), chosen with
# STRATA_TRANSPORT; --transport makes the program check that every plane
# really moves its data with that one (no silent fallback), and results are
# compared with the host MPI's.  The whole matrix on one communicator (ranks
# reversed: the hierarchy's order is not the ranks'): about 15 s alone,
# several times that on a loaded machine, hence the timeouts.
# The map transport runs with the shared heap from 16 KiB, so that the
# single-copy paths read peers' buffers through mappings (smaller buffers
# are the C library's: their copies go by CMA, the per-buffer fallback).
foreach(t cma segment map)
  set(env STRATA_TRANSPORT=${t})
  if(t STREQUAL "map")
    list(APPEND env STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=16K)
  endif()
  if(STRATA_MPI STREQUAL "openmpi")
    node_colls(transport.${t}.np3 3 300 ENV ${env}
               ARGS ${NODE_SUITES} --comms=reversed --roots=some --transport=${t})
  else()
    node_colls(transport.${t}.np2 2 240 ENV ${env}
               ARGS ${NODE_SUITES} --comms=reversed --transport=${t})
  endif()
endforeach()

# ---- Traffic accounting on the 2-socket fake machine, 8 ranks, roots 0, 5,
# 3 and 7 (both sockets), ranks placed by core and round-robin over NUMA.
# Summed over ranks, for B bytes; the hierarchy is L3 pairs, sockets, node.
#  Bcast: every rank but the root receives B once from its parent: 4 L3 pairs
#   (4B same_l3), one more L3 per socket (2B other_numa: NUMA node = L3 here),
#   the other socket once (1B other_socket), whatever the root and mapping.
#  Reduce, large (1 MiB, 4 chunks, 2 slices each): in each group of two, the
#   reducer of each half pulls the other's half (B) and the one that is not
#   the leader pushes its half to the leader (B/2): 1.5B per group, so 6B,
#   3B and 1.5B.  Small (8000 bytes, through the segment, one reducer per
#   group: its first participant): it pulls the other operand once, 4B, 2B,
#   1B.  Root 0 only: at other roots the first participant of some groups is
#   not the leader and combines straight into the leader's region, a push
#   strata does not count (reported; the counts stay 4B, 2B, 1B).
#  Allreduce, large: the levels below the top reduce as above (6B, 3B), the
#   top pair reduce-scatters (B) and allgathers (B), then the result goes
#   down the tree (4B, 2B): 10B, 5B, 2B.
# Few calls, all but two of them strata's: MPICH runs these at 8 ranks too.
set(NODE_BCAST_EXPECT same_l3:4,same_numa:0,other_numa:2,other_socket:1,other_node:0)
set(NODE_REDUCE_EXPECT same_l3:6,same_numa:0,other_numa:3,other_socket:3/2,other_node:0)
set(NODE_ALLREDUCE_EXPECT same_l3:10,same_numa:0,other_numa:5,other_socket:2,other_node:0)
foreach(map core numa)
  foreach(spec
      "bcast|bcast|1048581|0,5,3,7|${NODE_BCAST_EXPECT}"
      "bcast-small|bcast|8001|0,5,3,7|${NODE_BCAST_EXPECT}"
      "reduce|reduce|1048576|0,5,3,7|${NODE_REDUCE_EXPECT}"
      "reduce-small|reduce|8000|0|${NODE_BCAST_EXPECT}"
      "allreduce|allreduce|1048576|0|${NODE_ALLREDUCE_EXPECT}")
    string(REPLACE "|" ";" parts "${spec}")
    list(GET parts 0 name)
    list(GET parts 1 coll)
    list(GET parts 2 bytes)
    list(GET parts 3 roots)
    list(GET parts 4 expect)
    # The expected pattern is the hierarchical pipelined Bcast's (each byte
    # crosses a boundary once); the cost model, blind to distances, may
    # prefer a flat algorithm on this fake machine, so the test names it.
    strata_mpi_test(NAME node.stats.${name}.${map} TARGET test_node_stats RANKS 8
                    ENV "${NODE_TOPO2}" STRATA_MAP=${map} STRATA_STATS=/dev/null
                    STRATA_BCAST_ALGORITHM=pipelined
                    ARGS --coll=${coll} --bytes=${bytes} --roots=${roots} --expect=${expect})
    set_tests_properties(node.stats.${name}.${map} PROPERTIES TIMEOUT 60)
  endforeach()
endforeach()

# ---- No shared segment: the host MPI serves, results stay right, and
# STRATA_VERBOSE=1 says why.
set(NODE_FALLBACK_ARGS --suites=bcast,mixed,${NODE_ALL_REDUCE},barrier --no-large
    --roots=some --types=int,float,pair)
add_test(NAME node.fallback.shm-max
         COMMAND ${NODE_SCRIPTS}/shm_fallback.sh shm-max ${STRATA_RUN}
                 $<TARGET_FILE:test_node_colls> ${NODE_SHM_RANKS} ${NODE_FALLBACK_ARGS})
foreach(mode tmpfs tmpfs-cma)
  add_test(NAME node.fallback.${mode}
           COMMAND ${NODE_SCRIPTS}/shm_fallback.sh ${mode} ${STRATA_RUN}
                   $<TARGET_FILE:test_node_colls> ${NODE_SHM_RANKS} ${NODE_FALLBACK_ARGS})
endforeach()
set_tests_properties(node.fallback.shm-max node.fallback.tmpfs node.fallback.tmpfs-cma
                     PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)

# ---- Nothing left in /dev/shm: many communicators created and freed, a job
# ended by MPI_Abort, one ended while a communicator's segment was being set
# up, and (kill) jobs with CMA off killed by a SIGKILL of one rank at a
# random moment of a dup/Allreduce/free loop, followed by the next start.
foreach(mode churn abort abort-create kill)
  add_test(NAME node.shm-leftovers.${mode}
           COMMAND ${NODE_SCRIPTS}/shm_leftovers.sh ${STRATA_RUN} $<TARGET_FILE:test_node_shm>
                   ${NODE_SHM_RANKS} ${mode})
  set_tests_properties(node.shm-leftovers.${mode} PROPERTIES TIMEOUT 60)
endforeach()
set_tests_properties(node.shm-leftovers.kill PROPERTIES TIMEOUT 120)

# ---- Resumable operations (coll/task.h): two collectives on two communicators
# driven by alternating single progress steps from one thread, every
# converted operation, sizes on both sides of the copy-in/copy-out limit,
# once per transport (with the segment, large payloads go in rounds).
strata_test_program(test_task_alternate mpi/test_task_alternate.c)
foreach(t cma segment)
  strata_mpi_test(NAME node.task-alternate.${t}.np2 TARGET test_task_alternate RANKS 2
                  ENV STRATA_TRANSPORT=${t})
  set_tests_properties(node.task-alternate.${t}.np2 PROPERTIES TIMEOUT 60)
  if(STRATA_MPI STREQUAL "openmpi")
    strata_mpi_test(NAME node.task-alternate.${t}.np3 TARGET test_task_alternate RANKS 3
                    ENV STRATA_TRANSPORT=${t})
    set_tests_properties(node.task-alternate.${t}.np3 PROPERTIES TIMEOUT 90)
  endif()
endforeach()
strata_mpi_test(NAME node.task-alternate.topo2.np4 TARGET test_task_alternate RANKS 4
                ENV "${NODE_TOPO2}" STRATA_MAP=core STRATA_CHUNK=4K)
set_tests_properties(node.task-alternate.topo2.np4 PROPERTIES TIMEOUT 120)
# Across (virtual) nodes: the compositions made resumable (Bcast, Barrier),
# the leaders' network part and the node part stepped in turn; at 6 ranks on
# 2 nodes, 3 ranks a node: Reduce/Allreduce with a second leader.
foreach(spec "nodes2.np4|2|block" "nodes3.np5|3|cyclic" "nodes2.np6|2|block")
  string(REPLACE "|" ";" parts "${spec}")
  list(GET parts 0 name)
  list(GET parts 1 nodes)
  list(GET parts 2 layout)
  string(REGEX REPLACE ".*np" "" ranks "${name}")
  strata_mpi_test(NAME net.task-alternate.${name} TARGET test_task_alternate RANKS ${ranks}
                  ENV STRATA_VIRTUAL_NODES=${nodes} STRATA_VIRTUAL_LAYOUT=${layout})
  set_tests_properties(net.task-alternate.${name} PROPERTIES TIMEOUT 120)
endforeach()
