/* Alltoallw and the five neighbourhood collectives on host memory (issue
 * 33), behind their entry points (interpose/calls.def's _W rows).
 *
 * Each of these calls is an exchange of blocks, each block with its own
 * peer, count, datatype and place: Alltoallw's one per rank, with byte
 * displacements; a neighbourhood collective's one per edge of the
 * communicator's topology (context/topo.h), possibly several per peer
 * (duplicate edges, a periodic dimension of one or two ranks), possibly
 * none (an empty neighbourhood, MPI_PROC_NULL at a Cartesian edge).  So
 * each side becomes one byte stream per peer (coll/wlayout.h), in the
 * user's memory where the blocks already lie that way, else packed, and the
 * call runs as an Alltoallv of those streams (vcollectives.c,
 * strata_vcall_bytes): the same node engine and algorithm choice, the same
 * composition across nodes (neighbours on other nodes through the host's
 * point-to-point, posted first), the same nonblocking and persistent
 * operations.  Every rank of the communicator takes part, also one with no
 * neighbours: the node operation is collective.
 *
 * The route, as for the v-collectives: on what every rank passes alike
 * (the communicator; whether it has a topology) and this rank's own
 * arguments being valid; with STRATA_CHECK_ARGS the ranks agree on it, and
 * compare what each pair sends and expects, first. */
#include "serve/wcollectives.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/ops.h"
#include "coll/wlayout.h"
#include "context/context.h"
#include "context/topo.h"
#include "serve/check.h"
#include "serve/host_call.h"
#include "serve/collectives.h"
#include "serve/entry.h"
#include "request/nonblocking.h"
#include "request/persistent.h"
#include "route/route.h"
#include "route/run_view.h"
#include "util/log.h"

/* A call strata leaves (serve/host_call.h): the host's function of the
 * form it came through, its large-count one (_c) for large. */
#define UNPAREN(...) __VA_ARGS__
#define HOST_CALL(build, large, name, args, nb_call) \
    STRATA_HOST_CALL(build, large, STRATA_HOST_BLOCKING(large, name, UNPAREN args), nb_call)

/* One side of a call: n blocks, each a piece of a stream (pc), with what
 * packing it needs. */
struct wside {
    int n;
    struct strata_wpiece *pc;
    const void **user;     /* where its elements start in the user's memory */
    long long *count;
    MPI_Datatype *type;
    int *owned;            /* type[i] was duplicated (an operation outlives the call) */
    unsigned char *run;    /* the side's streams: the user's memory, or tmp */
    unsigned char *tmp;    /* packed (NULL: not) */
};

struct wcall {
    MPI_Comm comm;
    int size;
    struct wside send, recv;
    int *order;            /* scratch for strata_wlayout */
    size_t *lay;           /* [4 * size]: out_len, out_off, in_len, in_off */
    long long *pairs;      /* [2 * size]: bytes to and from each rank (-1: nothing) */
    /* Where the receive side's streams land when each is not one run
     * ([size + 1], [nr], [nr]; the engine reads them until the call ends). */
    struct strata_wpieces lands;
    struct strata_vpieces landing;
};

/* One allocation carved into a call's arrays: measured first (base NULL),
 * then carved from the block.  Each array starts on a boundary any of its
 * element types needs. */
struct carver {
    unsigned char *base;
    size_t used;
};

static void *take(struct carver *c, size_t bytes)
{
    const size_t align = _Alignof(max_align_t);
    void *p = c->base ? c->base + c->used : NULL;
    c->used += (bytes + align - 1) / align * align;
    return p;
}

static void side_carve(struct wside *s, int n, struct carver *c)
{
    s->n = n;
    s->pc = take(c, (size_t)n * sizeof *s->pc);
    s->user = take(c, (size_t)n * sizeof *s->user);
    s->count = take(c, (size_t)n * sizeof *s->count);
    s->type = take(c, (size_t)n * sizeof *s->type);
    s->owned = take(c, (size_t)n * sizeof *s->owned);
}

