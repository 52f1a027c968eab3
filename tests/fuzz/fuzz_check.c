/* Running one call through the host MPI and through strata, and comparing.
 *
 * Each rank builds its buffers three times from the call's seeds: the
 * original, the host MPI's copy and strata's copy.  PMPI_* runs on the
 * host's copy, MPI_* (strata, or the host behind strata) on strata's; then
 * every buffer the call may write is compared byte for byte with the
 * host's, gaps of derived datatypes included (both must leave them alone),
 * and every buffer it may only read must still equal the original.  Left
 * out: the 6 unused bytes of an 80-bit long double (MPICH zeroes them when
 * it packs), and in reductions the holes of the pair types (docs/DESIGN.md
 * lets strata write them) and the sign of an exact floating zero.  Where a
 * data mover's bytes differ, the expected bytes (fuzz_expect.c) say who is
 * wrong: the host MPI has bugs too.
 *
 * Errors: a call the host MPI rejects is not given to strata (a valid call
 * the host rejects is a host limitation, counted and reported); a call with
 * an invalid argument must be rejected by strata with the host's error
 * class on every rank.  Barrier: no rank may leave before the last entered. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context/context.h"
#include "fuzz.h"
#include "testutil.h"
#include "util/stats.h"

/* ---- Buffers ---------------------------------------------------------------- */

/* Guard zones around every buffer (--erroneous). */
static size_t zone_before, zone_after;

void fuzz_guard_zones(size_t before, size_t after)
{
    zone_before = before;
    zone_after = after;
}

static void buf_alloc(struct buf *b, const char *name, const struct fuzz_layout *l,
                      size_t count, size_t blocks, int output, int misalign)
{
    b->name = name;
    b->l = l;
    b->count = count;
    b->bytes = count * l->extent * blocks;
    b->output = output;
    b->zone[0] = zone_before + (size_t)misalign;
    b->zone[1] = zone_after;
    for (int k = 0; k < 3; k++) {
        unsigned char *p = malloc(b->zone[0] + b->bytes + b->zone[1] + 1);
        CHECK(p != NULL, "out of memory (%zu bytes)", b->bytes);
        b->mem[k] = p + b->zone[0];
        for (size_t i = 0; i < b->zone[0] && zone_before; i++)
            b->mem[k][-1 - (ptrdiff_t)i] = fuzz_guard_byte(i, 0);
        for (size_t i = 0; i < b->zone[1]; i++) b->mem[k][b->bytes + i] = fuzz_guard_byte(i, 1);
    }
}

static void buf_free(struct buf *b)
{
    for (int k = 0; k < 3; k++)
        if (b->mem[k]) free(b->mem[k] - b->zone[0]);
}

static void *buf_arg(const struct buf *b, int which)
{
    if (b->pass == 2) return MPI_IN_PLACE;
    if (b->pass == 1 || !b->mem[which]) return NULL;
    return b->mem[which];
}

enum { ROLE_IN, ROLE_PREFILL };

uint64_t fuzz_input_seed(const struct fuzz_call *c, int world_rank)
{
    return fuzz_hash(c->data_seed, (uint64_t)world_rank * 8 + ROLE_IN);
}

static uint64_t prefill_seed(const struct fuzz_call *c)
{
    return fuzz_hash(c->data_seed, (uint64_t)fuzz_opt.world_rank * 8 + ROLE_PREFILL);
}

void fuzz_rank_layouts(const struct fuzz_call *c, int comm_rank, const struct fuzz_layout **ls,
                       const struct fuzz_layout **lr)
{
    int par = comm_rank & 1;
    /* The v-collectives: one layout per side on every rank (fuzz_draw.c). */
    if (fuzz_is_reduction(c->coll) || fuzz_is_v(c->coll)) par = 0;
    *ls = fuzz_layout(c->base, c->shape[SIDE_SEND][par]);
    *lr = fuzz_layout(c->base, c->shape[SIDE_RECV][par]);
    if (fuzz_is_reduction(c->coll) || c->coll == STRATA_COLL_BCAST) *lr = *ls;
}

/* Input data: typed values for reductions, any bytes otherwise (the stream
 * of the rank's seed from the offset on: fuzz_expect.c makes it again). */
static void fill_input(const struct fuzz_call *c, const struct exec *x, struct buf *b,
                       size_t off, size_t count)
{
    uint64_t seed = fuzz_input_seed(c, fuzz_opt.world_rank);
    if (fuzz_is_reduction(c->coll))
        fuzz_fill_values(b->mem[ORIG] + off, b->l, count, c->op, x->size, seed);
    else
        fuzz_fill_bytes(b->mem[ORIG] + off, count * b->l->extent, seed + off);
}

static int *int_array(int n)
{
    int *a = calloc((size_t)n, sizeof(int));
    CHECK(a != NULL, "out of memory");
    return a;
}

/* Counts of `l` elements of the blocks of fuzz_vcount (Alltoallv: this rank
 * and j; receive: j to this rank), displacements packed in rank order;
 * returns the total. */
static int v_counts(const struct fuzz_call *c, size_t elems, const struct exec *x,
                    const struct fuzz_layout *l, int pairwise, int *count, int *displ)
{
    int at = 0;
    for (int j = 0; j < x->size; j++) {
        int k = pairwise ? (x->rank + j) % x->size : j;
        count[j] = (int)(fuzz_vcount(c, elems, x->size, k) / (size_t)l->per);
        displ[j] = at;
        at += count[j];
    }
    return at;
}

