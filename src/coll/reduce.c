/* Reduce and Allreduce inside a node (XHC section IV-B, on CMA).
 *
 * Level by level, the participants of a group share each chunk: participant
 * j reduces slice j, pulling that slice of every participant's data (level
 * 0: its send buffer; above: its accumulation buffer, where the level below
 * left its group's result) into private scratch, combining the operands in
 * participant order, and writing the slice into the group leader's
 * accumulation buffer.  It then advances done[level].  A participant's data
 * at level l is ready for chunk k once every member of the group it leads at
 * level l-1 has done[l-1] past k.  Allreduce reduces towards rank 0 and
 * pipelines the broadcast of each finished chunk back down the same tree.
 *
 * Floating-point order: at every level operands are combined left to right
 * in the order of the groups they stand for (ascending lowest rank), never
 * depending on timing or on the root, so results are the same from run to
 * run and, for Allreduce, on every rank. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/task.h"
#include "coll/tree.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

static int coll_of(const struct strata_reduce_args *a)
{
    return a->root < 0 ? STRATA_COLL_ALLREDUCE : STRATA_COLL_REDUCE;
}

/* struct reduce_call (this rank's plan of the call) is declared in
 * coll.h, inside the resumable operation. */

/* This rank's roles for the call's root: the plane's plan, worked out when
 * the root changes. */
STRATA_HOT static void plan_roles(struct reduce_call *c)
{
    struct strata_plane *p = c->p;
    struct strata_reduce_plan *plan = &p->plan;
    if (plan->root != c->top_root) {
        plan->nlev = strata_tree_levels_of(p->hier, c->top_root, p->rank);
        for (int l = 0; l < plan->nlev; l++) {
            struct level_role *r = &plan->role[l];
            r->who = p->part_buf + (size_t)l * (size_t)p->size;
            r->n = strata_tree_participants(p->hier, c->top_root, l, p->rank, r->who);
            r->me = 0;
            while (r->who[r->me] != p->rank) r->me++;
            r->leader = strata_tree_leader(p->hier, c->top_root, l,
                                           p->hier->level[l].group_of[p->rank]);
        }
        plan->top = p->part_buf + (size_t)STRATA_MAX_HIER * (size_t)p->size;
        plan->ntop = strata_tree_participants(p->hier, c->top_root, p->hier->nlevels - 1,
                                              c->top_root, plan->top);
        plan->root = c->top_root;
    }
    c->nlev = plan->nlev;
    c->role = plan->role;
}

/* Bytes of elements [first, first + n): the last element of the vector
 * counts only up to its true extent. */