/* The call's arrays after the struct itself (w->size set). */
static void call_carve(struct wcall *w, int ns, int nr, struct carver *c)
{
    size_t size = (size_t)w->size;
    side_carve(&w->send, ns, c);
    side_carve(&w->recv, nr, c);
    w->order = take(c, (size_t)(ns > nr ? ns : nr) * sizeof(int));
    w->lay = take(c, 4 * size * sizeof(size_t));
    w->pairs = take(c, 2 * size * sizeof(long long));
    w->lands.first = take(c, (size + 1) * sizeof(size_t));
    w->lands.len = take(c, (size_t)nr * sizeof(size_t));
    w->lands.at = take(c, (size_t)nr * sizeof(size_t));
}

/* A call of ns send and nr receive blocks on `size` ranks: one allocation. */
static struct wcall *wcall_new(MPI_Comm comm, int size, int ns, int nr)
{
    struct wcall measure = {.size = size};
    struct carver c = {NULL, 0};
    take(&c, sizeof measure);
    call_carve(&measure, ns, nr, &c);
    unsigned char *block = calloc(1, c.used);
    if (!block) return NULL;
    c = (struct carver){block, 0};
    struct wcall *w = take(&c, sizeof *w);
    w->comm = comm;
    w->size = size;
    call_carve(w, ns, nr, &c);
    return w;
}

static void wcall_free(struct wcall *w)
{
    if (!w) return;
    struct wside *sides[2] = {&w->send, &w->recv};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < sides[k]->n; i++)
            if (sides[k]->owned[i]) PMPI_Type_free(&sides[k]->type[i]);
        if (sides[k]->tmp) free(sides[k]->tmp); /* free(NULL) still runs strata's free (heap.c) */
    }
    free(w);
}

/* Where a side's blocks lie in its buffer. */
enum wat {
    AT_ONE,        /* every block is the one block at buf (Neighbor_allgather's send) */
    AT_RUNS,       /* block i at i * count * extent (Neighbor_alltoall, _allgather's recv) */
    AT_EXTENTS,    /* at int displs[i] * extent (the v forms) */
    AT_BYTES,      /* at int displs[i] bytes (Alltoallw) */
    AT_BYTES_AINT  /* at MPI_Aint displs[i] bytes (Neighbor_alltoallw) */
};

/* One side as the call passed it: one count and type, or arrays. */
struct wdesc {
    const void *buf;
    enum wat at;
    const void *counts;          /* int, or MPI_Count if large; NULL: `count` for every block */
    long long count;
    const void *displs;          /* AT_EXTENTS, AT_BYTES (int, or MPI_Aint if large), AT_BYTES_AINT */
    MPI_Datatype type;           /* when types is NULL */
    const MPI_Datatype *types;   /* the w forms */
    int large;                   /* the large-count form (_c) */
};

/* Element i of a count array, and of a displacement array, as the form
 * passed them. */
static long long count_at(const struct wdesc *d, int i)
{
#ifdef STRATA_HAVE_LARGE_COUNT
    if (d->large) return (long long)((const MPI_Count *)d->counts)[i];
#endif
    return ((const int *)d->counts)[i];
}

static MPI_Aint displ_at(const struct wdesc *d, int i)
{
    if (d->large || d->at == AT_BYTES_AINT) return ((const MPI_Aint *)d->displs)[i];
    return ((const int *)d->displs)[i];
}

static void block_of(const struct wdesc *d, int i, const void **user, long long *count,
                            MPI_Datatype *type, MPI_Aint extent)
{
    *count = d->counts ? count_at(d, i) : d->count;
    *type = d->types ? d->types[i] : d->type;
    const char *b = d->buf;
    switch (d->at) {
    case AT_ONE: break;
    case AT_RUNS: b += (MPI_Aint)i * *count * extent; break;
    case AT_EXTENTS: b += displ_at(d, i) * extent; break;
    case AT_BYTES:
    case AT_BYTES_AINT: b += displ_at(d, i); break;
    }
    *user = b;
}

/* Fills side s (recv: the receive side) from d, its blocks going to (or
 * coming from) peers[i], ordered within a pair by `pairing` (context/topo.h;
 * NULL peers: block i is rank i's).  Returns why the call goes to the host
 * MPI, or NULL. */
