/* The costs of the algorithms (model.h): the contention-aware paper's
 * formulas, each algorithm's named on its row of the algorithm table
 * (algorithm.c).  A file of its own apart from the model file's parsing
 * (model.c): the table points at these functions, and the parsing of
 * measured lines reads the table, so one file made a loop of files. */
#include <math.h>

#include "coll/coll.h"
#include "coll/model.h"
#include "transport/registry.h"

double strata_model_gamma(const struct strata_model *m, int c)
{
    /* Accessors beyond the cores take turns rather than contend. */
    if (m->max_concurrent > 0 && c > m->max_concurrent) c = m->max_concurrent;
    if (c <= 1) return 1.0;
    if (c <= m->ngamma) return m->gamma[c - 1];
    double fit = m->gamma_a * c * c + m->gamma_b * c;
    /* More accessors never contend less than fewer measured ones. */
    double last = m->ngamma > 0 ? m->gamma[m->ngamma - 1] : 1.0;
    return fit > last ? fit : last;
}

/* ---- Building blocks of the formulas (p ranks, n bytes). */

/* One CMA copy of n bytes while c ranks access the same process (model.h:
 * warm up to warm_bytes, cold past it).  Within one copy-in/copy-out window
 * the segment's copies are as warm as the source, but shm_beta is a cold
 * figure: there both are priced cold, like with like (measured at 16 KiB,
 * 2 ranks: copy-in/copy-out 2.9 us, a single read 3.9; PERFORMANCE, "CMA
 * from a warm source priced"). */
static double cma(const struct strata_model *m, double n, int c)
{
    if (n <= 0) return 0;
    double pages = ceil(n / m->page), gamma = strata_model_gamma(m, c);
    if (m->warm_beta > 0 && n <= m->warm_bytes && n > (double)strata_tuning()->cico_max)
        return m->alpha + n * m->warm_beta + m->lock * (gamma - 1) * pages;
    return m->alpha + n * m->beta + m->lock * gamma * pages;
}

static double poll_more(const struct strata_model *m) { return m->flag / 2; }

/* One rank publishes, all read (T^sm_bcast). */
static double sm_bcast(const struct strata_model *m) { return m->flag; }

/* One rank (or each rank, in parallel) reads p-1 published flags (T^sm_gather,
 * T^sm_allgather). */
static double sm_gather(const struct strata_model *m, int p)
{
    return p < 2 ? 0 : m->flag + (p - 2) * poll_more(m);
}

static double sm_barrier(const struct strata_model *m, int p) { return sm_gather(m, p) + sm_bcast(m); }

/* The two building blocks the reductions' paths share (model_rs_scan.c). */
double strata_model_cma(const struct strata_model *m, double n, int c) { return cma(m, n, c); }
double strata_model_sm_gather(const struct strata_model *m, int p) { return sm_gather(m, p); }

static double own_copy(const struct strata_model *m, double n) { return n * m->memcpy_beta; }

static int clamp_k(int k, int p) { return k < 1 ? 1 : k > p - 1 ? p - 1 : k; }

/* ---- Personalised collectives (paper IV). */

/* Every non-root copies at once from (or into) the root; the root's own
 * block overlaps with them. */
static double parallel(const struct strata_model *m, int p, double n)
{
    return sm_bcast(m) + cma(m, n, p - 1) + sm_gather(m, p);
}

/* The root copies each block in turn: no contention; its own block (if it
 * has one to move: not in Bcast) cannot overlap. */
static double sequential(const struct strata_model *m, int p, double n, int own)
{
    return (own ? own_copy(m, n) : 0) + sm_gather(m, p) + (p - 1) * cma(m, n, 1) + sm_bcast(m);
}

/* At most k copy at once; each hands its turn on with one flag, and the
 * root waits for the k of the last step. */
static double throttled(const struct strata_model *m, int p, double n, int k)
{
    k = clamp_k(k, p);
    int steps = (p - 1 + k - 1) / k;
    return sm_bcast(m) + steps * cma(m, n, k) + (steps - 1) * m->flag + sm_gather(m, k + 1);
}

