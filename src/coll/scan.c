/* Scan and Exscan inside a node.
 *
 * Small vectors (one copy-in/copy-out window, STRATA_CICO_MAX): every rank
 * copies its operand into its IN region and publishes progress; rank r then
 * folds the regions of ranks 0..r (Exscan: 0..r-1) itself, in rank order.
 * Why not recursive doubling: at this size a step costs a cache-line
 * hand-off (the flag and the data lines, some 100 ns between cores), far
 * more than combining a few hundred elements (a few ns per line), and
 * recursive doubling chains ceil(log2 size) such hand-offs, each waiting for
 * the previous one, while the flat fold needs one: every rank publishes at
 * once and every reader only waits for its predecessors' copies, which are
 * all in flight together.  The price is r combines at rank r instead of
 * log2(size): at 8 ranks and 16 KiB, 7 passes of a vectorised kernel over
 * 16 KiB (about 7 x 2000 cycles) against 3 dependent hand-offs plus 3
 * passes; the fold wins up to a few KiB and ties at the window's top, and
 * its order is the plain rank order (non-commutative ops, reproducible
 * floating point) with no reordering to undo.  Larger vectors without a
 * single-copy transport take the same path in rounds of one window.
 *
 * Larger vectors with single copy: a pipelined prefix along rank order.
 * Rank r exposes its inclusive prefix s_r = x_0 op ... op x_r (Scan: its
 * receive buffer; Exscan: private memory; rank 0: its operand) and
 * publishes progress per chunk (STRATA_REDUCE_CHUNK) as s_r fills; rank r+1
 * reads each chunk of s_r as soon as it is announced, combines it with its
 * own operand (s_r op x_{r+1}, lower ranks on the left) and announces its
 * own.  Every rank reads the vector once and combines it once; the chain
 * adds (size - 1) chunk steps of latency, which the pipeline hides behind
 * the transfer of the vector.  A rank returns once its successor has read
 * all of its prefix.
 *
 * Both paths combine in rank order, so results are identical run to run and
 * a non-commutative op sees the standard's order. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/task.h"
#include "coll/rs_scan_common.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

static struct strata_scan_task *scan_of(struct strata_task *op)
{
    return (struct strata_scan_task *)((char *)op - offsetof(struct strata_scan_task, op));
}

/* ---- Copy-in/copy-out windows: every rank folds its predecessors. */

static int cico_progress(struct strata_task *op)
{
    struct strata_scan_task *o = scan_of(op);
    struct strata_plane *p = op->p;
    const struct strata_reduce_args *a = &o->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    int last = o->exclusive ? p->rank - 1 : p->rank; /* the last operand this rank folds */
    STRATA_TASK_BEGIN(op);
    for (o->first = 0; o->first < a->count; o->first += o->per_round) {
        o->win = a->count - o->first < o->per_round ? a->count - o->first : o->per_round;
        /* Entered: done reading what this rank read of older regions. */
        o->base = strata_plane_enter(p, 1, NULL, NULL);
        STRATA_TASK_AWAIT_REGIONS_FREE(op, p, o->q);
        memcpy(strata_plane_region(p, p->rank, STRATA_REGION_IN),
               o->operand + o->first * a->extent, strata_rs_span(a, o->first, o->win));
        /* release: the window is in the region */
        strata_plane_publish(p, &me->progress, o->base + 1);
        for (o->q = 0; o->q <= last; o->q++) {
            if (o->q != p->rank)
                STRATA_TASK_AWAIT_GE(op, &p->ctl[o->q].progress, o->base + 1, p->pid[o->q]);
            /* Folded in private memory: the receive buffer may hold this
             * rank's operand (in place) or lack a padded element's tail. */
            unsigned char *acc = strata_rs_slot(p, 0, 1, o->win * a->extent);
            const unsigned char *src = strata_plane_region(p, o->q, STRATA_REGION_IN);
            if (o->q == 0) memcpy(acc, src, strata_rs_span(a, o->first, o->win));
            else strata_combine(a, acc, acc, src, o->win);
            if (p->stats && o->q != p->rank)
                strata_stats_bytes(o->coll, p->dist[o->q], strata_rs_span(a, o->first, o->win));
        }
        if (last >= 0)
            memcpy((unsigned char *)a->recvbuf + o->first * a->extent,
                   strata_rs_slot(p, 0, 1, o->win * a->extent), strata_rs_span(a, o->first, o->win));
    }
    STRATA_TASK_END(op);
}

/* ---- Single copy: the pipelined prefix. */

/* Chunk k: s_{r-1}'s chunk (announced) into private memory, then this
 * rank's result and, if a successor reads it, its prefix. */
