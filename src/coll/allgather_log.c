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
 * Bruck, the scratch must not be refilled by the next call) until then. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/log.h"
#include "util/stats.h"

/* Exposes buf and enters the operation: 0 steps done. */
static uint64_t enter(struct strata_plane *p, const void *buf, int steps)
{
    /* Release: buf, progress and the own block copied before go with it. */
    return strata_plane_enter_progress(p, (size_t)steps, buf, NULL, 0);
}

/* Reads len bytes at offset off of peer's exposed buffer into local, once
 * the peer has done `steps` steps. */
static void pull_after(struct strata_plane *p, int peer, uint64_t base, int steps, size_t off,
                       unsigned char *local, size_t len)
{
    struct strata_rank_ctl *c = &p->ctl[peer];
    pid_t pid = p->pid[peer];
    /* Acquire: the peer's buf of this op (stored before seq) is visible. */
    strata_flag_wait_ge(&c->seq, base, pid);
    strata_flag_wait_ge(&c->progress, base + (uint64_t)steps, pid);
    const unsigned char *remote = (const void *)(uintptr_t)strata_flag_read(&c->buf);
    if (strata_cma_read(pid, remote + off, local, len)) strata_cma_failed("read from", peer, errno);
    if (p->stats) strata_stats_bytes(STRATA_COLL_ALLGATHER, p->dist[peer], len);
}

int strata_allgather_recursive_doubling(struct strata_plane *p, const struct strata_block_args *a)
{
    int size = p->size, me = p->rank, steps = 0;
    size_t b = a->block;
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    if (size == 1) return MPI_SUCCESS;
    while ((1 << steps) < size) steps++; /* size is a power of two (registry) */

    uint64_t base = enter(p, a->recv, steps);
    struct strata_rank_ctl *ctl = &p->ctl[me];
    for (int s = 0; s < steps; s++) {
        int group = 1 << s, partner = me ^ group;
        /* The partner's aligned group of 2^s blocks, complete after its
         * step s-1; it lies at the same offset in both buffers. */
        size_t off = (size_t)(partner & ~(group - 1)) * b;
        pull_after(p, partner, base, s, off, a->recv + off, (size_t)group * b);
        /* Release: partners of later steps that see s+1 steps see the blocks. */
        strata_flag_publish(&ctl->progress, base + (uint64_t)s + 1);
    }
    strata_flag_publish(&ctl->ack, base); /* done reading */
    /* Each partner read this rank's recv once. */
    for (int s = 0; s < steps; s++) {
        int partner = me ^ (1 << s);
        strata_flag_wait_ge(&p->ctl[partner].ack, base, p->pid[partner]);
    }
    return MPI_SUCCESS;
}

int strata_allgather_bruck(struct strata_plane *p, const struct strata_block_args *a)
{
    int size = p->size, me = p->rank, steps = 0;
    size_t b = a->block;
    const unsigned char *mine = a->send ? a->send : a->recv + (size_t)me * b;
    if (size == 1) {
        if (a->send) memcpy(a->recv, a->send, b);
        return MPI_SUCCESS;
    }
    while ((1 << steps) < size) steps++;
    /* Private to this rank and to this call (see plane.h); peers read it. */
    unsigned char *tmp = strata_plane_scratch(p, (size_t)size * b);
    if (!tmp) {
        /* The others would wait for this rank forever: end the job. */
        strata_error("out of memory for a %zu-byte Bruck Allgather buffer", (size_t)size * b);
        abort();
    }
    memcpy(tmp, mine, b);

    uint64_t base = enter(p, tmp, steps);
    struct strata_rank_ctl *ctl = &p->ctl[me];
    for (int s = 0; s < steps; s++) {
        int d = 1 << s, from = (me + d) % size;
        int count = d < size - d ? d : size - d;
        /* from's first d blocks are complete after its step s-1. */
        pull_after(p, from, base, s, 0, tmp + (size_t)d * b, (size_t)count * b);
        /* Release: the rank reading at the next step sees these blocks. */
        strata_flag_publish(&ctl->progress, base + (uint64_t)s + 1);
    }
    strata_flag_publish(&ctl->ack, base); /* done reading */

    /* tmp block i is rank (me + i)'s: two runs, up to the end of recv and
     * from its start. */
    size_t head = (size_t)(size - me) * b;
    memcpy(a->recv + (size_t)me * b, tmp, head);
    memcpy(a->recv, tmp + head, (size_t)me * b);

    /* Rank me - 2^s read tmp in step s; the next call refills it. */
    for (int s = 0; s < steps; s++) {
        int r = ((me - (1 << s)) % size + size) % size;
        strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    }
    return MPI_SUCCESS;
}
