/* Reduce_scatter and Reduce_scatter_block inside a node: XHC's slice
 * reduction with the slices chosen by the call.  Rank q's block is reduced
 * by rank q alone, straight from every rank's operand: no gather to a root,
 * no scatter back, and each byte of every operand is read exactly once, by
 * the one rank that needs it.
 *
 * Paths (strata_rs_scan_path names them):
 *  - copy-in/copy-out: the vector goes through the segment in windows of one
 *    region (one window up to STRATA_CICO_MAX; without a single-copy
 *    transport, as many rounds as it takes).  Per window every rank copies
 *    its part of its operand into its IN region and publishes progress, then
 *    folds the part of its block that lies in the window from every rank's
 *    region.
 *  - single copy: every rank exposes its operand; each reads its block from
 *    every peer in chunks of STRATA_REDUCE_CHUNK, peers in rotated order (rank
 *    q starts with q+1) so that not everyone reads rank 0 first, and folds
 *    the chunk in rank order.  ack says a rank has finished reading; a rank
 *    returns once every peer has acked (its operand is free again).
 *
 * Order: operands combine left to right from rank 0 to rank size-1, on every
 * path, so a non-commutative op sees the standard's order and floating-point
 * results do not depend on timing or on the path.
 *
 * In place, the operand is the receive buffer, which peers read until they
 * ack: the block is built in private memory and copied to the start of the
 * receive buffer at the end.  So is a block ending in a padded element (the
 * kernels write whole elements). */
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

static struct strata_rs_task *rs_of(struct strata_task *op)
{
    return (struct strata_rs_task *)((char *)op - offsetof(struct strata_rs_task, op));
}

/* Folds elements [lo, hi) of the vector into acc (which holds the block
 * from element first_mine on): operand 0 is copied, each later one
 * combined.  src: operand q's bytes of element lo. */
static void fold(struct strata_rs_task *o, int q, const unsigned char *src, size_t lo, size_t hi)
{
    const struct strata_reduce_args *a = &o->a.r;
    unsigned char *dst = o->acc + (lo - o->first_mine) * a->extent;
    if (q == 0) memcpy(dst, src, strata_rs_span(a, lo, hi - lo));
    else strata_combine(a, dst, dst, src, hi - lo);
}

/* Publishes the end of reading (ack), waits for every peer's, then puts the
 * block where it belongs.  Shared by both paths as the last steps. */
static void deliver(struct strata_rs_task *o)
{
    const struct strata_reduce_args *a = &o->a.r;
    if (o->mine && o->acc != a->recvbuf)
        memcpy(a->recvbuf, o->acc, strata_rs_span(a, o->first_mine, o->mine));
}

/* ---- Copy-in/copy-out windows through the segment. */

static int cico_progress(struct strata_task *op)
{
    struct strata_rs_task *o = rs_of(op);
    struct strata_plane *p = op->p;
    const struct strata_reduce_args *a = &o->a.r;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
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
        if (!o->mine || o->first_mine + o->mine <= o->first || o->first + o->win <= o->first_mine)
            continue; /* none of this rank's block lies in the window */
        for (o->q = 0; o->q < p->size; o->q++) {
            if (o->q != p->rank)
                STRATA_TASK_AWAIT_GE(op, &p->ctl[o->q].progress, o->base + 1, p->pid[o->q]);
            size_t lo = o->first > o->first_mine ? o->first : o->first_mine;
            size_t end = o->first + o->win, mend = o->first_mine + o->mine;
            size_t hi = end < mend ? end : mend;
            fold(o, o->q,
                 strata_plane_region(p, o->q, STRATA_REGION_IN) + (lo - o->first) * a->extent, lo,
                 hi);
            if (p->stats && o->q != p->rank)
                strata_stats_bytes(o->a.coll, p->dist[o->q], (hi - lo) * a->extent);
        }
    }
    /* Nobody reads this rank's user buffers on this path: the block can go
     * out at once. */
    deliver(o);
    STRATA_TASK_END(op);
}

/* ---- Single copy. */

