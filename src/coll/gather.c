/* Gather inside a node with Cross-Memory Attach (paper IV-B), the mirror of
 * Scatter: rank r's block lands at bytes [r * block, (r + 1) * block) of the
 * root's receive buffer in one copy.
 *
 * Either the non-roots push their blocks into the root's exposed receive
 * buffer (parallel write; throttled write lets at most k push at once), or
 * the root pulls each block from the non-root's exposed send buffer in turn
 * (sequential read).
 *
 * Non-roots take turns in the order root+1, root+2, ... (mod size): turn t,
 * from 1 to size-1, is rank (root + t) % size.  The throttle hands turns on
 * point to point, without barriers: turn t writes once turn t-k has
 * acknowledged, so at most k writers touch the root at any time; with
 * k >= size-1 nobody waits and it is the parallel write. */
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
    if (a->send) memcpy(a->recv + (size_t)a->root * a->block, a->send, a->block);
}

/* Pushes with at most k writers at once (see the top of the file). */
static int write_blocks(struct strata_plane *p, const struct strata_block_args *a, int k)
{
    int root = a->root;
    int at_root = p->rank == root;
    uint64_t base = strata_plane_enter(p, 0, NULL, at_root ? a->recv : NULL);
    struct strata_rank_ctl *me = &p->ctl[p->rank];

    if (at_root) {
        copy_own_block(a); /* overlaps with the non-roots' writes */
        strata_turn_wait_all(p, root, base, k); /* every block is in place */
    } else {
        strata_turn_wait(p, root, base, k);
        /* The acquire makes the root's acc of this operation visible; the
         * root cannot leave it before this rank acknowledges. */
        strata_flag_wait_ge(&p->ctl[root].seq, base, p->pid[root]);
        unsigned char *dst = (void *)(uintptr_t)strata_flag_read(&p->ctl[root].acc);
        if (strata_cma_write(p->pid[root], dst + (size_t)p->rank * a->block, a->send, a->block))
            strata_cma_failed("write to", root, errno);
        if (p->stats) strata_stats_bytes(STRATA_COLL_GATHER, p->dist[root], a->block);
    }
    /* Release: this rank's block is in the root's buffer (the root may
     * return once it has them all); hands the turn on to turn + k. */
    strata_flag_publish(&me->ack, base);
    return MPI_SUCCESS;
}

int strata_gather_parallel_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return write_blocks(p, a, p->size > 1 ? p->size - 1 : 1);
}

int strata_gather_throttled_write(struct strata_plane *p, const struct strata_block_args *a)
{
    return write_blocks(p, a, a->k);
}

/* The root reads turn t's block, then publishes progress = base + t, which
 * that non-root waits for before returning: its send buffer must stay as it
 * is until read. */
int strata_gather_sequential_read(struct strata_plane *p, const struct strata_block_args *a)
{
    int root = a->root, last = p->size - 1;
    int at_root = p->rank == root;
    uint64_t base = strata_plane_enter(p, (size_t)last, at_root ? NULL : a->send, NULL);
    struct strata_rank_ctl *me = &p->ctl[p->rank];

    if (at_root) {
        for (int t = 1; t <= last; t++) {
            int r = strata_turn_rank(p, root, t);
            /* The acquire makes r's buf of this operation visible; r cannot
             * leave before the progress below tells it its block was read. */
            strata_flag_wait_ge(&p->ctl[r].seq, base, p->pid[r]);
            const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[r].buf);
            if (strata_cma_read(p->pid[r], src, a->recv + (size_t)r * a->block, a->block))
                strata_cma_failed("read from", r, errno);
            if (p->stats) strata_stats_bytes(STRATA_COLL_GATHER, p->dist[r], a->block);
            /* Release: turn t's send buffer is free again; it may return. */
            strata_flag_publish(&me->progress, base + (uint64_t)t);
        }
        /* Last, so that no non-root waits behind the root's own copy. */
        copy_own_block(a);
    } else {
        uint64_t read = base + (uint64_t)strata_rank_turn(p, root, p->rank);
        strata_flag_wait_ge(&p->ctl[root].progress, read, p->pid[root]);
    }
    /* Release, for uniformity: this rank touches no peer's memory again. */
    strata_flag_publish(&me->ack, base);
    return MPI_SUCCESS;
}
