/* The table of algorithms and the checks that decide where each can run. */
#include "coll/algorithm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/coll.h"
#include "coll/model.h"
#include "util/colls.h"
#include "util/hot.h"

/* Short for the table: needs a transport that reaches peers' memory. */
#define CMA STRATA_NEEDS_SINGLE_COPY
/* Keyed by enum strata_algo: ALGO puts each entry at the index of its id, so
 * strata_algorithm(id) is table[id] by construction, whatever the order of
 * the lines; a value of the enum left out of the table is caught below (the
 * last one) or by the unit test of select (any other: a hole has no name). */
#define ALGO(id_, ...) [id_] = {id_, __VA_ARGS__}
static const struct strata_algorithm table[] = {
    ALGO(STRATA_ALGO_BCAST_PIPELINED, STRATA_COLL_BCAST, "pipelined", 0, NULL, 1,
         strata_bcast_pipelined, strata_bcast_pipelined_start, strata_cost_pipelined,
         "XHC pull down the hierarchy, chunk by chunk (segment for small data, the root's "
         "flag lines for the smallest)"),
    ALGO(STRATA_ALGO_BCAST_DIRECT_READ, STRATA_COLL_BCAST, "direct-read", CMA, NULL, 1,
         strata_bcast_direct_read, strata_bcast_direct_read_start, strata_cost_parallel,
         "every rank reads the whole payload from the root at once"),
    ALGO(STRATA_ALGO_BCAST_DIRECT_WRITE, STRATA_COLL_BCAST, "direct-write", CMA, NULL, 1,
         strata_bcast_direct_write, strata_bcast_direct_write_start, strata_cost_sequential_others,
         "the root writes the payload into each rank in turn"),
    ALGO(STRATA_ALGO_BCAST_KNOMIAL, STRATA_COLL_BCAST, "knomial", CMA,
         "readers of one source at once (radix k+1)", 4, strata_bcast_knomial,
         strata_bcast_knomial_start, strata_cost_knomial,
         "k-nomial tree of radix k+1: at most k ranks read one source at a time"),
    ALGO(STRATA_ALGO_BCAST_SCATTER_ALLGATHER, STRATA_COLL_BCAST, "scatter-allgather", CMA, NULL, 1,
         strata_bcast_scatter_allgather, strata_bcast_scatter_allgather_start,
         strata_cost_scatter_allgather,
         "each rank reads 1/size of the payload from the root, then the pieces go round a ring"),
    ALGO(STRATA_ALGO_BCAST_SEGMENT_PIPELINE, STRATA_COLL_BCAST, "segment-pipeline", 0, NULL, 1,
         strata_bcast_segment_pipeline, strata_bcast_segment_pipeline_start,
         strata_cost_segment_pipeline,
         "through the segment in region-sized rounds, the next copied in while the last is "
         "copied out (no single copy, even where the transport has it)"),
    ALGO(STRATA_ALGO_SCATTER_CICO, STRATA_COLL_SCATTER, "copy-in-copy-out", 0, NULL, 1,
         strata_scatter_cico, strata_scatter_cico_start, strata_cost_scatter_cico,
         "through the shared segment, two copies, in rounds (small blocks: in the flag lines)"),
    ALGO(STRATA_ALGO_SCATTER_PARALLEL_READ, STRATA_COLL_SCATTER, "parallel-read", CMA, NULL, 1,
         strata_scatter_parallel_read, strata_scatter_parallel_read_start, strata_cost_parallel,
         "every rank reads its block from the root at once"),
    ALGO(STRATA_ALGO_SCATTER_SEQUENTIAL_WRITE, STRATA_COLL_SCATTER, "sequential-write", CMA, NULL,
         1, strata_scatter_sequential_write, strata_scatter_sequential_write_start,
         strata_cost_sequential, "the root writes each rank's block in turn"),
    ALGO(STRATA_ALGO_SCATTER_THROTTLED_READ, STRATA_COLL_SCATTER, "throttled-read", CMA,
         "throttle (concurrent readers)", 4, strata_scatter_throttled_read,
         strata_scatter_throttled_read_start, strata_cost_throttled,
         "at most k ranks read from the root at once, each hands its turn on"),
    ALGO(STRATA_ALGO_GATHER_CICO, STRATA_COLL_GATHER, "copy-in-copy-out", 0, NULL, 1,
         strata_gather_cico, strata_gather_cico_start, strata_cost_gather_cico,
         "through the shared segment, two copies, in rounds (small blocks: in the flag lines)"),
    ALGO(STRATA_ALGO_GATHER_PARALLEL_WRITE, STRATA_COLL_GATHER, "parallel-write", CMA, NULL, 1,
         strata_gather_parallel_write, strata_gather_parallel_write_start, strata_cost_parallel,
         "every rank writes its block into the root at once"),
    ALGO(STRATA_ALGO_GATHER_SEQUENTIAL_READ, STRATA_COLL_GATHER, "sequential-read", CMA, NULL, 1,
         strata_gather_sequential_read, strata_gather_sequential_read_start,
         strata_cost_sequential, "the root reads each rank's block in turn"),
    ALGO(STRATA_ALGO_GATHER_THROTTLED_WRITE, STRATA_COLL_GATHER, "throttled-write", CMA,
         "throttle (concurrent writers)", 4, strata_gather_throttled_write,
         strata_gather_throttled_write_start, strata_cost_throttled,
         "at most k ranks write into the root at once, each hands its turn on"),
    ALGO(STRATA_ALGO_ALLTOALL_CICO, STRATA_COLL_ALLTOALL, "copy-in-copy-out", 0, NULL, 1,
         strata_alltoall_cico, strata_alltoall_cico_start, strata_cost_alltoall_cico,
         "through the shared segment, two copies, in rounds (small blocks: in the flag lines)"),
    ALGO(STRATA_ALGO_ALLTOALL_PAIRWISE, STRATA_COLL_ALLTOALL, "pairwise", CMA, NULL, 1,
         strata_alltoall_pairwise, strata_alltoall_pairwise_start, strata_cost_pairwise,
         "size-1 steps, each rank reads from a different partner"),
    ALGO(STRATA_ALGO_ALLGATHER_CICO, STRATA_COLL_ALLGATHER, "copy-in-copy-out", 0, NULL, 1,
         strata_allgather_cico, strata_allgather_cico_start, strata_cost_allgather_cico,
         "through the shared segment in rounds, own block copied as it streams; a block in mapped "
         "memory is read where it lies; small blocks in the flag lines"),
    ALGO(STRATA_ALGO_ALLGATHER_RING_NEIGHBOUR, STRATA_COLL_ALLGATHER, "ring-neighbour",
         CMA | STRATA_NEEDS_COPRIME_K, "ring distance j", 1, strata_allgather_ring_neighbour,
         strata_allgather_ring_neighbour_start, strata_cost_ring_waiting,
         "step i reads the block rank-j received in step i-1"),
    ALGO(STRATA_ALGO_ALLGATHER_RING_SOURCE_READ, STRATA_COLL_ALLGATHER, "ring-source-read", CMA,
         NULL, 1, strata_allgather_ring_source_read, strata_allgather_ring_source_read_start,
         strata_cost_ring, "step i reads rank-i's block from rank-i itself"),
    ALGO(STRATA_ALGO_ALLGATHER_RING_SOURCE_WRITE, STRATA_COLL_ALLGATHER, "ring-source-write", CMA,
         NULL, 1, strata_allgather_ring_source_write, strata_allgather_ring_source_write_start,
         strata_cost_ring, "step i writes this rank's block into rank+i"),
    ALGO(STRATA_ALGO_ALLGATHER_RECURSIVE_DOUBLING, STRATA_COLL_ALLGATHER, "recursive-doubling",
         CMA | STRATA_NEEDS_POW2, NULL, 1, strata_allgather_recursive_doubling,
         strata_allgather_recursive_doubling_start, strata_cost_recursive_doubling,
         "log2(size) steps exchanging everything held so far with rank XOR 2^i"),
    ALGO(STRATA_ALGO_ALLGATHER_BRUCK, STRATA_COLL_ALLGATHER, "bruck", CMA, NULL, 1,
         strata_allgather_bruck, strata_allgather_bruck_start, strata_cost_bruck,
         "ceil(log2(size)) steps reading from rank+2^i, then one rotation"),
    ALGO(STRATA_ALGO_ALLGATHER_HIER_LEADER, STRATA_COLL_ALLGATHER, "hier-leader", CMA, NULL, 1,
         strata_allgather_hier_leader, strata_allgather_hier_leader_start, strata_cost_hier_leader,
         "group leaders gather their group, exchange among themselves, members read from them"),
    ALGO(STRATA_ALGO_ALLGATHER_HIER_RING, STRATA_COLL_ALLGATHER, "hier-ring", CMA, NULL, 1,
         strata_allgather_hier_ring, strata_allgather_hier_ring_start, strata_cost_ring_waiting,
         "ring-neighbour over the ranks in hierarchy order"),
    /* The v-collectives (vblock.c): every call first publishes the layouts
     * a reader cannot know (records in the segment), then moves the data. */
    ALGO(STRATA_ALGO_GATHERV_CICO, STRATA_COLL_GATHERV, "copy-in-copy-out", 0, NULL, 1,
         strata_gatherv_cico, strata_gatherv_cico_start, strata_cost_gatherv_cico,
         "through the shared segment, two copies, in rounds of the longest block"),
    ALGO(STRATA_ALGO_GATHERV_SEQUENTIAL_READ, STRATA_COLL_GATHERV, "sequential-read", CMA, NULL, 1,
         strata_gatherv_sequential_read, strata_gatherv_sequential_read_start,
         strata_cost_gatherv_sequential, "the root reads each rank's block in turn"),
    ALGO(STRATA_ALGO_GATHERV_THROTTLED_WRITE, STRATA_COLL_GATHERV, "throttled-write", CMA,
         "throttle (concurrent writers)", 4, strata_gatherv_throttled_write,
         strata_gatherv_throttled_write_start, strata_cost_v_throttled,
         "each rank writes its block into the root where the root's record says, at most k at "
         "once (k >= ranks - 1: Gather's parallel write)"),
    ALGO(STRATA_ALGO_SCATTERV_CICO, STRATA_COLL_SCATTERV, "copy-in-copy-out", 0, NULL, 1,
         strata_scatterv_cico, strata_scatterv_cico_start, strata_cost_scatterv_cico,
         "the root's blocks in rank order through the shared segment, in rounds"),
    ALGO(STRATA_ALGO_SCATTERV_THROTTLED_READ, STRATA_COLL_SCATTERV, "throttled-read", CMA,
         "throttle (concurrent readers)", 4, strata_scatterv_throttled_read,
         strata_scatterv_throttled_read_start, strata_cost_v_throttled,
         "each rank reads its block where the root's record says, at most k at once"),
    ALGO(STRATA_ALGO_ALLGATHERV_CICO, STRATA_COLL_ALLGATHERV, "copy-in-copy-out", 0, NULL, 1,
         strata_allgatherv_cico, strata_allgatherv_cico_start, strata_cost_gather_cico,
         "through the shared segment, two copies, in rounds of the longest block"),
    ALGO(STRATA_ALGO_ALLGATHERV_RING_READ, STRATA_COLL_ALLGATHERV, "ring-read", CMA, NULL, 1,
         strata_allgatherv_ring_read, strata_allgatherv_ring_read_start, strata_cost_ring,
         "step i reads rank-i's block from rank-i itself"),
    ALGO(STRATA_ALGO_ALLTOALLV_CICO, STRATA_COLL_ALLTOALLV, "copy-in-copy-out", 0, NULL, 1,
         strata_alltoallv_cico, strata_alltoallv_cico_start, strata_cost_alltoallv_cico,
         "each rank's blocks in rank order through the shared segment, in rounds"),
    ALGO(STRATA_ALGO_ALLTOALLV_RING_READ, STRATA_COLL_ALLTOALLV, "ring-read", CMA, NULL, 1,
         strata_alltoallv_ring_read, strata_alltoallv_ring_read_start, strata_cost_alltoallv_ring,
         "step i reads this rank's block from rank-i, where rank-i's record says"),
};
_Static_assert(sizeof table / sizeof table[0] == STRATA_NALGOS,
               "every enum strata_algo value needs its entry in the table");
