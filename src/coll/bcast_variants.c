/* The broadcast algorithms of the contention-aware paper (section V-B), all
 * with one CMA copy per byte moved, beside XHC's pipelined pull (bcast.c).
 *
 * They trade concurrency on one source against the number of steps:
 *   direct-read         every non-root reads the root at once (size-1 readers
 *                       of one process: contention gamma_{size-1}, 1 step);
 *   direct-write        the root writes each rank in turn (no contention,
 *                       size-1 steps);
 *   knomial:k           a tree of radix k+1: at most k ranks read one source
 *                       at a time, ceil(log_{k+1} size) steps;
 *   scatter-allgather   every rank reads 1/size from the root (contention
 *                       once, on 1/size of the bytes), then the other pieces
 *                       each from the rank that owns it (no contention).
 * The payload is a->recv (== a->send) on every rank, a->block bytes. */
#include <errno.h>
#include <stdint.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/stats.h"

/* Copies len bytes at `remote` in rank peer into `local`, counting them. */
static void pull(struct strata_plane *p, int peer, const unsigned char *remote,
                 unsigned char *local, size_t len)
{
    if (len == 0) return;
    if (strata_cma_read(p->pid[peer], remote, local, len))
        strata_cma_failed("read from", peer, errno);
    if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[peer], len);
}

static const unsigned char *exposed_buf(struct strata_plane *p, int peer)
{
    return (const unsigned char *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
}

/* ---- direct-read ---------------------------------------------------------
 * Flags: root seq (its buf is valid); every non-root's ack (done reading). */
int strata_bcast_direct_read(struct strata_plane *p, const struct strata_block_args *a)
{
    if (p->size == 1) return MPI_SUCCESS;
    uint64_t base = strata_plane_enter_progress(p, 1, a->recv, NULL, 0);
    int root = a->root;
    if (p->rank != root) {
        /* The acquire makes the root's buf of this op visible; the root
         * cannot leave the op (and free the buffer) before this rank acks. */
        strata_flag_wait_ge(&p->ctl[root].seq, base, p->pid[root]);
        pull(p, root, exposed_buf(p, root), a->recv, a->block);
        strata_flag_publish(&p->ctl[p->rank].ack, base); /* the root's buffer is free */
        return MPI_SUCCESS;
    }
    for (int r = 0; r < p->size; r++)
        if (r != root) strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    strata_flag_publish(&p->ctl[root].ack, base); /* uniformity: every rank acks */
    return MPI_SUCCESS;
}

/* ---- direct-write --------------------------------------------------------
 * Flags: each non-root's seq (its acc is valid); the root's progress =
 * base + d once the ranks at distance 1..d from it have the payload, so
 * each rank leaves as soon as its own copy is written. */
int strata_bcast_direct_write(struct strata_plane *p, const struct strata_block_args *a)
{
    if (p->size == 1) return MPI_SUCCESS;
    int root = a->root, size = p->size;
    uint64_t base = strata_plane_enter_progress(p, (size_t)size, NULL, a->recv, 0);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    if (p->rank != root) {
        int d = (p->rank - root + size) % size;
        /* The acquire pairs with the root's release after its write: the
         * payload is in this rank's buffer once the flag is seen. */
        strata_flag_wait_ge(&p->ctl[root].progress, base + (uint64_t)d, p->pid[root]);
        strata_flag_publish(&me->ack, base); /* uniformity: it touched no peer */
        return MPI_SUCCESS;
    }
    for (int d = 1; d < size; d++) {
        int r = (root + d) % size;
        /* The acquire makes r's acc of this op visible; r waits for the
         * progress below, so the buffer stays valid until the write ends. */
        strata_flag_wait_ge(&p->ctl[r].seq, base, p->pid[r]);
        void *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[r].acc);
        if (strata_cma_write(p->pid[r], dst, a->send, a->block))
            strata_cma_failed("write to", r, errno);
        if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[r], a->block);
        strata_flag_publish(&me->progress, base + (uint64_t)d); /* r's copy is complete */
    }
    strata_flag_publish(&me->ack, base); /* uniformity: every rank acks */
    return MPI_SUCCESS;
}

/* ---- knomial -------------------------------------------------------------
 * k = a->k is the number of ranks that read one source at the same time.
 * The tree has radix r = k + 1 over virtual ranks v = (rank - root) mod size:
 * v's parent is v with its lowest non-zero base-r digit cleared; v's
 * children are v + j r^i (j = 1..k) for every r^i below v's lowest non-zero
 * digit's weight (any r^i < size for the root).  In synchronous round t
 * every rank holding the payload serves its k children of the next lower
 * level, so size ranks take ceil(log_{k+1} size) rounds, each with k readers
 * per source (cost per round: alpha + n beta + l gamma_k ceil(n/s)).  k = 1
 * is the binomial tree; k >= size-1 is direct-read.
 *
 * The rounds are not synchronised globally: a parent lists its children
 * highest level first (they feed the largest subtrees), and the child at
 * index c starts reading only once the one at index c - k has acked, so
 * the children of one round read at once and never more than k read one
 * source.  Each rank reads the whole payload in one copy once its parent's
 * progress says it has it: pipelining in chunks (children starting on the
 * parent's first chunk) was tried and measured no faster, so it is not done. */