/* Reduce_scatter(_block) and the v-collectives: their counts, displacements
 * and buffers (blocks of varying size packed in rank order, so one "block"
 * of struct buf is the whole buffer). */
static void build_v(const struct fuzz_call *c, size_t elems, struct exec *x,
                    const struct fuzz_layout *ls, const struct fuzz_layout *lr, int all_in_place,
                    int root_in_place)
{
    struct buf *s = &x->send, *r = &x->recv;
    int P = x->size, me = x->rank, at_root = me == x->root, mis = c->misalign;
    x->scounts = int_array(P), x->sdispls = int_array(P);
    x->rcounts = int_array(P), x->rdispls = int_array(P);
    switch (c->coll) {
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
    case STRATA_COLL_REDUCE_SCATTER: {
        size_t cr = elems / (size_t)lr->per;
        int total = (int)cr * P;
        if (c->coll == STRATA_COLL_REDUCE_SCATTER)
            total = v_counts(c, elems, x, lr, 0, x->rcounts, x->rdispls);
        else
            for (int j = 0; j < P; j++) x->rcounts[j] = (int)cr;
        x->scount = (int)cr; /* Reduce_scatter_block's count */
        x->rcount = x->rcounts[me];
        if (all_in_place) {
            s->pass = 2;
            buf_alloc(r, "the receive buffer", lr, (size_t)total, 1, 1, mis);
            fill_input(c, x, r, 0, (size_t)total);
        } else {
            buf_alloc(r, "the receive buffer", lr, (size_t)x->rcount, 1, 1, mis);
            fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
            buf_alloc(s, "the send buffer", ls, (size_t)total, 1, 0, mis);
            fill_input(c, x, s, 0, (size_t)total);
        }
        break;
    }
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_ALLGATHERV: {
        int receives = c->coll == STRATA_COLL_ALLGATHERV || at_root;
        int inplace_here = c->coll == STRATA_COLL_ALLGATHERV ? all_in_place : root_in_place;
        int total = v_counts(c, elems, x, lr, 0, x->rcounts, x->rdispls);
        x->scount = (int)(fuzz_vcount(c, elems, P, me) / (size_t)ls->per);
        buf_alloc(r, receives ? "the receive buffer" : "the receive buffer (not the root's)",
                  lr, receives ? (size_t)total : 0, 1, 1, mis);
        fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        if (!receives && c->null_insignificant) r->pass = 1;
        if (inplace_here) {
            s->pass = 2;
            fill_input(c, x, r, (size_t)x->rdispls[me] * lr->extent, (size_t)x->rcounts[me]);
        } else {
            buf_alloc(s, "the send buffer", ls, (size_t)x->scount, 1, 0, mis);
            fill_input(c, x, s, 0, (size_t)x->scount);
        }
        break;
    }
    case STRATA_COLL_SCATTERV: {
        int total = v_counts(c, elems, x, ls, 0, x->scounts, x->sdispls);
        x->rcount = (int)(fuzz_vcount(c, elems, P, me) / (size_t)lr->per);
        buf_alloc(s, at_root ? "the send buffer" : "the send buffer (not the root's)", ls,
                  at_root ? (size_t)total : 0, 1, 0, mis);
        fill_input(c, x, s, 0, at_root ? (size_t)total : 0);
        if (!at_root && c->null_insignificant) s->pass = 1;
        if (root_in_place) {
            r->pass = 2;
        } else {
            buf_alloc(r, "the receive buffer", lr, (size_t)x->rcount, 1, 1, mis);
            fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        }
        break;
    }
    default: { /* Alltoallv */
        int rtotal = v_counts(c, elems, x, lr, 1, x->rcounts, x->rdispls);
        buf_alloc(r, "the receive buffer", lr, (size_t)rtotal, 1, 1, mis);
        if (all_in_place) {
            s->pass = 2;
            fill_input(c, x, r, 0, (size_t)rtotal);
        } else {
            int stotal = v_counts(c, elems, x, ls, 1, x->scounts, x->sdispls);
            fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
            buf_alloc(s, "the send buffer", ls, (size_t)stotal, 1, 0, mis);
            fill_input(c, x, s, 0, (size_t)stotal);
        }
    }
    }
}

