/* Layout and bookkeeping of a communicator's node data plane. */
#include "coll/plane.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/learn.h"
#include "shm/arena.h"
#include "util/stats.h"
#include "util/hot.h"

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t strata_plane_segment_bytes(int size, int nlevels, size_t region)
{
    size_t ctl = round_up(sizeof(struct strata_rank_ctl) * (size_t)size, 4096);
    size_t area = 2 * (size_t)(1 + nlevels) * round_up(region, STRATA_CACHE_LINE);
    return ctl + area * (size_t)size;
}

int strata_plane_init(struct strata_plane *p, const struct strata_hier *h, int rank, int size,
                      const pid_t *pids, const struct strata_transport *xport, size_t region)
{
    /* First: a failed set-up is undone by strata_plane_fini. */
    p->learn = NULL;
    p->learn_armed = NULL;
    p->hier = h;
    p->rank = rank;
    p->size = size;
    p->xport = xport;
    p->region = round_up(region, STRATA_CACHE_LINE);
    p->nregions = 1 + h->nlevels;
    p->area_stride = 2 * (size_t)p->nregions * p->region;
    p->ctl = p->seg.base;
    p->areas = (unsigned char *)p->seg.base +
               round_up(sizeof(struct strata_rank_ctl) * (size_t)size, 4096);
    p->pid = malloc(sizeof(pid_t) * (size_t)size);
    p->tree_buf = malloc(sizeof(int) * 4 * (size_t)size);
    p->part_buf = malloc(sizeof(int) * (STRATA_MAX_HIER + 2) * (size_t)size);
    p->plan.root = -1; /* nothing planned yet */
    p->bcast_plan.root = -1;
    p->dist = calloc((size_t)size, 1);
    if (!p->pid || !p->tree_buf || !p->part_buf || !p->dist) return -1;
    memcpy(p->pid, pids, sizeof(pid_t) * (size_t)size);
    /* The segment is zero-filled at creation, so every flag starts at 0,
     * below the first base (1): no initialisation race is possible. */
    p->pos = 0;
    p->prev_base = 0;
    p->cur_base = 0;
    p->all_entered = 0;
    p->ops = 0;
    memset(p->slot_base, 0, sizeof p->slot_base);
    memset(&p->call, 0, sizeof p->call);
    return 0;
}

void strata_plane_fini(struct strata_plane *p)
{
    if (p->learn_release) p->learn_release(p);
    strata_segment_release(&p->seg);
    free(p->pid);
    free(p->tree_buf);
    free(p->scratch);
    free(p->part_buf);
    free(p->dist);
    p->dist = NULL;
    if (p->acc_scratch_arena) strata_arena_free(p->acc_scratch, STRATA_ARENA_HEAP);
    else free(p->acc_scratch);
    p->part_buf = NULL;
    p->acc_scratch = NULL;
    p->pid = NULL;
    p->tree_buf = NULL;
    p->scratch = NULL;
}

STRATA_HOT uint64_t strata_plane_begin(struct strata_plane *p, size_t units)
{
    uint64_t base = p->pos + 1;
    if (units < p->region) units = p->region;
    p->prev_base = p->cur_base;
    p->cur_base = base;
    p->pos = base + units;
    p->slot_base[p->ops % STRATA_LINE_SLOTS] = base; /* op number ops (flag lines) */
    p->ops++;
    return base;
}

STRATA_HOT uint64_t strata_plane_enter(struct strata_plane *p, size_t units, const void *buf, void *acc)
{
    uint64_t base = strata_plane_begin(p, units);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    strata_flag_set_relaxed(&me->buf, (uintptr_t)buf);
    strata_flag_set_relaxed(&me->acc, (uintptr_t)acc);
    strata_plane_publish(p, &me->seq, base); /* buf and acc above go with it */
    return base;
}

STRATA_HOT uint64_t strata_plane_enter_progress(struct strata_plane *p, size_t units, const void *buf,
                                     void *acc, uint64_t done)
{
    uint64_t base = strata_plane_begin(p, units);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    strata_flag_set_relaxed(&me->buf, (uintptr_t)buf);
    strata_flag_set_relaxed(&me->acc, (uintptr_t)acc);
    strata_flag_set_relaxed(&me->progress, base + done);
    strata_plane_publish(p, &me->seq, base); /* buf, acc and progress above go with it */
    return base;
}

void strata_plane_wait_regions_free(struct strata_plane *p)
{
    if (p->prev_base == 0) return; /* first op: nobody read anything yet */
    /* Already known (e.g. this rank read every rank's data in that op). */
    if (p->all_entered >= p->prev_base) return;
    for (int r = 0; r < p->size; r++)
        if (r != p->rank) strata_plane_wait_ge(p, &p->ctl[r].seq, p->prev_base, p->pid[r]);
    p->all_entered = p->prev_base;
}

void strata_plane_learn_entered(struct strata_plane *p)
{
    uint64_t least = UINT64_MAX;
    for (int r = 0; r < p->size; r++) {
        if (r == p->rank) continue;
        uint64_t seq = strata_flag_read(&p->ctl[r].seq);
        if (seq < least) least = seq;
    }
    if (least != UINT64_MAX) strata_plane_known_entered(p, least);
}

