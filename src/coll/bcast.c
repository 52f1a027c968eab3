/* Broadcast inside a node (XHC's pipelined pull, section IV-A).
 *
 * Every rank pulls from its parent in the per-call tree; leaders re-expose
 * what they pulled, so levels overlap chunk by chunk.  Large payloads move
 * with one CMA copy per chunk from the parent's user buffer; small ones
 * through the parent's region of the segment, and the smallest (one slot of
 * flag lines) straight from the root's flag lines; with CMA off, large
 * payloads go through the segment in rounds of one region each. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/task.h"
#include "coll/tree.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

/* The sibling this rank must let finish a chunk before reading it (the
 * throttle: at most k children of one parent read the same chunk at once),
 * or -1. */
static int throttle_sibling(struct strata_plane *p, int parent, int root)
{
    int k = strata_tuning()->throttle, grand;
    if (k <= 0) return -1;
    int *siblings = p->tree_buf + p->size;
    int n = strata_tree_links(p->hier, root, parent, &grand, siblings);
    for (int i = 0; i < n; i++)
        if (siblings[i] == p->rank) return i >= k ? siblings[i - k] : -1;
    return -1;
}

/* This rank's links in the tree of o->root: the plane's plan, worked out
 * when the root changes (per call, it cost more than an 8-byte copy). */
STRATA_HOT static void tree_links(struct strata_bcast_task *o, struct strata_plane *p)
{
    struct strata_bcast_plan *plan = &p->bcast_plan;
    if (plan->root != o->root) {
        plan->children = p->part_buf + (size_t)(STRATA_MAX_HIER + 1) * (size_t)p->size;
        plan->nchildren = strata_tree_links(p->hier, o->root, p->rank, &plan->parent,
                                            plan->children);
        plan->root = o->root;
    }
    o->children = plan->children;
    o->nchildren = plan->nchildren;
    o->parent = plan->parent;
}

static struct strata_bcast_task *bcast_of(struct strata_task *op)
{
    return (struct strata_bcast_task *)((char *)op - offsetof(struct strata_bcast_task, op));
}

/* Pipelined single copy: pull each chunk from the parent's user buffer as
 * soon as the parent holds it, then let the children acknowledge. */
static int single_copy_progress(struct strata_task *op)
{
    struct strata_bcast_task *o = bcast_of(op);
    struct strata_plane *p = op->p;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    if (o->parent >= 0) {
        /* The acquire makes the parent's buf of this op visible; the
         * parent cannot move on before this rank acknowledges. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->parent].seq, o->base, p->pid[o->parent]);
        o->src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[o->parent].buf);
        for (o->off = 0; o->off < o->bytes; o->off += o->len) {
            o->len = o->bytes - o->off < o->chunk ? o->bytes - o->off : o->chunk;
            STRATA_TASK_AWAIT_GE(op, &p->ctl[o->parent].progress, o->base + o->off + o->len,
                                 p->pid[o->parent]);
            if (o->whole) o->len = strata_flag_read(&p->ctl[o->parent].progress) - o->base - o->off;
            if (o->sibling >= 0)
                STRATA_TASK_AWAIT_GE(op, &p->ctl[o->sibling].progress, o->base + o->off + o->len,
                                     p->pid[o->sibling]);
            strata_plane_pull(p, STRATA_COLL_BCAST, o->parent, o->src + o->off, o->data + o->off,
                              o->len);
            /* The bytes just copied are in this rank's buffer: children may
             * read them once they see the new count. */
            strata_plane_publish(p, &me->progress, o->base + o->off + o->len);
        }
    }
    for (o->i = 0; o->i < o->nchildren; o->i++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->children[o->i]].ack, o->base,
                             p->pid[o->children[o->i]]);
    strata_plane_publish(p, &me->ack, o->base);
    STRATA_TASK_END(op);
}

static void single_copy_start(struct strata_bcast_task *o)
{
    struct strata_plane *p = o->op.p;
    tree_links(o, p);
    o->base = strata_plane_enter_progress(p, o->bytes, o->data, NULL,
                                          p->rank == o->root ? o->bytes : 0);
    if (o->parent < 0) return;
    o->sibling = throttle_sibling(p, o->parent, o->root);
    int level = strata_tree_levels_of(p->hier, o->root, p->rank) - 1;
    o->chunk = strata_tuning()->chunk[level];
    /* Chunks let a rank with children pass data on early, and let the
     * throttle gate readers; a leaf with no gate gains nothing from them,
     * so it copies all the parent has ready in one call (each call costs a
     * system call and a page-pinning pass). */
    o->whole = o->nchildren == 0 && o->sibling < 0;
}