#undef ALGO
#undef CMA

strata_block_start_fn strata_block_starter(int algo)
{
    return algo >= 0 && algo < STRATA_NALGOS ? table[algo].start : NULL;
}

STRATA_HOT const struct strata_algorithm *strata_algorithm(enum strata_algo id)
{
    return &table[id];
}

const struct strata_algorithm *strata_algorithm_find(int coll, const char *name)
{
    for (int i = 0; i < STRATA_NALGOS; i++)
        if (table[i].coll == coll && !strcasecmp(table[i].name, name)) return &table[i];
    return NULL;
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

const char *strata_algorithm_refusal(const struct strata_algorithm *al, int size,
                                     int single_copy, int k)
{
    if ((al->needs & STRATA_NEEDS_SINGLE_COPY) && !single_copy)
        return "it needs a single-copy transport (cma), which is off or not usable here";
    if ((al->needs & STRATA_NEEDS_POW2) && (size & (size - 1)))
        return "it needs a power-of-two number of ranks";
    if (k < 1) return "its factor must be at least 1";
    if ((al->needs & STRATA_NEEDS_COPRIME_K) && gcd(size, k % size ? k % size : size) != 1)
        return "its ring distance must be coprime with the number of ranks";
    return NULL;
}

void strata_algorithm_names(int coll, char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < STRATA_NALGOS && used < outlen; i++) {
        if (table[i].coll != coll) continue;
        used += (size_t)snprintf(out + used, outlen - used, "%s%s%s", used ? ", " : "",
                                 table[i].name, table[i].k_meaning ? "[:k]" : "");
    }
}