static void prefix_chunk(struct strata_scan_task *o, struct strata_plane *p)
{
    const struct strata_reduce_args *a = &o->a;
    size_t lo = o->k * o->chunk;
    size_t n = a->count - lo < o->chunk ? a->count - lo : o->chunk;
    size_t off = lo * a->extent, bytes = strata_rs_span(a, lo, n);
    int tail = a->true_extent < a->extent && lo + n == a->count;
    const unsigned char *remote =
        (const unsigned char *)(uintptr_t)strata_flag_read(&p->ctl[p->rank - 1].buf) + off;
    unsigned char *recv = (unsigned char *)a->recvbuf + off;
    if (o->exclusive && (!o->prefix || (a->sendbuf && !tail))) {
        /* Exscan's result is s_{r-1} itself: read straight into the receive
         * buffer, no private copy to shift out of.  The last rank exposes no
         * prefix (in place too: its operand is not needed); another rank
         * then folds its prefix from the result, which holds whole elements
         * (not a padded tail) and is not its operand (not in place). */
        strata_plane_pull(p, o->coll, p->rank - 1, remote, recv, bytes);
        if (o->prefix) strata_combine(a, o->prefix + off, recv, o->operand + off, n);
        return;
    }
    unsigned char *prev = strata_rs_matching(strata_rs_slot(p, 0, 2, o->chunk * a->extent), remote);
    strata_plane_pull(p, o->coll, p->rank - 1, remote, prev, bytes);
    /* This rank's operand; a padded last element is copied out rather than
     * read past the buffer's end. */
    const unsigned char *x = o->operand + off;
    if (tail) {
        unsigned char *copy = strata_rs_slot(p, 1, 2, o->chunk * a->extent);
        memcpy(copy, x, bytes);
        x = copy;
    }
    if (!o->exclusive) {
        if (a->sendbuf && !tail) {
            strata_combine(a, recv, prev, x, n); /* s_r, straight into the receive buffer */
        } else {
            strata_combine(a, prev, prev, x, n); /* the receive buffer holds x, or is short */
            memcpy(recv, prev, bytes);
        }
        return;
    }
    /* Exscan in place or with a padded tail: s_r into the exposed prefix
     * (read before the receive buffer, which may hold x, is overwritten),
     * s_{r-1} is the result. */
    if (o->prefix) strata_combine(a, o->prefix + off, prev, x, n);
    memcpy(recv, prev, bytes);
}

static int prefix_progress(struct strata_task *op)
{
    struct strata_scan_task *o = scan_of(op);
    struct strata_plane *p = op->p;
    const struct strata_reduce_args *a = &o->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    if (p->rank == 0) {
        /* s_0 = x_0 was exposed complete; Scan's result is the operand. */
        if (!o->exclusive && a->sendbuf)
            memcpy(a->recvbuf, a->sendbuf, strata_rs_span(a, 0, a->count));
    } else {
        /* Acquire: the predecessor's prefix address (published with seq). */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[p->rank - 1].seq, o->base, p->pid[p->rank - 1]);
        for (o->k = 0; o->k * o->chunk < a->count; o->k++) {
            o->first = o->k * o->chunk + (a->count - o->k * o->chunk < o->chunk
                                              ? a->count - o->k * o->chunk
                                              : o->chunk); /* end of chunk k */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[p->rank - 1].progress, o->base + o->first,
                                 p->pid[p->rank - 1]);
            prefix_chunk(o, p);
            /* Release: the chunk of this rank's prefix is written (and
             * this rank has read its predecessor's). */
            strata_plane_publish(p, &me->progress, o->base + o->first);
        }
    }
    /* The successor reads this rank's prefix until it has announced all of
     * its own. */
    if (p->rank + 1 < p->size)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[p->rank + 1].progress, o->base + a->count,
                             p->pid[p->rank + 1]);
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

void strata_scan_start(struct strata_scan_task *o, struct strata_plane *p,
                       const struct strata_reduce_args *a, int exclusive)
{
    o->a = *a;
    o->exclusive = exclusive;
    o->coll = exclusive ? STRATA_COLL_EXSCAN : STRATA_COLL_SCAN;
    o->operand = a->sendbuf ? a->sendbuf : a->recvbuf;
    o->prefix = NULL;
    size_t bytes = a->count * a->extent;
    if (bytes == 0) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    size_t window = strata_rs_window(p);
    if (bytes <= window || !strata_plane_single_copy(p)) {
        strata_task_init(&o->op, p, cico_progress);
        o->per_round = window / a->extent ? window / a->extent : 1;
        return;
    }
    strata_task_init(&o->op, p, prefix_progress);
    o->chunk = strata_tuning()->reduce_chunk / a->extent ? strata_tuning()->reduce_chunk / a->extent
                                                         : 1;
    /* Exscan on two ranks: rank 1 reads rank 0's operand, whole from the
     * start, straight into its result, and nobody reads rank 1: one read
     * instead of one per chunk.  (Scan keeps its chunks: each is combined
     * while still in the cache.) */
    if (exclusive && p->rank == 1 && p->size == 2) o->chunk = a->count;
    /* What this rank exposes: s_r, complete from the start at rank 0. */
    const void *exposed;
    uint64_t done = 0;
    if (p->rank == 0) {
        exposed = o->operand;
        done = a->count;
    } else if (!exclusive) {
        exposed = a->recvbuf;
    } else if (p->rank + 1 < p->size) {
        o->prefix = strata_plane_acc_scratch(p, bytes);
        if (!o->prefix) {
            strata_error("out of memory for a %zu-byte Exscan prefix", bytes);
            abort();
        }
        exposed = o->prefix;
    } else {
        exposed = NULL; /* the last rank's prefix has no reader */
    }
    o->base = strata_plane_enter_progress(p, a->count, exposed, NULL, done);
}

int strata_scan(struct strata_plane *p, const struct strata_reduce_args *a, int exclusive)
{
    struct strata_scan_task o;
    strata_scan_start(&o, p, a, exclusive);
    return strata_task_run(&o.op);
}