/* Builds this rank's buffers and arguments for the call with `elems`. */
static void build(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                  struct exec *x)
{
    memset(x, 0, sizeof *x);
    x->grid = MPI_COMM_NULL;
    x->rank = fc->rank;
    x->size = fc->size;
    x->comm = c->error == FE_COMM ? MPI_COMM_NULL : fc->comm;
    x->root = fuzz_root(c, fc->size);
    x->in_place = fuzz_in_place(c, fc->size);
    int at_root = x->rank == x->root, P = x->size, mis = c->misalign;
    int all_in_place = x->in_place && (c->coll == STRATA_COLL_ALLREDUCE ||
                                       c->coll == STRATA_COLL_SCAN ||
                                       c->coll == STRATA_COLL_EXSCAN ||
                                       c->coll == STRATA_COLL_ALLGATHER ||
                                       c->coll == STRATA_COLL_ALLTOALL ||
                                       c->coll == STRATA_COLL_REDUCE_SCATTER_BLOCK ||
                                       c->coll == STRATA_COLL_REDUCE_SCATTER ||
                                       c->coll == STRATA_COLL_ALLGATHERV ||
                                       fuzz_is_alltoallv(c->coll));
    int root_in_place = x->in_place && at_root;
    const struct fuzz_layout *ls, *lr;
    fuzz_rank_layouts(c, fc->rank, &ls, &lr);
    size_t cs = elems / (size_t)ls->per, cr = elems / (size_t)lr->per;
    x->scount = (int)cs;
    x->rcount = (int)cr;
    x->stype = ls->type;
    x->rtype = lr->type;
    x->op = fuzz_is_reduction(c->coll) ? fuzz_op_handle(c->op) : MPI_OP_NULL;
    struct buf *s = &x->send, *r = &x->recv;
    switch (c->coll) {
    case STRATA_COLL_BCAST:
        buf_alloc(r, "the buffer", lr, cr, 1, 1, mis);
        if (at_root) fill_input(c, x, r, 0, cr);
        else fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        break;
    case STRATA_COLL_REDUCE:
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_SCAN:
    case STRATA_COLL_EXSCAN: {
        int receives = c->coll != STRATA_COLL_REDUCE || at_root;
        int inplace_here = c->coll != STRATA_COLL_REDUCE ? all_in_place : root_in_place;
        r->undefined = c->coll == STRATA_COLL_EXSCAN && x->rank == 0;
        buf_alloc(r, receives ? "the receive buffer" : "the receive buffer (not the root's)",
                  lr, cr, 1, 1, mis);
        fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        if (!receives && c->null_insignificant) r->pass = 1;
        if (inplace_here) {
            s->pass = 2;
            fill_input(c, x, r, 0, cr);
        } else {
            buf_alloc(s, "the send buffer", ls, cs, 1, 0, mis);
            fill_input(c, x, s, 0, cs);
        }
        break;
    }
    case STRATA_COLL_GATHER:
    case STRATA_COLL_ALLGATHER: {
        int receives = c->coll == STRATA_COLL_ALLGATHER || at_root;
        int inplace_here = c->coll == STRATA_COLL_ALLGATHER ? all_in_place : root_in_place;
        buf_alloc(r, receives ? "the receive buffer" : "the receive buffer (not the root's)",
                  lr, cr, (size_t)P, 1, mis);
        fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        if (!receives && c->null_insignificant) r->pass = 1;
        if (inplace_here) {
            s->pass = 2;
            fill_input(c, x, r, (size_t)x->rank * cr * lr->extent, cr);
        } else {
            buf_alloc(s, "the send buffer", ls, cs, 1, 0, mis);
            fill_input(c, x, s, 0, cs);
        }
        break;
    }
    case STRATA_COLL_SCATTER:
        buf_alloc(s, at_root ? "the send buffer" : "the send buffer (not the root's)", ls, cs,
                  (size_t)P, 0, mis);
        fill_input(c, x, s, 0, cs * (size_t)P);
        if (!at_root && c->null_insignificant) s->pass = 1;
        if (root_in_place) {
            r->pass = 2;
        } else {
            buf_alloc(r, "the receive buffer", lr, cr, 1, 1, mis);
            fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        }
        break;
    case STRATA_COLL_ALLTOALL:
        buf_alloc(r, "the receive buffer", lr, cr, (size_t)P, 1, mis);
        if (all_in_place) {
            s->pass = 2;
            fill_input(c, x, r, 0, cr * (size_t)P);
        } else {
            fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
            buf_alloc(s, "the send buffer", ls, cs, (size_t)P, 0, mis);
            fill_input(c, x, s, 0, cs * (size_t)P);
        }
        break;
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
    case STRATA_COLL_REDUCE_SCATTER:
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_SCATTERV:
    case STRATA_COLL_ALLGATHERV:
    case STRATA_COLL_ALLTOALLV:
    case STRATA_COLL_ALLTOALLW:
        build_v(c, elems, x, ls, lr, all_in_place, root_in_place);
        break;
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
    case STRATA_COLL_NEIGHBOR_ALLTOALLW: {
        /* A grid over the slot's communicator, for this call. */
        int nd, periodic, dims[2] = {0, 0}, periods[2];
        fuzz_neighbor_grid(c, &nd, &periodic);
        periods[0] = periods[1] = periodic;
        PMPI_Dims_create(P, nd, dims);
        CHECK(PMPI_Cart_create(x->comm, nd, dims, periods, 0, &x->grid) == MPI_SUCCESS,
              "MPI_Cart_create");
        x->comm = x->grid;
        int allgather = c->coll == STRATA_COLL_NEIGHBOR_ALLGATHER ||
                        c->coll == STRATA_COLL_NEIGHBOR_ALLGATHERV;
        size_t nb = 2 * (size_t)nd, sblocks = allgather ? 1 : nb;
        /* The v and w forms: every block the plain form's count, packed. */
        x->scounts = int_array((int)nb), x->sdispls = int_array((int)nb);
        x->rcounts = int_array((int)nb), x->rdispls = int_array((int)nb);
        for (int j = 0; j < (int)nb; j++) {
            x->scounts[j] = x->scount, x->sdispls[j] = j * x->scount;
            x->rcounts[j] = x->rcount, x->rdispls[j] = j * x->rcount;
        }
        buf_alloc(s, "the send buffer", ls, cs, sblocks, 0, mis);
        fill_input(c, x, s, 0, cs * sblocks);
        buf_alloc(r, "the receive buffer", lr, cr, nb, 1, mis);
        fuzz_fill_bytes(r->mem[ORIG], r->bytes, prefill_seed(c));
        break;
    }
    default: break; /* Barrier */
    }
    for (int k = HOST; k <= STRATA; k++) {
        if (s->mem[ORIG]) memcpy(s->mem[k], s->mem[ORIG], s->bytes);
        if (r->mem[ORIG]) memcpy(r->mem[k], r->mem[ORIG], r->bytes);
    }
    /* Reduce_scatter in place: the input is the whole vector in recv, the
     * result its first block; what follows is undefined (not compared). */
    if (all_in_place && (c->coll == STRATA_COLL_REDUCE_SCATTER_BLOCK ||
                         c->coll == STRATA_COLL_REDUCE_SCATTER))
        r->bytes = (size_t)x->rcount * lr->extent;
    /* A negative count: Reduce_scatter's is in its counts array, the same
     * on every rank. */
    if (c->error == FE_COUNT && c->coll == STRATA_COLL_REDUCE_SCATTER)
        x->rcounts[0] = -1 - (int)(c->root_draw % 3);
    /* An invalid argument, the same on every rank, and one every rank checks. */
    int on_send = c->error_side == SIDE_SEND;
    if (c->error == FE_COUNT) *(on_send ? &x->scount : &x->rcount) = -1 - (int)(c->root_draw % 3);
    if (c->error == FE_TYPE) *(on_send ? &x->stype : &x->rtype) = MPI_DATATYPE_NULL;
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
    /* MPICH 4.0.2 skips the datatype check of a call with count 0, and its
     * Bcast then fails an assertion (dtp_ != NULL; found by this fuzzer):
     * a count of 1 keeps the call invalid, and checked. */
    int *count = on_send ? &x->scount : &x->rcount;
    if (c->error == FE_TYPE && *count == 0) *count = 1;
#endif
    if (c->error == FE_OP) x->op = MPI_OP_NULL;
}

