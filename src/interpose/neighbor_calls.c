/* The entry points of MPI_Alltoallw and the five neighbourhood collectives
 * (issue 33), in their three forms: the blocking form's decisions
 * (wcollectives.c); the nonblocking form records them as an operation
 * (nonblocking.h), the persistent form as a request (wpersist.c); the host
 * MPI's own form for a call strata leaves. */
#include <mpi.h>

#include "request/nonblocking.h"
#include "serve/wcollectives.h"

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return strata_call_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm);
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return strata_call_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm)
{
    return strata_call_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                          recvcounts, rdispls, recvtypes, comm);
}

/* ---- Nonblocking */

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_ALLTOALLW,
                    strata_call_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                          recvcounts, rdispls, recvtypes, comm),
                    PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                    rdispls, recvtypes, comm, request));
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_NEIGHBOR_ALLGATHER,
                    strata_call_neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                   recvcount, recvtype, comm),
                    PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm, request));
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_NEIGHBOR_ALLGATHERV,
                    strata_call_neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcounts, displs, recvtype, comm),
                    PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                              displs, recvtype, comm, request));
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_NEIGHBOR_ALLTOALL,
                    strata_call_neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                  recvcount, recvtype, comm),
                    PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm, request));
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_NEIGHBOR_ALLTOALLV,
                    strata_call_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype,
                                                   recvbuf, recvcounts, rdispls, recvtype, comm),
                    PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                             recvcounts, rdispls, recvtype, comm, request));
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    STRATA_NB_ENTRY(STRATA_COLL_NEIGHBOR_ALLTOALLW,
                    strata_call_neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes,
                                                   recvbuf, recvcounts, rdispls, recvtypes, comm),
                    PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                             recvcounts, rdispls, recvtypes, comm, request));
}

/* ---- Persistent (MPI-4; Open MPI 4.1: MPIX_, in mpi-ext.h) */

#if defined(STRATA_HAVE_PERSISTENT_COLL) || defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#ifdef STRATA_HAVE_PERSISTENT_COLL
#define INIT(name) MPI_##name##_init
#define HOST_INIT(name) PMPI_##name##_init
#else
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#define HOST_INIT(name) PMPIX_##name##_init
#endif

/* The request (wpersist.c), or the host's own _init where strata leaves it. */
#define WPERSIST(host_init, ...)                                                             \
    do {                                                                                   \
        struct strata_wpersist_args a = {__VA_ARGS__};                                     \
        int host, rc = strata_wpersist_init(&a, request, &host);                           \
        return host ? host_init : rc;                                                      \
    } while (0)

int INIT(Alltoallw)(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    WPERSIST(HOST_INIT(Alltoallw)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                  rdispls, recvtypes, comm, info, request),
             .coll = STRATA_COLL_ALLTOALLW, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scounts = sendcounts, .sdispls = sdispls, .stypes = sendtypes,
             .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes,
             .stype = MPI_DATATYPE_NULL, .rtype = MPI_DATATYPE_NULL, .comm = comm);
}

int INIT(Neighbor_allgather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    WPERSIST(HOST_INIT(Neighbor_allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, info, request),
             .coll = STRATA_COLL_NEIGHBOR_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scount = sendcount, .stype = sendtype, .rcount = recvcount, .rtype = recvtype,
             .comm = comm);
}

int INIT(Neighbor_allgatherv)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    WPERSIST(HOST_INIT(Neighbor_allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                            displs, recvtype, comm, info, request),
             .coll = STRATA_COLL_NEIGHBOR_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scount = sendcount, .stype = sendtype, .rcounts = recvcounts, .rdispls = displs,
             .rtype = recvtype, .comm = comm);
}

int INIT(Neighbor_alltoall)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, MPI_Request *request)
{
    WPERSIST(HOST_INIT(Neighbor_alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, info, request),
             .coll = STRATA_COLL_NEIGHBOR_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scount = sendcount, .stype = sendtype, .rcount = recvcount, .rtype = recvtype,
             .comm = comm);
}

int INIT(Neighbor_alltoallv)(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    WPERSIST(HOST_INIT(Neighbor_alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype, comm, info, request),
             .coll = STRATA_COLL_NEIGHBOR_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
             .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype, .comm = comm);
}

int INIT(Neighbor_alltoallw)(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf,
                             const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    WPERSIST(HOST_INIT(Neighbor_alltoallw)(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes, comm, info, request),
             .coll = STRATA_COLL_NEIGHBOR_ALLTOALLW, .sendbuf = sendbuf, .recvbuf = recvbuf,
             .scounts = sendcounts, .sdispls_a = sdispls, .stypes = sendtypes,
             .rcounts = recvcounts, .rdispls_a = rdispls, .rtypes = recvtypes,
             .stype = MPI_DATATYPE_NULL, .rtype = MPI_DATATYPE_NULL, .comm = comm);
}
#endif
