/* What strata-bench derives from one row of results. */
#include "bench_row.h"

const char *bench_coll_name(enum strata_coll coll) { return strata_coll_short_name(coll); }

/* The buffer that holds the whole result on one rank: a bandwidth figure
 * then says how fast that buffer was filled, whatever the algorithm. */
size_t bench_bandwidth_bytes(const struct bench_row *r, int ranks)
{
    switch (r->coll) {
    case STRATA_COLL_BCAST:
    case STRATA_COLL_REDUCE:
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_SCAN:
    case STRATA_COLL_EXSCAN: return r->bytes;
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_GATHER:
    case STRATA_COLL_SCATTER:
    case STRATA_COLL_ALLTOALL:
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
    case STRATA_COLL_REDUCE_SCATTER: return r->bytes * (size_t)ranks;
    /* The v-collectives: bytes is the largest block (strata-bench --pattern). */
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_SCATTERV:
    case STRATA_COLL_ALLGATHERV:
    case STRATA_COLL_ALLTOALLV:
    case STRATA_COLL_ALLTOALLW: return r->bytes * (size_t)ranks;
    /* The halo: a block from each neighbour. */
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
    case STRATA_COLL_NEIGHBOR_ALLTOALLW: return r->bytes * BENCH_HALO_BLOCKS;
    default: return 0;
    }
}