/* Step i reads rank (rank - i)'s block: one reader per source, no per-step
 * wait (the source block is valid from the start). */
static double pairwise(const struct strata_model *m, int p, double n)
{
    return own_copy(m, n) + sm_gather(m, p) + (p - 1) * cma(m, n, 1) + sm_gather(m, p);
}

/* ---- Allgather (paper V-A, HierKNEM III-D). */

static double ring(const struct strata_model *m, int p, double n, int wait_each_step)
{
    double step = cma(m, n, 1) + (wait_each_step ? m->flag : 0);
    return own_copy(m, n) + sm_gather(m, p) + (p - 1) * step + sm_barrier(m, p);
}

/* log2 p steps; step i moves the 2^i blocks gathered so far. */
static double recursive_doubling(const struct strata_model *m, int p, double n)
{
    double t = own_copy(m, n) + sm_gather(m, p) + sm_barrier(m, p);
    for (int have = 1; have < p; have *= 2) t += cma(m, have * n, 1) + m->flag;
    return t;
}

/* ceil(log2 p) steps reading min(2^i, p - 2^i) blocks from rank + 2^i, then
 * the rotation by rank blocks (p - 1 blocks moved, at worst). */
static double bruck(const struct strata_model *m, int p, double n)
{
    double t = own_copy(m, n) + sm_gather(m, p) + sm_barrier(m, p);
    for (int have = 1; have < p; have *= 2) {
        int blocks = have < p - have ? have : p - have;
        t += cma(m, blocks * n, 1) + m->flag;
    }
    return t + (p - 1) * own_copy(m, n);
}

/* Approximate: the largest group (g ranks) writes into its leader at once,
 * the G leaders pass group blocks round a ring (one reader per leader), then
 * the members read everything else from their leader, g - 1 at once, one
 * call per group block; the phases are added, not overlapped. */
static double hier_leader(const struct strata_model *m, const struct strata_model_shape *s, double n)
{
    int p = s->size, G = s->groups > 0 ? s->groups : 1;
    int g = s->largest_group > 0 ? s->largest_group : (p + G - 1) / G;
    double t = own_copy(m, n) + sm_gather(m, p) + sm_barrier(m, p);
    t += cma(m, n, g - 1) + sm_gather(m, g);                 /* into the leader */
    t += (G - 1) * (cma(m, (double)g * n, 1) + m->flag);     /* among leaders */
    if (g > 1) {                                             /* out of the leader */
        double rest = (double)(p - 1) * n;
        t += G * m->alpha + rest * m->beta + m->lock * strata_model_gamma(m, g - 1) * ceil(rest / m->page);
    }
    return t;
}

/* ---- Copy-in/copy-out: two copies per byte through the segment, in rounds
 * of shape->region bytes; `busiest` is what the busiest rank copies, and a
 * round costs one hand-off from each writer it reads. */
static double cico(const struct strata_model *m, const struct strata_model_shape *s, double n,
                   double busiest, double stream, int writers_read)
{
    double region = s->region > 0 ? (double)s->region : 16384.0;
    double rounds = ceil(stream / region);
    double per_round = writers_read > 1 ? sm_gather(m, writers_read + 1) : sm_bcast(m);
    /* shm_beta is calibrated on a cache-resident round; these copies also
     * read or write the user's buffers, cold in a real program.  Measured
     * (strata-bench --algorithms --cold, 2 ranks): Scatter of 1 MiB took
     * 434 us against 254 predicted with shm_beta alone, so a copy costs at
     * least a cold memcpy. */
    double copy = m->shm_beta > m->memcpy_beta ? m->shm_beta : m->memcpy_beta;
    return busiest * copy + own_copy(m, n) + rounds * per_round;
}

/* Allgather's copy-in/copy-out (cico_block.c): every rank streams its block
 * while it copies the others' rounds out, and copies its own block from the
 * bytes it has just read for the copy-in.  Each copy is priced as a private
 * memcpy of cold data, not at shm_beta: shm_beta is calibrated on a serial
 * hand-off (one rank copies in while the other waits, then the other way),
 * and the exchange ran at 0.40-0.63 of the shm_beta formula in strata-bench
 * --algorithms (2 and 4 ranks, 8 KiB to 1 MiB, warm; docs/notes/performance-history.md,
 * issue 19 item 4), faster than one CMA read of the peer's block: no page is
 * pinned, and the source block is read from memory once for two copies. */
