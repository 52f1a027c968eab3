/* The MPI-4 large-count persistent collectives (MPI_Bcast_init_c, ...),
 * where the host MPI defines them (STRATA_HAVE_LARGE_COUNT and
 * STRATA_HAVE_PERSISTENT_COLL: MPICH 4.0 has them; Open MPI 4.1 has neither
 * these nor MPIX_..._init_c).
 *
 * Each makes the same request as its C form (persistent.c), decided at
 * _init as that form decides and counted under the C name (STRATA_STATS:
 * MPI_Bcast_init); only the arguments are kept here, with MPI_Count counts
 * and the v-collectives' MPI_Count / MPI_Aint arrays, which every start
 * hands to strata_call_<coll> with large 1 (or, for a request strata left
 * to the host at _init, to the host's nonblocking _c form).  A count beyond
 * int takes that path too, as in large_count.c: the ranks must agree on the
 * route.  (MPI_Barrier_init has no count, hence no _c form.) */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/collectives.h"
#include "interpose/persistent.h"
#include "interpose/rs_scan_calls.h"
#include "util/colls.h"

#if defined(STRATA_HAVE_LARGE_COUNT) && defined(STRATA_HAVE_PERSISTENT_COLL)

/* One request's arguments: its arrays and derived datatypes are copies it
 * owns (own_args), as the int forms' are (persistent.c), so that the
 * application may free its own after _init.  A one-block side's count is
 * scount or rcount; Reduce_scatter's counts are rcounts. */
struct large_args {
    enum strata_coll coll;
    const void *sendbuf;
    void *recvbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    const MPI_Count *scounts, *rcounts;
    const MPI_Aint *sdispls, *rdispls;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    int owned_stype, owned_rtype; /* duplicated at _init: freed with the request */
    /* the copied arrays follow the struct, in one block with it */
};

/* persistent.c's release of a request's arguments. */
static void release_args(void *args)
{
    struct large_args *a = args;
    if (!a) return;
    if (a->owned_stype) PMPI_Type_free(&a->stype);
    if (a->owned_rtype) PMPI_Type_free(&a->rtype);
    free(a);
}

/* A copy of the arrays *ap points to, after the struct in a new block that
 * replaces *ap (the caller's a stays its own). */
static int own_arrays(struct large_args **ap, unsigned which, int len)
{
    struct large_args *a = *ap;
    const void **arrays[4] = {(const void **)&a->scounts, (const void **)&a->sdispls,
                              (const void **)&a->rcounts, (const void **)&a->rdispls};
    const size_t elem[4] = {sizeof(MPI_Count), sizeof(MPI_Aint), sizeof(MPI_Count),
                            sizeof(MPI_Aint)};
    size_t bytes = sizeof *a;
    for (int i = 0; i < 4; i++)
        if ((which >> i & 1u) && *arrays[i]) bytes += elem[i] * (size_t)len;
    struct large_args *owned = malloc(bytes);
    if (!owned) return MPI_ERR_NO_MEM;
    *owned = *a;
    const void **owned_arrays[4] = {
        (const void **)&owned->scounts, (const void **)&owned->sdispls,
        (const void **)&owned->rcounts, (const void **)&owned->rdispls};
    char *at = (char *)(owned + 1);
    for (int i = 0; i < 4; i++) {
        if (!(which >> i & 1u) || !*arrays[i]) continue;
        memcpy(at, *arrays[i], elem[i] * (size_t)len);
        *owned_arrays[i] = at;
        at += elem[i] * (size_t)len;
    }
    *ap = owned;
    return MPI_SUCCESS;
}

/* The request's own arguments: *ap replaced by a block owning copies of the
 * arrays and derived datatypes this rank reads; the caller frees its old
 * *ap.  An error: nothing is owned, *ap unchanged. */
static int own_args(struct large_args **ap)
{
    struct large_args *a = *ap;
    struct strata_persist_read r =
        strata_persist_args_read(a->coll, a->comm, a->root, a->sendbuf, a->recvbuf);
    int rc = own_arrays(ap, r.arrays, r.len);
    if (rc != MPI_SUCCESS) return rc;
    struct large_args *owned = *ap;
    if (r.stype) rc = strata_persist_own_type(&owned->stype, &owned->owned_stype);
    if (rc == MPI_SUCCESS && r.rtype)
        rc = strata_persist_own_type(&owned->rtype, &owned->owned_rtype);
    if (rc != MPI_SUCCESS) {
        release_args(owned);
        *ap = a;
    }
    return rc;
}

