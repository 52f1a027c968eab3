/* Barrier inside a node: an arrival wave up the hierarchy (each leader waits
 * for its children, whose flag stands for their whole subtree), then a
 * release wave down.  A resumable operation (coll/task.h). */
#include <stddef.h>

#include "coll/coll.h"
#include "coll/task.h"
#include "coll/tree.h"

static int barrier_progress(struct strata_task *op)
{
    struct strata_barrier_task *o =
        (struct strata_barrier_task *)((char *)op - offsetof(struct strata_barrier_task, op));
    struct strata_plane *p = op->p;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    for (o->i = 0; o->i < o->nchildren; o->i++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->children[o->i]].arrive, o->base,
                             p->pid[o->children[o->i]]);
    if (o->parent >= 0) {
        strata_plane_publish(p, &me->arrive, o->base);
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->parent].release, o->base, p->pid[o->parent]);
    }
    if (o->nchildren > 0) strata_plane_publish(p, &me->release, o->base);
    /* The release wave starts once every rank arrived: whoever is released
     * knows every rank entered this op (the flag lines' reuse, plane.h). */
    strata_plane_known_entered(p, o->base);
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

void strata_barrier_start(struct strata_barrier_task *o, struct strata_plane *p)
{
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, barrier_progress);
    o->children = p->tree_buf;
    o->nchildren = strata_tree_links(p->hier, 0, p->rank, &o->parent, p->tree_buf);
    o->base = strata_plane_enter(p, 0, NULL, NULL);
}

int strata_barrier(struct strata_plane *p)
{
    struct strata_barrier_task o;
    strata_barrier_start(&o, p);
    return strata_task_run(&o.op);
}
