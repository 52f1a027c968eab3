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
 * A late partner (descheduled, noisy) does not hold up the others' blocks
 * (issue 15): when a step's partner has not entered yet, this rank first
 * reads every later step's block whose owner has, then waits.  Each block
 * lands at its own place, so the result does not depend on the order; two
 * readers may then share one buffer for a while, which only happens when a
 * rank is late already. */
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

static int partner_of(int rank, int step, int size, int pow2)
{
    return pow2 ? rank ^ step : (rank - step + size) % size;
}

static struct strata_block_op *block_of(struct strata_op *op)
{
    return (struct strata_block_op *)((char *)op - offsetof(struct strata_block_op, op));
}

/* Steps past this one are never read ahead (the mask has 64 bits). */
#define AHEAD_LAST 63

/* Reads the block of every step after o->t, up to AHEAD_LAST, whose partner
 * has entered the operation, and marks it in o->ahead. */
static void read_ahead(struct strata_block_op *o, struct strata_plane *p, int pow2)
{
    int me = p->rank, size = p->size;
    size_t b = o->a.block;
    for (int u = o->t + 1; u < size && u <= AHEAD_LAST; u++) {
        int peer = partner_of(me, u, size, pow2);
        /* The acquire makes the peer's buf visible, as in the loop below. */
        if (o->ahead >> u & 1 || strata_flag_read(&p->ctl[peer].seq) < o->base) continue;
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
        strata_plane_pull(p, STRATA_COLL_ALLTOALL, peer, src + (size_t)me * b,
                          o->a.recv + (size_t)peer * b, b);
        o->ahead |= (uint64_t)1 << u;
    }
}

/* STRATA_OP_AWAIT_GE (coll/op.h), but while the partner is late every look
 * at its flag first reads ahead whoever has entered since the last look (the
 * wait returns to the step at least every blocking timeout). */
#define AWAIT_READING_AHEAD(op, o, flag, value, owner, pow2)                                 \
    do {                                                                                   \
        (op)->resume = __LINE__;                                                           \
        STRATA_FALLTHROUGH;                                                                \
    case __LINE__:                                                                         \
        if (strata_flag_read(flag) < (value)) read_ahead((o), (op)->p, (pow2));            \
        if (strata_flag_read(flag) < (value)) {                                            \
            (op)->waiting_for = (owner);                                                   \
            (op)->wait_flag = (flag);                                                      \
            (op)->wait_value = (value);                                                    \
            (op)->wait_plane = (op)->p;                                                    \
            return STRATA_OP_PENDING;                                                      \
        }                                                                                  \
        (op)->waits++;                                                                     \
    } while (0)

static int pairwise_progress(struct strata_op *op)
{
    struct strata_block_op *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int me = p->rank, size = p->size, pow2 = (size & (size - 1)) == 0;
    size_t b = a->block;
    STRATA_OP_BEGIN(op);
    for (o->t = 1; o->t < size; o->t++) {
        if (o->t <= AHEAD_LAST && o->ahead >> o->t & 1) continue; /* read already */
        /* The acquire makes the peer's buf of this operation visible; the
         * peer cannot leave the operation before this rank acknowledges. */
        AWAIT_READING_AHEAD(op, o, &p->ctl[partner_of(me, o->t, size, pow2)].seq, o->base,
                            p->pid[partner_of(me, o->t, size, pow2)], pow2);
        int peer = partner_of(me, o->t, size, pow2);
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
        strata_plane_pull(p, STRATA_COLL_ALLTOALL, peer, src + (size_t)me * b,
                          a->recv + (size_t)peer * b, b);
    }

    /* Release: done reading every peer's send buffer. */
    strata_plane_publish(p, &p->ctl[me].ack, o->base);
    /* Every rank reads from this one's send buffer (or scratch copy). */
    for (o->t = 0; o->t < size; o->t++)
        if (o->t != me) STRATA_OP_AWAIT_GE(op, &p->ctl[o->t].ack, o->base, p->pid[o->t]);
    STRATA_OP_END(op);
}

static int nothing_to_do(struct strata_op *op)
{
    (void)op;
    return MPI_SUCCESS;
}

void strata_alltoall_pairwise_start(struct strata_block_op *o, struct strata_plane *p,
                                    const struct strata_block_args *a)
{
    int me = p->rank, size = p->size;
    size_t b = a->block, total = (size_t)size * b;
    const unsigned char *send = a->send;
    o->a = *a;
    if (size == 1) {
        if (send) memcpy(a->recv, send, b);
        strata_op_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_op_init(&o->op, p, pairwise_progress);
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
