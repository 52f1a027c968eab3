/* The resumable forms of the block algorithms, keyed by enum strata_algo. */
#include "coll/algorithm.h"

/* If you add an algorithm to enum strata_algo, also add its start function
 * here (test_op_alternate fails for an algorithm without one). */
static const strata_block_start_fn starters[STRATA_NALGOS] = {
    [STRATA_ALGO_BCAST_PIPELINED] = strata_bcast_pipelined_start,
    [STRATA_ALGO_BCAST_DIRECT_READ] = strata_bcast_direct_read_start,
    [STRATA_ALGO_BCAST_DIRECT_WRITE] = strata_bcast_direct_write_start,
    [STRATA_ALGO_BCAST_KNOMIAL] = strata_bcast_knomial_start,
    [STRATA_ALGO_BCAST_SCATTER_ALLGATHER] = strata_bcast_scatter_allgather_start,
    [STRATA_ALGO_BCAST_SEGMENT_PIPELINE] = strata_bcast_segment_pipeline_start,
    [STRATA_ALGO_SCATTER_CICO] = strata_scatter_cico_start,
    [STRATA_ALGO_SCATTER_PARALLEL_READ] = strata_scatter_parallel_read_start,
    [STRATA_ALGO_SCATTER_SEQUENTIAL_WRITE] = strata_scatter_sequential_write_start,
    [STRATA_ALGO_SCATTER_THROTTLED_READ] = strata_scatter_throttled_read_start,
    [STRATA_ALGO_GATHER_CICO] = strata_gather_cico_start,
    [STRATA_ALGO_GATHER_PARALLEL_WRITE] = strata_gather_parallel_write_start,
    [STRATA_ALGO_GATHER_SEQUENTIAL_READ] = strata_gather_sequential_read_start,
    [STRATA_ALGO_GATHER_THROTTLED_WRITE] = strata_gather_throttled_write_start,
    [STRATA_ALGO_ALLTOALL_CICO] = strata_alltoall_cico_start,
    [STRATA_ALGO_ALLTOALL_PAIRWISE] = strata_alltoall_pairwise_start,
    [STRATA_ALGO_ALLGATHER_CICO] = strata_allgather_cico_start,
    [STRATA_ALGO_ALLGATHER_RING_NEIGHBOUR] = strata_allgather_ring_neighbour_start,
    [STRATA_ALGO_ALLGATHER_RING_SOURCE_READ] = strata_allgather_ring_source_read_start,
    [STRATA_ALGO_ALLGATHER_RING_SOURCE_WRITE] = strata_allgather_ring_source_write_start,
    [STRATA_ALGO_ALLGATHER_RECURSIVE_DOUBLING] = strata_allgather_recursive_doubling_start,
    [STRATA_ALGO_ALLGATHER_BRUCK] = strata_allgather_bruck_start,
    [STRATA_ALGO_ALLGATHER_HIER_LEADER] = strata_allgather_hier_leader_start,
    [STRATA_ALGO_ALLGATHER_HIER_RING] = strata_allgather_hier_ring_start,
    [STRATA_ALGO_GATHERV_CICO] = strata_gatherv_cico_start,
    [STRATA_ALGO_GATHERV_SEQUENTIAL_READ] = strata_gatherv_sequential_read_start,
    [STRATA_ALGO_GATHERV_THROTTLED_WRITE] = strata_gatherv_throttled_write_start,
    [STRATA_ALGO_SCATTERV_CICO] = strata_scatterv_cico_start,
    [STRATA_ALGO_SCATTERV_THROTTLED_READ] = strata_scatterv_throttled_read_start,
    [STRATA_ALGO_ALLGATHERV_CICO] = strata_allgatherv_cico_start,
    [STRATA_ALGO_ALLGATHERV_RING_READ] = strata_allgatherv_ring_read_start,
    [STRATA_ALGO_ALLTOALLV_CICO] = strata_alltoallv_cico_start,
    [STRATA_ALGO_ALLTOALLV_RING_READ] = strata_alltoallv_ring_read_start,
};

_Static_assert(sizeof starters / sizeof starters[0] == STRATA_NALGOS,
               "one entry per enum strata_algo");

strata_block_start_fn strata_block_starter(int algo)
{
    return algo >= 0 && algo < STRATA_NALGOS ? starters[algo] : NULL;
}
