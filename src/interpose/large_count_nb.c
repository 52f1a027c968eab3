/* The MPI-4 large-count nonblocking collectives (MPI_Ibcast_c, ...), where
 * the host MPI defines them (STRATA_HAVE_LARGE_COUNT: MPICH 4.0 has them,
 * Open MPI 4.1 does not).  mpi4py 4 calls these when its MPI has them.
 *
 * Each takes its C form's path (nb_entry.c, nb_entry_more.c): the blocking
 * form's decision (strata_call_<coll> with large 1, so MPI_Count counts and
 * the v-collectives' MPI_Count / MPI_Aint arrays are read as such), recorded
 * as an operation, counted under the C name (STRATA_STATS: MPI_Ibcast); a
 * call strata leaves goes to the host's nonblocking _c form unchanged.  A
 * count beyond int takes that path too, as in large_count.c: another rank
 * of the same call may pass its count within int, and the ranks must agree
 * on the route.  (MPI_Ibarrier has no count, hence no _c form.) */
#include <mpi.h>

#include "interpose/collectives.h"
#include "interpose/nonblocking.h"
#include "interpose/rs_scan_calls.h"

#ifdef STRATA_HAVE_LARGE_COUNT

int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_BCAST, strata_call_bcast(buffer, count, datatype, root, comm, 1),
                PMPI_Ibcast_c(buffer, count, datatype, root, comm, request));
}

int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE,
                strata_call_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, 1),
                PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLREDUCE,
                strata_call_allreduce(sendbuf, recvbuf, count, datatype, op, comm, 1),
                PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_GATHER,
                strata_call_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   root, comm, 1),
                PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, request));
}

int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCATTER,
                strata_call_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm, 1),
                PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                comm, request));
}

int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLGATHER,
                strata_call_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm, 1),
                PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, request));
}

int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLTOALL,
                strata_call_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, 1),
                PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, request));
}

int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE_SCATTER_BLOCK,
                strata_call_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm,
                                           1),
                PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                             request));
}

int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE_SCATTER,
                strata_call_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                                           1),
                PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                       request));
}

int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCAN,
                strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, 1),
                PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_EXSCAN,
                strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, 1),
                PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_GATHERV,
                strata_call_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, root, comm, 1),
                PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, root, comm, request));
}

int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCATTERV,
                strata_call_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                     recvtype, root, comm, 1),
                PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                 recvtype, root, comm, request));
}

int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLGATHERV,
                strata_call_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm, 1),
                PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, comm, request));
}

int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLTOALLV,
                strata_call_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm, 1),
                PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm, request));
}

#endif
