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
 * The payload is a->recv (== a->send) on every rank, a->block bytes.
 * Resumable operations (coll/task.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "util/stats.h"

/* Copies len bytes at `remote` in rank peer into `local`, counting them. */
static void pull(struct strata_plane *p, int peer, const unsigned char *remote,
                 unsigned char *local, size_t len)
{
    if (len == 0) return; /* nothing to copy, nothing to count */
    strata_plane_pull(p, STRATA_COLL_BCAST, peer, remote, local, len);
}

static const unsigned char *exposed_buf(struct strata_plane *p, int peer)
{
    return (const unsigned char *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

/* ---- direct-read ---------------------------------------------------------
 * Flags: root seq (its buf is valid); every non-root's ack (done reading). */
static int direct_read_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    int root = o->a.root;
    STRATA_TASK_BEGIN(op);
    if (p->rank != root) {
        /* The acquire makes the root's buf of this op visible; the root
         * cannot leave the op (and free the buffer) before this rank acks. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].seq, o->base, p->pid[root]);
        pull(p, root, exposed_buf(p, root), o->a.recv, o->a.block);
        strata_plane_publish(p, &p->ctl[p->rank].ack, o->base); /* the root's buffer is free */
    } else {
        for (o->i = 0; o->i < p->size; o->i++)
            if (o->i != root) STRATA_TASK_AWAIT_GE(op, &p->ctl[o->i].ack, o->base, p->pid[o->i]);
        strata_plane_publish(p, &p->ctl[root].ack, o->base); /* uniformity: every rank acks */
    }
    STRATA_TASK_END(op);
}

void strata_bcast_direct_read_start(struct strata_block_task *o, struct strata_plane *p,
                                    const struct strata_block_args *a)
{
    o->a = *a;
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, direct_read_progress);
    o->base = strata_plane_enter_progress(p, 1, a->recv, NULL, 0);
}

int strata_bcast_direct_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_bcast_direct_read_start, p, a);
}

/* ---- direct-write --------------------------------------------------------
 * Flags: each non-root's seq (its acc is valid); the root's progress =
 * base + d once the ranks at distance 1..d from it have the payload, so
 * each rank leaves as soon as its own copy is written. */
static int direct_write_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    int root = o->a.root, size = p->size;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    if (p->rank != root) {
        /* The acquire pairs with the root's release after its write: the
         * payload is in this rank's buffer once the flag is seen. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].progress,
                             o->base + (uint64_t)((p->rank - root + size) % size), p->pid[root]);
        strata_plane_publish(p, &me->ack, o->base); /* uniformity: it touched no peer */
    } else {
        for (o->i = 1; o->i < size; o->i++) {
            /* The acquire makes r's acc of this op visible; r waits for the
             * progress below, so the buffer stays valid until the write ends. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(root + o->i) % size].seq, o->base,
                                 p->pid[(root + o->i) % size]);
            int r = (root + o->i) % size;
            void *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[r].acc);
            strata_plane_push(p, STRATA_COLL_BCAST, r, dst, o->a.send, o->a.block);
            /* r's copy is complete */
            strata_plane_publish(p, &me->progress, o->base + (uint64_t)o->i);
        }
        strata_plane_publish(p, &me->ack, o->base); /* uniformity: every rank acks */
    }
    STRATA_TASK_END(op);
}

void strata_bcast_direct_write_start(struct strata_block_task *o, struct strata_plane *p,
                                     const struct strata_block_args *a)
{
    o->a = *a;
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, direct_write_progress);
    o->base = strata_plane_enter_progress(p, (size_t)p->size, NULL, a->recv, 0);
}

int strata_bcast_direct_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_bcast_direct_write_start, p, a);
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

/* o->k: the throttle k; o->n: number of children (in tree_buf); o->t: the
 * rank to wait for before reading (-1: none); o->i: child index. */
static int knomial_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    int size = p->size, root = o->a.root, radix = o->k + 1;
    int v = (p->rank - root + size) % size;
    int parent = v ? (knomial_parent(v, radix) + root) % size : -1;
    int *children = p->tree_buf;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    STRATA_TASK_BEGIN(op);
    if (v != 0) {
        /* The throttle: wait for the reader k places ahead. */
        if (o->t >= 0) STRATA_TASK_AWAIT_GE(op, &p->ctl[o->t].ack, o->base, p->pid[o->t]);
        /* The acquire makes the parent's buf of this op visible together
         * with its payload; the parent cannot leave the op before this rank
         * acks. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[parent].progress, o->base + 1, p->pid[parent]);
        pull(p, parent, exposed_buf(p, parent), o->a.recv, o->a.block);
        /* The payload is in this rank's buffer: its children may read it. */
        strata_plane_publish(p, &me->progress, o->base + 1);
    }
    strata_plane_publish(p, &me->ack, o->base); /* parent's buffer free; the next sibling may go */
    for (o->i = 0; o->i < o->n; o->i++)
        STRATA_TASK_AWAIT_GE(op, &p->ctl[children[o->i]].ack, o->base, p->pid[children[o->i]]);
    STRATA_TASK_END(op);
}

