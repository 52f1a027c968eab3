/* Gather, Scatter, Allgather and Alltoall of small blocks through the flag
 * lines (plane.h, "The flag lines"): the copy-in/copy-out algorithm's path
 * when every rank's stream fits one slot of lines (STRATA_LINE_SLOT_BYTES).
 *
 * Why (issue 19 item 3): through the regions, an 8-byte Allgather at 2
 * ranks hands three lines of each rank to the other (seq, read by the
 * region check of the next op; progress; the region, read only after
 * progress, so two hand-offs in a row on the reader's path), where the
 * host MPI's eager message hands one.  Here the data and its flag share a
 * line: one hand-off per line read, and a writer learns that its slot is
 * free again from the lines it reads anyway (Allgather, Alltoall) or from
 * its readers' seq once per STRATA_LINE_SLOTS - 1 ops.
 *
 * Rank q's stream: its own block (Gather, Allgather), or its blocks for the
 * other ranks in rank order without its own (Scatter's root, Alltoall), so
 * that reader r finds its block at (r < q ? r : r - 1) * block.  Nothing
 * else is shared: the user's buffers are free as soon as the call returns,
 * and an in-place Alltoall needs no private copy (the outgoing blocks are
 * in the lines before anything arrives in recv). */
#include <stddef.h>
#include <string.h>

#include "coll/block.h"
#include "util/colls.h"
#include "util/hot.h"
#include "util/stats.h"

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

/* Whether rank q's blocks for the others form its stream (Scatter's root,
 * Alltoall) rather than its own block (Gather, Allgather). */
static int streams_all_blocks(int coll) { return coll == STRATA_COLL_SCATTER || coll == STRATA_COLL_ALLTOALL; }

/* Bytes of rank q's stream (the same answer on every rank). */
static size_t stream_len(const struct strata_block_task *o, int q)
{
    const struct strata_plane *p = o->op.p;
    switch (o->x.coll) {
    case STRATA_COLL_GATHER: return q == o->a.root ? 0 : o->a.block;
    case STRATA_COLL_ALLGATHER: return o->a.block;
    case STRATA_COLL_SCATTER: return q == o->a.root ? (size_t)(p->size - 1) * o->a.block : 0;
    default: return (size_t)(p->size - 1) * o->a.block; /* Alltoall */
    }
}

int strata_lines_fit(int coll, int size, size_t block)
{
    size_t longest = streams_all_blocks(coll) ? (size_t)(size - 1) * block : block;
    return size > 1 && block <= STRATA_LINE_SLOT_BYTES && longest <= STRATA_LINE_SLOT_BYTES;
}

/* What this rank wants of rank q's stream: [*lo, *lo + *len) into *dst. */
static void want(const struct strata_block_task *o, int q, size_t *lo, size_t *len,
                 unsigned char **dst)
{
    const struct strata_plane *p = o->op.p;
    size_t b = o->a.block;
    int r = p->rank;
    *lo = 0;
    *len = b;
    *dst = o->a.recv + (size_t)q * b;
    switch (o->x.coll) {
    case STRATA_COLL_GATHER:
        if (r != o->a.root) *len = 0;
        break;
    case STRATA_COLL_SCATTER:
        if (q != o->a.root) *len = 0;
        *dst = o->a.recv;
        STRATA_FALLTHROUGH; /* the root's stream holds every other rank's block */
    case STRATA_COLL_ALLTOALL:
        *lo = (size_t)(r < q ? r : r - 1) * b;
        break;
    default: break; /* Allgather */
    }
}

STRATA_HOT static int lines_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    STRATA_TASK_BEGIN(op);
    if (o->mine) {
        /* Written before anything is read: an in-place Alltoall's outgoing
         * blocks leave recv before the incoming ones land there. */
        STRATA_TASK_AWAIT_SLOT_FREE(op, p, o->i);
        struct strata_line *slot = p->ctl[p->rank].line[o->slot];
        size_t b = o->a.block, me = (size_t)p->rank;
        if (streams_all_blocks(o->x.coll)) {
            strata_lines_put(slot, 0, o->send, me * b);
            strata_lines_put(slot, me * b, o->send + (me + 1) * b, o->mine - me * b);
        } else {
            strata_lines_put(slot, 0, o->send, o->mine);
        }
        strata_plane_publish_lines(p, slot, strata_lines_of(o->mine),
                                   strata_plane_line_value(p, o->base));
    }
    for (o->i = 1, o->n = 0; o->i < p->size; o->i++) {
        size_t lo, len;
        unsigned char *dst;
        int q = (p->rank + o->i) % p->size; /* start with different writers */
        want(o, q, &lo, &len, &dst);
        if (len == 0) continue;
        for (o->j = lo / STRATA_TINY_MAX; o->j * STRATA_TINY_MAX < lo + len; o->j++) {
            /* Acquire: the line's bytes are this op's. */
            STRATA_TASK_AWAIT_GE(op, &p->ctl[(p->rank + o->i) % p->size].line[o->slot][o->j].flag,
                                 o->base, p->pid[(p->rank + o->i) % p->size]);
            q = (p->rank + o->i) % p->size; /* locals do not survive the wait */
            strata_plane_line_read(p, &p->ctl[q].line[o->slot][o->j].flag, o->base);
            want(o, q, &lo, &len, &dst);
            size_t from = o->j * STRATA_TINY_MAX, to = from + STRATA_TINY_MAX;
            if (from < lo) from = lo;
            if (to > lo + len) to = lo + len;
            memcpy(dst + (from - lo), p->ctl[q].line[o->slot][o->j].data + from % STRATA_TINY_MAX,
                   to - from);
        }
        if (p->stats) strata_stats_bytes(o->x.coll, p->dist[q], len);
        o->n++;
    }
    /* Every other rank's line of this op read: they all entered it. */
    if (o->n == p->size - 1) strata_plane_known_entered(p, o->base);
    STRATA_TASK_END(op);
}

void strata_lines_start(struct strata_block_task *o, struct strata_plane *p, int coll,
                        const struct strata_block_args *a, const unsigned char *send)
{
    strata_task_init(&o->op, p, lines_progress);
    o->a = *a;
    o->owned = NULL;
    o->x.coll = coll;
    o->send = send;
    o->mine = stream_len(o, p->rank);
    o->base = strata_plane_enter(p, 1, NULL, NULL);
    o->slot = strata_plane_slot(p);
}
