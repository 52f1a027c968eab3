/* The collective entry points strata defines in place of the host MPI's.
 * Each finds (or creates) the communicator's context, asks the router, and
 * either runs strata's algorithm or calls the PMPI_ function unchanged, so
 * the host MPI still checks arguments and reports errors as it always does. */
#include <mpi.h>

#include "context/context.h"
#include "interpose/route.h"

/* Returns 1 if strata serves the call; otherwise reports the hand-off. */
static int strata_serves(MPI_Comm comm, enum strata_coll coll)
{
    struct strata_ctx *ctx = strata_ctx_get(comm);
    const char *refusal = strata_route_refusal(ctx, coll);
    if (!refusal) return 1;
    strata_route_to_host(ctx, coll, refusal);
    return 0;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_BCAST);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, int root, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_REDUCE);
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_ALLREDUCE);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_ALLGATHER);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_GATHER);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_SCATTER);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_ALLTOALL);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    strata_serves(comm, STRATA_COLL_BARRIER);
    return PMPI_Barrier(comm);
}