static void release(const struct fuzz_call *c, struct exec *x)
{
    free(x->scounts);
    free(x->sdispls);
    free(x->rcounts);
    free(x->rdispls);
    (void)c;
    buf_free(&x->send);
    buf_free(&x->recv);
    if (x->grid != MPI_COMM_NULL) PMPI_Comm_free(&x->grid);
}

/* ---- Calls ---------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CALL(fn, ...) (strata ? MPI_##fn(__VA_ARGS__) : PMPI_##fn(__VA_ARGS__))

#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(name) MPI_##name##_init
#endif

/* strata's side of a call drawn in a nonblocking or persistent form
 * (--forms): the request, then MPI_Wait (persistent: MPI_Start between, and
 * MPI_Request_free after).  A host without persistent collectives gets the
 * nonblocking form.  Returns the call's error. */
static int invoke_form(const struct fuzz_call *c, const struct exec *x, const void *csb,
                       void *rb)
{
    MPI_Request q = MPI_REQUEST_NULL;
    int rc;
#ifdef INIT
    if (c->form == 2) {
        MPI_Info i = MPI_INFO_NULL;
        switch (c->coll) {
        case STRATA_COLL_BCAST: rc = INIT(Bcast)(rb, x->scount, x->stype, x->root, x->comm, i, &q); break;
        case STRATA_COLL_REDUCE:
            rc = INIT(Reduce)(csb, rb, x->scount, x->stype, x->op, x->root, x->comm, i, &q);
            break;
        case STRATA_COLL_ALLREDUCE:
            rc = INIT(Allreduce)(csb, rb, x->scount, x->stype, x->op, x->comm, i, &q);
            break;
        case STRATA_COLL_GATHER:
            rc = INIT(Gather)(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm,
                              i, &q);
            break;
        case STRATA_COLL_SCATTER:
            rc = INIT(Scatter)(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm,
                               i, &q);
            break;
        case STRATA_COLL_ALLGATHER:
            rc = INIT(Allgather)(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm, i, &q);
            break;
        case STRATA_COLL_ALLTOALL:
            rc = INIT(Alltoall)(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm, i, &q);
            break;
        default: rc = INIT(Barrier)(x->comm, i, &q); break;
        }
        if (rc == MPI_SUCCESS) rc = MPI_Start(&q);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS || q != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Wait");
        if (q != MPI_REQUEST_NULL) MPI_Request_free(&q);
        return rc;
    }
#endif
    switch (c->coll) {
    case STRATA_COLL_BCAST: rc = MPI_Ibcast(rb, x->scount, x->stype, x->root, x->comm, &q); break;
    case STRATA_COLL_REDUCE:
        rc = MPI_Ireduce(csb, rb, x->scount, x->stype, x->op, x->root, x->comm, &q);
        break;
    case STRATA_COLL_ALLREDUCE:
        rc = MPI_Iallreduce(csb, rb, x->scount, x->stype, x->op, x->comm, &q);
        break;
    case STRATA_COLL_GATHER:
        rc = MPI_Igather(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm, &q);
        break;
    case STRATA_COLL_SCATTER:
        rc = MPI_Iscatter(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm, &q);
        break;
    case STRATA_COLL_ALLGATHER:
        rc = MPI_Iallgather(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm, &q);
        break;
    case STRATA_COLL_ALLTOALL:
        rc = MPI_Ialltoall(csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm, &q);
        break;
    default: rc = MPI_Ibarrier(x->comm, &q); break;
    }
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS || q == MPI_REQUEST_NULL, "MPI_Wait left a nonblocking request");
    return rc;
}

/* Neighbor_alltoallw, built as Neighbor_alltoallv (nb blocks): every block
 * in the rank's one datatype, at its displacement times the type's extent
 * in bytes. */
