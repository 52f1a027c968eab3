/* Alltoall by pairwise exchange over Cross-Memory Attach (contention-aware
 * paper, IV-C).
 *
 * Every rank exposes its send buffer once; then, in each of size-1 steps, it
 * reads the block meant for it straight out of one partner's send buffer.
 * The partners of one step form a permutation (rank XOR i for a power of two,
 * rank - i otherwise), so every buffer has exactly one reader per step and no
 * rank's pages are pinned by several readers at once.  No per-message
 * handshake: entering the operation (seq) is the only signal a reader needs,
 * and the acks at the end keep every send buffer alive until all its readers
 * are done.
 *
 * A late partner (descheduled, noisy) does not hold up the others' blocks:
 * while it waits, a rank reads ahead the later steps whose partners have
 * entered (coll/read_ahead.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/read_ahead.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

static int partner_of(int rank, int step, int size, int pow2)
{
    return pow2 ? rank ^ step : (rank - step + size) % size;
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

static int step_peer(const struct strata_block_task *o, int step)
{
    int size = o->op.p->size;
    return partner_of(o->op.p->rank, step, size, (size & (size - 1)) == 0);
}

/* Reads this rank's block of peer's send buffer into place. */
static void read_block(struct strata_block_task *o, int peer)
{
    struct strata_plane *p = o->op.p;
    size_t b = o->a.block;
    const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
    strata_plane_pull(p, STRATA_COLL_ALLTOALL, peer, src + (size_t)p->rank * b,
                      o->a.recv + (size_t)peer * b, b);
}

static int pairwise_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    int me = p->rank, size = p->size;
    STRATA_TASK_BEGIN(op);
    for (o->t = 1; o->t < size; o->t++) {
        if (strata_ahead_done(o, o->t)) continue; /* read while an earlier peer was late */
        /* The acquire makes the peer's buf of this operation visible; the
         * peer cannot leave the operation before this rank acknowledges. */
        STRATA_AWAIT_READING_AHEAD(op, o, o->t, size, step_peer, read_block);
        read_block(o, step_peer(o, o->t));
    }

    /* Release: done reading every peer's send buffer. */
    strata_plane_publish(p, &p->ctl[me].ack, o->base);
    /* Every rank reads from this one's send buffer (or scratch copy). */
    for (o->t = 0; o->t < size; o->t++)
        if (o->t != me) STRATA_TASK_AWAIT_GE(op, &p->ctl[o->t].ack, o->base, p->pid[o->t]);
    STRATA_TASK_END(op);
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

void strata_alltoall_pairwise_start(struct strata_block_task *o, struct strata_plane *p,
                                    const struct strata_block_args *a)
{
    int me = p->rank, size = p->size;
    size_t b = a->block, total = (size_t)size * b;
    const unsigned char *send = a->send;
    o->a = *a;
    if (size == 1) {
        if (send) memcpy(a->recv, send, b);
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, pairwise_progress);
    o->ahead = 0;
    if (!send) {
        /* In place: incoming blocks overwrite recv while partners still read
         * their blocks from it, so they read a private copy instead (the
         * plane's scratch: one operation per plane at a time). */
        unsigned char *copy = strata_plane_scratch(p, total);
        if (!copy) {
            /* The other ranks are about to wait for this one: returning an
             * error here would hang them, so end the job. */
            strata_error("out of memory for a %zu-byte in-place Alltoall", total);
            abort();
        }
        memcpy(copy, a->recv, total);
        send = copy;
    } else {
        memcpy(a->recv + (size_t)me * b, send + (size_t)me * b, b);
    }
    /* seq makes buf (and the scratch copy) visible. */
    o->base = strata_plane_enter(p, 0, send, NULL);
}

int strata_alltoall_pairwise(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_alltoall_pairwise_start, p, a);
}
