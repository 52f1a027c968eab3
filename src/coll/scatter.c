/* Scatter inside a node with Cross-Memory Attach (paper IV-A): rank r gets
 * bytes [r * block, (r + 1) * block) of the root's send buffer in one copy.
 *
 * Either the non-roots pull their blocks from the root's exposed send buffer
 * (parallel read; throttled read lets at most k pull at once), or the root
 * pushes each block into the non-root's exposed receive buffer in turn
 * (sequential write).
 *
 * Non-roots take turns in the order root+1, root+2, ... (mod size): turn t,
 * from 1 to size-1, is rank (root + t) % size.  The throttle hands turns on
 * point to point, without barriers: turn t reads once turn t-k has
 * acknowledged, so at most k readers touch the root at any time; with
 * k >= size-1 nobody waits and it is the parallel read.  Resumable
 * operations (coll/task.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/turns.h"
#include "util/colls.h"
#include "util/stats.h"

/* The root's own block, unless it is already in place. */
static void copy_own_block(const struct strata_block_args *a)
{
    if (a->recv) memcpy(a->recv, a->send + (size_t)a->root * a->block, a->block);
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* Pulls with at most k readers at once (see the top of the file). */
static int read_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int root = a->root;
    STRATA_TASK_BEGIN(op);
    if (p->rank == root) {
        copy_own_block(a); /* overlaps with the non-roots' reads */
        /* The send buffer is free again once every turn acknowledged. */
        STRATA_TASK_AWAIT_ALL_TURNS(op, p, root, o->base, o->k, o->t);
    } else {
        STRATA_TASK_AWAIT_TURN(op, p, root, o->base, o->k);
        /* The acquire makes the root's buf of this operation visible; the
         * root cannot leave it before this rank acknowledges. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].seq, o->base, p->pid[root]);
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[root].buf);
        strata_plane_pull(p, STRATA_COLL_SCATTER, root, src + (size_t)p->rank * a->block, a->recv,
                          a->block);
    }
    /* Release: done with the root's buffer; hands the turn on to turn + k. */
    strata_plane_publish(p, &p->ctl[p->rank].ack, o->base);
    STRATA_TASK_END(op);
}

static void read_start(struct strata_block_task *o, struct strata_plane *p,
                       const struct strata_block_args *a, int k)
{
    strata_task_init(&o->op, p, read_progress);
    o->a = *a;
    o->k = k;
    o->base = strata_plane_enter(p, 0, p->rank == a->root ? a->send : NULL, NULL);
}

void strata_scatter_parallel_read_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a)
{
    read_start(o, p, a, p->size > 1 ? p->size - 1 : 1);
}

void strata_scatter_throttled_read_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a)
{
    read_start(o, p, a, a->k);
}

int strata_scatter_parallel_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_scatter_parallel_read_start, p, a);
}

int strata_scatter_throttled_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_scatter_throttled_read_start, p, a);
}

/* The root writes turn t's block, then publishes progress = base + t, which
 * that non-root waits for before returning. */
static int sequential_write_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    int root = a->root;
    STRATA_TASK_BEGIN(op);
    if (p->rank == root) {
        for (o->t = 1; o->t <= p->size - 1; o->t++) {
            /* The acquire makes r's acc of this operation visible; r cannot
             * leave before the progress below tells it its block is there. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[strata_turn_rank(p, root, o->t)].seq, o->base,
                                 p->pid[strata_turn_rank(p, root, o->t)]);
            int r = strata_turn_rank(p, root, o->t);
            unsigned char *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[r].acc);
            strata_plane_push(p, STRATA_COLL_SCATTER, r, dst, a->send + (size_t)r * a->block,
                              a->block);
            /* Release: turn t's block is in its buffer; it may return. */
            strata_plane_publish(p, &me->progress, o->base + (uint64_t)o->t);
        }
        /* Last, so that no non-root waits behind the root's own copy. */
        copy_own_block(a);
    } else {
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].progress,
                             o->base + (uint64_t)strata_rank_turn(p, root, p->rank), p->pid[root]);
    }
    /* Release, for uniformity: this rank touches no peer's memory again. */
    strata_plane_publish(p, &me->ack, o->base);
    STRATA_TASK_END(op);
}

void strata_scatter_sequential_write_start(struct strata_block_task *o, struct strata_plane *p,
                                           const struct strata_block_args *a)
{
    strata_task_init(&o->op, p, sequential_write_progress);
    o->a = *a;
    int at_root = p->rank == a->root;
    o->base = strata_plane_enter(p, (size_t)(p->size - 1), NULL, at_root ? NULL : a->recv);
}

int strata_scatter_sequential_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_scatter_sequential_write_start, p, a);
}