/* One payload of at most one region through the segment: o->cur bytes at
 * o->cur_data, resumed at step->resume. */
static void cico_start(struct strata_bcast_task *o, unsigned char *data, size_t bytes)
{
    struct strata_plane *p = o->op.p;
    o->cur_data = data;
    o->cur_bytes = bytes;
    tree_links(o, p);
    o->base = strata_plane_enter(p, bytes, NULL, NULL); /* entered: done reading older regions */
}

STRATA_HOT static int cico_steps(struct strata_bcast_task *o, struct strata_task *step)
{
    struct strata_plane *p = o->op.p;
    STRATA_TASK_BEGIN(step);
    if (o->nchildren > 0) STRATA_TASK_AWAIT_REGIONS_FREE(step, p, o->i);
    if (o->parent < 0) {
        memcpy(strata_plane_region(p, p->rank, STRATA_REGION_IN), o->cur_data, o->cur_bytes);
    } else {
        STRATA_TASK_AWAIT_GE(step, &p->ctl[o->parent].progress, o->base + o->cur_bytes,
                             p->pid[o->parent]);
        const unsigned char *src = strata_plane_region(p, o->parent, STRATA_REGION_IN);
        memcpy(o->cur_data, src, o->cur_bytes);
        if (o->nchildren > 0)
            memcpy(strata_plane_region(p, p->rank, STRATA_REGION_IN), src, o->cur_bytes);
        if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[o->parent], o->cur_bytes);
    }
    /* Release: children that see the count also see the region's bytes.
     * A leaf publishes too, for the throttle and for uniformity. */
    strata_plane_publish(p, &p->ctl[p->rank].progress, o->base + o->cur_bytes);
    STRATA_TASK_END(step);
}

STRATA_HOT static int cico_progress(struct strata_task *op) { return cico_steps(bcast_of(op), op); }

/* A payload of at most one slot of flag lines (plane.h, "The flag lines"):
 * the root writes it with its flags, every other rank reads it straight
 * from the root's lines, whatever the tree (a line is one hand-off; a
 * leader passing it on would add one).  No region, no progress flag: at 2
 * ranks the child's whole path is the hand-off of the lines it reads. */
