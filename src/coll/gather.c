/* Gather inside a node with Cross-Memory Attach (paper IV-B), the mirror of
 * Scatter: rank r's block lands at bytes [r * block, (r + 1) * block) of the
 * root's receive buffer in one copy.
 *
 * Either the non-roots push their blocks into the root's exposed receive
 * buffer (parallel write; throttled write lets at most k push at once), or
 * the root pulls each block from the non-root's exposed send buffer in turn
 * (sequential read).
 *
 * Non-roots take turns in the order root+1, root+2, ... (mod size): turn t,
 * from 1 to size-1, is rank (root + t) % size.  The throttle hands turns on
 * point to point, without barriers: turn t writes once turn t-k has
 * acknowledged, so at most k writers touch the root at any time; with
 * k >= size-1 nobody waits and it is the parallel write.  Resumable
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
    if (a->send) memcpy(a->recv + (size_t)a->root * a->block, a->send, a->block);
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* Pushes with at most k writers at once (see the top of the file). */
static int write_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int root = a->root;
    STRATA_TASK_BEGIN(op);
    if (p->rank == root) {
        copy_own_block(a); /* overlaps with the non-roots' writes */
        STRATA_TASK_AWAIT_ALL_TURNS(op, p, root, o->base, o->k, o->t); /* every block is in place */
    } else {
        STRATA_TASK_AWAIT_TURN(op, p, root, o->base, o->k);
        /* The acquire makes the root's acc of this operation visible; the
         * root cannot leave it before this rank acknowledges. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].seq, o->base, p->pid[root]);
        unsigned char *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[root].acc);
        strata_plane_push(p, STRATA_COLL_GATHER, root, dst + (size_t)p->rank * a->block, a->send,
                          a->block);
    }
    /* Release: this rank's block is in the root's buffer (the root may
     * return once it has them all); hands the turn on to turn + k. */
    strata_plane_publish(p, &p->ctl[p->rank].ack, o->base);
    STRATA_TASK_END(op);
}

static void write_start(struct strata_block_task *o, struct strata_plane *p,
                        const struct strata_block_args *a, int k)
{
    strata_task_init(&o->op, p, write_progress);
    o->a = *a;
    o->k = k;
    o->base = strata_plane_enter(p, 0, NULL, p->rank == a->root ? a->recv : NULL);
}

void strata_gather_parallel_write_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a)
{
    write_start(o, p, a, p->size > 1 ? p->size - 1 : 1);
}

void strata_gather_throttled_write_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a)
{
    write_start(o, p, a, a->k);
}

int strata_gather_parallel_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_gather_parallel_write_start, p, a);
}

int strata_gather_throttled_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_gather_throttled_write_start, p, a);
}

/* The root reads turn t's block, then publishes progress = base + t, which
 * that non-root waits for before returning: its send buffer must stay as it
 * is until read. */
static int sequential_read_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    int root = a->root;
    STRATA_TASK_BEGIN(op);
    if (p->rank == root) {
        for (o->t = 1; o->t <= p->size - 1; o->t++) {
            /* The acquire makes r's buf of this operation visible; r cannot
             * leave before the progress below tells it its block was read. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[strata_turn_rank(p, root, o->t)].seq, o->base,
                                 p->pid[strata_turn_rank(p, root, o->t)]);
            int r = strata_turn_rank(p, root, o->t);
            const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[r].buf);
            strata_plane_pull(p, STRATA_COLL_GATHER, r, src, a->recv + (size_t)r * a->block,
                              a->block);
            /* Release: turn t's send buffer is free again; it may return. */
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

void strata_gather_sequential_read_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a)
{
    strata_task_init(&o->op, p, sequential_read_progress);
    o->a = *a;
    int at_root = p->rank == a->root;
    o->base = strata_plane_enter(p, (size_t)(p->size - 1), at_root ? NULL : a->send, NULL);
}

int strata_gather_sequential_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_gather_sequential_read_start, p, a);
}