int strata_algorithm_parse(int coll, const char *text, const struct strata_algorithm **al, int *k,
                           char *err, size_t errlen)
{
    char name[64], names[512];
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    strata_algorithm_names(coll, names, sizeof names);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, text, len);
    name[len] = 0;
    *al = strata_algorithm_find(coll, name);
    if (!*al) {
        snprintf(err, errlen, "\"%s\" is not an algorithm of %s: it accepts %s", text,
                 strata_coll_name(coll), names);
        return -1;
    }
    *k = (*al)->k_default;
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (!(*al)->k_meaning || *end || end == colon + 1 || v < 1 || v > 4096) {
            snprintf(err, errlen, "\"%s\": %s", text,
                     (*al)->k_meaning ? "the factor after ':' must be an integer from 1 to 4096"
                                      : "this algorithm takes no factor");
            return -1;
        }
        *k = (int)v;
    }
    return 0;
}

int strata_algo_single_copy(const struct strata_algorithm *al, const struct strata_plane *p,
                            size_t block)
{
    if (al->needs & STRATA_NEEDS_SINGLE_COPY) return 1;
    /* The Bcast pipeline copies in one step from the parent's buffer past
     * one region (bcast.c), and Allgather's copy-in/copy-out reads a
     * block lying in a mapping transport's arena where it lies
     * (cico_block.c). */
    if (al->id == STRATA_ALGO_BCAST_PIPELINED)
        return block > p->region || block > strata_tuning()->cico_max;
    if (al->id == STRATA_ALGO_ALLGATHER_CICO)
        return (p->xport->features & STRATA_XPORT_MAP_PEER) != 0;
    return 0;
}
