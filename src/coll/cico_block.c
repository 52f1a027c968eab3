/* Gather, Scatter, Allgather and Alltoall through the shared segment: two
 * copies (into the writer's region, out of it), no system call.  The path
 * for small blocks, and the only one when CMA is off.
 *
 * One engine serves all four.  Rank q exposes a stream of bytes (its block,
 * none for Gather's root, or for the root of Scatter and for Alltoall its
 * send buffer less the block it keeps); the stream moves in rounds of one region half each, and every reader copies,
 * in every round, the part of each writer's stream it wants.  Each round is
 * one plane operation, so the regions are double-buffered by round parity
 * exactly as for the broadcast (plane.h).  A resumable operation (coll/task.h):
 * the rounds and the writer being read live in the operation.
 *
 * Allgather and Alltoall (issue 19), and the root of Gather and Scatter: a
 * rank's own block is copied a slice per round, right after the round's
 * copy-in (Allgather: the bytes just read for it, still in cache), so every
 * byte of the send buffer is read from memory once, and the copy fills the
 * time the others take to copy theirs in instead of delaying this rank's
 * publish; streams leave the kept block out (p - 1 blocks copied in, not p;
 * 1 KiB Scatter and Gather, issue 14).  Nothing of a user buffer is exposed to a peer, so no rank waits
 * for another at the end: the next operation's region wait covers reuse.
 *
 * Blocks small enough that every rank's stream fits one slot of flag lines
 * take line_block.c's path instead (no regions, one hand-off per line). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "shm/arena.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* Bytes of one round: the whole half of a rank's area (its regions are
 * contiguous). */
static size_t round_bytes(const struct strata_plane *p) { return (size_t)p->nregions * p->region; }

/* What this rank copies of writer (rank + i)'s stream in round j: [*a, *b)
 * of the stream into *dst + (*a - lo).  0 if nothing. */
STRATA_HOT static int piece_of(const struct strata_block_task *o, const struct strata_plane *p,
                               size_t j, int i, int *q, size_t *a, size_t *b, unsigned char **dst)
{
    size_t R = round_bytes(p), from = j * R, to = from + R, lo, len;
    *q = (p->rank + i) % p->size; /* start with different writers */
    o->x.want(o, *q, &lo, &len, dst);
    *a = lo > from ? lo : from;
    *b = lo + len < to ? lo + len : to;
    if (len == 0 || *a >= *b) return 0;
    *dst += *a - lo;
    return 1;
}

/* len bytes of this rank's stream from stream offset `from` into dst: the
 * stream is my_stream with [skip_at, skip_at + skip_len) left out. */
STRATA_HOT static void stream_copy(const struct strata_cico_exchange *x, unsigned char *dst,
                                   size_t from, size_t len)
{
    if (from < x->skip_at || !x->skip_len) {
        size_t below = x->skip_len && x->skip_at - from < len ? x->skip_at - from : len;
        memcpy(dst, x->my_stream + from, below);
        dst += below;
        from += below;
        len -= below;
    }
    if (len) memcpy(dst, x->my_stream + from + x->skip_len, len);
}

/* Round j's slice of this rank's own block: equal slices, a cache line
 * multiple each, so that every round (but the last ones) copies some. */
STRATA_HOT static void own_slice(struct strata_block_task *o)
{
    const struct strata_cico_exchange *x = &o->x;
    if (!x->own_len || !o->rounds) return;
    size_t step = (x->own_len + o->rounds - 1) / o->rounds;
    step = (step + STRATA_CACHE_LINE - 1) / STRATA_CACHE_LINE * STRATA_CACHE_LINE;
    size_t lo = o->j * step, hi = lo + step;
    if (lo >= x->own_len) return;
    if (hi > x->own_len) hi = x->own_len;
    memcpy(x->own_dst + lo, x->own_src + lo, hi - lo);
}

/* Writer q streams from mapped memory and was read whole already (o->ahead
 * remembers the first 64 such writers; later ones are looked up again). */
