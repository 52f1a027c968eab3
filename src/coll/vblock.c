/* The v-collectives inside a node: Gatherv, Scatterv, Allgatherv and
 * Alltoallv, one engine for the four (block.h).
 *
 * Nobody needs counts it was not given.  Each rank knows only its own
 * layout (struct strata_vlayout: what it sends to each rank, what it
 * receives from each rank), and a reader's lengths are its own receive
 * counts (the standard makes them match the writers' send counts).  What a
 * reader does not know is where its piece lies in a writer's memory when
 * the writer holds different pieces for different readers (Scatterv's
 * root, every Alltoallv rank): such a writer publishes a record in its
 * copy-in/copy-out region, one (address offset, stream offset) pair per
 * reader.  The record's header also carries what decides the algorithm:
 * the largest block and the longest stream, as the rank that knows them
 * computes them (Gatherv's and Scatterv's root, every Alltoallv rank for its
 * own part; Allgatherv's counts are known to every rank).  So the first
 * plane operation of every call is the layout: publish, read the records
 * this rank needs, and only then choose the algorithm, from values that
 * are identical on every rank; no rank can take another path than its
 * peers.
 *
 * Small calls need no second operation (the fused path): a writer whose
 * whole stream fits its region beside its record copies it there before
 * the layout's publish, behind a stamp (the operation's base, and the
 * stream's length) saying it is this call's.  When the agreed longest
 * stream fits too (identical on every rank, so every writer's stream is
 * there) and copy-in/copy-out is the choice, readers copy their pieces
 * straight from the regions of the layout operation and the call ends with
 * it: one publish per rank.  Otherwise an early copy is simply not used.
 *
 * Then one of three data paths, in the same operation or in the ones that
 * follow:
 *  - single-copy reads (the contention-aware paper's sequential and ring
 *    reads): every reader pulls each of its pieces straight from the
 *    writer's exposed buffer, rank - 1, rank - 2, ... in turn, so that in
 *    each step each writer has one reader; Gatherv's root reads the ranks
 *    one after the other; Scatterv's readers take turns, at most k at once
 *    on the root (turns.h).  Acks keep each buffer alive until its readers
 *    are done.
 *  - single-copy writes (Gatherv only, Gather's throttled write): each
 *    non-root pushes its block into the root's exposed receive buffer, where
 *    the root's record says, at most k at once (turns.h); the root's own
 *    block is copied meanwhile.
 *  - copy-in/copy-out: each writer's stream (its one block, or its pieces in
 *    reader order) goes through its region in rounds, as in cico_block.c;
 *    each reader copies the part it wants of every writer's round.
 *
 * Every rank copies its own block (if any) only after its layout is
 * published, so that its peers' copies overlap with it (as Gather's root
 * does).
 *
 * A resumable operation (coll/task.h); the layout arrays are private copies,
 * so the caller's may live on its stack, unless the caller lends them
 * (strata_vlayout.lent: a call that outlives its operation). */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/block.h"
#include "coll/turns.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

/* Record words: the header, then three per reader: where its piece lies in
 * the writer's buffer (Gatherv's root: where the writer's block goes in
 * its receive buffer), where in the writer's stream, and its bytes (what
 * the reader compares with its own count, coll/agree.h). */
enum { REC_AGREED, REC_LONGEST, REC_HEADER };
enum { REC_ADDR, REC_STREAM, REC_BYTES, REC_PER_READER };

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

static size_t round_bytes(const struct strata_plane *p) { return (size_t)p->nregions * p->region; }

static size_t record_bytes(int size)
{
    return (REC_HEADER + REC_PER_READER * (size_t)size) * sizeof(uint64_t);
}

/* The fused path's words, right after the record (the same place in every
 * rank's region, record or not): the base of the operation whose stream
 * follows, and the stream's length; then the stream. */
enum { FUSED_STAMP, FUSED_LEN, FUSED_HEADER };

static size_t fused_at(int size) { return record_bytes(size); }

