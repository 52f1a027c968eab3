/* Gather, Scatter, Allgather and Alltoall through the shared segment: two
 * copies (into the writer's region, out of it), no system call.  The path
 * for small blocks, and the only one when CMA is off.
 *
 * One engine serves all four.  Rank q exposes a stream of bytes (its block,
 * or for the root of Scatter and for Alltoall its whole send buffer); the
 * stream moves in rounds of one region half each, and every reader copies,
 * in every round, the part of each writer's stream it wants.  Each round is
 * one plane operation, so the regions are double-buffered by round parity
 * exactly as for the broadcast (plane.h). */
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"

struct cico_exchange {
    int coll;
    size_t (*stream_len)(const struct cico_exchange *x, int q);
    /* What this rank wants of q's stream: [lo, lo + len) to dst (len 0: none). */
    void (*want)(const struct cico_exchange *x, int q, size_t *lo, size_t *len,
                 unsigned char **dst);
    const struct strata_block_args *a;
    const unsigned char *my_stream; /* this rank's stream (may be a private copy) */
    int rank, size;
};

/* Bytes of one round: the whole half of a rank's area (its regions are
 * contiguous). */
static size_t round_bytes(const struct strata_plane *p) { return (size_t)p->nregions * p->region; }

static void run_rounds(struct strata_plane *p, const struct cico_exchange *x)
{
    size_t R = round_bytes(p), longest = 0;
    for (int q = 0; q < p->size; q++) {
        size_t len = x->stream_len(x, q);
        if (len > longest) longest = len;
    }
    size_t rounds = (longest + R - 1) / R;
    size_t mine = x->stream_len(x, p->rank);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    for (size_t j = 0; j < rounds; j++) {
        size_t from = j * R, to = from + R;
        /* Entered: done reading older regions. */
        uint64_t base = strata_plane_enter(p, 1, NULL, NULL);
        if (mine > from) {
            size_t len = (mine < to ? mine : to) - from;
            strata_plane_wait_regions_free(p);
            memcpy(strata_plane_region(p, p->rank, 0), x->my_stream + from, len);
        }
        /* Release: a reader that sees the round's value also sees its bytes. */
        strata_flag_publish(&me->progress, base + 1);
        for (int i = 1; i < p->size; i++) {
            int q = (p->rank + i) % p->size; /* start with different writers */
            size_t lo, len;
            unsigned char *dst;
            x->want(x, q, &lo, &len, &dst);
            size_t a = lo > from ? lo : from, b = lo + len < to ? lo + len : to;
            if (len == 0 || a >= b) continue;
            strata_flag_wait_ge(&p->ctl[q].progress, base + 1, p->pid[q]);
            memcpy(dst + (a - lo), strata_plane_region(p, q, 0) + (a - from), b - a);
            if (p->stats) strata_stats_bytes(x->coll, p->dist[q], b - a);
        }
    }
}

/* ---- Gather: every rank's stream is its block; the root wants them all. */
static size_t block_len(const struct cico_exchange *x, int q) { return x->a->block; }

static void gather_want(const struct cico_exchange *x, int q, size_t *lo, size_t *len,
                        unsigned char **dst)
{
    *lo = 0;
    *len = x->rank == x->a->root ? x->a->block : 0;
    *dst = x->a->recv + (size_t)q * x->a->block;
}

int strata_gather_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    size_t b = a->block;
    int root = a->root;
    const unsigned char *mine = a->send;
    if (p->rank == root) {
        if (!mine) mine = a->recv + (size_t)root * b; /* in place */
        else memcpy(a->recv + (size_t)root * b, mine, b);
    }
    struct cico_exchange x = {STRATA_COLL_GATHER, block_len, gather_want, a, mine,
                              p->rank, p->size};
    run_rounds(p, &x);
    return MPI_SUCCESS;
}

/* ---- Allgather: the same streams; everyone wants them all. */
static void allgather_want(const struct cico_exchange *x, int q, size_t *lo, size_t *len,
                           unsigned char **dst)
{
    *lo = 0;
    *len = x->a->block;
    *dst = x->a->recv + (size_t)q * x->a->block;
}

int strata_allgather_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    size_t b = a->block;
    unsigned char *own = a->recv + (size_t)p->rank * b;
    if (a->send) memcpy(own, a->send, b);
    struct cico_exchange x = {STRATA_COLL_ALLGATHER, block_len, allgather_want, a,
                              own, p->rank, p->size};
    run_rounds(p, &x);
    return MPI_SUCCESS;
}

/* ---- Scatter: only the root has a stream, its whole send buffer. */
static size_t root_len(const struct cico_exchange *x, int q)
{
    return q == x->a->root ? (size_t)x->size * x->a->block : 0;
}

static void scatter_want(const struct cico_exchange *x, int q, size_t *lo, size_t *len,
                         unsigned char **dst)
{
    *lo = (size_t)x->rank * x->a->block;
    *len = q == x->a->root ? x->a->block : 0;
    *dst = x->a->recv;
}

int strata_scatter_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    size_t b = a->block;
    if (p->rank == a->root && a->recv) memcpy(a->recv, a->send + (size_t)a->root * b, b);
    struct cico_exchange x = {STRATA_COLL_SCATTER, root_len, scatter_want, a,
                              p->rank == a->root ? a->send : NULL, p->rank, p->size};
    run_rounds(p, &x);
    return MPI_SUCCESS;
}

/* ---- Alltoall: every rank's stream is its send buffer; rank r wants block
 * r of each. */
static size_t all_len(const struct cico_exchange *x, int q) { return (size_t)x->size * x->a->block; }

static void alltoall_want(const struct cico_exchange *x, int q, size_t *lo, size_t *len,
                          unsigned char **dst)
{
    *lo = (size_t)x->rank * x->a->block;
    *len = x->a->block;
    *dst = x->a->recv + (size_t)q * x->a->block;
}

int strata_alltoall_cico(struct strata_plane *p, const struct strata_block_args *a)
{
    size_t b = a->block, total = (size_t)p->size * b;
    const unsigned char *send = a->send;
    void *copy = NULL;
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
    memcpy(a->recv + (size_t)p->rank * b, send + (size_t)p->rank * b, b);
    struct cico_exchange x = {STRATA_COLL_ALLTOALL, all_len, alltoall_want, a, send,
                              p->rank, p->size};
    run_rounds(p, &x);
    free(copy);
    return MPI_SUCCESS;
}
