/* Allgather in a logarithmic number of steps (paper V-A, 3 and 4): fewer
 * system calls than a ring for small blocks, at the price of larger copies
 * (recursive doubling) or of a final rotation (Bruck).
 *
 *  - recursive doubling (power-of-two sizes): before step s a rank holds the
 *    2^s blocks of its aligned group; it reads the partner group's 2^s
 *    blocks from partner rank XOR 2^s, straight into place in recv.
 *  - Bruck: before step s (distance d = 2^s) a rank's private buffer holds
 *    the blocks of ranks rank, rank+1, .., rank+d-1 in that order; it appends
 *    the first min(d, size-d) blocks of rank+d's buffer, then rotates once.
 *
 * Flags (block.h): seq = base on entry (buf exposed, own block in place);
 * progress = base + steps done, published after each step's copy; ack =
 * base once this rank reads no more.  A rank returns only after everyone
 * who reads from it has acknowledged: its buffer must stay valid (and, for
 * Bruck, the scratch must not be refilled by the next call) until then.
 * Resumable operations (coll/task.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

/* Exposes buf and enters the operation: 0 steps done. */
static uint64_t enter(struct strata_plane *p, const void *buf, int steps)
{
    /* Release: buf, progress and the own block copied before go with seq. */
    return strata_plane_enter_progress(p, (size_t)steps, buf, NULL, 0);
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* Reads len bytes at offset off of peer's exposed buffer into local, once
 * the operation has awaited the peer's seq (acquire: its buf of this op,
 * stored before, is visible) and its progress. */
static void pull_from(struct strata_plane *p, int peer, size_t off, unsigned char *local,
                      size_t len)
{
    const unsigned char *remote = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
    strata_plane_pull(p, STRATA_COLL_ALLGATHER, peer, remote + off, local, len);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

/* ---- recursive doubling.  o->n: steps; o->t: the step. */
static int doubling_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int me = p->rank;
    size_t b = a->block;
    STRATA_TASK_BEGIN(op);
    for (o->t = 0; o->t < o->n; o->t++) {
        /* The partner's aligned group of 2^s blocks, complete after its
         * step s-1; it lies at the same offset in both buffers. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[me ^ (1 << o->t)].seq, o->base, p->pid[me ^ (1 << o->t)]);
        STRATA_TASK_AWAIT_GE(op, &p->ctl[me ^ (1 << o->t)].progress, o->base + (uint64_t)o->t,
                             p->pid[me ^ (1 << o->t)]);
        int group = 1 << o->t, partner = me ^ group;
        size_t off = (size_t)(partner & ~(group - 1)) * b;
        pull_from(p, partner, off, a->recv + off, (size_t)group * b);
        /* Release: partners of later steps that see s+1 steps see the blocks. */
        strata_plane_publish(p, &p->ctl[me].progress, o->base + (uint64_t)o->t + 1);
    }
    strata_plane_publish(p, &p->ctl[me].ack, o->base); /* done reading */
    /* Each partner read this rank's recv once. */
    for (o->t = 0; o->t < o->n; o->t++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[me ^ (1 << o->t)].ack, o->base, p->pid[me ^ (1 << o->t)]);
    STRATA_TASK_END(op);
}

void strata_allgather_recursive_doubling_start(struct strata_block_task *o, struct strata_plane *p,
                                               const struct strata_block_args *a)
{
    int size = p->size, me = p->rank, steps = 0;
    size_t b = a->block;
    o->a = *a;
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    if (size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, doubling_progress);
    while ((1 << steps) < size) steps++; /* size is a power of two (registry) */
    o->n = steps;
    o->base = enter(p, a->recv, steps);
}

int strata_allgather_recursive_doubling(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_recursive_doubling_start, p, a);
}

/* ---- Bruck.  o->n: steps; o->t: the step; o->owned is not used: tmp is
 * the plane's scratch (one operation per plane at a time). */
static int bruck_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int size = p->size, me = p->rank;
    size_t b = a->block;
    unsigned char *tmp = (unsigned char *)o->send;
    STRATA_TASK_BEGIN(op);
    for (o->t = 0; o->t < o->n; o->t++) {
        /* from's first d blocks are complete after its step s-1. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + (1 << o->t)) % size].seq, o->base,
                             p->pid[(me + (1 << o->t)) % size]);
        STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + (1 << o->t)) % size].progress,
                             o->base + (uint64_t)o->t, p->pid[(me + (1 << o->t)) % size]);
        int d = 1 << o->t, from = (me + d) % size;
        int count = d < size - d ? d : size - d;
        pull_from(p, from, 0, tmp + (size_t)d * b, (size_t)count * b);
        /* Release: the rank reading at the next step sees these blocks. */
        strata_plane_publish(p, &p->ctl[me].progress, o->base + (uint64_t)o->t + 1);
    }
    strata_plane_publish(p, &p->ctl[me].ack, o->base); /* done reading */

    /* tmp block i is rank (me + i)'s: two runs, up to the end of recv and
     * from its start. */
    memcpy(a->recv + (size_t)me * b, tmp, (size_t)(size - me) * b);
    memcpy(a->recv, tmp + (size_t)(size - me) * b, (size_t)me * b);

    /* Rank me - 2^s read tmp in step s; the next call refills it. */
    for (o->t = 0; o->t < o->n; o->t++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[((me - (1 << o->t)) % size + size) % size].ack, o->base,
                             p->pid[((me - (1 << o->t)) % size + size) % size]);
    STRATA_TASK_END(op);
}

void strata_allgather_bruck_start(struct strata_block_task *o, struct strata_plane *p,
                                  const struct strata_block_args *a)
{
    int size = p->size, me = p->rank, steps = 0;
    size_t b = a->block;
    const unsigned char *mine = a->send ? a->send : a->recv + (size_t)me * b;
    o->a = *a;
    if (size == 1) {
        if (a->send) memcpy(a->recv, a->send, b);
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, bruck_progress);
    while ((1 << steps) < size) steps++;
    /* Private to this rank and to this call (see plane.h); peers read it. */
    unsigned char *tmp = strata_plane_scratch(p, (size_t)size * b);
    if (!tmp) {
        /* The others would wait for this rank forever: end the job. */
        strata_error("out of memory for a %zu-byte Bruck Allgather buffer", (size_t)size * b);
        abort();
    }
    memcpy(tmp, mine, b);
    o->send = tmp;
    o->n = steps;
    o->base = enter(p, tmp, steps);
}

int strata_allgather_bruck(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_bruck_start, p, a);
}