/* Chunk k of this rank's block from every rank, folded in rank order. */
static void single_copy_chunk(struct strata_rs_task *o, struct strata_plane *p)
{
    const struct strata_reduce_args *a = &o->a.r;
    size_t lo = o->first_mine + o->k * o->chunk;
    size_t n = o->first_mine + o->mine - lo < o->chunk ? o->first_mine + o->mine - lo : o->chunk;
    size_t off = lo * a->extent, bytes = strata_rs_span(a, lo, n);
    /* Pull every peer's chunk, starting after this rank, into its slot. */
    for (int i = 1; i < p->size; i++) {
        int q = (p->rank + i) % p->size;
        const unsigned char *remote =
            (const unsigned char *)(uintptr_t)strata_flag_read(&p->ctl[q].buf) + off;
        unsigned char *slot = strata_rs_matching(strata_rs_slot(p, q, p->size, o->chunk * a->extent),
                                                 remote);
        strata_plane_pull(p, o->a.coll, q, remote, slot, bytes);
    }
    /* Fold in rank order.  This rank's own operand is read in place, but
     * for a padded last element, which is copied out rather than read past
     * the buffer's end. */
    int tail = a->true_extent < a->extent && lo + n == a->count;
    for (int q = 0; q < p->size; q++) {
        const unsigned char *remote =
            (const unsigned char *)(uintptr_t)strata_flag_read(&p->ctl[q].buf) + off;
        unsigned char *slot =
            strata_rs_matching(strata_rs_slot(p, q, p->size, o->chunk * a->extent), remote);
        if (q == p->rank && tail) memcpy(slot, o->operand + off, bytes);
        fold(o, q, q == p->rank && !tail ? o->operand + off : slot, lo, lo + n);
    }
}

static int single_copy_progress(struct strata_task *op)
{
    struct strata_rs_task *o = rs_of(op);
    struct strata_plane *p = op->p;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    /* Acquire: every peer's operand address (published with seq). */
    for (o->q = 0; o->q < p->size; o->q++)
        if (o->q != p->rank) STRATA_TASK_AWAIT_GE(op, &p->ctl[o->q].seq, o->base, p->pid[o->q]);
    /* Operands are complete from the start: no wait between chunks. */
    for (o->k = 0; o->k * o->chunk < o->mine; o->k++) single_copy_chunk(o, p);
    strata_plane_publish(p, &me->ack, o->base); /* this rank reads no peer any more */
    for (o->q = 0; o->q < p->size; o->q++)
        if (o->q != p->rank) STRATA_TASK_AWAIT_GE(op, &p->ctl[o->q].ack, o->base, p->pid[o->q]);
    deliver(o);
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

void strata_reduce_scatter_start(struct strata_rs_task *o, struct strata_plane *p,
                                 const struct strata_rs_args *a)
{
    o->a = *a;
    const struct strata_reduce_args *r = &o->a.r;
    o->first_mine = 0;
    for (int q = 0; q < p->rank; q++) o->first_mine += a->counts[q];
    o->mine = a->counts[p->rank];
    o->operand = r->sendbuf ? r->sendbuf : r->recvbuf;
    size_t bytes = r->count * r->extent;
    if (bytes == 0) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    /* The block is built in the receive buffer unless peers still read it
     * (in place) or its last element is padded (see the top). */
    int tail = r->true_extent < r->extent && o->first_mine + o->mine == r->count;
    o->acc = r->recvbuf;
    if (!r->sendbuf || tail) {
        o->acc = strata_plane_acc_scratch(p, o->mine * r->extent + 1);
        if (!o->acc) {
            strata_error("out of memory for a %zu-byte Reduce_scatter block", o->mine * r->extent);
            abort();
        }
    }
    size_t window = strata_rs_window(p);
    if (bytes <= window || !strata_plane_single_copy(p)) {
        strata_task_init(&o->op, p, cico_progress);
        o->per_round = window / r->extent ? window / r->extent : 1;
        return;
    }
    strata_task_init(&o->op, p, single_copy_progress);
    o->chunk = strata_tuning()->reduce_chunk / r->extent ? strata_tuning()->reduce_chunk / r->extent
                                                         : 1;
    o->base = strata_plane_enter(p, 1, o->operand, NULL);
}

int strata_reduce_scatter(struct strata_plane *p, const struct strata_rs_args *a)
{
    struct strata_rs_task o;
    strata_reduce_scatter_start(&o, p, a);
    return strata_task_run(&o.op);
}