static size_t span_bytes(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* Slice s of a chunk of n elements shared by `parts` reducers. */
static void slice_of(const struct reduce_call *c, int parts, size_t n, int s, size_t *lo,
                     size_t *hi)
{
    size_t min_elems = strata_tuning()->min_slice / c->a->extent;
    size_t nslices = min_elems ? n / min_elems : n;
    if (nslices > (size_t)parts) nslices = (size_t)parts;
    if (nslices == 0) nslices = 1;
    if ((size_t)s >= nslices) {
        *lo = *hi = 0;
        return;
    }
    *lo = n * (size_t)s / nslices;
    *hi = n * ((size_t)s + 1) / nslices;
}

/* The address of participant q's data at level l (its operand at level 0,
 * its accumulation buffer above). */
static unsigned char *source_of(const struct reduce_call *c, int l, int q)
{
    strata_flag *addr = l == 0 ? &c->p->ctl[q].buf : &c->p->ctl[q].acc;
    return (void *)(uintptr_t)strata_flag_read(addr);
}

/* Copies bytes of participant q's data at level l, offset off, into dst
 * (CMA for a peer, memcpy for this rank). */
static void fetch(struct reduce_call *c, int l, int q, size_t off, void *dst, size_t bytes)
{
    struct strata_plane *p = c->p;
    const unsigned char *src = source_of(c, l, q);
    if (q == p->rank) {
        memcpy(dst, src + off, bytes);
        return;
    }
    strata_plane_pull(p, coll_of(c->a), q, src + off, dst, bytes);
}

/* Scratch region i (0, 1 or 2) for a slice of `bytes`: page-aligned, with a
 * page of slack so data can be placed at any page offset. */
static unsigned char *scratch_region(struct strata_plane *p, int i, size_t bytes)
{
    size_t stride = (bytes + 2 * 4096 - 1) / 4096 * 4096;
    unsigned char *base = strata_plane_scratch(p, 3 * stride);
    if (!base) {
        strata_error("out of memory for a %zu-byte reduction slice", 3 * stride);
        abort();
    }
    return base + (size_t)i * stride;
}

/* A place in `region` at the same page offset as a peer's buffer.  A copy
 * whose destination sits a few bytes ahead of its source within the page
 * makes every load wait on the store just made (4K aliasing): several times
 * slower than a copy between buffers at equal page offsets. */
static unsigned char *matching(unsigned char *region, const void *peer)
{
    return region + ((uintptr_t)peer & 4095);
}

/* Where this rank combines its slice: straight in the destination when that
 * is its own buffer, saving a copy, unless its own operand lives there and
 * is not first in line (it would be overwritten before its turn), or the
 * slice ends in a padded element (kernels write whole elements, and the
 * padding of MPI_DOUBLE_INT & co. may lie past the user's buffer). */
static unsigned char *accumulator(struct reduce_call *c, const struct level_role *r, int l,
                                  int target, unsigned char *dst, size_t off, size_t elems,
                                  int tail)
{
    struct strata_plane *p = c->p;
    int alias = source_of(c, l, p->rank) + off == dst;
    if (target == p->rank && !tail && (!alias || r->who[0] == p->rank)) return dst;
    return matching(scratch_region(p, 0, elems * c->a->extent), dst);
}


/* ---- The single-copy path, one chunk at one level, in three pieces so
 * that the waits between them can return (coll/task.h). */

/* Chunk k at level l: this rank's slice, where it goes, where it is built.
 * Returns 0 if this rank has no slice of the chunk at this level. */
static int chunk_level_begin(struct strata_reduce_task *o, int l, size_t k)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    const struct level_role *r = &c->role[l];
    size_t c0 = k * c->chunk_elems;
    size_t n = a->count - c0 < c->chunk_elems ? a->count - c0 : c->chunk_elems;
    size_t lo, hi;
    slice_of(c, r->n, n, r->me, &lo, &hi);
    if (hi <= lo) return 0;
    o->first = c0 + lo;
    o->elems = hi - lo;
    o->off = o->first * a->extent;
    o->bytes = span_bytes(a, o->first, o->elems);
    o->tail = a->true_extent < a->extent && o->first + o->elems == a->count;
    /* Allreduce keeps each top-level slice where it was reduced: the top
     * participants then read each other's slices (reduce-scatter, then
     * allgather), which moves half the bytes of sending every slice to
     * one leader and broadcasting it back. */
    int keep = a->root < 0 && l == p->hier->nlevels - 1;
    o->target = keep ? p->rank : r->leader;
    o->dst = source_of(c, 1, o->target) + o->off;
    o->acc = accumulator(c, r, l, o->target, o->dst, o->off, o->elems, o->tail);
    o->operand0 = NULL;
    return 1;
}

/* Operand i of the slice, once its data is ready: operand 0 is only
 * located; from operand 1 on, each is combined into acc (the first two meet
 * there directly, so nothing is copied just to be combined).  Peers'
 * operands land in scratch at their own page offset; this rank's padded
 * last element is copied out first rather than read past its buffer's end. */
static void chunk_level_operand(struct strata_reduce_task *o, int l, int i)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    int q = c->role[l].who[i];
    unsigned char *region = scratch_region(p, i == 1 ? 2 : 1, o->elems * a->extent);
    const unsigned char *operand = source_of(c, l, q) + o->off;
    /* A peer's operand in mapped memory is combined where it lies, with no
     * copy (a padded tail is copied: the kernels read whole elements). */
    const void *mapped = q != p->rank && !o->tail
                             ? strata_plane_map(p, coll_of(a), q, operand, o->bytes)
                             : NULL;
    if (mapped) {
        operand = mapped;
    } else if (q != p->rank || o->tail) {
        unsigned char *into = matching(region, operand);
        fetch(c, l, q, o->off, into, o->bytes);
        operand = into;
    }
    if (i == 0) o->operand0 = operand;
    else strata_combine(a, o->acc, i == 1 ? o->operand0 : o->acc, operand, o->elems);
}

static void chunk_level_finish(struct strata_reduce_task *o, int l)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    if (c->role[l].n == 1 && o->operand0 != o->acc) memcpy(o->acc, o->operand0, o->bytes);
    if (o->acc == o->dst) {
        /* already in place */
    } else if (o->target == p->rank) {
        memcpy(o->dst, o->acc, o->bytes);
    } else {
        strata_plane_push(p, coll_of(c->a), o->target, o->dst, o->acc, o->bytes);
    }
}