static double cico_exchange(const struct strata_model *m, const struct strata_model_shape *s,
                            double n, int p)
{
    double region = s->region > 0 ? (double)s->region : 16384.0;
    double rounds = ceil(n / region);
    double per_round = p > 2 ? sm_gather(m, p) : sm_bcast(m);
    return (double)p * n * m->memcpy_beta + own_copy(m, n) + rounds * per_round;
}

/* ---- Bcast (paper V-B; XHC for the pipelined pull). */

/* Radix k+1: every rank that has the payload is read by k new ones per step. */
static double knomial(const struct strata_model *m, int p, double n, int k)
{
    k = clamp_k(k, p);
    int steps = 0;
    for (long reach = 1; reach < p; reach *= k + 1) steps++;
    return sm_bcast(m) + steps * (cma(m, n, k) + m->flag);
}

static double scatter_allgather(const struct strata_model *m, int p, double n)
{
    double piece = ceil(n / p);
    return sm_gather(m, p) + cma(m, piece, p - 1) + (p - 1) * (cma(m, piece, 1) + poll_more(m)) +
           sm_barrier(m, p);
}

/* Rounds of a region through the segment with the two halves alternating:
 * the stream costs shm_pipe per byte once full (a copy in and a copy out
 * at once, flags included), plus the fill: one round in and out per tree
 * level before the last level's stream starts.  Up to one region it is the
 * copy-in/copy-out of any Bcast. */
static double segment_pipeline(const struct strata_model *m, const struct strata_model_shape *s,
                               double n)
{
    double round = (double)strata_tuning()->cico_max;
    int depth = s->groups > 1 && s->groups < s->size ? 2 : 1;
    double one_round = 2 * fmin(n, round) * m->shm_beta + m->flag;
    if (n <= round) return depth * one_round;
    return n * m->shm_pipe_beta + depth * one_round;
}

/* Small payloads go through the segment (a copy in, a copy out per tree
 * level); large ones are pulled with CMA chunk by chunk down the tree, at
 * most `throttle` readers of one chunk at once.  Taken as one copy of n at
 * that contention, one call per chunk (a leaf with nothing to wait for
 * copies in one call), plus the pipeline's fill: a chunk per extra tree
 * level and per extra throttle wave.  In steady state siblings of different
 * waves read different chunks of the same process at once, so the true
 * contention can be higher: the model keeps the throttle. */
static double pipelined(const struct strata_model *m, const struct strata_model_shape *s, double n)
{
    const struct strata_tuning *t = strata_tuning();
    int p = s->size;
    int depth = s->groups > 1 && s->groups < p ? 2 : 1;
    int fanout = depth == 1 ? p - 1 : (s->groups > s->largest_group ? s->groups : s->largest_group) - 1;
    if (fanout < 1) fanout = 1;
    double level = 2 * n * m->shm_beta + m->flag;
    if (n <= (double)t->cico_max) return depth * level;
    /* Without single copy, rounds through the segment: segment-pipeline's
     * code and cost. */
    if (!s->single_copy) return segment_pipeline(m, s, n);
    int throttle = t->throttle > 0 ? t->throttle : fanout;
    int c = fanout < throttle ? fanout : throttle;
    int waves = (fanout + c - 1) / c;
    double chunk = (double)t->chunk[0];
    double calls = depth == 1 && waves == 1 ? 1 : ceil(n / chunk);
    double one_chunk = cma(m, n < chunk ? n : chunk, c);
    /* Same order of terms as the direct read it equals on a flat tree. */
    return sm_bcast(m) + cma(m, n, c) + (calls - 1) * m->alpha +
           (depth - 1 + waves - 1) * (one_chunk + m->flag) + sm_gather(m, c + 1);
}

