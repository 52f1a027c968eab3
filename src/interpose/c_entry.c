/* The C entry points (int counts) of the collectives strata intercepts.
 * Each goes to strata_call_* (device_calls.c), which stages device buffers
 * and hands the call to strata_host_* (collectives.c).  A file of their own,
 * so that collectives.c does not call device_calls.c, which calls it. */
#include <mpi.h>

#include "interpose/collectives.h"
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

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, 0);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, 0);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, 0);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, 0);
}