static int call_neighbor_alltoallw(const struct exec *x, int nb, const void *sb, void *rb,
                                   int strata)
{
    int rc;
    MPI_Aint lb, sext = 0, rext = 0;
    PMPI_Type_get_extent(x->stype, &lb, &sext);
    PMPI_Type_get_extent(x->rtype, &lb, &rext);
    MPI_Aint *bytes = malloc(2 * (size_t)nb * sizeof(MPI_Aint) + 1);
    MPI_Datatype *types = malloc(2 * (size_t)nb * sizeof(MPI_Datatype) + 1);
    CHECK(bytes && types, "out of memory");
    for (int j = 0; j < nb; j++) {
        bytes[j] = x->sdispls[j] * sext;
        bytes[nb + j] = x->rdispls[j] * rext;
        types[j] = x->stype;
        types[nb + j] = x->rtype;
    }
    rc = CALL(Neighbor_alltoallw, sb, x->scounts, bytes, types, rb, x->rcounts, bytes + nb,
              types + nb, x->comm);
    free(bytes);
    free(types);
    return rc;
}

/* One run of the call (strata: MPI_*, else PMPI_*); returns its error class.
 * Barrier: *early_exit says a rank left before another one entered. */
/* Alltoallw, built as Alltoallv: every block in the rank's one datatype, at
 * its displacement times the type's extent in bytes (0 for an invalid type,
 * which the call must reject anyway). */
static int call_alltoallw(const struct exec *x, const void *sb, void *rb, int strata)
{
    int P = x->size, rc;
    MPI_Aint lb, sext = 0, rext = 0;
    if (x->stype != MPI_DATATYPE_NULL) PMPI_Type_get_extent(x->stype, &lb, &sext);
    if (x->rtype != MPI_DATATYPE_NULL) PMPI_Type_get_extent(x->rtype, &lb, &rext);
    int *bytes = malloc(2 * (size_t)P * sizeof(int) + 1);
    MPI_Datatype *types = malloc(2 * (size_t)P * sizeof(MPI_Datatype) + 1);
    CHECK(bytes && types, "out of memory");
    for (int j = 0; j < P; j++) {
        bytes[j] = x->sdispls[j] * (int)sext;
        bytes[P + j] = x->rdispls[j] * (int)rext;
        types[j] = x->stype;
        types[P + j] = x->rtype;
    }
    rc = CALL(Alltoallw, sb, x->scounts, bytes, types, rb, x->rcounts, bytes + P, types + P,
              x->comm);
    free(bytes);
    free(types);
    return rc;
}

static int invoke(const struct fuzz_call *c, const struct exec *x, int strata, int *early_exit)
{
    int k = strata ? STRATA : HOST, rc = MPI_SUCCESS;
    void *sb = buf_arg(&x->send, k), *rb = buf_arg(&x->recv, k);
    const void *csb = sb;
    if (c->coll == STRATA_COLL_BCAST) sb = rb;
    if (strata && c->form && c->coll != STRATA_COLL_BARRIER) {
        rc = invoke_form(c, x, csb, c->coll == STRATA_COLL_BCAST ? sb : rb);
        int cls = rc;
        if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
        return cls;
    }
    switch (c->coll) {
    case STRATA_COLL_BCAST: rc = CALL(Bcast, sb, x->scount, x->stype, x->root, x->comm); break;
    case STRATA_COLL_REDUCE:
        rc = CALL(Reduce, csb, rb, x->scount, x->stype, x->op, x->root, x->comm);
        break;
    case STRATA_COLL_ALLREDUCE:
        rc = CALL(Allreduce, csb, rb, x->scount, x->stype, x->op, x->comm);
        break;
    case STRATA_COLL_SCAN: rc = CALL(Scan, csb, rb, x->scount, x->stype, x->op, x->comm); break;
    case STRATA_COLL_EXSCAN:
        rc = CALL(Exscan, csb, rb, x->scount, x->stype, x->op, x->comm);
        break;
    case STRATA_COLL_GATHER:
        rc = CALL(Gather, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm);
        break;
    case STRATA_COLL_SCATTER:
        rc = CALL(Scatter, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->root, x->comm);
        break;
    case STRATA_COLL_ALLGATHER:
        rc = CALL(Allgather, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm);
        break;
    case STRATA_COLL_ALLTOALL:
        rc = CALL(Alltoall, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm);
        break;
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        rc = CALL(Reduce_scatter_block, csb, rb, x->scount, x->stype, x->op, x->comm);
        break;
    case STRATA_COLL_REDUCE_SCATTER:
        rc = CALL(Reduce_scatter, csb, rb, x->rcounts, x->stype, x->op, x->comm);
        break;
    case STRATA_COLL_GATHERV:
        rc = CALL(Gatherv, csb, x->scount, x->stype, rb, x->rcounts, x->rdispls, x->rtype,
                  x->root, x->comm);
        break;
    case STRATA_COLL_SCATTERV:
        rc = CALL(Scatterv, csb, x->scounts, x->sdispls, x->stype, rb, x->rcount, x->rtype,
                  x->root, x->comm);
        break;
    case STRATA_COLL_ALLGATHERV:
        rc = CALL(Allgatherv, csb, x->scount, x->stype, rb, x->rcounts, x->rdispls, x->rtype,
                  x->comm);
        break;
    case STRATA_COLL_ALLTOALLV:
        rc = CALL(Alltoallv, csb, x->scounts, x->sdispls, x->stype, rb, x->rcounts, x->rdispls,
                  x->rtype, x->comm);
        break;
    case STRATA_COLL_ALLTOALLW:
        rc = call_alltoallw(x, csb, rb, strata);
        break;
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
        rc = CALL(Neighbor_allgather, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm);
        break;
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
        rc = CALL(Neighbor_alltoall, csb, x->scount, x->stype, rb, x->rcount, x->rtype, x->comm);
        break;
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
        rc = CALL(Neighbor_allgatherv, csb, x->scount, x->stype, rb, x->rcounts, x->rdispls,
                  x->rtype, x->comm);
        break;
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
        rc = CALL(Neighbor_alltoallv, csb, x->scounts, x->sdispls, x->stype, rb, x->rcounts,
                  x->rdispls, x->rtype, x->comm);
        break;
    case STRATA_COLL_NEIGHBOR_ALLTOALLW: {
        int nd, periodic;
        fuzz_neighbor_grid(c, &nd, &periodic);
        rc = call_neighbor_alltoallw(x, 2 * nd, csb, rb, strata);
        break;
    }
    case STRATA_COLL_BARRIER: {
        /* One rank enters late; nobody may leave before it entered. */
        if (x->comm != MPI_COMM_NULL && x->rank == c->late_rank_draw % x->size) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        double entered = now();
        rc = strata && c->form ? invoke_form(c, x, NULL, NULL) : CALL(Barrier, x->comm);
        double left = now(), last_in = entered;
        if (rc == MPI_SUCCESS && x->comm != MPI_COMM_NULL) {
            PMPI_Allreduce(&entered, &last_in, 1, MPI_DOUBLE, MPI_MAX, x->comm);
            if (left < last_in) *early_exit = 1;
        }
        break;
    }
    default: break;
    }
    int cls = rc;
    if (rc != MPI_SUCCESS) PMPI_Error_class(rc, &cls);
    return cls;
}

