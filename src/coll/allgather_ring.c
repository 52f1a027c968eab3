/* Allgather in size-1 ring steps (paper V-A, 1 and 2): every step moves one
 * block per rank with one CMA copy, and no two ranks touch the same peer in
 * the same step unless skew makes them, so there is no lock contention.
 *
 *  - ring-neighbour-j: in step i a rank reads, from rank - j, the block that
 *    rank itself obtained in step i-1; the rank it reads from must have
 *    finished that step, so each step waits for one progress flag.
 *  - ring-source-read: step i reads the block of rank - i from that rank's
 *    own buffer, which is valid from entry on: a step waits only for that
 *    rank to have entered.
 *  - ring-source-write: step i writes this rank's block into rank + i.
 *
 * Flags (block.h): seq = base on entry (buf or acc exposed, and what peers
 * read there valid); progress = base + steps done (ring-neighbour); ack =
 * base when a rank will touch no peer's memory again.  A rank returns once
 * every rank that reads or writes its buffers has acknowledged. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/stats.h"

/* The exposed address of a peer, once it has entered this operation.  The
 * peer cannot move on to a later operation (and change the flag) before
 * this rank acknowledges, so the value read stays valid for the whole call. */
static unsigned char *peer_address(struct strata_plane *p, int peer, uint64_t base, int which_acc)
{
    struct strata_rank_ctl *c = &p->ctl[peer];
    /* Acquire: the address (stored relaxed before seq) is visible after. */
    strata_flag_wait_ge(&c->seq, base, p->pid[peer]);
    return (unsigned char *)(uintptr_t)strata_flag_read(which_acc ? &c->acc : &c->buf);
}

static void pull(struct strata_plane *p, int peer, const unsigned char *remote,
                 unsigned char *local, size_t len)
{
    if (strata_cma_read(p->pid[peer], remote, local, len))
        strata_cma_failed("read from", peer, errno);
    if (p->stats) strata_stats_bytes(STRATA_COLL_ALLGATHER, p->dist[peer], len);
}

/* Every other rank's ack: all of them read from or wrote into this rank. */
static void wait_all_acks(struct strata_plane *p, uint64_t base)
{
    for (int i = 1; i < p->size; i++) {
        int r = (p->rank + i) % p->size;
        strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    }
}

int strata_allgather_ring_neighbour(struct strata_plane *p, const struct strata_block_args *a)
{
    int size = p->size, me = p->rank;
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)me * b;
    if (a->send) memcpy(own, a->send, b);
    if (size == 1) return MPI_SUCCESS;
    int j = a->k % size; /* coprime with size (the registry refuses others) */
    int from = (me - j + size) % size, reader = (me + j) % size;

    /* 0 steps done: own block only.  Release: buf, progress and the own
     * block copied above go with seq. */
    uint64_t base = strata_plane_enter_progress(p, (size_t)size, a->recv, NULL, 0);
    struct strata_rank_ctl *ctl = &p->ctl[me];

    const unsigned char *src = peer_address(p, from, base, 0);
    pid_t from_pid = p->pid[from];
    int q = me;
    for (int i = 1; i < size; i++) {
        q = (q - j + size) % size; /* (me - i*j) mod size: from's block of step i-1 */
        strata_flag_wait_ge(&p->ctl[from].progress, base + (uint64_t)(i - 1), from_pid);
        pull(p, from, src + (size_t)q * b, a->recv + (size_t)q * b, b);
        /* Release: the reader that sees i steps done also sees block q. */
        strata_flag_publish(&ctl->progress, base + (uint64_t)i);
    }
    strata_flag_publish(&ctl->ack, base); /* done reading from `from` */
    /* Only `reader` reads this rank's buffer; keep it valid until it is done. */
    strata_flag_wait_ge(&p->ctl[reader].ack, base, p->pid[reader]);
    return MPI_SUCCESS;
}

int strata_allgather_ring_source_read(struct strata_plane *p, const struct strata_block_args *a)
{
    int size = p->size, me = p->rank;
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)me * b;
    if (size == 1) {
        if (a->send) memcpy(own, a->send, b);
        return MPI_SUCCESS;
    }
    /* Release: buf goes with seq; the block itself is valid from entry. */
    uint64_t base = strata_plane_enter(p, 1, a->send ? a->send : own, NULL);
    struct strata_rank_ctl *ctl = &p->ctl[me];
    for (int i = 1; i < size; i++) {
        int q = (me - i + size) % size;
        const unsigned char *src = peer_address(p, q, base, 0);
        pull(p, q, src, a->recv + (size_t)q * b, b);
    }
    strata_flag_publish(&ctl->ack, base); /* done reading from everyone */
    /* Late, to overlap the others' reads: they read send, not this slot. */
    if (a->send) memcpy(own, a->send, b);
    wait_all_acks(p, base); /* everyone reads this rank's block */
    return MPI_SUCCESS;
}

int strata_allgather_ring_source_write(struct strata_plane *p, const struct strata_block_args *a)
{
    int size = p->size, me = p->rank;
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)me * b;
    const unsigned char *mine = a->send ? a->send : own;
    if (size == 1) {
        if (a->send) memcpy(own, a->send, b);
        return MPI_SUCCESS;
    }
    /* Release: acc goes with seq; peers may write into recv from now on. */
    uint64_t base = strata_plane_enter(p, 1, NULL, a->recv);
    struct strata_rank_ctl *ctl = &p->ctl[me];
    for (int i = 1; i < size; i++) {
        int q = (me + i) % size;
        unsigned char *dst = peer_address(p, q, base, 1);
        if (strata_cma_write(p->pid[q], dst + (size_t)me * b, mine, b))
            strata_cma_failed("write into", q, errno);
        if (p->stats) strata_stats_bytes(STRATA_COLL_ALLGATHER, p->dist[q], b);
    }
    /* Release: the writes have returned, so a rank that sees every ack
     * finds every block in its buffer. */
    strata_flag_publish(&ctl->ack, base);
    /* Late, to overlap the others' writes: they write every slot but this. */
    if (a->send) memcpy(own, a->send, b);
    wait_all_acks(p, base);
    return MPI_SUCCESS;
}
