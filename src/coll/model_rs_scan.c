/* The cost model's prices of Reduce_scatter(_block)'s and Scan/Exscan's two
 * paths inside a node (model.h), for strata-info --explain.
 *
 * Neither collective chooses by the model: the vector's size does (one
 * copy-in/copy-out window, min(region, STRATA_CICO_MAX), or less goes
 * through the segment; more goes by single copy where the transport has
 * it, else through the segment in rounds).  The prices say how far that
 * rule is from what the model would pick at a size, with the same figures
 * and the same omissions as the other collectives' (model.c's header;
 * oversubscription only as far as gamma is capped at the cores).
 *
 * A combine of one operand into an accumulator is priced as a private
 * memcpy of its bytes (memcpy_beta): the kernels stream two inputs and one
 * output like a copy does and are vectorised; the model has no figure of
 * its own for them.  n is one rank's whole vector; b = n / p its block. */
#include "coll/model.h"

#include <math.h>

#include "coll/coll.h"
#include "util/colls.h"

/* What a copy through the segment costs: at least a cold memcpy (model.c's
 * cico, for the same reason). */
static double seg_copy(const struct strata_model *m)
{
    return m->shm_beta > m->memcpy_beta ? m->shm_beta : m->memcpy_beta;
}

static double window_of(const struct strata_model_shape *s)
{
    double region = s->region > 0 ? (double)s->region : 16384.0;
    double cap = (double)strata_tuning()->cico_max;
    return region < cap ? region : cap;
}

/* Reduce_scatter through the segment: per window every rank copies its
 * part of the vector in and waits for the p-1 others; over all windows
 * each rank folds its block from p regions. */
static double rs_cico(const struct strata_model *m, const struct strata_model_shape *s, int p,
                      double n)
{
    double b = n / p, rounds = ceil(n / window_of(s));
    return n * seg_copy(m) + p * b * seg_copy(m) + rounds * strata_model_sm_gather(m, p) +
           b * m->memcpy_beta;
}

/* Reduce_scatter by single copy: every rank reads its block from each of
 * the p-1 peers (rotated order: one reader per peer at a time), one call
 * per chunk, folds p operands, then waits for every peer's ack. */
static double rs_slice_read(const struct strata_model *m, int p, double n)
{
    double b = n / p, chunk = (double)strata_tuning()->reduce_chunk;
    double calls = chunk > 0 ? ceil(b / chunk) : 1;
    return strata_model_sm_gather(m, p) + (p - 1) * strata_model_cma(m, b, 1) +
           (p - 1) * (calls - 1) * m->alpha + p * b * m->memcpy_beta +
           strata_model_sm_gather(m, p);
}

/* Scan through the segment: the last rank folds `folds` operands (p, or
 * p-1 for Exscan) from the regions, window by window. */
static double scan_cico(const struct strata_model *m, const struct strata_model_shape *s, int p,
                        double n, int folds)
{
    double rounds = ceil(n / window_of(s));
    return n * seg_copy(m) + folds * n * seg_copy(m) + rounds * strata_model_sm_gather(m, p) +
           n * m->memcpy_beta;
}

/* Scan by single copy: a pipeline along rank order; each rank reads its
 * predecessor's prefix chunk by chunk and combines it with its operand.
 * The last rank's time: its own read and combine of the vector, plus one
 * chunk's hop (read, combine, announce) per earlier rank of the chain. */
static double scan_prefix(const struct strata_model *m, int p, double n)
{
    double chunk = (double)strata_tuning()->reduce_chunk;
    if (chunk <= 0 || chunk > n) chunk = n;
    double calls = ceil(n / chunk);
    double hop = strata_model_cma(m, chunk, 1) + chunk * m->memcpy_beta + m->flag;
    return strata_model_cma(m, n, 1) + (calls - 1) * m->alpha + n * m->memcpy_beta +
           (p - 2) * hop + m->flag;
}

int strata_model_rs_scan(const struct strata_model *m, const struct strata_model_shape *shape,
                         int coll, size_t bytes, struct strata_rs_scan_price out[2])
{
    int scan = coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN;
    if (!scan && coll != STRATA_COLL_REDUCE_SCATTER && coll != STRATA_COLL_REDUCE_SCATTER_BLOCK)
        return 0;
    int p = shape->size < 2 ? 2 : shape->size;
    double n = (double)bytes;
    /* As strata_model_predict: at most `cores` ranks copy at once. */
    struct strata_model capped;
    if (shape->cores > 0 && shape->cores < p && m->max_concurrent != shape->cores) {
        capped = *m;
        capped.max_concurrent = shape->cores;
        m = &capped;
    }
    /* strata_rs_scan_path's rule (rs_scan_common.c), on this shape. */
    int cico_taken = n <= window_of(shape) || !shape->single_copy;
    out[0] = (struct strata_rs_scan_price){
        "copy-in-copy-out",
        scan ? "every rank copies its operand into the segment and folds its predecessors' "
               "there, window by window"
             : "every rank copies its operand into the segment and folds its own block from "
               "all regions, window by window",
        scan ? scan_cico(m, shape, p, n, coll == STRATA_COLL_EXSCAN ? p - 1 : p)
             : rs_cico(m, shape, p, n),
        NULL, cico_taken};
    out[1] = (struct strata_rs_scan_price){
        scan ? "pipelined-prefix" : "slice-read",
        scan ? "rank r reads rank r-1's prefix chunk by chunk as it fills and combines it with "
               "its operand"
             : "every rank reads its block from each peer's operand by single copy and folds it",
        scan ? scan_prefix(m, p, n) : rs_slice_read(m, p, n), NULL, !cico_taken};
    if (!shape->single_copy) {
        out[1].us = -1;
        out[1].refusal = "it needs a single-copy transport (cma), which is off or not usable here";
    }
    return 2;
}