/* Bytes of stream that fit beside the record and the stamp (0: none). */
static size_t fused_room(const struct strata_plane *p)
{
    size_t used = fused_at(p->size) + FUSED_HEADER * sizeof(uint64_t);
    return round_bytes(p) > used ? round_bytes(p) - used : 0;
}

const char *strata_vblock_refusal(const struct strata_plane *p)
{
    return strata_vblock_refusal_size(p->size, round_bytes(p));
}

const char *strata_vblock_refusal_size(int size, size_t round)
{
    if (record_bytes(size) > round)
        return "the v-collectives' layout records of this many ranks do not fit a rank's "
               "copy-in/copy-out area (raise STRATA_CICO_MAX)";
    return NULL;
}

/* Gatherv, Allgatherv and a layout of blocks sent once (block.h,
 * strata_vpieces.once: the neighbourhood allgathers on Alltoallv's engine):
 * a writer holds one block, the same for all its readers.  Scatterv and
 * Alltoallv: a piece per reader. */
static int one_block(const struct strata_vblock_state *v)
{
    return v->once || v->coll == STRATA_COLL_GATHERV || v->coll == STRATA_COLL_ALLGATHERV;
}

/* Whether this rank reads q's record: every writer's that may send it
 * something (its bytes are checked against this rank's count), and the
 * root's (Gatherv's offsets, Scatterv's pieces, the header). */
static int reads_record(const struct strata_block_task *o, int me, int q)
{
    if (o->v.coll == STRATA_COLL_GATHERV) return me == o->a.root || q == o->a.root;
    if (o->v.coll == STRATA_COLL_SCATTERV) return q == o->a.root;
    return 1; /* Allgatherv: also so that the header's maximum is everyone's */
}

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

/* Fills the header values this rank knows, and its per-reader stream offsets. */
static void own_header(struct strata_block_task *o, const struct strata_plane *p)
{
    struct strata_vblock_state *v = &o->v;
    int me = p->rank, coll = v->coll;
    size_t agreed = 0, longest = 0;
    for (int r = 0; r < p->size; r++) {
        if (r == me) continue;
        if (coll == STRATA_COLL_GATHERV) {
            agreed = max2(agreed, v->in_len[r]);
            longest = agreed;
        } else {
            agreed = max2(agreed, v->out_len[r]);
            longest += v->out_len[r];
        }
    }
    if (coll == STRATA_COLL_ALLGATHERV || v->once) longest = agreed;
    v->agreed = agreed;
    v->longest = longest;
    o->mine = one_block(v) ? agreed : longest;
    if (coll == STRATA_COLL_GATHERV) o->mine = p->rank == o->a.root ? 0 : v->out_len[o->a.root];
}

static void write_record(const struct strata_block_task *o, struct strata_plane *p)
{
    const struct strata_vblock_state *v = &o->v;
    uint64_t *rec = (uint64_t *)(void *)strata_plane_region(p, p->rank, 0);
    rec[REC_AGREED] = v->agreed;
    rec[REC_LONGEST] = v->longest;
    uint64_t *per = rec + REC_HEADER;
    size_t pos = 0;
    for (int r = 0; r < p->size; r++, per += REC_PER_READER) {
        per[REC_BYTES] = v->out_len[r];
        if (v->coll == STRATA_COLL_GATHERV) {
            /* Where each writer's block goes in the root's receive buffer
             * (the single-copy writes). */
            per[REC_ADDR] = v->in_off[r];
        } else if (!one_block(v)) {
            per[REC_ADDR] = v->out_off[r];
            per[REC_STREAM] = pos;
            if (r != p->rank) pos += v->out_len[r];
        }
    }
}

/* Notes that q publishes `sent` bytes for this rank where its count says
 * `expected` (q == this rank: its own two counts); more sent than expected
 * outranks less. */
