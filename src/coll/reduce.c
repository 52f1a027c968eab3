/* Reduce and Allreduce inside a node (XHC section IV-B, on CMA).
 *
 * Level by level, the participants of a group share each chunk: participant
 * j reduces slice j, pulling that slice of every participant's data (level
 * 0: its send buffer; above: its accumulation buffer, where the level below
 * left its group's result) into private scratch, combining the operands in
 * participant order, and writing the slice into the group leader's
 * accumulation buffer.  It then advances done[level].  A participant's data
 * at level l is ready for chunk k once every member of the group it leads at
 * level l-1 has done[l-1] past k.  Allreduce reduces towards rank 0 and
 * pipelines the broadcast of each finished chunk back down the same tree.
 *
 * Floating-point order: at every level operands are combined left to right
 * in the order of the groups they stand for (ascending lowest rank), never
 * depending on timing or on the root, so results are the same from run to
 * run and, for Allreduce, on every rank. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/tree.h"
#include "transport/cma.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

static int coll_of(const struct strata_reduce_args *a)
{
    return a->root < 0 ? STRATA_COLL_ALLREDUCE : STRATA_COLL_REDUCE;
}

/* One rank's role at one level of this call. */
struct level_role {
    int n;          /* participants */
    int *who;       /* participants, in combining order */
    int me;         /* this rank's index among them */
    int leader;     /* rank receiving the group's result */
};

struct reduce_call {
    struct strata_plane *p;
    const struct strata_reduce_args *a;
    int top_root;                 /* the root of the tree (0 for Allreduce) */
    int nlev;                     /* levels this rank takes part in */
    struct level_role role[STRATA_MAX_HIER];
    uint64_t base;
    size_t chunk_elems, nchunks;
};

static void plan_roles(struct reduce_call *c)
{
    struct strata_plane *p = c->p;
    c->nlev = strata_tree_levels_of(p->hier, c->top_root, p->rank);
    for (int l = 0; l < c->nlev; l++) {
        struct level_role *r = &c->role[l];
        r->who = p->part_buf + (size_t)l * (size_t)p->size;
        r->n = strata_tree_participants(p->hier, c->top_root, l, p->rank, r->who);
        r->me = 0;
        while (r->who[r->me] != p->rank) r->me++;
        r->leader = strata_tree_leader(p->hier, c->top_root, l, p->hier->level[l].group_of[p->rank]);
    }
}

/* Bytes of elements [first, first + n): the last element of the vector
 * counts only up to its true extent. */
