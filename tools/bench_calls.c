/* strata-bench's blocking calls of either implementation, built from the
 * very same arguments: strata's (MPI_X, libstrata's entry point, which
 * serves the call or hands it to the host MPI) or the host MPI's own
 * (PMPI_X).  Its own file so that the table's timing (bench_timing.c) and
 * the nonblocking and persistent tables (bench_overlap.c,
 * bench_persistent.c) can all call them without calling each other. */
#include <stdlib.h>

#include "bench.h"

/* The collective calls of one implementation, so that strata's and the host
 * MPI's calls are built from the very same arguments. */
struct coll_api {
    int (*bcast)(void *, int, MPI_Datatype, int, MPI_Comm);
    int (*reduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*gather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*scatter)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*alltoall)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*barrier)(MPI_Comm);
    int (*reduce_scatter_block)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*reduce_scatter)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*scan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*exscan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*gatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                   MPI_Datatype, int, MPI_Comm);
    int (*scatterv)(const void *, const int *, const int *, MPI_Datatype, void *, int,
                    MPI_Datatype, int, MPI_Comm);
    int (*allgatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                      MPI_Datatype, MPI_Comm);
    int (*alltoallv)(const void *, const int *, const int *, MPI_Datatype, void *, const int *,
                     const int *, MPI_Datatype, MPI_Comm);
    int (*neighbor_alltoall)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                             MPI_Comm);
    int (*alltoallw)(const void *, const int *, const int *, const MPI_Datatype *, void *,
                     const int *, const int *, const MPI_Datatype *, MPI_Comm);
    int (*neighbor_allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                              MPI_Comm);
    int (*neighbor_allgatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                               MPI_Datatype, MPI_Comm);
    int (*neighbor_alltoallv)(const void *, const int *, const int *, MPI_Datatype, void *,
                              const int *, const int *, MPI_Datatype, MPI_Comm);
    int (*neighbor_alltoallw)(const void *, const int *, const MPI_Aint *, const MPI_Datatype *,
                              void *, const int *, const MPI_Aint *, const MPI_Datatype *,
                              MPI_Comm);
};

static const struct coll_api native_api = {
    PMPI_Bcast, PMPI_Reduce, PMPI_Allreduce, PMPI_Allgather,
    PMPI_Gather, PMPI_Scatter, PMPI_Alltoall, PMPI_Barrier,
    PMPI_Reduce_scatter_block, PMPI_Reduce_scatter, PMPI_Scan, PMPI_Exscan,
    PMPI_Gatherv, PMPI_Scatterv, PMPI_Allgatherv, PMPI_Alltoallv,
    PMPI_Neighbor_alltoall, PMPI_Alltoallw, PMPI_Neighbor_allgather, PMPI_Neighbor_allgatherv,
    PMPI_Neighbor_alltoallv, PMPI_Neighbor_alltoallw,
};
static const struct coll_api strata_api = {
    MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather,
    MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Barrier,
    MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan, MPI_Exscan,
    MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv,
    MPI_Neighbor_alltoall, MPI_Alltoallw, MPI_Neighbor_allgather, MPI_Neighbor_allgatherv,
    MPI_Neighbor_alltoallv, MPI_Neighbor_alltoallw,
};

int bench_coll_supported(int coll)
{
    return coll >= 0 && coll < STRATA_NCOLLS;
}

/* ---- the w forms' and the halo's arrays ------------------------------- */

/* The arrays Alltoallw and the neighbourhood v and w forms take besides the
 * buffers, built before each call (bench_prepare_arrays), outside the timed
 * part: Alltoallw's in b (Alltoallv's layout, bench_v_layout, with byte
 * displacements and one datatype per rank); the halo's here, one block of
 * `count` per neighbour, packed. */
static struct {
    int counts[BENCH_HALO_BLOCKS], displs[BENCH_HALO_BLOCKS];
    MPI_Aint bytes[BENCH_HALO_BLOCKS];
    MPI_Datatype types[BENCH_HALO_BLOCKS];
} halo;

void bench_prepare_arrays(struct bench *b, const struct bench_row *r)
{
    int tsize = 1;
    PMPI_Type_size(r->type, &tsize);
    if (r->coll == STRATA_COLL_ALLTOALLW) {
        bench_v_layout(b, r);
        for (int j = 0; j < b->size; j++) {
            b->wbytes[j] = b->vdispls[j] * tsize;
            b->wtypes[j] = r->type;
        }
    }
    if (!strata_coll_is_neighbor(r->coll)) return;
    for (int j = 0; j < BENCH_HALO_BLOCKS; j++) {
        halo.counts[j] = r->count;
        halo.displs[j] = j * r->count;
        halo.bytes[j] = (MPI_Aint)j * r->count * tsize;
        halo.types[j] = r->type;
    }
}