static void found(struct strata_vblock_state *v, int q, size_t sent, size_t expected)
{
    int cls = sent > expected ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
    if (v->found.error == MPI_ERR_TRUNCATE || (v->found.error != MPI_SUCCESS && cls == MPI_ERR_OTHER))
        return;
    v->found.error = cls;
    v->found.from = q;
    v->found.sent = (long long)sent;
    v->found.expected = (long long)expected;
}

/* Takes what this rank needs of q's record (published and acquired). */
static void read_record(struct strata_block_task *o, const struct strata_plane *p, int q)
{
    struct strata_vblock_state *v = &o->v;
    const uint64_t *rec = (const uint64_t *)(const void *)strata_plane_region(p, q, 0);
    const uint64_t *per = rec + REC_HEADER + REC_PER_READER * (size_t)p->rank;
    int rooted = v->coll == STRATA_COLL_GATHERV || v->coll == STRATA_COLL_SCATTERV;
    if (!rooted) {
        v->agreed = max2(v->agreed, rec[REC_AGREED]);
        v->longest = max2(v->longest, rec[REC_LONGEST]);
    } else if (q == o->a.root) {
        v->agreed = rec[REC_AGREED];
        v->longest = rec[REC_LONGEST];
    }
    if (v->coll == STRATA_COLL_GATHERV) {
        if (q == o->a.root) v->from_addr[q] = per[REC_ADDR];
    } else if (!one_block(v)) {
        v->from_addr[q] = per[REC_ADDR];
        v->from_stream[q] = per[REC_STREAM];
    }
    /* The pair's check (agree.h): what q publishes for this rank against
     * this rank's own count; never more than the smaller is copied. */
    if (per[REC_BYTES] != v->in_len[q]) {
        found(v, q, per[REC_BYTES], v->in_len[q]);
        if (per[REC_BYTES] < v->in_len[q]) v->in_len[q] = per[REC_BYTES];
    }
}

/* Bytes [from, to) of this rank's stream into dst: its block, or its
 * pieces in reader order (its own left out). */
static void copy_stream(const struct strata_block_task *o, const struct strata_plane *p, size_t from,
                        size_t to, unsigned char *dst)
{
    const struct strata_vblock_state *v = &o->v;
    if (one_block(v)) {
        memcpy(dst, o->send + from, to - from);
        return;
    }
    size_t pos = 0;
    for (int r = 0; r < p->size && pos < to; r++) {
        if (r == p->rank) continue;
        size_t lo = max2(pos, from), hi = pos + v->out_len[r] < to ? pos + v->out_len[r] : to;
        if (lo < hi) memcpy(dst + (lo - from), o->send + v->out_off[r] + (lo - pos), hi - lo);
        pos += v->out_len[r];
    }
}

/* This rank's whole stream fits beside its record: it goes with the layout. */
static int own_fits(const struct strata_block_task *o, const struct strata_plane *p)
{
    return o->mine > 0 && o->mine <= fused_room(p);
}

/* Copies this rank's whole stream beside its record, stamped with the
 * operation's base (the region is free: the caller waited). */
static void write_fused(const struct strata_block_task *o, struct strata_plane *p)
{
    unsigned char *at = strata_plane_region(p, p->rank, 0) + fused_at(p->size);
    uint64_t *hdr = (uint64_t *)(void *)at;
    hdr[FUSED_STAMP] = o->base;
    hdr[FUSED_LEN] = o->mine;
    copy_stream(o, p, 0, o->mine, at + FUSED_HEADER * sizeof(uint64_t));
}

/* What this rank copies of writer (rank + i)'s stream in round j: [*a, *b)
 * of the stream into *dst.  0 if nothing. */
static int piece_of(const struct strata_block_task *o, const struct strata_plane *p, size_t j, int i,
                    int *q, size_t *a, size_t *b, unsigned char **dst)
{
    const struct strata_vblock_state *v = &o->v;
    size_t R = round_bytes(p), from = j * R, to = from + R;
    *q = (p->rank + i) % p->size; /* start with different writers */
    size_t lo = v->from_stream[*q], len = v->in_len[*q];
    *a = lo > from ? lo : from;
    *b = lo + len < to ? lo + len : to;
    if (len == 0 || *a >= *b) return 0;
    *dst = o->a.recv + v->in_off[*q] + (*a - lo);
    return 1;
}

