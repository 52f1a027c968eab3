# Ranks as separate hosts on this one machine: each host a network namespace
# (and a UTS namespace: its own host name), the hosts joined by veth links
# to a bridge, the host MPI's own launcher starting them through
# tests/scripts/netns-agent.sh and its TCP transport between them.  strata
# must see one node per host, and test_net_colls (tests/net.cmake) must pass
# for MPI_Bcast, MPI_Allreduce and MPI_Allgather with the across-nodes
# traffic crossing a real network stack: Open MPI on 2 hosts of 2 ranks and
# on 3 hosts of 2, 1 and 2; MPICH (never yields) on hosts of 1 and 2 ranks.
# Then test_vcolls (tests/vcolls.cmake) on the first layout: the four
# v-collectives served across the hosts, results as the host MPI's.
# Needs root and network namespaces, veth links and bridges; skipped (77)
# otherwise.  Each MPI run is killed after 60 s (2-4 s here), so the script
# always gets to remove its namespaces before ctest's timeout.
# The script starts Debian's launchers (mpirun.openmpi, mpiexec.hydra): only
# for builds against Debian's MPIs.
if(STRATA_MPI_DEBIAN)
  add_test(NAME netns.hosts
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/netns_hosts.sh
                   --check ${CMAKE_BINARY_DIR} --mpi ${STRATA_MPI})
  set_tests_properties(netns.hosts PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
else()
  message(STATUS "Not Debian's ${STRATA_MPI}: netns.hosts (Debian's launchers) is left out")
endif()
