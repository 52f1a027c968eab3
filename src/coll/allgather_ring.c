/* Allgather in size-1 ring steps (paper V-A, 1 and 2): every step moves one
 * block per rank with one CMA copy, and no two ranks touch the same peer in
 * the same step unless skew makes them, so there is no lock contention.
 *
 *  - ring-neighbour-j: in step i a rank reads, from rank - j, the block that
 *    rank itself obtained in step i-1; the rank it reads from must have
 *    finished that step, so each step waits for one progress flag.
 *  - ring-source-read: step i reads the block of rank - i from that rank's
 *    own buffer, which is valid from entry on: a step waits only for that
 *    rank to have entered, and while it is late the later steps whose
 *    sources are there are read ahead (coll/read_ahead.h).
 *  - ring-source-write: step i writes this rank's block into rank + i.
 *
 * Flags (block.h): seq = base on entry (buf or acc exposed, and what peers
 * read there valid); progress = base + steps done (ring-neighbour); ack =
 * base when a rank will touch no peer's memory again.  A rank returns once
 * every rank that reads or writes its buffers has acknowledged.  Resumable
 * operations (coll/task.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/read_ahead.h"
#include "util/colls.h"
#include "util/stats.h"

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* The exposed address of a peer, once the operation has seen it enter
 * (await its seq first).  The peer cannot move on to a later operation (and
 * change the flag) before this rank acknowledges, so the value read stays
 * valid for the whole call. */
static unsigned char *peer_address(struct strata_plane *p, int peer, int which_acc)
{
    struct strata_rank_ctl *c = &p->ctl[peer];
    /* The acquire of the awaited seq made the address (stored before) visible. */
    return (unsigned char *)(uintptr_t)strata_flag_read(which_acc ? &c->acc : &c->buf);
}

/* Every other rank's ack: all of them read from or wrote into this rank. */
#define AWAIT_ALL_ACKS(op, o, p)                                                             \
    for ((o)->i = 1; (o)->i < (p)->size; (o)->i++)                                         \
    STRATA_TASK_AWAIT_GE(op, &(p)->ctl[((p)->rank + (o)->i) % (p)->size].ack, (o)->base,   \
                         (p)->pid[((p)->rank + (o)->i) % (p)->size])

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

/* ---- ring-neighbour-j.  o->k: j; o->n: from; o->t: the block q of the step. */
static int neighbour_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    struct strata_rank_ctl *ctl = &p->ctl[p->rank];
    int size = p->size, from = o->n;
    size_t b = a->block;
    STRATA_TASK_BEGIN(op);
    STRATA_TASK_AWAIT_GE(op, &p->ctl[from].seq, o->base, p->pid[from]);
    o->send = peer_address(p, from, 0);
    o->t = p->rank;
    for (o->i = 1; o->i < size; o->i++) {
        o->t = (o->t - o->k + size) % size; /* (me - i*j) mod size: from's block of step i-1 */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[from].progress, o->base + (uint64_t)(o->i - 1),
                             p->pid[from]);
        strata_plane_pull(p, STRATA_COLL_ALLGATHER, from, o->send + (size_t)o->t * b,
                          a->recv + (size_t)o->t * b, b);
        /* Release: the reader that sees i steps done also sees block q. */
        strata_plane_publish(p, &ctl->progress, o->base + (uint64_t)o->i);
    }
    strata_plane_publish(p, &ctl->ack, o->base); /* done reading from `from` */
    /* Only `reader` reads this rank's buffer; keep it valid until it is done. */
    STRATA_TASK_AWAIT_GE(op, &p->ctl[(p->rank + o->k) % size].ack, o->base,
                         p->pid[(p->rank + o->k) % size]);
    STRATA_TASK_END(op);
}

