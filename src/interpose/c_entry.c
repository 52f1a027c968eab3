/* The C entry points (int counts) of the collectives strata intercepts.
 * Each goes to strata_call_* (device_calls.c; device_vcalls.c for the eight
 * newer ones), which stages device buffers and hands the call to
 * strata_host_* (collectives.c, vcollectives.c, rs_scan_calls.c).  A file of
 * their own, so that those files do not call the staging files, which call
 * them. */
#include <mpi.h>

#include "interpose/collectives.h"
#include "interpose/rs_scan_calls.h"
#include "util/hot.h"

STRATA_HOT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return strata_call_bcast(buffer, count, datatype, root, comm, 0);
}

STRATA_HOT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, int root, MPI_Comm comm)
{
    return strata_call_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, 0);
}

STRATA_HOT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm)
{
    return strata_call_allreduce(sendbuf, recvbuf, count, datatype, op, comm, 0);
}

STRATA_HOT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, 0);
}

STRATA_HOT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, 0);
}

STRATA_HOT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, 0);
}

STRATA_HOT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, 0);
}

/* ---- The eight newer collectives ---- */

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return strata_call_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 0);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return strata_call_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, 0);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)
{
    return strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, 0);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
    return strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, 0);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    return strata_call_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, root, comm, 0);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    return strata_call_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, 0);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    return strata_call_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, 0);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, 0);
}