static int read_whole(const struct strata_block_task *o, int q)
{
    return q < 64 && (o->ahead >> q & 1);
}

STRATA_HOT static int rounds_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    size_t R = round_bytes(p);
    STRATA_TASK_BEGIN(op);
    for (o->j = 0; o->j < o->rounds; o->j++) {
        /* Entered: done reading older regions; buf non-NULL: read my stream
         * where it lies. */
        o->base = strata_plane_enter(p, 1, o->x.direct ? o->x.my_stream : NULL, NULL);
        if (o->j == 0) o->x.first_base = o->base;
        /* Goes with this round's progress below (release). */
        if (o->x.direct && o->j == 0) strata_flag_set_relaxed(&me->direct, o->base);
        if (!o->x.direct && o->mine > o->j * R) {
            STRATA_TASK_AWAIT_REGIONS_FREE(op, p, o->i);
            size_t from = o->j * R, len = (o->mine < from + R ? o->mine : from + R) - from;
            stream_copy(&o->x, strata_plane_region(p, p->rank, 0), from, len);
        }
        /* Release: a reader that sees the round's value also sees its bytes. */
        strata_plane_publish(p, &me->progress, o->base + 1);
        own_slice(o); /* while the others copy in */
        for (o->i = 1; o->i < p->size; o->i++) {
            int q;
            size_t a, b;
            unsigned char *dst;
            if (!piece_of(o, p, o->j, o->i, &q, &a, &b, &dst) || read_whole(o, q)) continue;
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(p->rank + o->i) % p->size].progress, o->base + 1,
                                 p->pid[(p->rank + o->i) % p->size]);
            piece_of(o, p, o->j, o->i, &q, &a, &b, &dst); /* locals do not survive the wait */
            /* The acquire of progress made q's direct and buf visible.  q
             * marks a direct call with the base of its first round (the
             * same on every rank); a direct q stays in this
             * call until every reader acknowledges, so its buf is this
             * call's.  Any other value: q streams through its region. */
            if (strata_flag_read(&p->ctl[q].direct) == o->x.first_base) {
                const unsigned char *src =
                    (const void *)(uintptr_t)strata_flag_read(&p->ctl[q].buf);
                /* All that q streams, once, through the transport (a copy
                 * through the mapping; CMA if q's range is not mapped). */
                size_t lo, len;
                o->x.want(o, q, &lo, &len, &dst);
                if (o->j == 0) strata_plane_pull(p, o->x.coll, q, src + lo, dst, len);
                if (q < 64) o->ahead |= (uint64_t)1 << q;
                continue;
            }
            memcpy(dst, strata_plane_region(p, q, 0) + (a - o->j * R), b - a);
            if (p->stats) strata_stats_bytes(o->x.coll, p->dist[q], b - a);
        }
    }
    /* Release: done reading every writer (only a direct writer waits). */
    if (o->x.acks) strata_plane_publish(p, &me->ack, o->base);
    if (o->x.direct)
        for (o->i = 1; o->i < p->size; o->i++)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(p->rank + o->i) % p->size].ack, o->base,
                                 p->pid[(p->rank + o->i) % p->size]);
    if (o->owned) free(o->owned); /* free(NULL) still runs strata's free (heap.c) */
    o->owned = NULL;
    STRATA_TASK_END(op);
}

/* Sets the operation up to exchange the streams x describes. */
STRATA_HOT static void start_rounds(struct strata_block_task *o, struct strata_plane *p, int coll,
                                    size_t (*stream_len)(const struct strata_block_task *, int),
                                    void (*want)(const struct strata_block_task *, int, size_t *,
                                    size_t *, unsigned char **), const unsigned char *my_stream)
{
    strata_task_init(&o->op, p, rounds_progress);
    o->x.coll = coll;
    o->x.stream_len = stream_len;
    o->x.want = want;
    o->x.my_stream = my_stream;
    o->x.skip_at = o->x.skip_len = 0;
    o->x.own_src = NULL;
    o->x.own_dst = NULL;
    o->x.own_len = 0;
    o->x.direct = o->x.acks = 0;
    o->ahead = 0;
    size_t R = round_bytes(p), longest = 0;
    for (int q = 0; q < p->size; q++) {
        size_t len = stream_len(o, q);
        if (len > longest) longest = len;
    }
    o->rounds = (longest + R - 1) / R;
    o->mine = stream_len(o, p->rank);
}

