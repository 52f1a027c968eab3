/* Broadcast inside a node (XHC's pipelined pull, section IV-A).
 *
 * Every rank pulls from its parent in the per-call tree; leaders re-expose
 * what they pulled, so levels overlap chunk by chunk.  Large payloads move
 * with one CMA copy per chunk from the parent's user buffer; small ones
 * through the parent's region of the segment; with CMA off, large payloads
 * go through the segment in rounds of one region each. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/tree.h"
#include "transport/cma.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

void strata_cma_failed(const char *what, int peer_rank, int err)
{
    /* peer_rank is the peer's rank in the node plane; the user knows its
     * MPI_COMM_WORLD rank, found from the pid the failed copy addressed. */
    pid_t pid = strata_cma_failed_pid();
    int world_rank = strata_log_world_rank(pid);
    if (world_rank >= 0)
        strata_error("Cross-Memory Attach %s MPI_COMM_WORLD rank %d (pid %d) failed "
                     "mid-operation: %s", what, world_rank, (int)pid, strerror(err));
    else
        strata_error("Cross-Memory Attach %s rank %d of the node (pid %d) failed "
                     "mid-operation: %s", what, peer_rank, (int)pid, strerror(err));
    abort();
}

/* The sibling this rank must let finish a chunk before reading it (the
 * throttle: at most k children of one parent read the same chunk at once),
 * or -1. */
static int throttle_sibling(struct strata_plane *p, int parent, int root)
{
    int k = strata_tuning()->throttle, grand;
    if (k <= 0) return -1;
    int *siblings = p->tree_buf + p->size;
    int n = strata_tree_links(p->hier, root, parent, &grand, siblings);
    for (int i = 0; i < n; i++)
        if (siblings[i] == p->rank) return i >= k ? siblings[i - k] : -1;
    return -1;
}

static void wait_children_ack(struct strata_plane *p, const int *children, int n, uint64_t base)
{
    for (int i = 0; i < n; i++)
        strata_flag_wait_ge(&p->ctl[children[i]].ack, base, p->pid[children[i]]);
}

static void bcast_cma(struct strata_plane *p, unsigned char *data, size_t bytes, int root)
{
    int parent, *children = p->tree_buf;
    int nchildren = strata_tree_links(p->hier, root, p->rank, &parent, children);
    /* The root holds every byte from the start. */
    uint64_t base = strata_plane_enter_progress(p, bytes, data, NULL, p->rank == root ? bytes : 0);
    struct strata_rank_ctl *me = &p->ctl[p->rank];

    if (parent >= 0) {
        struct strata_rank_ctl *up = &p->ctl[parent];
        pid_t up_pid = p->pid[parent];
        int sibling = throttle_sibling(p, parent, root);
        /* The acquire in the wait makes the parent's buf of this op visible;
         * the parent cannot move on before this rank acknowledges. */
        strata_flag_wait_ge(&up->seq, base, up_pid);
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&up->buf);
        int level = strata_tree_levels_of(p->hier, root, p->rank) - 1;
        size_t chunk = strata_tuning()->chunk[level];
        /* Chunks let a rank with children pass data on early, and let the
         * throttle gate readers; a leaf with no gate gains nothing from them,
         * so it copies all the parent has ready in one call (each call costs
         * a system call and a page-pinning pass). */
        int whole = nchildren == 0 && sibling < 0;
        for (size_t off = 0, len; off < bytes; off += len) {
            len = bytes - off < chunk ? bytes - off : chunk;
            strata_flag_wait_ge(&up->progress, base + off + len, up_pid);
            if (whole) len = strata_flag_read(&up->progress) - base - off;
            if (sibling >= 0)
                strata_flag_wait_ge(&p->ctl[sibling].progress, base + off + len, p->pid[sibling]);
            if (strata_cma_read(up_pid, src + off, data + off, len))
                strata_cma_failed("read from", parent, errno);
            if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[parent], len);
            /* The bytes just copied are in this rank's buffer: children may
             * read them once they see the new count. */
            strata_flag_publish(&me->progress, base + off + len);
        }
    }
    wait_children_ack(p, children, nchildren, base);
    strata_flag_publish(&me->ack, base);
}

/* One payload of at most one region through the segment. */
static void bcast_cico(struct strata_plane *p, unsigned char *data, size_t bytes, int root)
{
    int parent, *children = p->tree_buf;
    int nchildren = strata_tree_links(p->hier, root, p->rank, &parent, children);
    /* Entered: done reading older regions. */
    uint64_t base = strata_plane_enter(p, bytes, NULL, NULL);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    unsigned char *mine = strata_plane_region(p, p->rank, STRATA_REGION_IN);
    if (nchildren > 0) strata_plane_wait_regions_free(p);

    if (parent < 0) {
        memcpy(mine, data, bytes);
    } else {
        strata_flag_wait_ge(&p->ctl[parent].progress, base + bytes, p->pid[parent]);
        const unsigned char *src = strata_plane_region(p, parent, STRATA_REGION_IN);
        memcpy(data, src, bytes);
        if (nchildren > 0) memcpy(mine, src, bytes);
        if (p->stats) strata_stats_bytes(STRATA_COLL_BCAST, p->dist[parent], bytes);
    }
    /* Release: children that see the count also see the region's bytes.
     * A leaf publishes too, for the throttle and for uniformity. */
    strata_flag_publish(&me->progress, base + bytes);
}

int strata_bcast_bytes(struct strata_plane *p, void *data, size_t bytes, int root)
{
    if (p->size == 1) return MPI_SUCCESS;
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (bytes <= region) {
        bcast_cico(p, data, bytes, root);
    } else if (p->use_cma) {
        bcast_cma(p, data, bytes, root);
    } else {
        for (size_t off = 0; off < bytes; off += p->region) {
            size_t len = bytes - off < p->region ? bytes - off : p->region;
            bcast_cico(p, (unsigned char *)data + off, len, root);
        }
    }
    return MPI_SUCCESS;
}

int strata_bcast_feed_open(struct strata_plane *p, void *data, size_t bytes, uint64_t *base)
{
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (p->size == 1 || bytes <= region || !p->use_cma) return 0;
    *base = strata_plane_enter_progress(p, bytes, data, NULL, 0);
    return 1;
}

void strata_bcast_feed_advance(struct strata_plane *p, uint64_t base, size_t ready)
{
    /* Release: a child that sees the count also sees the bytes that arrived
     * in this rank's buffer before it. */
    strata_flag_publish(&p->ctl[p->rank].progress, base + ready);
}

void strata_bcast_feed_close(struct strata_plane *p, uint64_t base)
{
    int parent, *children = p->tree_buf;
    int nchildren = strata_tree_links(p->hier, p->rank, p->rank, &parent, children);
    wait_children_ack(p, children, nchildren, base);
    strata_flag_publish(&p->ctl[p->rank].ack, base);
}

int strata_bcast_pipelined(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_bcast_bytes(p, a->recv, a->block, a->root);
}