/* Bytes [from, from + n) of this rank's stream from q, found at src (q's
 * exposed memory when pull, else memory this rank reads itself), copied to
 * where they go: recv + in_off[q] + from, or across the layout's pieces
 * (once: into each of them, every piece a copy of the stream's start). */
static void deliver(struct strata_block_task *o, struct strata_plane *p, int q,
                    const unsigned char *src, size_t from, size_t n, int pull)
{
    const struct strata_vblock_state *v = &o->v;
    const struct strata_vpieces *pc = v->pieces;
    size_t k = pc ? pc->first[q] : 0, end = pc ? pc->first[q + 1] : 1, pos = 0;
    for (; k < end && pos < from + n; k++) {
        size_t len = pc ? pc->len[k] : v->in_len[q];
        size_t lo = max2(pos, from), hi = pos + len < from + n ? pos + len : from + n;
        unsigned char *dst = o->a.recv + (pc ? pc->at[k] : v->in_off[q]) + (lo - pos);
        if (lo < hi && pull) strata_plane_pull(p, v->counted, q, src + (lo - from), dst, hi - lo);
        else if (lo < hi) memcpy(dst, src + (lo - from), hi - lo);
        if (!pc || !pc->once) pos += len;
    }
}

/* One piece straight from writer q's exposed buffer. */
static void pull_piece(struct strata_block_task *o, struct strata_plane *p, int q)
{
    const struct strata_vblock_state *v = &o->v;
    const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[q].buf);
    size_t at = one_block(v) ? 0 : v->from_addr[q]; /* a one-block writer's block starts it */
    deliver(o, p, q, src + at, 0, v->in_len[q], 1);
}

/* This rank's block straight into the root's exposed receive buffer. */
static void push_block(struct strata_block_task *o, struct strata_plane *p, int root)
{
    const struct strata_vblock_state *v = &o->v;
    unsigned char *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[root].acc);
    strata_plane_push(p, v->counted, root, dst + v->from_addr[root], o->send, v->out_len[root]);
}

int strata_vblock_path(const struct strata_algorithm *al)
{
    if (!(al->needs & STRATA_NEEDS_SINGLE_COPY)) return 0;
    return al->id == STRATA_ALGO_GATHERV_THROTTLED_WRITE ? STRATA_VBLOCK_WRITES : STRATA_VBLOCK_READS;
}

static void finish(struct strata_block_task *o)
{
    if (o->v.arrays != o->v.small) free(o->v.arrays);
    o->v.arrays = NULL;
    if (o->owned) free(o->owned); /* free(NULL) still runs strata's free (heap.c) */
    o->owned = NULL;
}