void strata_bcast_knomial_start(struct strata_block_task *o, struct strata_plane *p,
                                const struct strata_block_args *a)
{
    o->a = *a;
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, knomial_progress);
    int size = p->size, root = a->root, k = a->k < size - 1 ? a->k : size - 1;
    int radix = k + 1, v = (p->rank - root + size) % size;
    o->k = k;
    o->base = strata_plane_enter_progress(p, 1, a->recv, NULL, p->rank == root ? 1 : 0);
    int *children = p->tree_buf, *siblings = p->tree_buf + size;
    o->n = knomial_children(v, size, radix, children);
    for (int c = 0; c < o->n; c++) children[c] = (children[c] + root) % size;
    o->t = -1;
    if (v != 0) {
        int pv = knomial_parent(v, radix);
        int nsib = knomial_children(pv, size, radix, siblings), at = 0;
        while (at < nsib && siblings[at] != v) at++;
        if (at >= k) o->t = (siblings[at - k] + root) % size;
    }
}

int strata_bcast_knomial(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_bcast_knomial_start, p, a);
}

/* ---- scatter-allgather ---------------------------------------------------
 * Piece q is bytes [q*n/size, (q+1)*n/size).  Every rank reads its own
 * piece from the root and publishes progress = base + 1; then it reads every
 * other piece q from rank q (from the root for the root's piece) once q's
 * progress says it has it, starting at q = rank+1 so that at any time the
 * ranks read from different sources.  Ack when done reading; a rank whose
 * buffer others read waits for their acks. */
static size_t piece_start(size_t n, int q, int size) { return (size_t)q * n / (size_t)size; }

/* o->i: the piece being read; o->send: the root's buffer. */
static int scatter_allgather_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    int size = p->size, root = o->a.root, me = p->rank;
    size_t n = o->a.block;
    struct strata_rank_ctl *mine = &p->ctl[me];
    STRATA_TASK_BEGIN(op);
    if (me != root) {
        /* The acquire makes the root's buf of this op visible; the root
         * cannot leave the op before this rank acks. */
        STRATA_TASK_AWAIT_GE(op, &p->ctl[root].seq, o->base, p->pid[root]);
        o->send = exposed_buf(p, root);
        size_t lo = piece_start(n, me, size), hi = piece_start(n, me + 1, size);
        pull(p, root, o->send + lo, o->a.recv + lo, hi - lo);
        /* own piece in place: others may read it */
        strata_plane_publish(p, &mine->progress, o->base + 1);
        for (o->i = 1; o->i < size; o->i++) {
            int q = (me + o->i) % size;
            size_t qlo = piece_start(n, q, size), qhi = piece_start(n, q + 1, size);
            if (qhi == qlo) continue;
            if (q == root) {
                pull(p, root, o->send + qlo, o->a.recv + qlo, qhi - qlo);
                continue;
            }
            /* The acquire makes q's buf and its piece visible together. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + o->i) % size].progress, o->base + 1,
                                 p->pid[(me + o->i) % size]);
            q = (me + o->i) % size;
            qlo = piece_start(n, q, size);
            qhi = piece_start(n, q + 1, size);
            pull(p, q, exposed_buf(p, q) + qlo, o->a.recv + qlo, qhi - qlo);
        }
    }
    strata_plane_publish(p, &mine->ack, o->base); /* this rank reads nobody any more */
    /* Every non-root reads the root; only a non-empty piece draws readers
     * to a non-root. */
    if (me == root || piece_start(n, me + 1, size) > piece_start(n, me, size))
        for (o->i = 0; o->i < size; o->i++)
            if (o->i != me && o->i != root)
                STRATA_TASK_AWAIT_GE(op, &p->ctl[o->i].ack, o->base, p->pid[o->i]);
    STRATA_TASK_END(op);
}

void strata_bcast_scatter_allgather_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a)
{
    o->a = *a;
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, scatter_allgather_progress);
    o->base = strata_plane_enter_progress(p, 1, a->recv, NULL, p->rank == a->root ? 1 : 0);
}

int strata_bcast_scatter_allgather(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_bcast_scatter_allgather_start, p, a);
}