static const char *side_fill(struct wside *s, const struct wdesc *d, const int *peers,
                             int pairing, int recv, long long *pairs)
{
    const char *name = recv ? "recv" : "send";
    static _Thread_local char why[200];
    if ((!d->counts && d->at != AT_ONE && d->at != AT_RUNS) || (d->at >= AT_EXTENTS && !d->displs)) {
        snprintf(why, sizeof why, "%scounts or its displacements are NULL", name);
        return why;
    }
    if (d->at >= AT_BYTES && !d->types) {
        snprintf(why, sizeof why, "%stypes is NULL", name);
        return why;
    }
    MPI_Aint lb, extent = 0;
    if (!d->types && d->at != AT_ONE && d->at != AT_BYTES && d->at != AT_BYTES_AINT &&
        PMPI_Type_get_extent(d->type, &lb, &extent) != MPI_SUCCESS) {
        snprintf(why, sizeof why, "%stype is not a valid datatype", name);
        return why;
    }
    for (int i = 0; i < s->n; i++) {
        struct strata_wpiece *x = &s->pc[i];
        x->peer = peers ? peers[i] : i;
        x->key = strata_pair_key(pairing, i, recv);
        block_of(d, i, &s->user[i], &s->count[i], &s->type[i], extent);
        if (s->count[i] < 0) {
            snprintf(why, sizeof why, "%scounts[%d] = %lld is negative", name, i, s->count[i]);
            return why;
        }
        if (x->peer < 0 || s->count[i] == 0) continue; /* MPI_PROC_NULL, or nothing */
        int tsize = 0;
        if (strata_type_size(s->type[i], &tsize) != MPI_SUCCESS || tsize < 0) {
            snprintf(why, sizeof why, "%stype of block %d is not a valid datatype", name, i);
            return why;
        }
        if (strata_route_bad_data(s->user[i], s->count[i], s->type[i])) {
            snprintf(why, sizeof why, "%sbuf's block %d is not host memory strata can read, or "
                     "its datatype is not committed", name, i);
            return why;
        }
        x->len = (size_t)s->count[i] * (size_t)tsize;
        x->at = strata_contiguous_run((void *)s->user[i], s->count[i], s->type[i], x->len);
        pairs[x->peer] = (pairs[x->peer] < 0 ? 0 : pairs[x->peer]) + (long long)x->len;
    }
    return NULL;
}

/* Packs (unpack 0) or unpacks a packed side's blocks. */
static void side_pack(struct wside *s, MPI_Comm comm, int unpack)
{
    for (int i = 0; i < s->n; i++) {
        const struct strata_wpiece *x = &s->pc[i];
        if (x->peer < 0 || !x->len) continue;
        if (x->at && unpack) memcpy((void *)x->at, s->tmp + x->pos, x->len);
        else if (x->at) memcpy(s->tmp + x->pos, x->at, x->len);
        else strata_pack_user(s->user[i], s->count[i], s->type[i], s->tmp + x->pos, comm, unpack);
    }
}

/* Lays a side out (len and off: its [size] arrays of the layout; lands:
 * where its streams may land in pieces, or NULL); packs it in if pack_in.
 * Returns 0, or an MPI error. */
static int side_open(struct wside *s, struct wcall *w, size_t *len, size_t *off, int pack_in,
                     struct strata_wpieces *lands)
{
    size_t packed = 0;
    s->run = (unsigned char *)strata_wlayout(s->pc, s->n, w->order, w->size, len, off, &packed,
                                             lands);
    if (s->run) return MPI_SUCCESS;
    s->tmp = malloc(packed ? packed : 1);
    if (!s->tmp) return MPI_ERR_NO_MEM;
    s->run = s->tmp;
    if (pack_in) side_pack(s, w->comm, 0);
    return MPI_SUCCESS;
}

/* The end of a call (vcollectives.c calls it back): the packed receive
 * blocks unpacked if it finished, then everything freed. */
