/* The nonblocking collectives' entry points (MPI_Ibcast, ...): the blocking
 * forms' decisions (strata_call_<coll>), recorded as an operation
 * (nonblocking.h) instead of run; the host MPI's nonblocking form for a call
 * strata leaves. */
#include <mpi.h>

#include "interpose/collectives.h"
#include "interpose/nonblocking.h"

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_BCAST, strata_call_bcast(buffer, count, datatype, root, comm, 0),
                PMPI_Ibcast(buffer, count, datatype, root, comm, request));
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE,
                strata_call_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, 0),
                PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLREDUCE,
                strata_call_allreduce(sendbuf, recvbuf, count, datatype, op, comm, 0),
                PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_GATHER,
                strata_call_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   root, comm, 0),
                PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm, request));
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCATTER,
                strata_call_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm, 0),
                PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, request));
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLGATHER,
                strata_call_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm, 0),
                PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                request));
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLTOALL,
                strata_call_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, 0),
                PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                               request));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_BARRIER, strata_call_barrier(comm), PMPI_Ibarrier(comm, request));
}