#undef CALL

/* ---- Comparing -------------------------------------------------------------- */

/* Where byte `at` of b lies, and the element there in both versions. */
static void where_in(const struct buf *b, const unsigned char *got, const unsigned char *want,
                     size_t at, int reduction, char *out, size_t len)
{
    size_t block_bytes = b->count * b->l->extent;
    size_t block = block_bytes ? at / block_bytes : 0, off = block_bytes ? at % block_bytes : at;
    size_t elem = off / b->l->extent, within = off % b->l->extent;
    const struct fuzz_base *base = b->l->base;
    for (int j = 0; j < b->l->per; j++)
        if (within >= b->l->off[j] && within < b->l->off[j] + base->extent) {
            size_t start = at - within + b->l->off[j];
            char gv[64], wv[64];
            fuzz_show_base(base, got + start, gv, sizeof gv);
            fuzz_show_base(base, want + start, wv, sizeof wv);
            snprintf(out, len, "block %zu, element %zu, %s %d byte %zu%s; values %s and %s",
                     block, elem, base->name, j, within - b->l->off[j],
                     fuzz_padding_byte(b->l, at, reduction) ? " (padding)" : "", gv, wv);
            return;
        }
    snprintf(out, len, "block %zu, element %zu, byte %zu: a gap of the datatype", block, elem,
             within);
}

/* Compares `got` (a version of b) with `want`; returns 1 and writes a
 * report on a difference in a byte that counts. */
static int differs(const struct buf *b, const unsigned char *got, const char *got_name,
                   const unsigned char *want, const char *want_name, int reduction, char *out,
                   size_t len)
{
    if (!got || !want || b->pass || b->undefined || !memcmp(got, want, b->bytes)) return 0;
    size_t first = b->bytes, ndiff = 0;
    for (size_t i = 0; i < b->bytes; i++) {
        if (got[i] == want[i] || fuzz_padding_byte(b->l, i, reduction)) continue;
        if (reduction && fuzz_same_float(b->l, got, want, i)) continue;
        if (first == b->bytes) first = i;
        ndiff++;
    }
    if (!ndiff) return 0;
    char where[256];
    where_in(b, got, want, first, reduction, where, sizeof where);
    snprintf(out, len, "%s (%zu x %s per block, %zu bytes): %s differs from %s at byte %zu (%s): "
             "0x%02x against 0x%02x; %zu byte%s differ", b->name, b->count, b->l->name,
             b->bytes, got_name, want_name, first, where, got[first], want[first], ndiff,
             ndiff == 1 ? "" : "s");
    return 1;
}

/* Strata's buffers against the host's (outputs) or the originals (inputs).
 * A data mover's output that differs from the host's (or every one, with
 * --expect-all) is checked against the expected bytes: strata's must be
 * those; if the host's are not, the host MPI is wrong. */