static int vblock_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_vblock_state *v = &o->v;
    struct strata_plane *p = op->p;
    int me = p->rank, size = p->size, root = o->a.root;
    size_t R = round_bytes(p);
    STRATA_TASK_BEGIN(op);
    /* ---- The layout: entered with the buffer peers read from exposed. */
    /* Gatherv's root also exposes its receive buffer, for the writes. */
    o->base = strata_plane_enter(p, 1, o->send,
                                 v->coll == STRATA_COLL_GATHERV && me == root ? o->a.recv : NULL);
    /* Readers of this half's last contents (two operations ago) are done. */
    STRATA_TASK_AWAIT_REGIONS_FREE(op, p, o->i);
    write_record(o, p);
    if (own_fits(o, p)) write_fused(o, p);
    /* Release: the record, the fused stream and the exposed buffer go with it. */
    strata_plane_publish(p, &p->ctl[me].progress, o->base + 1);
    /* Now that peers can start: this rank's own block (peers read only its
     * exposed buffer and regions, and write only other blocks' places). */
    if (v->own_len && v->pieces) deliver(o, p, me, v->own_src, 0, v->own_len, 0);
    else if (v->own_len) memcpy(v->own_dst, v->own_src, v->own_len);
    for (o->i = 0; o->i < size; o->i++) {
        if (o->i == me || !reads_record(o, me, o->i)) continue;
        STRATA_TASK_AWAIT_GE(op, &p->ctl[o->i].progress, o->base + 1, p->pid[o->i]);
        read_record(o, p, o->i);
    }
    /* v->agreed is now the same on every rank: so is the choice. */
    if (v->single_copy < 0) v->choose(o);
    /* From agreed values only, so the same on every rank; and then every
     * writer's stream fits, so every writer wrote it above. */
    v->fused = !v->single_copy && v->longest <= fused_room(p);
    if (v->verify && !v->fused) {
        /* Nothing was compared before this call, and what follows moves
         * data by counts (single-copy) or in several operations: first
         * every rank's signature, stamped at its call's start, must name
         * the same call; then every rank's finding, before any byte moves
         * (agree.h).  Every rank gets here: with the same call and root
         * every rank read the same header, so none took the fused path. */
        for (o->i = 0; o->i < size; o->i++) {
            if (o->i == me) continue;
            STRATA_TASK_AWAIT_GE(op, strata_agree_stamp_of(p, o->i), p->call.mine.stamp,
                                 p->pid[o->i]);
        }
        {
            struct strata_agree_verdict verdict;
            if (!strata_agree_look(p, &verdict)) {
                finish(o);
                op->resume = STRATA_TASK_FINISHED;
                return STRATA_TASK_DISAGREE; /* the caller rewinds and reports */
            }
        }
        strata_agree_veto_publish(p, v->found.error, v->found.error != MPI_SUCCESS ? me : -1);
        for (o->i = 0; o->i < size; o->i++) {
            if (o->i == me) continue;
            STRATA_TASK_AWAIT_GE(op, strata_agree_veto_of(p, o->i), p->call.mine.stamp,
                                 p->pid[o->i]);
        }
        v->found.finder = v->found.cut = -1;
        if (strata_agree_veto_read(p, p->call.mine.vrecvd > 0, &v->found.error, &v->found.finder,
                                   &v->found.cut)) {
            v->found.refused = 1;
            finish(o);
            op->resume = STRATA_TASK_FINISHED;
            return STRATA_VBLOCK_FOUND;
        }
    }

    if (v->fused) {
        for (o->i = 1; o->i < size; o->i++) {
            int q;
            size_t a, b;
            unsigned char *dst;
            /* Nothing from this writer: no wait (its piece is found after
             * the wait, once: locals do not survive it). */
            if (!v->in_len[(me + o->i) % size]) continue;
            /* Acquire: the writer's stamp and stream, published with its progress. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + o->i) % size].progress, o->base + 1,
                                 p->pid[(me + o->i) % size]);
            if (!piece_of(o, p, 0, o->i, &q, &a, &b, &dst)) continue;
            const unsigned char *at = strata_plane_region(p, q, 0) + fused_at(size);
            const uint64_t *hdr = (const uint64_t *)(const void *)at;
            if (hdr[FUSED_STAMP] != o->base || b > hdr[FUSED_LEN]) {
                /* Only counts that do not match the writer's (an erroneous
                 * program) get here: its stream did not fit (the record
                 * said so: found already), or the writer is in another
                 * call (its signature says so; the caller looks). */
                if (v->found.error == MPI_SUCCESS) {
                    v->found.error = MPI_ERR_OTHER;
                    v->found.from = q;
                    v->found.sent = -1; /* unknown */
                    v->found.expected = (long long)v->in_len[q];
                }
                continue;
            }
            deliver(o, p, q, at + FUSED_HEADER * sizeof(uint64_t) + a, a - v->from_stream[q], b - a,
                    0);
            if (p->stats) strata_stats_bytes(v->counted, p->dist[q], b - a);
        }
        /* No ack: nobody reads this rank's exposed buffer on this path, and
         * the regions' next writer waits for every rank to enter a later
         * operation (STRATA_TASK_AWAIT_REGIONS_FREE), i.e. to be done here. */
    } else if (v->single_copy == STRATA_VBLOCK_WRITES) {
        /* Gatherv's throttled write: at most k writers in the root at once. */
        if (me != root) {
            STRATA_TASK_AWAIT_TURN(op, p, root, o->base, o->k);
            /* The root's acc is visible: its progress of this operation was
             * acquired with its record above. */
            if (v->out_len[root]) push_block(o, p, root);
        } else {
            STRATA_TASK_AWAIT_ALL_TURNS(op, p, root, o->base, o->k, o->t); /* every block is in */
        }
        /* Release: this rank's block is in the root's buffer (the root may
         * return once it has them all); hands the turn on to turn + k. */
        strata_plane_publish(p, &p->ctl[me].ack, o->base);
    } else if (v->single_copy) {
        if (v->coll == STRATA_COLL_SCATTERV) {
            /* Throttled read: at most k readers on the root at once. */
            if (me != root) {
                STRATA_TASK_AWAIT_TURN(op, p, root, o->base, o->k);
                if (v->in_len[root]) pull_piece(o, p, root);
                /* Release: done with the root's buffer; hands the turn on. */
                strata_plane_publish(p, &p->ctl[me].ack, o->base);
            } else {
                STRATA_TASK_AWAIT_ALL_TURNS(op, p, root, o->base, o->k, o->t);
            }
        } else {
            /* Ring reads: step i reads from rank - i, so that each writer
             * has one reader per step (Gatherv: only the root reads). */
            for (o->i = 1; o->i < size; o->i++) {
                if (!v->in_len[(me - o->i + size) % size]) continue;
                /* The acquire makes the writer's buf of this operation visible. */
                STRATA_TASK_AWAIT_GE(op, &p->ctl[(me - o->i + size) % size].progress, o->base + 1,
                                     p->pid[(me - o->i + size) % size]);
                pull_piece(o, p, (me - o->i + size) % size);
            }
            /* Release: this rank reads no peer's memory again. */
            strata_plane_publish(p, &p->ctl[me].ack, o->base);
            /* Every reader of this rank's buffer must be done before it returns. */
            for (o->i = 1; o->i < size; o->i++) {
                if (!v->out_len[(me + o->i) % size]) continue;
                STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + o->i) % size].ack, o->base,
                                     p->pid[(me + o->i) % size]);
            }
        }
    } else {
        /* Copy-in/copy-out rounds over the longest stream (agreed). */
        o->rounds = (v->longest + R - 1) / R;
        for (o->j = 0; o->j < o->rounds; o->j++) {
            o->base = strata_plane_enter(p, 1, NULL, NULL); /* done reading older regions */
            if (o->mine > o->j * R) {
                STRATA_TASK_AWAIT_REGIONS_FREE(op, p, o->i);
                size_t from = o->j * R, to = o->mine < from + R ? o->mine : from + R;
                copy_stream(o, p, from, to, strata_plane_region(p, me, 0));
            }
            /* Release: a reader that sees the round's value also sees its bytes. */
            strata_plane_publish(p, &p->ctl[me].progress, o->base + 1);
            for (o->i = 1; o->i < size; o->i++) {
                int q;
                size_t a, b;
                unsigned char *dst;
                if (!piece_of(o, p, o->j, o->i, &q, &a, &b, &dst)) continue;
                STRATA_TASK_AWAIT_GE(op, &p->ctl[(me + o->i) % size].progress, o->base + 1,
                                     p->pid[(me + o->i) % size]);
                piece_of(o, p, o->j, o->i, &q, &a, &b, &dst); /* locals do not survive the wait */
                deliver(o, p, q, strata_plane_region(p, q, 0) + (a - o->j * R),
                        a - v->from_stream[q], b - a, 0);
                if (p->stats) strata_stats_bytes(v->counted, p->dist[q], b - a);
            }
        }
    }
    finish(o);
    if (v->found.error != MPI_SUCCESS) {
        op->resume = STRATA_TASK_FINISHED;
        return v->verify ? STRATA_VBLOCK_FOUND : v->found.error;
    }
    STRATA_TASK_END(op);
}

