/* Allreduce of a payload that fits in a flag line (up to STRATA_TINY_MAX
 * bytes): every rank writes its operand next to its flag, reads every
 * other rank's line, and folds all operands itself.
 *
 * One cache-line hand-off per peer instead of three (arrival, reduced
 * result, result bytes), and no reducer to wait for.  The fold follows the
 * hierarchy exactly as the distributed algorithm does (each group's
 * participants in order, level by level), so results are bit-identical to
 * the larger paths and the same on every rank.
 *
 * Reading every rank's line of operation o also tells this rank that every
 * rank has entered o, so the next operation's region check, and the next
 * slots' reuse (plane.h, "The flag lines"), are free.
 *
 * A resumable operation (coll/task.h): value[], filled across awaits, lives
 * in the plane's tree_buf, not on the stack. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/task.h"
#include "coll/tree.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

STRATA_HOT static int tiny_progress(struct strata_task *op)
{
    struct strata_tiny_task *o = (struct strata_tiny_task *)((char *)op -
                                                             offsetof(struct strata_tiny_task, op));
    struct strata_plane *p = op->p;
    const struct strata_reduce_args *a = &o->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    /* Each rank's current value: its operand, then its groups' results. */
    const unsigned char **value = (const unsigned char **)p->tree_buf;
    STRATA_TASK_BEGIN(op);
    STRATA_TASK_AWAIT_SLOT_FREE(op, p, o->r); /* nobody still reads our line of this slot */
    memcpy(me->line[o->slot][0].data, a->sendbuf ? a->sendbuf : a->recvbuf, o->span);
    /* Release: the data goes with it. */
    strata_plane_publish(p, &me->line[o->slot][0].flag, strata_plane_line_value(p, o->base));

    for (o->r = 0; o->r < p->size; o->r++) {
        /* Acquire: the line's bytes are those of this operation. */
        if (o->r != p->rank) {
            STRATA_TASK_AWAIT_GE(op, &p->ctl[o->r].line[o->slot][0].flag, o->base, p->pid[o->r]);
            strata_plane_line_read(p, &p->ctl[o->r].line[o->slot][0].flag, o->base);
        }
        value[o->r] = p->ctl[o->r].line[o->slot][0].data;
        if (p->stats && o->r != p->rank)
            strata_stats_bytes(STRATA_COLL_ALLREDUCE, p->dist[o->r], o->span);
    }
    strata_plane_known_entered(p, o->base);

    unsigned char *results = strata_plane_scratch(p, (size_t)p->size * STRATA_CACHE_LINE);
    if (!results) {
        strata_error("out of memory for a tiny Allreduce");
        abort();
    }
    /* After value[] (size pointers: 2 size ints); part_buf holds the
     * reductions' plan (plane.h). */
    int *who = p->tree_buf + 2 * (size_t)p->size;
    for (int l = 0; l < p->hier->nlevels; l++) {
        const struct strata_hier_level *L = &p->hier->level[l];
        for (int g = 0; g < L->ngroups; g++) {
            int n = strata_tree_participants(p->hier, 0, l, L->leader[g], who);
            unsigned char *res = results + (size_t)who[0] * STRATA_CACHE_LINE;
            if (n == 1) continue;
            /* who[0] leads the group (root 0: leaders are lowest ranks), so
             * res may alias the first operand but never a later one. */
            strata_combine(a, res, value[who[0]], value[who[1]], a->count);
            for (int i = 2; i < n; i++) strata_combine(a, res, res, value[who[i]], a->count);
            value[who[0]] = res;
        }
    }
    memcpy(a->recvbuf, value[0], o->span);
    STRATA_TASK_END(op);
}

STRATA_HOT void strata_allreduce_tiny_start(struct strata_tiny_task *o, struct strata_plane *p,
                                 const struct strata_reduce_args *a)
{
    strata_task_init(&o->op, p, tiny_progress);
    o->a = *a;
    o->span = (a->count - 1) * a->extent + a->true_extent;
    /* Entered: done reading older lines. */
    o->base = strata_plane_enter(p, a->count * a->extent, NULL, NULL);
    o->slot = strata_plane_slot(p);
}

STRATA_HOT int strata_allreduce_tiny(struct strata_plane *p, const struct strata_reduce_args *a)
{
    struct strata_tiny_task o;
    strata_allreduce_tiny_start(&o, p, a);
    return strata_task_run(&o.op);
}