/* Copies this rank's own block a slice per round (see own_slice); with no
 * round at all (nothing to exchange: one rank), at once. */
STRATA_HOT static void set_own(struct strata_block_task *o, const unsigned char *src,
                               unsigned char *dst, size_t len)
{
    if (!o->rounds) {
        memcpy(dst, src, len);
        return;
    }
    o->x.own_src = src;
    o->x.own_dst = dst;
    o->x.own_len = len;
}

/* ---- Gather: every rank's stream is its block; the root wants them all.
 * The root streams nothing (nobody reads its block) and copies its own
 * block after its entry, while the others copy theirs in. */
STRATA_HOT static size_t block_len(const struct strata_block_task *o, int q)
{
    return q == o->a.root ? 0 : o->a.block;
}

STRATA_HOT static void gather_want(const struct strata_block_task *o, int q, size_t *lo, size_t *len,
                                   unsigned char **dst)
{
    *lo = 0;
    *len = o->op.p->rank == o->a.root ? o->a.block : 0;
    *dst = o->a.recv + (size_t)q * o->a.block;
}

STRATA_HOT void strata_gather_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a)
{
    size_t b = a->block;
    int root = a->root;
    const unsigned char *mine = a->send;
    if (strata_lines_fit(STRATA_COLL_GATHER, p->size, b)) {
        if (p->rank == root) {
            if (!mine) mine = a->recv + (size_t)root * b; /* in place */
            else memcpy(a->recv + (size_t)root * b, mine, b);
        }
        strata_lines_start(o, p, STRATA_COLL_GATHER, a, mine);
        return;
    }
    o->a = *a;
    o->owned = NULL;
    start_rounds(o, p, STRATA_COLL_GATHER, block_len, gather_want, mine);
    /* In place, the root's block is already there. */
    if (p->rank == root && mine) set_own(o, mine, a->recv + (size_t)root * b, b);
}

STRATA_HOT int strata_gather_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_gather_cico_start, p, a);
}

/* ---- Allgather: the same streams; everyone wants them all. */
STRATA_HOT static void allgather_want(const struct strata_block_task *o, int q, size_t *lo,
                                      size_t *len, unsigned char **dst)
{
    *lo = 0;
    *len = o->a.block;
    *dst = o->a.recv + (size_t)q * o->a.block;
}

STRATA_HOT void strata_allgather_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                            const struct strata_block_args *a)
{
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)p->rank * b;
    if (strata_lines_fit(STRATA_COLL_ALLGATHER, p->size, b)) {
        if (a->send) memcpy(own, a->send, b);
        strata_lines_start(o, p, STRATA_COLL_ALLGATHER, a, own);
        return;
    }
    o->a = *a;
    o->owned = NULL;
    /* The stream is the send buffer itself; the own block follows it round
     * by round (in place: it is already there). */
    const unsigned char *stream = a->send ? a->send : own;
    start_rounds(o, p, STRATA_COLL_ALLGATHER, block_len, allgather_want, stream);
    if (a->send) set_own(o, a->send, own, b);
    /* A block in this rank's arena is read where it lies: one copy (a
     * memcpy through the peers' mapping) instead of two, and no page pinned. */
    o->x.acks = (p->xport->features & STRATA_XPORT_MAP_PEER) != 0; /* the same on every rank */
    o->x.direct = o->x.acks && b && strata_arena_contains(stream) &&
                  strata_arena_contains(stream + b - 1);
}

STRATA_HOT int strata_allgather_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_cico_start, p, a);
}