void strata_plane_wait_ge(struct strata_plane *p, strata_flag *flag, uint64_t value, pid_t pid)
{
    if (strata_flag_read(flag) >= value) return;
    struct strata_wait_target t;
    struct strata_waiter w;
    strata_plane_wait_target(p, flag, value, pid, &t);
    strata_waiter_init(&w);
    while (strata_flag_read(flag) < value) strata_waiter_pause(&w, &t);
    strata_waiter_done(&w);
}

STRATA_HOT unsigned char *strata_plane_region(const struct strata_plane *p, int r, int region)
{
    /* p->ops was advanced by begin: the current op is number ops - 1. */
    size_t half = (size_t)((p->ops - 1) & 1);
    return p->areas + (size_t)r * p->area_stride +
           (half * (size_t)p->nregions + (size_t)region) * p->region;
}

STRATA_HOT void *strata_plane_scratch(struct strata_plane *p, size_t bytes)
{
    if (bytes <= p->scratch_bytes) return p->scratch;
    /* Page-aligned, so callers can place data at any page offset; the old
     * contents are not needed.  Cleared once: the padding of long double and
     * pair types is never written by the kernels, and would otherwise carry
     * uninitialised heap bytes to the leader (harmless, but memcheck noise). */
    bytes = (bytes + 4095) / 4096 * 4096;
    void *fresh = aligned_alloc(4096, bytes);
    if (!fresh) return NULL;
    memset(fresh, 0, bytes);
    free(p->scratch);
    p->scratch = fresh;
    p->scratch_bytes = bytes;
    return fresh;
}

void *strata_plane_acc_scratch(struct strata_plane *p, size_t bytes)
{
    if (bytes <= p->acc_scratch_bytes) return p->acc_scratch;
    /* Peers write into it: from the arena where they map it, so those
     * writes are stores rather than CMA calls.  Old contents are not kept. */
    int arena = (p->xport->features & STRATA_XPORT_MAP_PEER) != 0;
    void *fresh = arena ? strata_arena_alloc(bytes, 0, 0, STRATA_ARENA_HEAP) : NULL;
    if (!fresh) {
        arena = 0;
        fresh = malloc(bytes);
    }
    if (!fresh) return NULL;
    if (p->acc_scratch_arena) strata_arena_free(p->acc_scratch, STRATA_ARENA_HEAP);
    else free(p->acc_scratch);
    p->acc_scratch = fresh;
    p->acc_scratch_bytes = bytes;
    p->acc_scratch_arena = arena;
    return fresh;
}

/* Bytes per transport (STRATA_STATS): a mapping transport splits its own
 * between its mappings and its fallback, so it counts them itself. */
static void count_transport(const struct strata_plane *p, size_t len)
{
    if (!(p->xport->features & STRATA_XPORT_MAP_PEER)) strata_stats_transport_bytes(p->xport->name, len);
}

/* Total bytes of a list. */
static size_t list_bytes(const struct iovec *v, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++) t += v[i].iov_len;
    return t;
}

void strata_plane_pull(struct strata_plane *p, int coll, int peer, const void *remote,
                       void *local, size_t len)
{
    if (strata_transport_read1(p->xport, p->pid[peer], remote, local, len))
        strata_transport_failed(p->xport, "read from", peer, p->pid[peer], errno);
    if (p->stats) {
        strata_stats_bytes(coll, p->dist[peer], len);
        count_transport(p, len);
    }
}

void strata_plane_push(struct strata_plane *p, int coll, int peer, void *remote,
                       const void *local, size_t len)
{
    if (strata_transport_write1(p->xport, p->pid[peer], remote, local, len))
        strata_transport_failed(p->xport, "write into", peer, p->pid[peer], errno);
    if (p->stats) {
        strata_stats_bytes(coll, p->dist[peer], len);
        count_transport(p, len);
    }
}

void strata_plane_pullv(struct strata_plane *p, int coll, int peer, const struct iovec *remote,
                        int nremote, const struct iovec *local, int nlocal)
{
    if (p->xport->read(p->pid[peer], local, (size_t)nlocal, remote, (size_t)nremote))
        strata_transport_failed(p->xport, "read from", peer, p->pid[peer], errno);
    if (p->stats) {
        strata_stats_bytes(coll, p->dist[peer], list_bytes(local, nlocal));
        count_transport(p, list_bytes(local, nlocal));
    }
}

void strata_plane_pushv(struct strata_plane *p, int coll, int peer, const struct iovec *remote,
                        int nremote, const struct iovec *local, int nlocal)
{
    if (p->xport->write(p->pid[peer], local, (size_t)nlocal, remote, (size_t)nremote))
        strata_transport_failed(p->xport, "write into", peer, p->pid[peer], errno);
    if (p->stats) {
        strata_stats_bytes(coll, p->dist[peer], list_bytes(local, nlocal));
        count_transport(p, list_bytes(local, nlocal));
    }
}

const void *strata_plane_map(struct strata_plane *p, int coll, int peer, const void *remote,
                             size_t len)
{
    if (!p->xport->map) return NULL;
    void *handle;
    const void *at = p->xport->map(p->pid[peer], remote, len, &handle);
    /* The mapping transport keeps every mapping for the process's life: no
     * handle to give back (a transport with handles would need unmap at
     * the end of the operation). */
    if (at && p->stats) strata_stats_bytes(coll, p->dist[peer], len);
    return at;
}