/* Whether this rank takes part in the top level (Allreduce's allgather). */
static int at_top(const struct reduce_call *c) { return c->nlev == c->p->hier->nlevels; }

static struct strata_reduce_task *reduce_of(struct strata_task *op)
{
    return (struct strata_reduce_task *)((char *)op - offsetof(struct strata_reduce_task, op));
}

/* Waits until participant q = role[l].who[o->i] has its data at level l
 * ready for a target value (level 0: send buffers are complete from the
 * start; above: every member of the group q leads one level down is done).
 * The member list lives in the plane (tree_buf), the index in the op. */
#define AWAIT_SOURCE_READY(op, o, c, p, l, target)                                           \
    if ((l) > 0) {                                                                         \
        (o)->nmembers = strata_tree_participants((p)->hier, (c)->top_root, (l) - 1,        \
                                                 (c)->role[l].who[(o)->i], (o)->members);  \
        for ((o)->j = 0; (o)->j < (o)->nmembers; (o)->j++)                                 \
            STRATA_TASK_AWAIT_GE(op, &(p)->ctl[(o)->members[(o)->j]].done[(l) - 1], (target), \
                                 (p)->pid[(o)->members[(o)->j]]);                          \
    }

static int single_copy_progress(struct strata_task *op)
{
    struct strata_reduce_task *o = reduce_of(op);
    struct reduce_call *c = &o->c;
    struct strata_plane *p = op->p;
    const struct strata_reduce_args *a = c->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    int allreduce = a->root < 0;
    STRATA_TASK_BEGIN(op);
    /* Every participant has exposed its buffers (acquire: buf and acc). */
    for (o->l = 0; o->l < c->nlev; o->l++)
        for (o->i = 0; o->i < c->role[o->l].n; o->i++)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[c->role[o->l].who[o->i]].seq, c->base,
                                 p->pid[c->role[o->l].who[o->i]]);
    if (allreduce && o->parent >= 0)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->parent].seq, c->base, p->pid[o->parent]);

    for (o->k = 0; o->k < c->nchunks; o->k++) {
        for (o->l = 0; o->l < c->nlev; o->l++) {
            if (chunk_level_begin(o, o->l, o->k)) {
                for (o->i = 0; o->i < c->role[o->l].n; o->i++) {
                    AWAIT_SOURCE_READY(op, o, c, p, o->l, c->base + o->k + 1);
                    chunk_level_operand(o, o->l, o->i);
                }
                chunk_level_finish(o, o->l);
            }
            /* Release: the target buffer holds this slice before anyone sees it. */
            strata_plane_publish(p, &me->done[o->l], c->base + o->k + 1);
        }
        if (!allreduce) continue;
        /* Allreduce: bring chunk k of the final result into recvbuf, from
         * the other top participants (once they marked it reduced: a
         * slice's owner has read everyone's partial data of it by then) or,
         * below the top, from the parent. */
        o->c0 = o->k * c->chunk_elems;
        o->n = a->count - o->c0 < c->chunk_elems ? a->count - o->c0 : c->chunk_elems;
        if (at_top(c)) {
            for (o->i = 0; o->i < c->role[c->nlev - 1].n; o->i++) {
                size_t lo, hi;
                slice_of(c, c->role[c->nlev - 1].n, o->n, o->i, &lo, &hi);
                if (c->role[c->nlev - 1].who[o->i] == p->rank || hi == lo) continue;
                STRATA_TASK_AWAIT_GE(op, &p->ctl[c->role[c->nlev - 1].who[o->i]].done[c->nlev - 1],
                                     c->base + o->k + 1, p->pid[c->role[c->nlev - 1].who[o->i]]);
                slice_of(c, c->role[c->nlev - 1].n, o->n, o->i, &lo, &hi);
                size_t off = (o->c0 + lo) * a->extent;
                fetch(c, 1, c->role[c->nlev - 1].who[o->i], off,
                      (unsigned char *)a->recvbuf + off, span_bytes(a, o->c0 + lo, hi - lo));
            }
        } else {
            STRATA_TASK_AWAIT_GE(op, &p->ctl[o->parent].progress,
                                 c->base + (o->c0 + o->n) * a->extent, p->pid[o->parent]);
            fetch(c, 1, o->parent, o->c0 * a->extent, (unsigned char *)a->recvbuf + o->c0 * a->extent,
                  span_bytes(a, o->c0, o->n));
        }
        /* Release: children that see the count can read these bytes. */
        strata_plane_publish(p, &me->progress, c->base + (o->c0 + o->n) * a->extent);
    }
    if (allreduce) {
        /* tree_buf was reused by the reducers: list the children again. */
        o->nchildren = strata_tree_links(p->hier, 0, p->rank, &o->parent, p->tree_buf);
        for (o->i = 0; o->i < o->nchildren; o->i++)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[p->tree_buf[o->i]].ack, c->base,
                                 p->pid[p->tree_buf[o->i]]);
        /* The other top participants read our slices: wait until they hold
         * the whole result. */
        for (o->i = 0; at_top(c) && o->i < c->role[c->nlev - 1].n; o->i++)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[c->role[c->nlev - 1].who[o->i]].progress,
                                 c->base + a->count * a->extent,
                                 p->pid[c->role[c->nlev - 1].who[o->i]]);
        strata_plane_publish(p, &me->ack, c->base);
    } else {
        /* Every reducer that reads from or writes to this rank's buffers. */
        for (o->l = 0; o->l < c->nlev; o->l++)
            for (o->i = 0; o->i < c->role[o->l].n; o->i++)
                STRATA_TASK_AWAIT_GE(op, &p->ctl[c->role[o->l].who[o->i]].done[o->l],
                                     c->base + c->nchunks, p->pid[c->role[o->l].who[o->i]]);
    }
    STRATA_TASK_END(op);
}