static void *alloc_or_abort(size_t bytes, const char *what)
{
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m) {
        strata_error("out of memory for %s (%zu bytes)", what, bytes);
        abort();
    }
    return m;
}

/* The uniform layout of a block collective's arguments (a->v == NULL). */
static void uniform_layout(struct strata_vblock_state *v, const struct strata_plane *p,
                           const struct strata_block_args *a)
{
    int me = p->rank, root = a->root;
    size_t b = a->block;
    for (int r = 0; r < p->size; r++) {
        int sends = 1, receives = 1;
        if (v->coll == STRATA_COLL_GATHERV) sends = r == root, receives = me == root;
        if (v->coll == STRATA_COLL_SCATTERV) sends = me == root, receives = r == root;
        v->out_len[r] = sends ? b : 0;
        v->out_off[r] = one_block(v) ? 0 : (size_t)r * b;
        v->in_len[r] = receives ? b : 0;
        v->in_off[r] = v->coll == STRATA_COLL_SCATTERV ? 0 : (size_t)r * b;
    }
}

void strata_vblock_start(struct strata_block_task *o, struct strata_plane *p, int coll,
                         const struct strata_block_args *a, int single_copy,
                         void (*choose)(struct strata_block_task *o))
{
    int me = p->rank, size = p->size, root = a->root;
    struct strata_vblock_state *v = &o->v;
    strata_task_init(&o->op, p, vblock_progress);
    o->a = *a;
    o->a.v = NULL; /* the caller's layout may not outlive this call */
    o->k = a->k;
    o->owned = NULL;
    memset(v, 0, offsetof(struct strata_vblock_state, small));
    v->counted = coll;
    /* Alltoallw and the neighbourhood collectives run as Alltoallv. */
    coll = strata_coll_engine(coll);
    v->coll = coll;
    v->single_copy = single_copy;
    v->choose = choose;
    /* The layout's four arrays (unless lent), then from_addr and from_stream. */
    size_t n = (a->v && a->v->lent ? 2 : 6) * (size_t)size;
    if (size <= STRATA_VBLOCK_INLINE) {
        v->arrays = v->small;
        memset(v->arrays, 0, n * sizeof(size_t));
    } else {
        v->arrays = alloc_or_abort(n * sizeof(size_t), "a v-collective's layout");
    }
    size_t *layout = a->v && a->v->lent ? a->v->lent : v->arrays + 2 * size;
    v->from_addr = v->arrays;
    v->from_stream = v->from_addr + size;
    v->out_len = layout;
    v->out_off = v->out_len + size;
    v->in_len = v->out_off + size;
    v->in_off = v->in_len + size;
    if (a->v && a->v->lent) {
        v->pieces = a->v->pieces;
        v->once = v->pieces && v->pieces->once;
    } else if (a->v) {
        memcpy(v->out_len, a->v->out_len, size * sizeof(size_t));
        memcpy(v->out_off, a->v->out_off, size * sizeof(size_t));
        memcpy(v->in_len, a->v->in_len, size * sizeof(size_t));
        memcpy(v->in_off, a->v->in_off, size * sizeof(size_t));
        v->pieces = a->v->pieces;
        v->once = v->pieces && v->pieces->once;
    } else {
        uniform_layout(v, p, a);
    }
    const unsigned char *send = a->send;
    /* In place: the standard's readings of each collective. */
    if (coll == STRATA_COLL_ALLGATHERV && !send) {
        /* This rank's block is already at its place in recv. */
        send = a->recv + v->in_off[me];
        for (int r = 0; r < size; r++) v->out_len[r] = v->in_len[me], v->out_off[r] = 0;
        v->in_len[me] = v->out_len[me] = 0;
    } else if (coll == STRATA_COLL_ALLTOALLV && !send) {
        /* recv holds the outgoing blocks and takes the incoming ones: peers
         * read a private copy instead. */
        size_t span = 0;
        for (int r = 0; r < size; r++)
            if (v->in_len[r]) span = max2(span, v->in_off[r] + v->in_len[r]);
        o->owned = alloc_or_abort(span, "an in-place Alltoallv");
        memcpy(o->owned, a->recv, span);
        send = o->owned;
        memcpy(v->out_len, v->in_len, size * sizeof(size_t));
        memcpy(v->out_off, v->in_off, size * sizeof(size_t));
        v->in_len[me] = v->out_len[me] = 0;
    } else if ((coll == STRATA_COLL_GATHERV && me == root && !send) ||
               (coll == STRATA_COLL_SCATTERV && me == root && !a->recv)) {
        v->in_len[me] = v->out_len[me] = 0; /* the root's own block stays where it is */
    }
    /* This rank's own block: copied once the layout is published, at most
     * the smaller of its two counts. */
    if (v->in_len[me] != v->out_len[me]) found(v, me, v->out_len[me], v->in_len[me]);
    if (v->in_len[me] && v->out_len[me]) {
        v->own_dst = a->recv + v->in_off[me];
        v->own_src = send + v->out_off[me];
        v->own_len = v->in_len[me] < v->out_len[me] ? v->in_len[me] : v->out_len[me];
    }
    v->in_len[me] = v->out_len[me] = 0;
    /* A writer of one block exposes that block (offset 0 for every reader). */
    if (one_block(v)) {
        for (int r = 0; r < size; r++)
            if (v->out_len[r]) {
                send += v->out_off[r];
                break;
            }
    }
    o->send = send;
    /* Allgatherv's header is the maximum of every writer's own block, read
     * from the records: a rank's counts of the others' blocks are not
     * trusted to decide the path (they differ across ranks only in an
     * erroneous program, which must not split the ranks' paths). */
    own_header(o, p);
}