static size_t span_bytes(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* Slice s of a chunk of n elements shared by `parts` reducers. */
static void slice_of(const struct reduce_call *c, int parts, size_t n, int s, size_t *lo,
                     size_t *hi)
{
    size_t min_elems = strata_tuning()->min_slice / c->a->extent;
    size_t nslices = min_elems ? n / min_elems : n;
    if (nslices > (size_t)parts) nslices = (size_t)parts;
    if (nslices == 0) nslices = 1;
    if ((size_t)s >= nslices) {
        *lo = *hi = 0;
        return;
    }
    *lo = n * (size_t)s / nslices;
    *hi = n * ((size_t)s + 1) / nslices;
}

/* Waits until participant q's data at level l holds chunk k. */
static void wait_source_ready(struct reduce_call *c, int l, int q, uint64_t target)
{
    struct strata_plane *p = c->p;
    if (l == 0) return; /* send buffers are complete from the start */
    int *members = p->tree_buf + 2 * (size_t)p->size;
    int n = strata_tree_participants(p->hier, c->top_root, l - 1, q, members);
    for (int i = 0; i < n; i++)
        strata_flag_wait_ge(&p->ctl[members[i]].done[l - 1], target, p->pid[members[i]]);
}

/* The address of participant q's data at level l (its operand at level 0,
 * its accumulation buffer above). */
static unsigned char *source_of(const struct reduce_call *c, int l, int q)
{
    strata_flag *addr = l == 0 ? &c->p->ctl[q].buf : &c->p->ctl[q].acc;
    return (void *)(uintptr_t)strata_flag_read(addr);
}

/* Copies bytes of participant q's data at level l, offset off, into dst
 * (CMA for a peer, memcpy for this rank). */
static void fetch(struct reduce_call *c, int l, int q, size_t off, void *dst, size_t bytes)
{
    struct strata_plane *p = c->p;
    const unsigned char *src = source_of(c, l, q);
    if (q == p->rank) {
        memcpy(dst, src + off, bytes);
        return;
    }
    if (strata_cma_read(p->pid[q], src + off, dst, bytes)) strata_cma_failed("read from", q, errno);
    if (p->stats) strata_stats_bytes(coll_of(c->a), p->dist[q], bytes);
}

/* Scratch region i (0, 1 or 2) for a slice of `bytes`: page-aligned, with a
 * page of slack so data can be placed at any page offset. */
static unsigned char *scratch_region(struct strata_plane *p, int i, size_t bytes)
{
    size_t stride = (bytes + 2 * 4096 - 1) / 4096 * 4096;
    unsigned char *base = strata_plane_scratch(p, 3 * stride);
    if (!base) {
        strata_error("out of memory for a %zu-byte reduction slice", 3 * stride);
        abort();
    }
    return base + (size_t)i * stride;
}

/* A place in `region` at the same page offset as a peer's buffer.  A copy
 * whose destination sits a few bytes ahead of its source within the page
 * makes every load wait on the store just made (4K aliasing): several times
 * slower than a copy between buffers at equal page offsets. */
static unsigned char *matching(unsigned char *region, const void *peer)
{
    return region + ((uintptr_t)peer & 4095);
}

/* Where this rank combines its slice: straight in the destination when that
 * is its own buffer, saving a copy, unless its own operand lives there and
 * is not first in line (it would be overwritten before its turn), or the
 * slice ends in a padded element (kernels write whole elements, and the
 * padding of MPI_DOUBLE_INT & co. may lie past the user's buffer). */
static unsigned char *accumulator(struct reduce_call *c, const struct level_role *r, int l,
                                  int target, unsigned char *dst, size_t off, size_t elems,
                                  int tail)
{
    struct strata_plane *p = c->p;
    int alias = source_of(c, l, p->rank) + off == dst;
    if (target == p->rank && !tail && (!alias || r->who[0] == p->rank)) return dst;
    return matching(scratch_region(p, 0, elems * c->a->extent), dst);
}

static void reduce_chunk_at_level(struct reduce_call *c, int l, size_t k)
{
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    struct level_role *r = &c->role[l];
    size_t c0 = k * c->chunk_elems;
    size_t n = a->count - c0 < c->chunk_elems ? a->count - c0 : c->chunk_elems;
    size_t lo, hi;
    slice_of(c, r->n, n, r->me, &lo, &hi);
    if (hi > lo) {
        size_t first = c0 + lo, elems = hi - lo;
        size_t off = first * a->extent, bytes = span_bytes(a, first, elems);
        int tail = a->true_extent < a->extent && first + elems == a->count;
        /* Allreduce keeps each top-level slice where it was reduced: the top
         * participants then read each other's slices (reduce-scatter, then
         * allgather), which moves half the bytes of sending every slice to
         * one leader and broadcasting it back. */
        int keep = a->root < 0 && l == p->hier->nlevels - 1;
        int target = keep ? p->rank : r->leader;
        unsigned char *dst = source_of(c, 1, target) + off;
        unsigned char *acc = accumulator(c, r, l, target, dst, off, elems, tail);
        /* Operand 0 is only located; from operand 1 on, each is combined into
         * acc (the first two meet there directly, so nothing is copied just
         * to be combined).  Peers' operands land in scratch at their own
         * page offset; this rank's padded last element is copied out first
         * rather than read past its buffer's end. */
        const unsigned char *operand0 = NULL;
        for (int i = 0; i < r->n; i++) {
            int q = r->who[i];
            unsigned char *region = scratch_region(p, i == 1 ? 2 : 1, elems * a->extent);
            const unsigned char *operand = source_of(c, l, q) + off;
            wait_source_ready(c, l, q, c->base + k + 1);
            if (q != p->rank || tail) {
                unsigned char *into = matching(region, operand);
                fetch(c, l, q, off, into, bytes);
                operand = into;
            }
            if (i == 0) operand0 = operand;
            else a->fn(acc, i == 1 ? operand0 : acc, operand, elems);
        }
        if (r->n == 1 && operand0 != acc) memcpy(acc, operand0, bytes);
        if (acc == dst) {
            /* already in place */
        } else if (target == p->rank) {
            memcpy(dst, acc, bytes);
        } else if (strata_cma_write(p->pid[target], dst, acc, bytes)) {
            strata_cma_failed("write to", target, errno);
        } else if (p->stats) {
            strata_stats_bytes(coll_of(a), p->dist[target], bytes);
        }
    }
    /* Release: the target buffer holds this slice before anyone sees it. */
    strata_flag_publish(&p->ctl[p->rank].done[l], c->base + k + 1);
}

/* Whether this rank takes part in the top level (Allreduce's allgather). */
static int at_top(const struct reduce_call *c) { return c->nlev == c->p->hier->nlevels; }

/* Top participant: reads the other top slices of chunk k once reduced.  A
 * slice's owner has finished reading everyone's partial data for that slice
 * when it marks the chunk done, so overwriting ours with it is safe. */
static void gather_top_slices(struct reduce_call *c, size_t c0, size_t n, size_t k)
{
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    int l = c->nlev - 1;
    struct level_role *top = &c->role[l];
    for (int i = 0; i < top->n; i++) {
        size_t lo, hi;
        slice_of(c, top->n, n, i, &lo, &hi);
        int q = top->who[i];
        if (q == p->rank || hi == lo) continue;
        strata_flag_wait_ge(&p->ctl[q].done[l], c->base + k + 1, p->pid[q]);
        size_t off = (c0 + lo) * a->extent;
        fetch(c, 1, q, off, (unsigned char *)a->recvbuf + off, span_bytes(a, c0 + lo, hi - lo));
    }
}

/* Allreduce: brings chunk k of the final result into this rank's recvbuf,
 * from the other top participants or, below the top, from the parent. */
static void bcast_chunk(struct reduce_call *c, int parent, size_t k)
{
    struct strata_plane *p = c->p;
    const struct strata_reduce_args *a = c->a;
    size_t c0 = k * c->chunk_elems;
    size_t n = a->count - c0 < c->chunk_elems ? a->count - c0 : c->chunk_elems;
    size_t end = (c0 + n) * a->extent;
    if (at_top(c)) {
        gather_top_slices(c, c0, n, k);
    } else {
        strata_flag_wait_ge(&p->ctl[parent].progress, c->base + end, p->pid[parent]);
        fetch(c, 1, parent, c0 * a->extent, (unsigned char *)a->recvbuf + c0 * a->extent,
              span_bytes(a, c0, n));
    }
    /* Release: children that see the count can read these bytes. */
    strata_flag_publish(&p->ctl[p->rank].progress, c->base + end);
}

/* Waits for every reducer that reads from or writes to this rank's buffers. */
static void wait_group_reducers(struct reduce_call *c)
{
    for (int l = 0; l < c->nlev; l++) {
        struct level_role *r = &c->role[l];
        for (int i = 0; i < r->n; i++)
            strata_flag_wait_ge(&c->p->ctl[r->who[i]].done[l], c->base + c->nchunks,
                                c->p->pid[r->who[i]]);
    }
}

static int reduce_cma(struct strata_plane *p, const struct strata_reduce_args *a)
{
    int allreduce = a->root < 0;
    struct reduce_call c = {.p = p, .a = a, .top_root = allreduce ? 0 : a->root};
    plan_roles(&c);
    c.chunk_elems = strata_tuning()->reduce_chunk / a->extent;
    if (c.chunk_elems == 0) c.chunk_elems = 1;
    c.nchunks = (a->count + c.chunk_elems - 1) / c.chunk_elems;

    /* What this rank exposes: its operand, and where its group results go. */
    const void *operand = a->sendbuf ? a->sendbuf : a->recvbuf;
    void *acc = NULL;
    if (allreduce || p->rank == a->root) acc = a->recvbuf;
    else if (c.nlev > 1 && !(acc = strata_plane_acc_scratch(p, a->count * a->extent))) {
        strata_error("out of memory for a %zu-byte reduction buffer", a->count * a->extent);
        abort();
    }
    c.base = strata_plane_enter_progress(p, a->count * a->extent, operand, acc, 0);
    for (int l = 0; l < c.nlev; l++)
        for (int i = 0; i < c.role[l].n; i++)
            strata_flag_wait_ge(&p->ctl[c.role[l].who[i]].seq, c.base, p->pid[c.role[l].who[i]]);

    int parent = -1, *children = p->tree_buf, nchildren = 0;
    if (allreduce) {
        nchildren = strata_tree_links(p->hier, 0, p->rank, &parent, children);
        if (parent >= 0) strata_flag_wait_ge(&p->ctl[parent].seq, c.base, p->pid[parent]);
    }
    for (size_t k = 0; k < c.nchunks; k++) {
        for (int l = 0; l < c.nlev; l++) reduce_chunk_at_level(&c, l, k);
        if (allreduce) bcast_chunk(&c, parent, k);
    }
    if (allreduce) {
        /* tree_buf was reused by the reducers: list the children again. */
        nchildren = strata_tree_links(p->hier, 0, p->rank, &parent, children);
        for (int i = 0; i < nchildren; i++)
            strata_flag_wait_ge(&p->ctl[children[i]].ack, c.base, p->pid[children[i]]);
        /* The other top participants read our slices: wait until they hold
         * the whole result. */
        struct level_role *top = &c.role[c.nlev - 1];
        for (int i = 0; at_top(&c) && i < top->n; i++)
            strata_flag_wait_ge(&p->ctl[top->who[i]].progress, c.base + a->count * a->extent,
                                p->pid[top->who[i]]);
        strata_flag_publish(&p->ctl[p->rank].ack, c.base);
    } else {
        wait_group_reducers(&c);
    }
    return MPI_SUCCESS;
}

/* Small payloads: operands and partial results live in the segment, and
 * reducers combine straight from it into the leader's region. */
static void reduce_cico(struct strata_plane *p, const struct strata_reduce_args *a)
{
    int allreduce = a->root < 0;
    struct reduce_call c = {.p = p, .a = a, .top_root = allreduce ? 0 : a->root};
    plan_roles(&c);
    size_t bytes = a->count * a->extent;
    c.chunk_elems = a->count;
    c.nchunks = 1;
    c.base = strata_plane_enter(p, bytes, NULL, NULL); /* entered: done reading older regions */
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    strata_plane_wait_regions_free(p);

    memcpy(strata_plane_region(p, p->rank, STRATA_REGION_IN), a->sendbuf ? a->sendbuf : a->recvbuf,
           span_bytes(a, 0, a->count));
    strata_flag_publish(&me->progress, c.base + 1); /* the operand is in the region */

    for (int l = 0; l < c.nlev; l++) {
        struct level_role *r = &c.role[l];
        size_t lo, hi;
        slice_of(&c, r->n, a->count, r->me, &lo, &hi);
        if (hi > lo) {
            size_t off = lo * a->extent, len = (hi - lo) * a->extent;
            unsigned char *dst = strata_plane_region(p, r->leader, STRATA_REGION_ACC0 + l) + off;
            for (int i = 0; i < r->n; i++) {
                int q = r->who[i];
                if (l == 0) strata_flag_wait_ge(&p->ctl[q].progress, c.base + 1, p->pid[q]);
                else wait_source_ready(&c, l, q, c.base + 1);
                const unsigned char *src =
                    strata_plane_region(p, q, l == 0 ? STRATA_REGION_IN : STRATA_REGION_ACC0 + l - 1);
                if (i == 0) memcpy(dst, src + off, len);
                else a->fn(dst, dst, src + off, hi - lo);
                if (p->stats && q != p->rank) strata_stats_bytes(coll_of(a), p->dist[q], len);
            }
        }
        strata_flag_publish(&me->done[l], c.base + 1); /* release: the slice is written */
    }

    if (!allreduce && p->rank != a->root) return;
    /* The result is in the top leader's region once the top group is done. */
    int top = p->hier->nlevels - 1;
    int *who = p->tree_buf + 2 * (size_t)p->size;
    int n = strata_tree_participants(p->hier, c.top_root, top, c.top_root, who);
    for (int i = 0; i < n; i++) strata_flag_wait_ge(&p->ctl[who[i]].done[top], c.base + 1, p->pid[who[i]]);
    memcpy(a->recvbuf, strata_plane_region(p, c.top_root, STRATA_REGION_ACC0 + top),
           span_bytes(a, 0, a->count));
    if (p->stats && c.top_root != p->rank) strata_stats_bytes(coll_of(a), p->dist[c.top_root], bytes);
}

int strata_reduce(struct strata_plane *p, const struct strata_reduce_args *a)
{
    size_t bytes = a->count * a->extent;
    if (p->size == 1 || bytes == 0) {
        if (bytes && a->sendbuf && (a->root < 0 || p->rank == a->root))
            memcpy(a->recvbuf, a->sendbuf, span_bytes(a, 0, a->count));
        return MPI_SUCCESS;
    }
    size_t region = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (a->root < 0 && bytes <= STRATA_TINY_MAX) {
        strata_allreduce_tiny(p, a);
    } else if (bytes <= region) {
        reduce_cico(p, a);
    } else if (p->use_cma) {
        return reduce_cma(p, a);
    } else {
        /* Without CMA, the segment carries the vector in rounds. */
        size_t per_round = p->region / a->extent;
        for (size_t first = 0; first < a->count; first += per_round) {
            struct strata_reduce_args part = *a;
            size_t off = first * a->extent;
            part.count = a->count - first < per_round ? a->count - first : per_round;
            part.sendbuf = a->sendbuf ? (const unsigned char *)a->sendbuf + off : NULL;
            part.recvbuf = a->recvbuf ? (unsigned char *)a->recvbuf + off : NULL;
            if (first + part.count < a->count) part.true_extent = part.extent;
            reduce_cico(p, &part);
        }
    }
    return MPI_SUCCESS;
}