static void single_copy_start(struct strata_reduce_task *o)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    int allreduce = a->root < 0;
    plan_roles(c);
    c->chunk_elems = strata_tuning()->reduce_chunk / a->extent;
    if (c->chunk_elems == 0) c->chunk_elems = 1;
    c->nchunks = (a->count + c->chunk_elems - 1) / c->chunk_elems;
    /* What this rank exposes: its operand, and where its group results go. */
    const void *operand = a->sendbuf ? a->sendbuf : a->recvbuf;
    void *acc = NULL;
    if (allreduce || p->rank == a->root) acc = a->recvbuf;
    else if (c->nlev > 1 && !(acc = strata_plane_acc_scratch(p, a->count * a->extent))) {
        strata_error("out of memory for a %zu-byte reduction buffer", a->count * a->extent);
        abort();
    }
    c->base = strata_plane_enter_progress(p, a->count * a->extent, operand, acc, 0);
    o->parent = -1;
    o->nchildren = 0;
    if (allreduce) o->nchildren = strata_tree_links(p->hier, 0, p->rank, &o->parent, p->tree_buf);
}

/* ---- Small payloads: operands and partial results live in the segment,
 * and reducers combine straight from it into the leader's region. */

static void cico_start(struct strata_reduce_task *o, const struct strata_reduce_args *a)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    c->a = a;
    c->top_root = a->root < 0 ? 0 : a->root;
    plan_roles(c);
    c->chunk_elems = a->count;
    c->nchunks = 1;
    c->base = strata_plane_enter(p, a->count * a->extent, NULL, NULL); /* entered: done reading
                                                                           older regions */
}

STRATA_HOT static int cico_steps(struct strata_reduce_task *o, struct strata_task *step)
{
    struct reduce_call *c = &o->c;
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(step);
    STRATA_TASK_AWAIT_REGIONS_FREE(step, p, o->i);
    memcpy(strata_plane_region(p, p->rank, STRATA_REGION_IN), a->sendbuf ? a->sendbuf : a->recvbuf,
           span_bytes(a, 0, a->count));
    strata_plane_publish(p, &me->progress, c->base + 1); /* the operand is in the region */

    for (o->l = 0; o->l < c->nlev; o->l++) {
        slice_of(c, c->role[o->l].n, a->count, c->role[o->l].me, &o->lo, &o->hi);
        for (o->i = 0; o->hi > o->lo && o->i < c->role[o->l].n; o->i++) {
            if (o->l == 0)
                STRATA_TASK_AWAIT_GE(step, &p->ctl[c->role[0].who[o->i]].progress, c->base + 1,
                                     p->pid[c->role[0].who[o->i]]);
            AWAIT_SOURCE_READY(step, o, c, p, o->l, c->base + 1);
            int q = c->role[o->l].who[o->i];
            size_t off = o->lo * a->extent, len = (o->hi - o->lo) * a->extent;
            unsigned char *dst =
                strata_plane_region(p, c->role[o->l].leader, STRATA_REGION_ACC0 + o->l) + off;
            const unsigned char *src = strata_plane_region(
                p, q, o->l == 0 ? STRATA_REGION_IN : STRATA_REGION_ACC0 + o->l - 1);
            if (o->i == 0) memcpy(dst, src + off, len);
            else strata_combine(a, dst, dst, src + off, o->hi - o->lo);
            if (p->stats && q != p->rank) strata_stats_bytes(coll_of(a), p->dist[q], len);
        }
        strata_plane_publish(p, &me->done[o->l], c->base + 1); /* release: the slice is written */
    }

    if (a->root < 0 || p->rank == a->root) {
        /* The result is in the top leader's region once the top group is done. */
        for (o->j = 0; o->j < p->plan.ntop; o->j++)
            STRATA_TASK_AWAIT_GE(step, &p->ctl[p->plan.top[o->j]].done[p->hier->nlevels - 1],
                                 c->base + 1, p->pid[p->plan.top[o->j]]);
        memcpy(a->recvbuf,
               strata_plane_region(p, c->top_root, STRATA_REGION_ACC0 + p->hier->nlevels - 1),
               span_bytes(a, 0, a->count));
        if (p->stats && c->top_root != p->rank)
            strata_stats_bytes(coll_of(a), p->dist[c->top_root], a->count * a->extent);
    }
    STRATA_TASK_END(step);
}