static void compare(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                    const struct exec *x, struct fuzz_outcome *out)
{
    int reduction = fuzz_is_reduction(c->coll);
    const struct buf *r = &x->recv, *s = &x->send;
    char *rep = out->report, host_rep[1024];
    size_t len = sizeof out->report;
    if (differs(s, s->mem[STRATA], "strata's", s->mem[ORIG], "what it was before the call",
                reduction, rep, len)) {
        out->mismatch = 1;
        return;
    }
    if (!r->output) {
        out->mismatch = differs(r, r->mem[STRATA], "strata's", r->mem[ORIG],
                                "what it was before the call", reduction, rep, len);
        return;
    }
    int diff = differs(r, r->mem[STRATA], "strata's", r->mem[HOST], "the host MPI's", reduction,
                       rep, len);
    out->mismatch = diff;
    /* The expected bytes are computed for the block collectives only
     * (fuzz_expect.c): a v-collective's mismatch is reported against the
     * host's bytes alone. */
    if (reduction || fuzz_is_v(c->coll) || strata_coll_is_neighbor(c->coll) || r->pass ||
        !r->mem[ORIG] || (!diff && !fuzz_opt.expect_all))
        return;
    unsigned char *expected = malloc(r->bytes + 1);
    CHECK(expected != NULL, "out of memory");
    fuzz_expect_recv(c, elems, fc, x, expected);
    int host_bad = differs(r, r->mem[HOST], "the host MPI's", expected, "the expected bytes", 0,
                           host_rep, sizeof host_rep);
    /* Strata's bytes equal to the host's wrong ones: the host served the
     * call behind strata (or packed for it), the host is wrong. */
    out->mismatch = diff && differs(r, r->mem[STRATA], "strata's", expected,
                                    "the expected bytes", 0, rep, len);
    if (!diff && host_bad) {
        snprintf(rep, len, "%.900s (strata's are the same)", host_rep);
        out->host_wrong = 1;
    } else if (out->mismatch) {
        size_t n = strlen(rep);
        snprintf(rep + n, len - n, " (the host MPI's %s)",
                 host_bad ? "are not the expected bytes either" : "are the expected bytes");
    } else if (host_bad) {
        snprintf(rep, len, "%.900s (strata's are the expected bytes)", host_rep);
        out->host_wrong = 1;
    }
    free(expected);
}

/* buf: MPI_MAX_ERROR_STRING bytes. */
static const char *class_name(int cls, char *buf)
{
    if (cls == MPI_SUCCESS) return "MPI_SUCCESS";
    int n = 0;
    PMPI_Error_string(cls, buf, &n);
    return buf;
}

/* ---- Self-tests: strata's mistakes simulated, to see the fuzzer catch them */

/* --self-test=hang: world rank 1 leaves a Barrier out, its peers wait. */
static int self_test_skip(const struct fuzz_call *c, const struct fuzz_comm *fc)
{
    return fuzz_opt.self_hang && fuzz_opt.world_rank == 1 && fc->size > 1 &&
           c->coll == STRATA_COLL_BARRIER && !c->error;
}

/* --self-test=corrupt:N: from N elements on, the last rank of the
 * communicator finds the first byte of its output changed. */
static void self_test_damage(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                             struct exec *x)
{
    struct buf *b = &x->recv;
    if (!fuzz_opt.self_corrupt || elems < fuzz_opt.self_corrupt || c->error ||
        fc->rank != fc->size - 1 || !b->output || b->pass || !b->mem[STRATA] || !b->bytes)
        return;
    b->mem[STRATA][b->l->off[0]] ^= 0x5a;
}

/* ---- Host calls that write outside their buffers ------------------------- */

/* Open MPI 4.1.4's MPI_Alltoall on 16 ranks or more with blocks under 512
 * bytes (where coll/tuned picks its modified Bruck algorithm) unpacks into
 * the receive buffer with the send datatype when the two type maps differ:
 * wrong bytes, and bytes written past its end as far as the buffer's own
 * length (open-mpi/ompi#10488, fixed upstream; found by this fuzzer at 16 ranks:
 * 256 MPI_SIGNED_CHAR per block sent as MPI_SIGNED_CHAR resized to 2 and
 * received plain, which corrupted the fuzzer's heap; reproducer in
 * docs/TESTING.md).  Such calls keep their datatypes (they are what strata
 * must get right) but get guard zones around every copy of every buffer, the
 * one after as large as the largest buffer the call's layouts make: the
 * host's overrun lands in a zone and counts as the host being wrong, its
 * bytes as usual (strata's are then held to the expected bytes); strata's
 * zones must stay intact where strata served the call. */
static int host_may_overrun(const struct fuzz_call *c)
{
#if defined(OPEN_MPI)
    return c->coll == STRATA_COLL_ALLTOALL;
#else
    (void)c;
    return 0;
#endif
}

enum { GUARD_BEFORE = 4096, GUARD_AFTER_MIN = 4096 };

/* The largest buffer `elems` base elements per block make with any of the
 * call's layouts, over every block of `size`. */
static size_t largest_buffer(const struct fuzz_call *c, size_t elems, int size)
{
    size_t per_elem = 0;
    for (int side = 0; side < 2; side++)
        for (int par = 0; par < 2; par++) {
            const struct fuzz_layout *l = fuzz_layout(c->base, c->shape[side][par]);
            size_t m = (l->extent + (size_t)l->per - 1) / (size_t)l->per;
            if (m > per_elem) per_elem = m;
        }
    size_t blocks = (size_t)(size > 0 ? size : 1);
    if (strata_coll_is_neighbor(c->coll) && blocks < FUZZ_NEIGHBOR_BLOCKS)
        blocks = FUZZ_NEIGHBOR_BLOCKS;
    return elems * per_elem * blocks;
}

/* Bytes of the guard zones of copy k of b that changed (b built with zones);
 * appends where to `out` (len bytes) when there are some. */
static size_t zone_changes(const struct buf *b, int k, char *out, size_t len)
{
    const unsigned char *m = b->mem[k];
    if (!m || !b->zone[1]) return 0;
    size_t before = 0, after = 0, last_before = 0, first_after = 0;
    for (size_t i = 0; i < b->zone[0]; i++)
        if (m[-1 - (ptrdiff_t)i] != fuzz_guard_byte(i, 0)) before++, last_before = i + 1;
    for (size_t i = 0; i < b->zone[1]; i++)
        if (m[b->bytes + i] != fuzz_guard_byte(i, 1) && !after++) first_after = i;
    size_t n = strlen(out);
    if (after)
        n += (size_t)snprintf(out + n, len - n, "%s%zu bytes after %s (%zu bytes), from %zu past "
                              "its end", n ? "; " : "", after, b->name, b->bytes, first_after);
    if (before && n < len)
        snprintf(out + n, len - n, "%s%zu bytes before %s (%zu bytes), as far as %zu before it",
                 n ? "; " : "", before, b->name, b->bytes, last_before);
    return before + after;
}