void strata_allgather_ring_neighbour_start(struct strata_block_task *o, struct strata_plane *p,
                                           const struct strata_block_args *a)
{
    int size = p->size, me = p->rank;
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)me * b;
    o->a = *a;
    if (a->send) memcpy(own, a->send, b);
    if (size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, neighbour_progress);
    o->k = a->k % size; /* coprime with size (the registry refuses others) */
    o->n = (me - o->k + size) % size;
    /* 0 steps done: own block only; buf, progress and the own block copied
     * above go with seq. */
    o->base = strata_plane_enter_progress(p, (size_t)size, a->recv, NULL, 0);
}

int strata_allgather_ring_neighbour(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_ring_neighbour_start, p, a);
}

/* ---- ring-source-read */
static int source_peer(const struct strata_block_task *o, int step)
{
    int size = o->op.p->size;
    return (o->op.p->rank - step + size) % size;
}

/* Reads peer's own block into place. */
static void read_source_block(struct strata_block_task *o, int peer)
{
    struct strata_plane *p = o->op.p;
    size_t b = o->a.block;
    strata_plane_pull(p, STRATA_COLL_ALLGATHER, peer, peer_address(p, peer, 0),
                      o->a.recv + (size_t)peer * b, b);
}

static int source_read_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int size = p->size, me = p->rank;
    size_t b = a->block;
    STRATA_TASK_BEGIN(op);
    for (o->i = 1; o->i < size; o->i++) {
        if (strata_ahead_done(o, o->i)) continue; /* read while an earlier source was late */
        /* A late source does not hold up the blocks of those already here
         * (coll/read_ahead.h). */
        STRATA_AWAIT_READING_AHEAD(op, o, o->i, size, source_peer, read_source_block);
        read_source_block(o, source_peer(o, o->i));
    }
    strata_plane_publish(p, &p->ctl[me].ack, o->base); /* done reading from everyone */
    /* Late, to overlap the others' reads: they read send, not this slot. */
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    AWAIT_ALL_ACKS(op, o, p); /* everyone reads this rank's block */
    STRATA_TASK_END(op);
}

void strata_allgather_ring_source_read_start(struct strata_block_task *o, struct strata_plane *p,
                                             const struct strata_block_args *a)
{
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)p->rank * b;
    o->a = *a;
    if (p->size == 1) {
        if (a->send) memcpy(own, a->send, b);
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, source_read_progress);
    o->ahead = 0;
    /* buf goes with seq; the block itself is valid from entry. */
    o->base = strata_plane_enter(p, 1, a->send ? a->send : own, NULL);
}

int strata_allgather_ring_source_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_ring_source_read_start, p, a);
}

/* ---- ring-source-write */
static int source_write_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int size = p->size, me = p->rank;
    size_t b = a->block;
    STRATA_TASK_BEGIN(op);
    for (o->i = 1; o->i < size; o->i++) {
        STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + o->i) % size].seq, o->base,
                             p->pid[(me + o->i) % size]);
        int q = (me + o->i) % size;
        strata_plane_push(p, STRATA_COLL_ALLGATHER, q, peer_address(p, q, 1) + (size_t)me * b,
                          a->send ? a->send : a->recv + (size_t)me * b, b);
    }
    /* Release: the writes have returned, so a rank that sees every ack
     * finds every block in its buffer. */
    strata_plane_publish(p, &p->ctl[me].ack, o->base);
    /* Late, to overlap the others' writes: they write every slot but this. */
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    AWAIT_ALL_ACKS(op, o, p);
    STRATA_TASK_END(op);
}

void strata_allgather_ring_source_write_start(struct strata_block_task *o, struct strata_plane *p,
                                              const struct strata_block_args *a)
{
    size_t b = a->block;
    o->a = *a;
    if (p->size == 1) {
        if (a->send) memcpy(a->recv + (size_t)p->rank * b, a->send, b);
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, source_write_progress);
    /* acc goes with seq; peers may write into recv from now on. */
    o->base = strata_plane_enter(p, 1, NULL, a->recv);
}

int strata_allgather_ring_source_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_ring_source_write_start, p, a);
}