/* ---- Scatter: only the root has a stream, its send buffer less the block
 * it keeps (copied after its entry, while the others copy theirs out); rank
 * r's block comes r-th in it, or (r-1)-th past the root's. */
STRATA_HOT static size_t root_len(const struct strata_block_task *o, int q)
{
    return q == o->a.root ? (size_t)(o->op.p->size - 1) * o->a.block : 0;
}

STRATA_HOT static void scatter_want(const struct strata_block_task *o, int q, size_t *lo,
                                    size_t *len, unsigned char **dst)
{
    int r = o->op.p->rank, root = o->a.root;
    *lo = (size_t)(r < root ? r : r - 1) * o->a.block;
    *len = q == root ? o->a.block : 0;
    *dst = o->a.recv;
}

STRATA_HOT void strata_scatter_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a)
{
    size_t b = a->block;
    int at_root = p->rank == a->root;
    if (strata_lines_fit(STRATA_COLL_SCATTER, p->size, b)) {
        if (at_root && a->recv) memcpy(a->recv, a->send + (size_t)a->root * b, b);
        strata_lines_start(o, p, STRATA_COLL_SCATTER, a, a->send);
        return;
    }
    o->a = *a;
    o->owned = NULL;
    start_rounds(o, p, STRATA_COLL_SCATTER, root_len, scatter_want, at_root ? a->send : NULL);
    if (!at_root) return;
    o->x.skip_at = (size_t)a->root * b;
    o->x.skip_len = b;
    /* In place (no recv), the root's block stays where it is. */
    if (a->recv) set_own(o, a->send + (size_t)a->root * b, a->recv, b);
}

STRATA_HOT int strata_scatter_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_scatter_cico_start, p, a);
}

/* ---- Alltoall: every rank's stream is its send buffer less the block it
 * keeps; rank r wants block r of each, which in q's stream comes r-th, or
 * (r-1)-th past q's own. */
STRATA_HOT static size_t all_len(const struct strata_block_task *o, int q)
{
    (void)q;
    return (size_t)(o->op.p->size - 1) * o->a.block;
}

STRATA_HOT static void alltoall_want(const struct strata_block_task *o, int q, size_t *lo,
                                     size_t *len, unsigned char **dst)
{
    int r = o->op.p->rank;
    *lo = (size_t)(r < q ? r : r - 1) * o->a.block;
    *len = o->a.block;
    *dst = o->a.recv + (size_t)q * o->a.block;
}

STRATA_HOT void strata_alltoall_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                           const struct strata_block_args *a)
{
    size_t b = a->block, total = (size_t)p->size * b;
    const unsigned char *send = a->send;
    void *copy = NULL;
    if (strata_lines_fit(STRATA_COLL_ALLTOALL, p->size, b)) {
        /* In place the own block is already there; the others leave recv
         * through the lines before any arrives. */
        if (send) memcpy(a->recv + (size_t)p->rank * b, send + (size_t)p->rank * b, b);
        strata_lines_start(o, p, STRATA_COLL_ALLTOALL, a, send ? send : a->recv);
        return;
    }
    if (!send) {
        /* In place: incoming blocks overwrite recv while later rounds still
         * stream it out, so stream a private copy instead. */
        copy = malloc(total);
        if (!copy) {
            strata_error("out of memory for a %zu-byte in-place Alltoall", total);
            abort();
        }
        memcpy(copy, a->recv, total);
        send = copy;
    }
    o->a = *a;
    o->owned = copy; /* freed by the last progress step */
    start_rounds(o, p, STRATA_COLL_ALLTOALL, all_len, alltoall_want, send);
    o->x.skip_at = (size_t)p->rank * b;
    o->x.skip_len = b;
    /* In place, the kept block is already in recv. */
    if (a->send) set_own(o, a->send + (size_t)p->rank * b, a->recv + (size_t)p->rank * b, b);
}

STRATA_HOT int strata_alltoall_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_alltoall_cico_start, p, a);
}