/* strata's decision for one start (the blocking form's, large 1). */
static int decide(const void *args)
{
    const struct large_args *a = args;
    switch (a->coll) {
    case STRATA_COLL_BCAST:
        return strata_call_bcast(a->recvbuf, a->rcount, a->rtype, a->root, a->comm, 1);
    case STRATA_COLL_REDUCE:
        return strata_call_reduce(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->root,
                                  a->comm, 1);
    case STRATA_COLL_ALLREDUCE:
        return strata_call_allreduce(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->comm,
                                     1);
    case STRATA_COLL_GATHER:
        return strata_call_gather(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount,
                                  a->rtype, a->root, a->comm, 1);
    case STRATA_COLL_SCATTER:
        return strata_call_scatter(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount,
                                   a->rtype, a->root, a->comm, 1);
    case STRATA_COLL_ALLGATHER:
        return strata_call_allgather(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount,
                                     a->rtype, a->comm, 1);
    case STRATA_COLL_ALLTOALL:
        return strata_call_alltoall(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount,
                                    a->rtype, a->comm, 1);
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        return strata_call_reduce_scatter(a->sendbuf, a->recvbuf, NULL, a->rcount, a->rtype,
                                          a->op, a->comm, 1);
    case STRATA_COLL_REDUCE_SCATTER:
        return strata_call_reduce_scatter(a->sendbuf, a->recvbuf, a->rcounts, 0, a->rtype, a->op,
                                          a->comm, 1);
    case STRATA_COLL_SCAN:
    case STRATA_COLL_EXSCAN:
        return strata_call_scan(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->comm,
                                a->coll == STRATA_COLL_EXSCAN, 1);
    case STRATA_COLL_GATHERV:
        return strata_call_gatherv(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts,
                                   a->rdispls, a->rtype, a->root, a->comm, 1);
    case STRATA_COLL_SCATTERV:
        return strata_call_scatterv(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf,
                                    a->rcount, a->rtype, a->root, a->comm, 1);
    case STRATA_COLL_ALLGATHERV:
        return strata_call_allgatherv(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts,
                                      a->rdispls, a->rtype, a->comm, 1);
    case STRATA_COLL_ALLTOALLV:
        return strata_call_alltoallv(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf,
                                     a->rcounts, a->rdispls, a->rtype, a->comm, 1);
    default: return MPI_ERR_INTERN;
    }
}

/* The host MPI's nonblocking _c form of a start strata leaves. */
static int host(const void *args, MPI_Request *r)
{
    const struct large_args *a = args;
    switch (a->coll) {
    case STRATA_COLL_BCAST:
        return PMPI_Ibcast_c(a->recvbuf, a->rcount, a->rtype, a->root, a->comm, r);
    case STRATA_COLL_REDUCE:
        return PMPI_Ireduce_c(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->root,
                              a->comm, r);
    case STRATA_COLL_ALLREDUCE:
        return PMPI_Iallreduce_c(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->comm, r);
    case STRATA_COLL_GATHER:
        return PMPI_Igather_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                              a->root, a->comm, r);
    case STRATA_COLL_SCATTER:
        return PMPI_Iscatter_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                               a->root, a->comm, r);
    case STRATA_COLL_ALLGATHER:
        return PMPI_Iallgather_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount,
                                 a->rtype, a->comm, r);
    case STRATA_COLL_ALLTOALL:
        return PMPI_Ialltoall_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcount, a->rtype,
                                a->comm, r);
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        return PMPI_Ireduce_scatter_block_c(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op,
                                            a->comm, r);
    case STRATA_COLL_REDUCE_SCATTER:
        return PMPI_Ireduce_scatter_c(a->sendbuf, a->recvbuf, a->rcounts, a->rtype, a->op,
                                      a->comm, r);
    case STRATA_COLL_SCAN:
        return PMPI_Iscan_c(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->comm, r);
    case STRATA_COLL_EXSCAN:
        return PMPI_Iexscan_c(a->sendbuf, a->recvbuf, a->rcount, a->rtype, a->op, a->comm, r);
    case STRATA_COLL_GATHERV:
        return PMPI_Igatherv_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts,
                               a->rdispls, a->rtype, a->root, a->comm, r);
    case STRATA_COLL_SCATTERV:
        return PMPI_Iscatterv_c(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf,
                                a->rcount, a->rtype, a->root, a->comm, r);
    case STRATA_COLL_ALLGATHERV:
        return PMPI_Iallgatherv_c(a->sendbuf, a->scount, a->stype, a->recvbuf, a->rcounts,
                                  a->rdispls, a->rtype, a->comm, r);
    case STRATA_COLL_ALLTOALLV:
        return PMPI_Ialltoallv_c(a->sendbuf, a->scounts, a->sdispls, a->stype, a->recvbuf,
                                 a->rcounts, a->rdispls, a->rtype, a->comm, r);
    default: return MPI_ERR_INTERN;
    }
}

