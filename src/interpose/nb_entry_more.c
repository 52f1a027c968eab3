/* The nonblocking entry points of the newer collectives (MPI_Ireduce_scatter_block,
 * ..., MPI_Ialltoallv), as nb_entry.c for the first eight: the blocking
 * form's decisions (rs_scan_calls.c, vcollectives.c), recorded as an
 * operation (nonblocking.h) instead of run; the host MPI's nonblocking form
 * for a call strata leaves. */
#include <mpi.h>

#include "interpose/collectives.h"
#include "interpose/nonblocking.h"
#include "interpose/rs_scan_calls.h"

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE_SCATTER_BLOCK,
                strata_call_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm,
                                           0),
                PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                           request));
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_REDUCE_SCATTER,
                strata_call_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                                           0),
                PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCAN,
                strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, 0),
                PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_EXSCAN,
                strata_call_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, 0),
                PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request));
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_GATHERV,
                strata_call_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, root, comm, 0),
                PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root, comm, request));
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_SCATTERV,
                strata_call_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                     recvtype, root, comm, 0),
                PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root, comm, request));
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLGATHERV,
                strata_call_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm, 0),
                PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm, request));
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLTOALLV,
                strata_call_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm, 0),
                PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm, request));
}