static void wcall_end(void *arg, int finished)
{
    struct wcall *w = arg;
    if (finished && w->recv.tmp) side_pack(&w->recv, w->comm, 1);
    wcall_free(w);
}

/* An operation unpacks after its entry point returned: the application may
 * free its datatypes by then (MPI allows it), so derived ones are kept. */
static int keep_types(struct wside *s)
{
    for (int i = 0; i < s->n; i++) {
        if (s->pc[i].peer < 0 || !s->pc[i].len || s->pc[i].at) continue;
        int rc = strata_persist_own_type(&s->type[i], &s->owned[i]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* The neighbourhood allgathers inside a node: this rank's one block sent
 * once, each source's block read into every place its edges name
 * (coll/wlayout.h, strata_wlayout_once_*); packed once where its type has
 * holes.  Returns 0, or an MPI error. */
static int open_once(struct wcall *w)
{
    struct wside *s = &w->send, *r = &w->recv;
    size_t *lay = w->lay, packed;
    int size = w->size, first;
    static const unsigned char nothing; /* a run nobody reads (NULL would read as in place) */
    size_t block = strata_wlayout_once_send(s->pc, s->n, size, lay, lay + size, &first);
    s->run = (unsigned char *)(first < 0 ? &nothing : s->pc[first].at);
    if (block && !s->pc[first].at) {
        s->tmp = malloc(block);
        if (!s->tmp) return MPI_ERR_NO_MEM;
        s->run = s->tmp;
        int rc = strata_pack_user(s->user[first], s->count[first], s->type[first], s->tmp,
                                  w->comm, 0);
        if (rc != MPI_SUCCESS) return rc;
    }
    const unsigned char *base;
    if (strata_wlayout_once_recv(r->pc, r->n, size, lay + 2 * size, lay + 3 * size, &base,
                                 &packed, &w->lands)) {
        r->run = (unsigned char *)base;
        return MPI_SUCCESS;
    }
    r->tmp = malloc(packed);
    r->run = r->tmp;
    return r->tmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Runs a settled call (w is handed over). */
static int wrun(struct strata_ctx *ctx, enum strata_coll coll, struct wcall *w, int in_place,
                struct strata_build *build)
{
    int size = w->size, rc = MPI_SUCCESS;
    size_t *lay = w->lay;
    /* A stream may land in several places inside a node, not in place (the
     * receive side is then the send side too), on several ranks (one rank:
     * vcollectives.c copies its one stream itself). */
    int pieces = !in_place && !ctx->net && size > 1;
    if (pieces && strata_coll_sends_once(coll)) rc = open_once(w);
    else if (!in_place) rc = side_open(&w->send, w, lay, lay + size, 1, NULL);
    /* In place, the receive blocks are the outgoing ones too: packed in. */
    if (rc == MPI_SUCCESS && !w->recv.run)
        rc = side_open(&w->recv, w, lay + 2 * size, lay + 3 * size, in_place,
                       pieces ? &w->lands : NULL);
    if (rc == MPI_SUCCESS && w->recv.tmp && build) rc = keep_types(&w->recv);
    if (rc != MPI_SUCCESS) {
        /* The other ranks are about to wait for this one (the route is
         * settled): an error here would hang them. */
        strata_error("%s: packing a side failed (out of memory, or MPI error %d)",
                     strata_coll_name(coll), rc);
        PMPI_Abort(w->comm, 1);
    }
    if (in_place) {
        memcpy(lay, lay + 2 * size, (size_t)size * sizeof(size_t));
        memcpy(lay + size, lay + 3 * size, (size_t)size * sizeof(size_t));
    }
    w->landing = (struct strata_vpieces){w->lands.first, w->lands.len, w->lands.at,
                                         w->lands.once};
    struct strata_vlayout v = {lay, lay + size, lay + 2 * size, lay + 3 * size,
                               w->lands.used ? &w->landing : NULL, NULL};
    return strata_vcall_bytes(ctx, coll, in_place ? NULL : w->send.run, w->recv.run, &v,
                              wcall_end, w, build);
}

/* Reads a call's sides and settles its route: the context to run it on
 * (*wp the call), or NULL for the host MPI (or a refusal: the caller's
 * HOST_CALL returns its error). */
static struct strata_ctx *wsettle(enum strata_coll coll, MPI_Comm comm, const struct wdesc *sd,
                                  const struct wdesc *rd, int in_place, struct wcall **wp,
                                  struct strata_build *build)
{
    struct strata_ctx *ctx = strata_entry_served(comm, coll, build);
    *wp = NULL;
    if (!ctx) return NULL;
    const char *why = NULL;
    const struct strata_topo *t = NULL;
    int ns = ctx->size, nr = ctx->size;
    const int *dests = NULL, *sources = NULL;
    int pairing = STRATA_PAIR_ORDER;
    if (strata_coll_is_neighbor(coll)) {
        t = strata_topo_of(ctx, comm, &why);
        if (t) {
            ns = t->outdeg, nr = t->indeg;
            dests = t->dests, sources = t->sources;
            pairing = strata_topo_pairing(coll, t->kind);
        }
        if (t && pairing == STRATA_PAIR_UNKNOWN)
            why = "the host MPI pairs the blocks of duplicate edges in an order strata does not "
                  "know (the same on every rank: one host library)";
    }
    struct wcall *w = why ? NULL : wcall_new(comm, ctx->size, in_place ? 0 : ns, nr);
    if (!why && !w) why = "out of memory for the call's blocks";
    if (w) {
        long long *to = w->pairs, *from = w->pairs + ctx->size;
        for (int r = 0; r < 2 * ctx->size; r++) w->pairs[r] = -1;
        if (!in_place) why = side_fill(&w->send, sd, dests, pairing, 0, to);
        if (!why) why = side_fill(&w->recv, rd, sources, pairing, 1, from);
        /* In place (Alltoallw), the receive blocks are also what goes out. */
        if (!why && in_place) memcpy(to, from, (size_t)ctx->size * sizeof(long long));
    }
    long long sent = 0, expected = 0;
    for (int r = 0; w && !why && r < ctx->size; r++) {
        if (w->pairs[r] > 0) sent += w->pairs[r];
        if (w->pairs[ctx->size + r] > 0) expected += w->pairs[ctx->size + r];
    }
    ctx = strata_entry_settle_v(ctx, coll, -1, why ? STRATA_SIG_UNUSED : sent,
                                why ? STRATA_SIG_UNUSED : expected, why, build);
    if (ctx && strata_check_vcounts(ctx, strata_build_call_id(build, coll), w->pairs,
                                    w->pairs + ctx->size, 1, build) != STRATA_CHECK_RUN)
        ctx = NULL;
    if (!ctx) {
        wcall_free(w);
        return NULL;
    }
    *wp = w;
    return ctx;
}

/* ---- MPI_Alltoallw */

int strata_call_alltoallw(const void *sendbuf, const void *sendcounts, const void *sdispls,
                          const MPI_Datatype sendtypes[], void *recvbuf, const void *recvcounts,
                          const void *rdispls, const MPI_Datatype recvtypes[], MPI_Comm comm,
                          int large, struct strata_build *build)
{
    int in_place = sendbuf == MPI_IN_PLACE;
    struct wdesc sd = {sendbuf, AT_BYTES, sendcounts, 0, sdispls, MPI_DATATYPE_NULL, sendtypes,
                       large};
    struct wdesc rd = {recvbuf, AT_BYTES, recvcounts, 0, rdispls, MPI_DATATYPE_NULL, recvtypes,
                       large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_ALLTOALLW, comm, &sd, &rd, in_place, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Alltoallw,
                         (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm),
                         PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                         recvcounts, rdispls, recvtypes, comm,
                                         strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_ALLTOALLW, w, in_place, build);
}

/* ---- The neighbourhood collectives (no MPI_IN_PLACE: the standard has none) */

int strata_call_neighbor_allgather(const void *sendbuf, long long sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                                   MPI_Datatype recvtype, MPI_Comm comm, int large,
                                   struct strata_build *build)
{
    struct wdesc sd = {sendbuf, AT_ONE, NULL, sendcount, NULL, sendtype, NULL, large};
    struct wdesc rd = {recvbuf, AT_RUNS, NULL, recvcount, NULL, recvtype, NULL, large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_NEIGHBOR_ALLGATHER, comm, &sd, &rd, 0, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Neighbor_allgather,
                         (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                         PMPI_Ineighbor_allgather(sendbuf, (int)sendcount, sendtype, recvbuf,
                                                  (int)recvcount, recvtype, comm,
                                                  strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_NEIGHBOR_ALLGATHER, w, 0, build);
}

int strata_call_neighbor_allgatherv(const void *sendbuf, long long sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                                    const void *displs, MPI_Datatype recvtype, MPI_Comm comm,
                                    int large, struct strata_build *build)
{
    struct wdesc sd = {sendbuf, AT_ONE, NULL, sendcount, NULL, sendtype, NULL, large};
    struct wdesc rd = {recvbuf, AT_EXTENTS, recvcounts, 0, displs, recvtype, NULL, large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_NEIGHBOR_ALLGATHERV, comm, &sd, &rd, 0, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Neighbor_allgatherv,
                         (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm),
                         PMPI_Ineighbor_allgatherv(sendbuf, (int)sendcount, sendtype, recvbuf,
                                                   recvcounts, displs, recvtype, comm,
                                                   strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_NEIGHBOR_ALLGATHERV, w, 0, build);
}

int strata_call_neighbor_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, int large, struct strata_build *build)
{
    struct wdesc sd = {sendbuf, AT_RUNS, NULL, sendcount, NULL, sendtype, NULL, large};
    struct wdesc rd = {recvbuf, AT_RUNS, NULL, recvcount, NULL, recvtype, NULL, large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_NEIGHBOR_ALLTOALL, comm, &sd, &rd, 0, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Neighbor_alltoall,
                         (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                         PMPI_Ineighbor_alltoall(sendbuf, (int)sendcount, sendtype, recvbuf,
                                                 (int)recvcount, recvtype, comm,
                                                 strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_NEIGHBOR_ALLTOALL, w, 0, build);
}

int strata_call_neighbor_alltoallv(const void *sendbuf, const void *sendcounts,
                                   const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                   const void *recvcounts, const void *rdispls,
                                   MPI_Datatype recvtype, MPI_Comm comm, int large,
                                   struct strata_build *build)
{
    struct wdesc sd = {sendbuf, AT_EXTENTS, sendcounts, 0, sdispls, sendtype, NULL, large};
    struct wdesc rd = {recvbuf, AT_EXTENTS, recvcounts, 0, rdispls, recvtype, NULL, large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_NEIGHBOR_ALLTOALLV, comm, &sd, &rd, 0, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Neighbor_alltoallv,
                         (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm),
                         PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                  recvcounts, rdispls, recvtype, comm,
                                                  strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_NEIGHBOR_ALLTOALLV, w, 0, build);
}

int strata_call_neighbor_alltoallw(const void *sendbuf, const void *sendcounts,
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const void *recvcounts, const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, int large,
                                   struct strata_build *build)
{
    struct wdesc sd = {sendbuf, AT_BYTES_AINT, sendcounts, 0, sdispls, MPI_DATATYPE_NULL,
                       sendtypes, large};
    struct wdesc rd = {recvbuf, AT_BYTES_AINT, recvcounts, 0, rdispls, MPI_DATATYPE_NULL,
                       recvtypes, large};
    struct wcall *w;
    struct strata_ctx *ctx = wsettle(STRATA_COLL_NEIGHBOR_ALLTOALLW, comm, &sd, &rd, 0, &w, build);
    if (!ctx)
        return HOST_CALL(build, large, Neighbor_alltoallw,
                         (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes, comm),
                         PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes,
                                                  recvbuf, recvcounts, rdispls, recvtypes, comm,
                                                  strata_nb_host_request()));
    return wrun(ctx, STRATA_COLL_NEIGHBOR_ALLTOALLW, w, 0, build);
}