/* ---- the calls -------------------------------------------------------- */

/* One collective through `api` with root b->root; bcast works in the send
 * buffer on every rank (the root's data, the others' destination).  Separate
 * send and receive buffers everywhere else: no MPI_IN_PLACE. */
static void call_collective(const struct coll_api *api, struct bench *b, const struct bench_row *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = r->count, root = b->root;
    MPI_Datatype t = r->type;
    switch (r->coll) {
    case STRATA_COLL_BCAST: api->bcast(b->send, n, t, root, w); break;
    case STRATA_COLL_REDUCE: api->reduce(b->send, b->recv, n, t, MPI_SUM, root, w); break;
    case STRATA_COLL_ALLREDUCE: api->allreduce(b->send, b->recv, n, t, MPI_SUM, w); break;
    case STRATA_COLL_ALLGATHER: api->allgather(b->send, n, t, b->recv, n, t, w); break;
    case STRATA_COLL_GATHER: api->gather(b->send, n, t, b->recv, n, t, root, w); break;
    case STRATA_COLL_SCATTER: api->scatter(b->send, n, t, b->recv, n, t, root, w); break;
    case STRATA_COLL_ALLTOALL: api->alltoall(b->send, n, t, b->recv, n, t, w); break;
    case STRATA_COLL_BARRIER: api->barrier(w); break;
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        api->reduce_scatter_block(b->send, b->recv, n, t, MPI_SUM, w);
        break;
    case STRATA_COLL_REDUCE_SCATTER: {
        /* Every rank's block the same: the counts array, built once. */
        static int *counts, ncounts, counted;
        if (ncounts < b->size) {
            free(counts);
            counts = malloc(sizeof *counts * (size_t)b->size);
            ncounts = counts ? b->size : 0;
            counted = -1;
        }
        if (!counts) break;
        if (counted != n)
            for (int q = 0; q < b->size; q++) counts[q] = n;
        counted = n;
        api->reduce_scatter(b->send, b->recv, counts, t, MPI_SUM, w);
        break;
    }
    case STRATA_COLL_SCAN: api->scan(b->send, b->recv, n, t, MPI_SUM, w); break;
    case STRATA_COLL_EXSCAN: api->exscan(b->send, b->recv, n, t, MPI_SUM, w); break;
    /* The v-collectives: block j has vcounts[j] bytes (--pattern), packed;
     * Alltoallv sends every rank the same layout it receives. */
    case STRATA_COLL_GATHERV:
        api->gatherv(b->send, b->vcounts[b->rank], t, b->recv, b->vcounts, b->vdispls, t, root, w);
        break;
    case STRATA_COLL_SCATTERV:
        api->scatterv(b->send, b->vcounts, b->vdispls, t, b->recv, b->vcounts[b->rank], t, root, w);
        break;
    case STRATA_COLL_ALLGATHERV:
        api->allgatherv(b->send, b->vcounts[b->rank], t, b->recv, b->vcounts, b->vdispls, t, w);
        break;
    case STRATA_COLL_ALLTOALLV:
        api->alltoallv(b->send, b->vcounts, b->vdispls, t, b->recv, b->vcounts, b->vdispls, t, w);
        break;
    /* A halo exchange: a block of `n` to each of the grid's neighbours. */
    case STRATA_COLL_NEIGHBOR_ALLTOALL: api->neighbor_alltoall(b->send, n, t, b->recv, n, t, b->halo); break;
    /* Alltoallv's layout, each block its datatype and byte displacement. */
    case STRATA_COLL_ALLTOALLW:
        api->alltoallw(b->send, b->vcounts, b->wbytes, b->wtypes, b->recv, b->vcounts, b->wbytes,
                       b->wtypes, w);
        break;
    /* The halo's other forms: one block of `n` from (and to) each neighbour. */
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
        api->neighbor_allgather(b->send, n, t, b->recv, n, t, b->halo);
        break;
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
        api->neighbor_allgatherv(b->send, n, t, b->recv, halo.counts, halo.displs, t, b->halo);
        break;
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
        api->neighbor_alltoallv(b->send, halo.counts, halo.displs, t, b->recv, halo.counts,
                                halo.displs, t, b->halo);
        break;
    case STRATA_COLL_NEIGHBOR_ALLTOALLW:
        api->neighbor_alltoallw(b->send, halo.counts, halo.bytes, halo.types, b->recv,
                                halo.counts, halo.bytes, halo.types, b->halo);
        break;
    default: break;
    }
}

void bench_call_blocking(struct bench *b, const struct bench_row *r, int strata)
{
    call_collective(strata ? &strata_api : &native_api, b, r);
}