STRATA_HOT static int lines_progress(struct strata_task *op)
{
    struct strata_bcast_task *o = bcast_of(op);
    struct strata_plane *p = op->p;
    STRATA_TASK_BEGIN(op);
    if (p->rank == o->root) {
        STRATA_TASK_AWAIT_SLOT_FREE(op, p, o->i);
        struct strata_line *slot = p->ctl[p->rank].line[o->slot];
        strata_lines_put(slot, 0, o->data, o->bytes);
        strata_plane_publish_lines(p, slot, strata_lines_of(o->bytes),
                                   strata_plane_line_value(p, o->base));
    } else {
        for (o->off = 0; o->off < o->bytes; o->off += STRATA_TINY_MAX) {
            /* Acquire: the line's bytes are this op's. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[o->root].line[o->slot][o->off / STRATA_TINY_MAX].flag,
                                 o->base, p->pid[o->root]);
            strata_plane_line_read(p, &p->ctl[o->root].line[o->slot][o->off / STRATA_TINY_MAX].flag,
                                   o->base);
            size_t n = o->bytes - o->off < STRATA_TINY_MAX ? o->bytes - o->off : STRATA_TINY_MAX;
            memcpy(o->data + o->off, p->ctl[o->root].line[o->slot][o->off / STRATA_TINY_MAX].data, n);
        }
        if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[o->root], o->bytes);
        /* At 2 ranks the root is every other rank: it entered this op. */
        if (p->size == 2) strata_plane_known_entered(p, o->base);
    }
    STRATA_TASK_END(op);
}

/* With no single-copy transport, a large payload goes through the segment
 * in rounds of one region each (a plane operation per round). */
static int rounds_progress(struct strata_task *op)
{
    struct strata_bcast_task *o = bcast_of(op);
    struct strata_plane *p = op->p;
    STRATA_TASK_BEGIN(op);
    for (o->off = 0; o->off < o->bytes; o->off += o->len) {
        o->len = o->bytes - o->off < p->region ? o->bytes - o->off : p->region;
        cico_start(o, o->data + o->off, o->len);
        o->step.resume = 0;
        STRATA_TASK_AWAIT_STEPS(op, &o->step, cico_steps(o, &o->step));
    }
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

/* Both entries: `single_copy` 0 keeps large payloads in the segment. */
STRATA_HOT static void bcast_start(struct strata_bcast_task *o, struct strata_plane *p, void *data,
                                   size_t bytes, int root, int single_copy)
{
    o->data = data;
    o->bytes = bytes;
    o->root = root;
    o->step.waits = 0;
    o->step.waiting_for = 0;
    o->step.p = p; /* the plane whose flags the step awaits (shm/wait.h) */
    o->step.wait_flag = NULL;
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
    } else if (bytes <= STRATA_LINE_SLOT_BYTES && bytes <= region) {
        strata_task_init(&o->op, p, lines_progress);
        o->base = strata_plane_enter(p, 1, NULL, NULL);
        o->slot = strata_plane_slot(p);
    } else if (bytes <= region) {
        strata_task_init(&o->op, p, cico_progress);
        cico_start(o, data, bytes);
    } else if (single_copy && strata_plane_single_copy(p)) {
        strata_task_init(&o->op, p, single_copy_progress);
        single_copy_start(o);
    } else {
        strata_task_init(&o->op, p, rounds_progress);
    }
}

STRATA_HOT void strata_bcast_start(struct strata_bcast_task *o, struct strata_plane *p, void *data,
                                   size_t bytes, int root)
{
    bcast_start(o, p, data, bytes, root, 1);
}

void strata_bcast_segment_start(struct strata_bcast_task *o, struct strata_plane *p, void *data,
                                size_t bytes, int root)
{
    bcast_start(o, p, data, bytes, root, 0);
}

STRATA_HOT int strata_bcast_bytes(struct strata_plane *p, void *data, size_t bytes, int root)
{
    struct strata_bcast_task o;
    strata_bcast_start(&o, p, data, bytes, root);
    return strata_task_run(&o.op);
}

int strata_bcast_feed_open(struct strata_plane *p, void *data, size_t bytes, uint64_t *base)
{
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (p->size == 1 || bytes <= region || !strata_plane_single_copy(p)) return 0;
    *base = strata_plane_enter_progress(p, bytes, data, NULL, 0);
    return 1;
}

void strata_bcast_feed_advance(struct strata_plane *p, uint64_t base, size_t ready)
{
    /* Release: a child that sees the count also sees the bytes that arrived
     * in this rank's buffer before it. */
    strata_plane_publish(p, &p->ctl[p->rank].progress, base + ready);
}

static int feed_close_progress(struct strata_task *op)
{
    struct strata_bcast_task *o = bcast_of(op);
    struct strata_plane *p = op->p;
    STRATA_TASK_BEGIN(op);
    for (o->i = 0; o->i < o->nchildren; o->i++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->children[o->i]].ack, o->base,
                             p->pid[o->children[o->i]]);
    strata_plane_publish(p, &p->ctl[p->rank].ack, o->base);
    STRATA_TASK_END(op);
}

void strata_bcast_feed_close_start(struct strata_bcast_task *o, struct strata_plane *p,
                                   uint64_t base)
{
    strata_task_init(&o->op, p, feed_close_progress);
    o->base = base;
    o->children = p->tree_buf;
    o->nchildren = strata_tree_links(p->hier, p->rank, p->rank, &o->parent, p->tree_buf);
}

void strata_bcast_feed_close(struct strata_plane *p, uint64_t base)
{
    struct strata_bcast_task o;
    strata_bcast_feed_close_start(&o, p, base);
    strata_task_run(&o.op);
}

static int pipelined_progress(struct strata_task *op)
{
    struct strata_block_task *o =
        (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
    STRATA_TASK_BEGIN(op);
    STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    STRATA_TASK_END(op);
}

void strata_bcast_pipelined_start(struct strata_block_task *o, struct strata_plane *p,
                                  const struct strata_block_args *a)
{
    o->a = *a;
    strata_task_init(&o->op, p, pipelined_progress);
    strata_bcast_start(&o->bcast, p, a->recv, a->block, a->root);
}

STRATA_HOT int strata_bcast_pipelined(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_bcast_bytes(p, a->recv, a->block, a->root);
}

/* Algorithm "segment-pipeline": the rounds of the segment whatever the
 * transport, for payloads where two copies running at once (in and out)
 * beat one single copy (which pins every page it touches). */
static int segment_pipeline_progress(struct strata_task *op)
{
    struct strata_block_task *o =
        (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
    STRATA_TASK_BEGIN(op);
    STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    STRATA_TASK_END(op);
}

void strata_bcast_segment_pipeline_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a)
{
    o->a = *a;
    strata_task_init(&o->op, p, segment_pipeline_progress);
    strata_bcast_segment_start(&o->bcast, p, a->recv, a->block, a->root);
}

int strata_bcast_segment_pipeline(struct strata_plane *p, const struct strata_block_args *a)
{
    struct strata_bcast_task o;
    strata_bcast_segment_start(&o, p, a->recv, a->block, a->root);
    return strata_task_run(&o.op);
}