/* The named algorithms of the table: a data path each. */
#define VBLOCK_ALGO(name, coll, single_copy)                                                 \
    void strata_##name##_start(struct strata_block_task *o, struct strata_plane *p,        \
                               const struct strata_block_args *a)                          \
    {                                                                                      \
        strata_vblock_start(o, p, coll, a, single_copy, NULL);                             \
    }                                                                                      \
    int strata_##name(struct strata_plane *p, const struct strata_block_args *a)           \
    {                                                                                      \
        return strata_block_run(strata_##name##_start, p, a);                              \
    }

VBLOCK_ALGO(gatherv_cico, STRATA_COLL_GATHERV, 0)
VBLOCK_ALGO(gatherv_sequential_read, STRATA_COLL_GATHERV, STRATA_VBLOCK_READS)
VBLOCK_ALGO(gatherv_throttled_write, STRATA_COLL_GATHERV, STRATA_VBLOCK_WRITES)
VBLOCK_ALGO(scatterv_cico, STRATA_COLL_SCATTERV, 0)
VBLOCK_ALGO(scatterv_throttled_read, STRATA_COLL_SCATTERV, STRATA_VBLOCK_READS)
VBLOCK_ALGO(allgatherv_cico, STRATA_COLL_ALLGATHERV, 0)
VBLOCK_ALGO(allgatherv_ring_read, STRATA_COLL_ALLGATHERV, STRATA_VBLOCK_READS)
VBLOCK_ALGO(alltoallv_cico, STRATA_COLL_ALLTOALLV, 0)
VBLOCK_ALGO(alltoallv_ring_read, STRATA_COLL_ALLTOALLV, STRATA_VBLOCK_READS)