/* The request, or the host's _init_c (host_call) where persistent.c says
 * the host serves it.  A copy of the arguments strata cannot allocate also
 * leaves the call to the host, as persistent.c does with its own. */
#define PERSIST_C(host_call, ...)                                                            \
    do {                                                                                   \
        struct large_args given = {__VA_ARGS__}, *a = &given;                              \
        if (own_args(&a) != MPI_SUCCESS) return host_call;                                 \
        struct strata_persist_ext ext = {decide, host, a, release_args};                   \
        int to_host, rc = strata_persist_init_ext(a->coll, comm, &ext, request, &to_host); \
        if (!to_host) return rc;                                                           \
        release_args(a);                                                                   \
        return host_call;                                                                  \
    } while (0)

int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request),
              .coll = STRATA_COLL_BCAST, .recvbuf = buffer, .rcount = count, .rtype = datatype,
              .root = root, .comm = comm);
}

int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info,
                                 request),
              .coll = STRATA_COLL_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
              .rcount = count, .rtype = datatype, .op = op, .root = root, .comm = comm);
}

int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    PERSIST_C(PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request),
              .coll = STRATA_COLL_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
              .rcount = count, .rtype = datatype, .op = op, .root = -1, .comm = comm);
}

int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Gather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 root, comm, info, request),
              .coll = STRATA_COLL_GATHER, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
              .root = root, .comm = comm);
}

int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Scatter_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm, info, request),
              .coll = STRATA_COLL_SCATTER, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
              .root = root, .comm = comm);
}

int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Allgather_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, request),
              .coll = STRATA_COLL_ALLGATHER, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
              .root = -1, .comm = comm);
}

int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm, info, request),
              .coll = STRATA_COLL_ALLTOALL, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcount = recvcount, .rtype = recvtype,
              .root = -1, .comm = comm);
}

int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                               info, request),
              .coll = STRATA_COLL_REDUCE_SCATTER_BLOCK, .sendbuf = sendbuf, .recvbuf = recvbuf,
              .rcount = recvcount, .rtype = datatype, .op = op, .root = -1, .comm = comm);
}

int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    PERSIST_C(PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                         request),
              .coll = STRATA_COLL_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
              .rcounts = recvcounts, .rtype = datatype, .op = op, .root = -1, .comm = comm);
}

int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request),
              .coll = STRATA_COLL_SCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .rcount = count,
              .rtype = datatype, .op = op, .root = -1, .comm = comm);
}

int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request),
              .coll = STRATA_COLL_EXSCAN, .sendbuf = sendbuf, .recvbuf = recvbuf,
              .rcount = count, .rtype = datatype, .op = op, .root = -1, .comm = comm);
}

int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    PERSIST_C(PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, root, comm, info, request),
              .coll = STRATA_COLL_GATHERV, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
              .rtype = recvtype, .root = root, .comm = comm);
}

int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    PERSIST_C(PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                   recvtype, root, comm, info, request),
              .coll = STRATA_COLL_SCATTERV, .sendbuf = sendbuf, .scounts = sendcounts,
              .sdispls = displs, .stype = sendtype, .recvbuf = recvbuf, .rcount = recvcount,
              .rtype = recvtype, .root = root, .comm = comm);
}

int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    PERSIST_C(PMPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                     recvtype, comm, info, request),
              .coll = STRATA_COLL_ALLGATHERV, .sendbuf = sendbuf, .scount = sendcount,
              .stype = sendtype, .recvbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
              .rtype = recvtype, .root = -1, .comm = comm);
}

int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    PERSIST_C(PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm, info, request),
              .coll = STRATA_COLL_ALLTOALLV, .sendbuf = sendbuf, .scounts = sendcounts,
              .sdispls = sdispls, .stype = sendtype, .recvbuf = recvbuf, .rcounts = recvcounts,
              .rdispls = rdispls, .rtype = recvtype, .root = -1, .comm = comm);
}

#endif