STRATA_HOT static int cico_progress(struct strata_task *op) { return cico_steps(reduce_of(op), op); }

/* Without a single-copy transport, the segment carries the vector in
 * rounds of one region each. */
static int rounds_progress(struct strata_task *op)
{
    struct strata_reduce_task *o = reduce_of(op);
    const struct strata_reduce_args *a = &o->a;
    STRATA_TASK_BEGIN(op);
    for (o->first = 0; o->first < a->count; o->first += o->per_round) {
        size_t off = o->first * a->extent;
        o->part = *a;
        o->part.count = a->count - o->first < o->per_round ? a->count - o->first : o->per_round;
        o->part.sendbuf = a->sendbuf ? (const unsigned char *)a->sendbuf + off : NULL;
        o->part.recvbuf = a->recvbuf ? (unsigned char *)a->recvbuf + off : NULL;
        if (o->first + o->part.count < a->count) o->part.true_extent = o->part.extent;
        cico_start(o, &o->part);
        o->step.resume = 0;
        STRATA_TASK_AWAIT_STEPS(op, &o->step, cico_steps(o, &o->step));
    }
    STRATA_TASK_END(op);
}

static int tiny_progress(struct strata_task *op)
{
    struct strata_reduce_task *o = reduce_of(op);
    STRATA_TASK_BEGIN(op);
    STRATA_TASK_AWAIT_STEPS(op, &o->tiny.op, strata_task_step(&o->tiny.op));
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

STRATA_HOT void strata_reduce_start(struct strata_reduce_task *o, struct strata_plane *p,
                         const struct strata_reduce_args *a)
{
    o->a = *a;
    o->c.p = p;
    o->c.a = &o->a;
    o->c.top_root = a->root < 0 ? 0 : a->root;
    o->members = p->tree_buf + 2 * (size_t)p->size;
    o->step.waits = 0;
    o->step.waiting_for = 0;
    o->step.p = p; /* the plane whose flags the step awaits (shm/wait.h) */
    o->step.wait_flag = NULL;
    size_t bytes = a->count * a->extent;
    if (p->size == 1 || bytes == 0) {
        if (bytes && a->sendbuf && (a->root < 0 || p->rank == a->root))
            memcpy(a->recvbuf, a->sendbuf, span_bytes(a, 0, a->count));
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (a->root < 0 && bytes <= STRATA_TINY_MAX) {
        strata_task_init(&o->op, p, tiny_progress);
        strata_allreduce_tiny_start(&o->tiny, p, a);
    } else if (bytes <= region) {
        strata_task_init(&o->op, p, cico_progress);
        cico_start(o, &o->a);
    } else if (strata_plane_single_copy(p)) {
        strata_task_init(&o->op, p, single_copy_progress);
        single_copy_start(o);
    } else {
        strata_task_init(&o->op, p, rounds_progress);
        o->per_round = p->region / a->extent;
    }
}

STRATA_HOT int strata_reduce(struct strata_plane *p, const struct strata_reduce_args *a)
{
    /* The tiny Allreduce runs as an operation of its own here rather than
     * as a step nested in the reduction's (as strata_reduce_start makes
     * it): one progress call and copy of the arguments less (issue 14). */
    size_t bytes = a->count * a->extent;
    if (a->root < 0 && p->size > 1 && bytes && bytes <= STRATA_TINY_MAX)
        return strata_allreduce_tiny(p, a);
    struct strata_reduce_task o;
    strata_reduce_start(&o, p, a);
    return strata_task_run(&o.op);
}
