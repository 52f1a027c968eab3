/* Scatter inside a node with Cross-Memory Attach (paper IV-A): rank r gets
 * bytes [r * block, (r + 1) * block) of the root's send buffer in one copy.
 *
 * Either the non-roots pull their blocks from the root's exposed send buffer
 * (parallel read; throttled read lets at most k pull at once), or the root
 * pushes each block into the non-root's exposed receive buffer in turn
 * (sequential write).
 *
 * Non-roots take turns in the order root+1, root+2, ... (mod size): turn t,
 * from 1 to size-1, is rank (root + t) % size.  The throttle hands turns on
 * point to point, without barriers: turn t reads once turn t-k has
 * acknowledged, so at most k readers touch the root at any time; with
 * k >= size-1 nobody waits and it is the parallel read. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/turns.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/stats.h"

/* The root's own block, unless it is already in place. */
static void copy_own_block(const struct strata_block_args *a)
{
    if (a->recv) memcpy(a->recv, a->send + (size_t)a->root * a->block, a->block);
}

/* Pulls with at most k readers at once (see the top of the file). */
static int read_blocks(struct strata_plane *p, const struct strata_block_args *a, int k)
{
    int root = a->root;
    int at_root = p->rank == root;
    uint64_t base = strata_plane_enter(p, 0, at_root ? a->send : NULL, NULL);
    struct strata_rank_ctl *me = &p->ctl[p->rank];

    if (at_root) {
        copy_own_block(a); /* overlaps with the non-roots' reads */
        strata_turn_wait_all(p, root, base, k); /* the send buffer is free again */
    } else {
        strata_turn_wait(p, root, base, k);
        /* The acquire makes the root's buf of this operation visible; the
         * root cannot leave it before this rank acknowledges. */
        strata_flag_wait_ge(&p->ctl[root].seq, base, p->pid[root]);
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[root].buf);
        if (strata_cma_read(p->pid[root], src + (size_t)p->rank * a->block, a->recv, a->block))
            strata_cma_failed("read from", root, errno);
        if (p->stats) strata_stats_bytes(STRATA_COLL_SCATTER, p->dist[root], a->block);
    }
    /* Release: done with the root's buffer; hands the turn on to turn + k. */
    strata_flag_publish(&me->ack, base);
    return MPI_SUCCESS;
}

int strata_scatter_parallel_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return read_blocks(p, a, p->size > 1 ? p->size - 1 : 1);
}

int strata_scatter_throttled_read(struct strata_plane *p, const struct strata_block_args *a)
{
    return read_blocks(p, a, a->k);
}

/* The root writes turn t's block, then publishes progress = base + t, which
 * that non-root waits for before returning. */
int strata_scatter_sequential_write(struct strata_plane *p, const struct strata_block_args *a)
{
    int root = a->root, last = p->size - 1;
    int at_root = p->rank == root;
    uint64_t base = strata_plane_enter(p, (size_t)last, NULL, at_root ? NULL : a->recv);
    struct strata_rank_ctl *me = &p->ctl[p->rank];

    if (at_root) {
        for (int t = 1; t <= last; t++) {
            int r = strata_turn_rank(p, root, t);
            /* The acquire makes r's acc of this operation visible; r cannot
             * leave before the progress below tells it its block is there. */
            strata_flag_wait_ge(&p->ctl[r].seq, base, p->pid[r]);
            unsigned char *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[r].acc);
            if (strata_cma_write(p->pid[r], dst, a->send + (size_t)r * a->block, a->block))
                strata_cma_failed("write to", r, errno);
            if (p->stats) strata_stats_bytes(STRATA_COLL_SCATTER, p->dist[r], a->block);
            /* Release: turn t's block is in its buffer; it may return. */
            strata_flag_publish(&me->progress, base + (uint64_t)t);
        }
        /* Last, so that no non-root waits behind the root's own copy. */
        copy_own_block(a);
    } else {
        uint64_t written = base + (uint64_t)strata_rank_turn(p, root, p->rank);
        strata_flag_wait_ge(&p->ctl[root].progress, written, p->pid[root]);
    }
    /* Release, for uniformity: this rank touches no peer's memory again. */
    strata_flag_publish(&me->ack, base);
    return MPI_SUCCESS;
}