/* Fills out[] with virtual rank v's children, first-served first; returns
 * their number. */
static int knomial_children(int v, int size, int radix, int *out)
{
    /* weight of v's lowest non-zero digit; the root's children span all */
    long limit = size, w = 1, n = 0;
    if (v != 0) {
        while ((v / w) % radix == 0) w *= radix;
        limit = w;
    }
    long top = 1;
    while (top * radix < limit && top * radix < size) top *= radix;
    for (long i = top; i >= 1 && i < limit; i /= radix)
        for (long j = 1; j < radix && v + j * i < size; j++) out[n++] = (int)(v + j * i);
    return (int)n;
}

static int knomial_parent(int v, int radix)
{
    long w = 1;
    while ((v / w) % radix == 0) w *= radix;
    return (int)(v - (v / w) % radix * w);
}

int strata_bcast_knomial(struct strata_plane *p, const struct strata_block_args *a)
{
    if (p->size == 1) return MPI_SUCCESS;
    int size = p->size, root = a->root, k = a->k < size - 1 ? a->k : size - 1;
    int radix = k + 1, v = (p->rank - root + size) % size;
    uint64_t base = strata_plane_enter_progress(p, 1, a->recv, NULL, p->rank == root);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    int *children = p->tree_buf, *siblings = p->tree_buf + size;
    int nchildren = knomial_children(v, size, radix, children);
    for (int c = 0; c < nchildren; c++) children[c] = (children[c] + root) % size;

    if (v != 0) {
        int pv = knomial_parent(v, radix), parent = (pv + root) % size;
        int nsib = knomial_children(pv, size, radix, siblings), at = 0;
        while (at < nsib && siblings[at] != v) at++;
        if (at >= k) { /* the throttle: wait for the reader k places ahead */
            int before = (siblings[at - k] + root) % size;
            strata_flag_wait_ge(&p->ctl[before].ack, base, p->pid[before]);
        }
        /* The acquire makes the parent's buf of this op visible together
         * with its payload; the parent cannot leave the op before this rank
         * acks. */
        strata_flag_wait_ge(&p->ctl[parent].progress, base + 1, p->pid[parent]);
        pull(p, parent, exposed_buf(p, parent), a->recv, a->block);
        /* The payload is in this rank's buffer: its children may read it. */
        strata_flag_publish(&me->progress, base + 1);
    }
    strata_flag_publish(&me->ack, base); /* parent's buffer free; the next sibling may go */
    for (int c = 0; c < nchildren; c++)
        strata_flag_wait_ge(&p->ctl[children[c]].ack, base, p->pid[children[c]]);
    return MPI_SUCCESS;
}

/* ---- scatter-allgather ---------------------------------------------------
 * Piece q is bytes [q*n/size, (q+1)*n/size).  Every rank reads its own
 * piece from the root and publishes progress = base + 1; then it reads every
 * other piece q from rank q (from the root for the root's piece) once q's
 * progress says it has it, starting at q = rank+1 so that at any time the
 * ranks read from different sources.  Ack when done reading; a rank whose
 * buffer others read waits for their acks. */
static size_t piece_start(size_t n, int q, int size) { return (size_t)q * n / (size_t)size; }

int strata_bcast_scatter_allgather(struct strata_plane *p, const struct strata_block_args *a)
{
    if (p->size == 1) return MPI_SUCCESS;
    int size = p->size, root = a->root, me = p->rank;
    size_t n = a->block;
    uint64_t base = strata_plane_enter_progress(p, 1, a->recv, NULL, me == root);
    struct strata_rank_ctl *mine = &p->ctl[me];
    if (me != root) {
        /* The acquire makes the root's buf of this op visible; the root
         * cannot leave the op before this rank acks. */
        strata_flag_wait_ge(&p->ctl[root].seq, base, p->pid[root]);
        const unsigned char *at_root = exposed_buf(p, root);
        size_t lo = piece_start(n, me, size), hi = piece_start(n, me + 1, size);
        pull(p, root, at_root + lo, a->recv + lo, hi - lo);
        strata_flag_publish(&mine->progress, base + 1); /* own piece in place: others may read it */
        for (int i = 1; i < size; i++) {
            int q = (me + i) % size;
            lo = piece_start(n, q, size);
            hi = piece_start(n, q + 1, size);
            if (hi == lo) continue;
            if (q == root) {
                pull(p, root, at_root + lo, a->recv + lo, hi - lo);
                continue;
            }
            /* The acquire makes q's buf and its piece visible together. */
            strata_flag_wait_ge(&p->ctl[q].progress, base + 1, p->pid[q]);
            pull(p, q, exposed_buf(p, q) + lo, a->recv + lo, hi - lo);
        }
    }
    strata_flag_publish(&mine->ack, base); /* this rank reads nobody any more */
    /* Every non-root reads the root; only a non-empty piece draws readers
     * to a non-root. */
    if (me == root || piece_start(n, me + 1, size) > piece_start(n, me, size))
        for (int r = 0; r < size; r++)
            if (r != me && r != root) strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    return MPI_SUCCESS;
}