/* ---- The costs of the algorithms, each named on its row of the algorithm
 * table (algorithm.c): n is the block (the largest block for the
 * v-collectives), k the algorithm's factor; the plane's shape and the
 * model as strata_model_predict adjusted them (cores, mappings). */

#define COST(name) \
    double strata_cost_##name(const struct strata_model *m, const struct strata_model_shape *s, \
                              double n, int k)
#define UNUSED_K (void)k

COST(pipelined) { UNUSED_K; return pipelined(m, s, n); }
COST(parallel) { UNUSED_K; return parallel(m, s->size, n); }
/* The root copies to each in turn (a Bcast's root keeps its own buffer). */
COST(sequential_others) { UNUSED_K; return sequential(m, s->size, n, 0); }
/* ... its own block too (Scatter, Gather). */
COST(sequential) { UNUSED_K; return sequential(m, s->size, n, 1); }
COST(knomial) { return knomial(m, s->size, n, k); }
COST(scatter_allgather) { UNUSED_K; return scatter_allgather(m, s->size, n); }
COST(segment_pipeline) { UNUSED_K; return segment_pipeline(m, s, n); }
COST(throttled) { return throttled(m, s->size, n, k); }
COST(pairwise) { UNUSED_K; return pairwise(m, s->size, n); }
/* Each step waits for the block its neighbour received the step before. */
COST(ring_waiting) { UNUSED_K; return ring(m, s->size, n, 1); }
COST(ring) { UNUSED_K; return ring(m, s->size, n, 0); }
COST(recursive_doubling) { UNUSED_K; return recursive_doubling(m, s->size, n); }
COST(bruck) { UNUSED_K; return bruck(m, s->size, n); }
COST(hier_leader) { UNUSED_K; return hier_leader(m, s, n); }
/* The root (Gather) or every rank (Allgather, Alltoall) reads p-1 writers
 * per round; Scatter's readers read the root only. */
COST(gather_cico) { UNUSED_K; int p = s->size; return cico(m, s, n, p * n, n, p - 1); }
COST(scatter_cico)
{
    UNUSED_K;
    int p = s->size;
    return cico(m, s, n, p * n + fmin(n, (double)s->region), p * n, 1);
}
COST(allgather_cico)
{
    UNUSED_K;
    int p = s->size;
    /* The exchange is fast because every rank copies at once; with more
     * ranks than cores they take turns at every round's hand-off, which
     * the serial hand-off price describes (measured: 4 ranks on 2 cores
     * beside 2 busy processes, 1-4 MiB, 10-23x the host against
     * ring-source-read's 0.5-0.9; docs/notes/performance-history.md, issue 15). */
    if (s->cores > 0 && s->cores < p) return cico(m, s, n, p * n, n, p - 1);
    return cico_exchange(m, s, n, p);
}
/* Alltoall's streams leave out the block each rank keeps (copied a slice
 * per round, as Allgather's own block): p - 1 blocks in, p - 1 out. */
COST(alltoall_cico)
{
    UNUSED_K;
    int p = s->size;
    return cico(m, s, n, 2.0 * (p - 1) * n, (p - 1) * n, p - 1);
}
/* The v-collectives: n is the largest block, so the uniform formulas bound
 * the call; each first reads the layout records (one hand-off, p-1 for
 * Alltoallv). */
COST(gatherv_cico) { return m->flag + strata_cost_gather_cico(m, s, n, k); }
COST(gatherv_sequential) { return m->flag + strata_cost_sequential(m, s, n, k); }
COST(v_throttled) { return m->flag + strata_cost_throttled(m, s, n, k); }
COST(scatterv_cico) { return m->flag + strata_cost_scatter_cico(m, s, n, k); }
COST(alltoallv_cico)
{
    UNUSED_K;
    int p = s->size;
    return sm_gather(m, p) + cico(m, s, n, (2.0 * p - 1) * n, p * n, p - 1);
}
COST(alltoallv_ring) { UNUSED_K; return sm_gather(m, s->size) + pairwise(m, s->size, n); }

#undef COST
#undef UNUSED_K
