/* The MPI-4 large-count collectives (MPI_Bcast_c, ...), where the host MPI
 * defines them (STRATA_HAVE_LARGE_COUNT, found by CMake with a compile test:
 * MPICH 4.0 has them, Open MPI 4.1 does not).  mpi4py 4 calls these and
 * nothing else when its MPI has them.
 *
 * Each takes the same path as its C function (collectives.h), so it is
 * served, counted (STRATA_STATS, under the C name: MPI_Bcast) and reported
 * (STRATA_VERBOSE) like it; a call strata leaves goes to the host's _c
 * function unchanged.  A count beyond int takes that path too rather than
 * going straight to the host: another rank of the same call may pass its
 * count within int (a larger datatype, or the int function), and the ranks
 * must agree on the route. */
#include <mpi.h>
#include <stddef.h>

#include "interpose/collectives.h"
#include "interpose/rs_scan_calls.h"

#ifdef STRATA_HAVE_LARGE_COUNT

int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return strata_call_bcast(buffer, count, datatype, root, comm, 1);
}

int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm)
{
    return strata_call_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, 1);
}

int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
    return strata_call_allreduce(sendbuf, recvbuf, count, datatype, op, comm, 1);
}

int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, 1);
}

int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return strata_call_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, 1);
}

int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, 1);
}

int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, 1);
}

int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return strata_call_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, 1);
}

int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return strata_call_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, 1);
}

int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    return strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, 1);
}

int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm)
{
    return strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, 1);
}

#endif