void fuzz_run(const struct fuzz_call *c, size_t elems, struct fuzz_comm *fc,
              struct fuzz_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->member = fc->comm != MPI_COMM_NULL;
    struct exec x;
    int early[2] = {0, 0};
    int guarded = out->member && host_may_overrun(c);
    char host_outside[512] = "";
    size_t host_changed = 0;
    if (out->member) {
        if (guarded)
            fuzz_guard_zones(GUARD_BEFORE, GUARD_AFTER_MIN + largest_buffer(c, elems, fc->size));
        build(c, elems, fc, &x);
        if (guarded) fuzz_guard_zones(0, 0);
        fuzz_watchdog_arm("the host MPI's call (PMPI_)");
        out->host_rc = invoke(c, &x, 0, &early[0]);
        fuzz_watchdog_disarm();
        if (guarded)
            host_changed = zone_changes(&x.send, HOST, host_outside, sizeof host_outside) +
                           zone_changes(&x.recv, HOST, host_outside, sizeof host_outside);
        int n = 0;
        if (out->host_rc != MPI_SUCCESS) PMPI_Error_string(out->host_rc, out->host_error, &n);
    }
    /* [0]: some rank's host call failed; [1]: some rank's host call passed. */
    int local[2] = {out->member && out->host_rc != MPI_SUCCESS,
                    out->member && out->host_rc == MPI_SUCCESS}, any[2];
    PMPI_Allreduce(local, any, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    out->ran_strata = c->error ? !any[1] : !any[0];
    if (out->member && out->ran_strata) {
        /* With STRATA_STATS (--erroneous sets it), what strata's counters
         * say: a call strata hands to the host after all is not served. */
        int id = strata_call_id(c->coll, (enum strata_coll_form)c->form);
        unsigned long long to_host = strata_stats_local_calls(id, 0);
        fuzz_watchdog_arm("strata's call (MPI_)");
        if (self_test_skip(c, fc)) out->strata_rc = out->host_rc;
        else out->strata_rc = invoke(c, &x, 1, &early[1]);
        fuzz_watchdog_disarm();
        self_test_damage(c, elems, fc, &x);
        if (c->error != FE_COMM)
            out->served = !strata_route_refusal(strata_ctx_get(fc->comm), c->coll) &&
                          strata_stats_local_calls(id, 0) == to_host;
        char h[MPI_MAX_ERROR_STRING], s[MPI_MAX_ERROR_STRING];
        /* A reduction with MPI_DATATYPE_NULL is strata's to answer, with
         * MPI_ERR_TYPE on every host (serve/null_type.h): Open MPI says
         * MPI_ERR_OP there, MPICH 5 ends the job (never drawn on it). */
        int own = c->error == FE_TYPE && fuzz_is_reduction(c->coll) && fc->comm != MPI_COMM_NULL;
        int inter = 0;
        if (own) PMPI_Comm_test_inter(fc->comm, &inter);
        own = own && !inter;
        int strata_class = MPI_SUCCESS;
        if (own) PMPI_Error_class(out->strata_rc, &strata_class);
        if (own ? strata_class != MPI_ERR_TYPE || out->host_rc == MPI_SUCCESS
                : out->strata_rc != out->host_rc) {
            snprintf(out->report, sizeof out->report,
                     "strata returned \"%.400s\" where the host MPI returned \"%.400s\"",
                     class_name(out->strata_rc, s),
                     class_name(out->host_rc, h));
            out->mismatch = 1;
        } else if (early[1]) {
            snprintf(out->report, sizeof out->report,
                     "strata's MPI_Barrier returned before every rank had entered it");
            out->mismatch = 1;
        } else if (!c->error) {
            compare(c, elems, fc, &x, out);
        }
        char outside[512] = "";
        if (guarded && zone_changes(&x.send, STRATA, outside, sizeof outside) +
                               zone_changes(&x.recv, STRATA, outside, sizeof outside)) {
            /* Not served: the host MPI ran the call behind strata. */
            if (out->served && !out->mismatch)
                snprintf(out->report, sizeof out->report, "strata changed %.900s", outside);
            out->mismatch |= out->served;
            if (!out->served && !host_changed) {
                host_changed = 1;
                snprintf(host_outside, sizeof host_outside, "behind strata, %.440s", outside);
            }
        }
    }
    if (host_changed) {
        /* The host MPI wrote outside a buffer (host_may_overrun). */
        size_t n = strlen(out->report);
        if (out->mismatch)
            snprintf(out->report + n, sizeof out->report - n, " (the host MPI also changed %s)",
                     host_outside);
        else
            snprintf(out->report + n, sizeof out->report - n, "%sthe host MPI changed %s",
                     n ? "; " : "", host_outside);
        out->host_wrong |= !out->mismatch;
    }
    if (out->member) release(c, &x);
}

void fuzz_build(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                struct exec *x)
{
    build(c, elems, fc, x);
}

int fuzz_invoke(const struct fuzz_call *c, const struct exec *x, int strata, int *early_exit)
{
    return invoke(c, x, strata, early_exit);
}

void fuzz_release(const struct fuzz_call *c, struct exec *x) { release(c, x); }
