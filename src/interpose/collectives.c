/* The collective entry points strata defines in place of the host MPI's.
 * Each finds (or creates) the communicator's context, asks the router, and
 * either runs strata's algorithm or calls the PMPI_ function unchanged, so
 * the host MPI still checks arguments and reports errors as it always does.
 *
 * Every per-call check uses only what every rank passes identically: the
 * root, the op and datatype of a reduction (the standard requires them to
 * match), and the byte count of the type signature; never whether a rank's
 * own datatype happens to be contiguous. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/ops.h"
#include "context/context.h"
#include "interpose/route.h"
#include "util/log.h"
#include "util/stats.h"

/* The context if strata serves this collective on comm, else NULL (and the
 * hand-off is reported). */
static struct strata_ctx *served_ctx(MPI_Comm comm, enum strata_coll coll)
{
    struct strata_ctx *ctx = strata_ctx_get(comm);
    const char *refusal = strata_route_refusal(ctx, coll);
    if (!refusal) {
        if (ctx->plane->stats) strata_stats_call(coll, 1);
        return ctx;
    }
    strata_route_to_host(ctx, coll, refusal);
    if (strata_stats_enabled()) strata_stats_call(coll, 0);
    return NULL;
}

/* A call on a served communicator that strata leaves after all. */
static struct strata_ctx *refuse(struct strata_ctx *ctx, enum strata_coll coll, const char *why)
{
    strata_route_to_host(ctx, coll, why);
    if (ctx->plane->stats) {
        strata_stats_call(coll, 0);
        strata_stats_call_unserve(coll);
    }
    return NULL;
}

/* Bytes of the type signature of count elements, or -1 if strata leaves the
 * arguments to the host MPI to judge. */
static long long signature_bytes(int count, MPI_Datatype type)
{
    int size;
    if (count < 0 || type == MPI_DATATYPE_NULL) return -1;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return -1;
    return (long long)count * size;
}

/* Whether type lists its bytes in memory order: a predefined type, or a
 * contiguous, duplicated or resized one made of such.  A hole-free layout can
 * still list its elements out of order (an indexed type with descending
 * displacements); its raw bytes are not its type signature's stream. */
static int in_memory_order(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return 1;
    if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP &&
         combiner != MPI_COMBINER_RESIZED) || ni > 1 || na > 2 || nd != 1)
        return 0;
    int ints[1];
    MPI_Aint addrs[2];
    MPI_Datatype inner;
    PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &inner);
    int ok = in_memory_order(inner);
    PMPI_Type_get_envelope(inner, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner);
    return ok;
}

/* Where count elements of type at buf lie as one run of bytes, if they do. */
static void *contiguous_run(void *buf, int count, MPI_Datatype type, size_t bytes)
{
    if (!in_memory_order(type)) return NULL;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if ((size_t)true_extent != bytes / (size_t)(count ? count : 1)) return NULL;
    if (count > 1 && (size_t)extent != bytes / (size_t)count) return NULL;
    return (char *)buf + true_lb;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_BCAST);
    long long bytes = ctx ? signature_bytes(count, datatype) : -1;
    if (ctx && (bytes < 0 || root < 0 || root >= ctx->size))
        ctx = refuse(ctx, STRATA_COLL_BCAST, "arguments left to the host MPI to check");
    if (!ctx) return PMPI_Bcast(buffer, count, datatype, root, comm);
    strata_route_served(ctx, STRATA_COLL_BCAST, strata_route_path(ctx->plane, (size_t)bytes),
                        (size_t)bytes);
    if (bytes == 0) return MPI_SUCCESS;

    void *run = contiguous_run(buffer, count, datatype, (size_t)bytes);
    if (run) return strata_bcast_bytes(ctx->plane, run, (size_t)bytes, root);
    /* A layout with holes is packed on this rank alone: the others never
     * need to know, since only the byte count decides the path. */
    void *packed = malloc((size_t)bytes);
    if (!packed) {
        strata_error("out of memory packing a %lld-byte broadcast", bytes);
        PMPI_Abort(comm, 1);
    }
    int position = 0;
    if (ctx->rank == root) {
        PMPI_Pack(buffer, count, datatype, packed, (int)bytes, &position, comm);
    }
    int rc = strata_bcast_bytes(ctx->plane, packed, (size_t)bytes, root);
    if (ctx->rank != root) PMPI_Unpack(packed, (int)bytes, &position, buffer, count, datatype, comm);
    free(packed);
    return rc;
}

/* Fills a reduction's arguments, or returns why strata leaves the call. */
static const char *reduce_args(struct strata_reduce_args *a, const void *sendbuf, void *recvbuf,
                               int count, MPI_Datatype type, MPI_Op op)
{
    if (count < 0 || type == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return "arguments left to the host MPI to check";
    a->fn = strata_reduce_kernel(op, type);
    if (!a->fn) return "a user-defined op, or a datatype strata has no kernel for";
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    a->sendbuf = sendbuf == MPI_IN_PLACE ? NULL : sendbuf;
    a->recvbuf = recvbuf;
    a->count = (size_t)count;
    a->extent = (size_t)extent;
    a->true_extent = (size_t)true_extent;
    return NULL;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, int root, MPI_Comm comm)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_REDUCE);
    struct strata_reduce_args a;
    if (ctx) {
        const char *why = reduce_args(&a, sendbuf, recvbuf, count, datatype, op);
        if (!why && (root < 0 || root >= ctx->size)) why = "arguments left to the host MPI to check";
        if (why) ctx = refuse(ctx, STRATA_COLL_REDUCE, why);
    }
    if (!ctx) return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    a.root = root;
    strata_route_served(ctx, STRATA_COLL_REDUCE, strata_route_path(ctx->plane, a.count * a.extent),
                        a.count * a.extent);
    return strata_reduce(ctx->plane, &a);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_ALLREDUCE);
    struct strata_reduce_args a;
    if (ctx) {
        const char *why = reduce_args(&a, sendbuf, recvbuf, count, datatype, op);
        if (why) ctx = refuse(ctx, STRATA_COLL_ALLREDUCE, why);
    }
    if (!ctx) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    a.root = -1;
    strata_route_served(ctx, STRATA_COLL_ALLREDUCE,
                        strata_route_path(ctx->plane, a.count * a.extent), a.count * a.extent);
    return strata_reduce(ctx->plane, &a);
}

int MPI_Barrier(MPI_Comm comm)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_BARRIER);
    if (!ctx) return PMPI_Barrier(comm);
    strata_route_served(ctx, STRATA_COLL_BARRIER, "flag waves", 0);
    return strata_barrier(ctx->plane);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    served_ctx(comm, STRATA_COLL_ALLGATHER);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    served_ctx(comm, STRATA_COLL_GATHER);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    served_ctx(comm, STRATA_COLL_SCATTER);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    served_ctx(comm, STRATA_COLL_ALLTOALL);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
