/* The nonblocking and persistent forms of the newer collectives (issue 17
 * over issue 16's): MPI_Ireduce_scatter_block, MPI_Ireduce_scatter,
 * MPI_Iscan, MPI_Iexscan, MPI_Igatherv, MPI_Iscatterv, MPI_Iallgatherv,
 * MPI_Ialltoallv and their _init forms, each result checked against the
 * host MPI's blocking form (PMPI_) run on the same input:
 *   - many outstanding at once on one communicator (all eight mixed, with
 *     in-place forms, every root, uneven counts with one rank's empty),
 *     completed in reverse with MPI_Wait, with Waitany, by Testsome polling
 *     and with Waitall;
 *   - a second communicator (a split) and a blocking call between posts;
 *   - persistent requests of all eight started many times, each start with
 *     new contents in the registered buffers;
 *   - with --stats, STRATA_STATS counts under MPI_Igatherv, MPI_Scan_init. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(name) MPI_##name##_init
#endif

#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

enum { RSB, RS, SCAN, EXSCAN, GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, NCOLL };
static const int coll_id[NCOLL] = {
    STRATA_COLL_REDUCE_SCATTER_BLOCK, STRATA_COLL_REDUCE_SCATTER, STRATA_COLL_SCAN,
    STRATA_COLL_EXSCAN, STRATA_COLL_GATHERV, STRATA_COLL_SCATTERV, STRATA_COLL_ALLGATHERV,
    STRATA_COLL_ALLTOALLV};

/* One call: its arguments, buffers and the expected result. */
struct op {
    int coll, in_place, root, base, n, r;
    MPI_Op mop;
    int *scounts, *sdispls, *rcounts, *rdispls; /* [n] each */
    int scount, rcount;
    int *send, *recv, *want;
    size_t nsend, nrecv;
};

/* Rank q's block in the rooted and gathered v-collectives: uneven, rank
 * 1 % n's empty. */
static int vcount(const struct op *o, int q) { return q == 1 % o->n ? 0 : o->base + 3 * q; }
/* Alltoallv: what q sends to j. */
static int acount(const struct op *o, int q, int j)
{
    return (q + 2 * j) % 3 == 1 ? 0 : o->base + q + 2 * j;
}

/* Displacements in reverse rank order with a gap of 2 after each block;
 * returns the span. */
static size_t layout(int n, const int *count, int *displ)
{
    size_t at = 0;
    for (int q = n - 1; q >= 0; q--) {
        displ[q] = (int)at;
        at += (size_t)count[q] + 2;
    }
    return at;
}

static void fill(int *v, size_t n, int seed, int r)
{
    for (size_t i = 0; i < n; i++) v[i] = (int)((seed * 7919 + (int)i * 31 + r * 1000003) % 100003) - 50000;
}

static int *ints(size_t n) { return calloc(n ? n : 1, sizeof(int)); }

/* Runs the host's blocking form of o on its current buffers into want
 * (a copy of recv, and of send where the call is in place). */
static void expect(struct op *o, MPI_Comm comm)
{
    int *s = ints(o->nsend);
    memcpy(s, o->send, sizeof(int) * o->nsend);
    memcpy(o->want, o->recv, sizeof(int) * o->nrecv);
    const void *sb = o->in_place ? MPI_IN_PLACE : s;
    void *rb = o->want;
    int at_root = o->r == o->root;
    switch (o->coll) {
    case RSB: PMPI_Reduce_scatter_block(sb, rb, o->base, MPI_INT, o->mop, comm); break;
    case RS: PMPI_Reduce_scatter(sb, rb, o->rcounts, MPI_INT, o->mop, comm); break;
    case SCAN: PMPI_Scan(sb, rb, o->base, MPI_INT, o->mop, comm); break;
    case EXSCAN: PMPI_Exscan(sb, rb, o->base, MPI_INT, o->mop, comm); break;
    case GATHERV:
        PMPI_Gatherv(o->in_place && at_root ? MPI_IN_PLACE : s, o->scount, MPI_INT, rb, o->rcounts,
                     o->rdispls, MPI_INT, o->root, comm);
        break;
    case SCATTERV:
        PMPI_Scatterv(s, o->scounts, o->sdispls, MPI_INT, o->in_place && at_root ? MPI_IN_PLACE : rb,
                      o->rcount, MPI_INT, o->root, comm);
        break;
    case ALLGATHERV:
        PMPI_Allgatherv(sb, o->scount, MPI_INT, rb, o->rcounts, o->rdispls, MPI_INT, comm);
        break;
    default:
        PMPI_Alltoallv(sb, o->scounts, o->sdispls, MPI_INT, rb, o->rcounts, o->rdispls, MPI_INT,
                       comm);
        break;
    }
    free(s);
}

/* Sets o up on comm: arguments, buffers filled from seed, expected result. */
static void prepare(struct op *o, int coll, int in_place, int root, int base, int seed,
                    MPI_Comm comm)
{
    memset(o, 0, sizeof *o);
    MPI_Comm_size(comm, &o->n);
    MPI_Comm_rank(comm, &o->r);
    int n = o->n, r = o->r;
    o->coll = coll;
    o->in_place = in_place;
    o->root = root;
    o->base = base;
    o->mop = seed % 3 == 0 ? MPI_MAX : MPI_SUM;
    o->scounts = ints((size_t)n);
    o->sdispls = ints((size_t)n);
    o->rcounts = ints((size_t)n);
    o->rdispls = ints((size_t)n);
    switch (coll) {
    case RSB: o->nsend = (size_t)base * (size_t)n; o->nrecv = in_place ? o->nsend : (size_t)base; break;
    case RS:
        for (int q = 0; q < n; q++) o->rcounts[q] = vcount(o, q), o->nsend += (size_t)o->rcounts[q];
        o->nrecv = in_place ? o->nsend : (size_t)o->rcounts[r];
        break;
    case SCAN: case EXSCAN: o->nsend = o->nrecv = (size_t)base; break;
    case GATHERV:
        for (int q = 0; q < n; q++) o->rcounts[q] = vcount(o, q);
        o->nrecv = layout(n, o->rcounts, o->rdispls);
        o->scount = vcount(o, r);
        o->nsend = (size_t)o->scount;
        break;
    case SCATTERV:
        for (int q = 0; q < n; q++) o->scounts[q] = vcount(o, q);
        o->nsend = layout(n, o->scounts, o->sdispls);
        o->rcount = vcount(o, r);
        o->nrecv = (size_t)o->rcount;
        break;
    case ALLGATHERV:
        for (int q = 0; q < n; q++) o->rcounts[q] = vcount(o, q);
        o->nrecv = layout(n, o->rcounts, o->rdispls);
        o->scount = vcount(o, r);
        o->nsend = (size_t)o->scount;
        break;
    default:
        for (int j = 0; j < n; j++) o->scounts[j] = acount(o, r, j), o->rcounts[j] = acount(o, j, r);
        if (in_place) /* the standard: in place, what goes to j equals what comes from j */
            for (int j = 0; j < n; j++) o->scounts[j] = o->rcounts[j] = acount(o, r, j) + acount(o, j, r);
        o->nsend = layout(n, o->scounts, o->sdispls);
        o->nrecv = layout(n, o->rcounts, o->rdispls);
        break;
    }
    o->send = ints(o->nsend);
    o->recv = ints(o->nrecv);
    o->want = ints(o->nrecv);
    fill(o->send, o->nsend, seed, r);
    fill(o->recv, o->nrecv, seed + 1, r);
    expect(o, comm);
}

static int post(struct op *o, MPI_Comm comm, MPI_Request *req)
{
    const void *sb = o->in_place ? MPI_IN_PLACE : o->send;
    int at_root = o->r == o->root;
    switch (o->coll) {
    case RSB: return MPI_Ireduce_scatter_block(sb, o->recv, o->base, MPI_INT, o->mop, comm, req);
    case RS: return MPI_Ireduce_scatter(sb, o->recv, o->rcounts, MPI_INT, o->mop, comm, req);
    case SCAN: return MPI_Iscan(sb, o->recv, o->base, MPI_INT, o->mop, comm, req);
    case EXSCAN: return MPI_Iexscan(sb, o->recv, o->base, MPI_INT, o->mop, comm, req);
    case GATHERV:
        return MPI_Igatherv(o->in_place && at_root ? MPI_IN_PLACE : o->send, o->scount, MPI_INT,
                            o->recv, o->rcounts, o->rdispls, MPI_INT, o->root, comm, req);
    case SCATTERV:
        return MPI_Iscatterv(o->send, o->scounts, o->sdispls, MPI_INT,
                             o->in_place && at_root ? MPI_IN_PLACE : o->recv, o->rcount, MPI_INT,
                             o->root, comm, req);
    case ALLGATHERV:
        return MPI_Iallgatherv(sb, o->scount, MPI_INT, o->recv, o->rcounts, o->rdispls, MPI_INT,
                               comm, req);
    default:
        return MPI_Ialltoallv(sb, o->scounts, o->sdispls, MPI_INT, o->recv, o->rcounts,
                              o->rdispls, MPI_INT, comm, req);
    }
}

#ifdef INIT
static int init(struct op *o, MPI_Comm comm, MPI_Request *req)
{
    const void *sb = o->in_place ? MPI_IN_PLACE : o->send;
    int at_root = o->r == o->root;
    MPI_Info i = MPI_INFO_NULL;
    switch (o->coll) {
    case RSB: return INIT(Reduce_scatter_block)(sb, o->recv, o->base, MPI_INT, o->mop, comm, i, req);
    case RS: return INIT(Reduce_scatter)(sb, o->recv, o->rcounts, MPI_INT, o->mop, comm, i, req);
    case SCAN: return INIT(Scan)(sb, o->recv, o->base, MPI_INT, o->mop, comm, i, req);
    case EXSCAN: return INIT(Exscan)(sb, o->recv, o->base, MPI_INT, o->mop, comm, i, req);
    case GATHERV:
        return INIT(Gatherv)(o->in_place && at_root ? MPI_IN_PLACE : o->send, o->scount, MPI_INT,
                             o->recv, o->rcounts, o->rdispls, MPI_INT, o->root, comm, i, req);
    case SCATTERV:
        return INIT(Scatterv)(o->send, o->scounts, o->sdispls, MPI_INT,
                              o->in_place && at_root ? MPI_IN_PLACE : o->recv, o->rcount, MPI_INT,
                              o->root, comm, i, req);
    case ALLGATHERV:
        return INIT(Allgatherv)(sb, o->scount, MPI_INT, o->recv, o->rcounts, o->rdispls, MPI_INT,
                                comm, i, req);
    default:
        return INIT(Alltoallv)(sb, o->scounts, o->sdispls, MPI_INT, o->recv, o->rcounts,
                               o->rdispls, MPI_INT, comm, i, req);
    }
}
#endif

static const char *names[NCOLL] = {"Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan",
                                   "Gatherv", "Scatterv", "Allgatherv", "Alltoallv"};

static void check(const struct op *o, const char *what)
{
    size_t n = o->nrecv;
    if (o->coll == EXSCAN && o->r == 0) n = 0; /* undefined there */
    if ((o->coll == RS || o->coll == RSB) && o->in_place)
        n = o->coll == RS ? (size_t)o->rcounts[o->r] : (size_t)o->base; /* the rest is undefined */
    for (size_t i = 0; i < n; i++)
        CHECK(o->recv[i] == o->want[i],
              "%s: I%s%s root %d base %d: element %zu of %zu is %d, want %d", what,
              names[o->coll], o->in_place ? " in place" : "", o->root, o->base, i, o->nrecv,
              o->recv[i], o->want[i]);
}

static void drop(struct op *o)
{
    free(o->send);
    free(o->recv);
    free(o->want);
    free(o->scounts);
    free(o->sdispls);
    free(o->rcounts);
    free(o->rdispls);
}

static void complete(int mode, int n, MPI_Request *req)
{
    int idx, out, done = 0, *ind = malloc(sizeof(int) * (size_t)n);
    /* Real status arrays: MPICH's header marks MPI_STATUSES_IGNORE as an
     * array of size 0 and GCC then warns. */
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)n);
    switch (mode % 4) {
    case 0:
        for (int i = n - 1; i >= 0; i--) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        break;
    case 1:
        for (int i = 0; i < n; i++) {
            MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE);
            CHECK(idx != MPI_UNDEFINED, "Waitany found nothing with %d left", n - i);
        }
        break;
    case 2:
        while (done < n) {
            MPI_Testsome(n, req, &out, ind, st);
            CHECK(out != MPI_UNDEFINED, "Testsome: undefined with %d left", n - done);
            done += out;
        }
        break;
    default: MPI_Waitall(n, req, st); break;
    }
    free(ind);
    free(st);
}

/* Many outstanding on comm: every collective, in place or not, roots and
 * sizes varying with seed; completed with `mode`. */
static void batch(MPI_Comm comm, int mode, int seed)
{
    enum { N = 16 };
    static const int bases[] = {1, 7, 300, 5000, 20000};
    int n;
    MPI_Comm_size(comm, &n);
    struct op o[N];
    MPI_Request req[N];
    for (int i = 0; i < N; i++)
        prepare(&o[i], (seed + i) % NCOLL, (i / NCOLL + seed) % 2, (seed + i) % n,
                bases[(seed + 3 * i) % 5], seed * 100 + i, comm);
    for (int i = 0; i < N; i++)
        CHECK(post(&o[i], comm, &req[i]) == MPI_SUCCESS, "post %s", names[o[i].coll]);
    complete(mode, N, req);
    for (int i = 0; i < N; i++) {
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d after completion", i);
        check(&o[i], "batch");
        drop(&o[i]);
    }
}

/* Two communicators with operations pending on both, and a blocking
 * MPI_Allgatherv on the first between posts. */
static void two_comms(MPI_Comm c1, MPI_Comm c2, int seed)
{
    struct op a, b, c;
    prepare(&a, ALLTOALLV, 0, 0, 500, seed, c1);
    prepare(&b, SCAN, 0, 0, 3000, seed + 1, c2);
    MPI_Request req[3];
    post(&a, c1, &req[0]);
    post(&b, c2, &req[1]);
    prepare(&c, ALLGATHERV, 0, 0, 40, seed + 2, c1);
    int *got = ints(c.nrecv);
    memcpy(got, c.recv, sizeof(int) * c.nrecv);
    MPI_Allgatherv(c.send, c.scount, MPI_INT, got, c.rcounts, c.rdispls, MPI_INT, c1);
    for (size_t i = 0; i < c.nrecv; i++)
        CHECK(got[i] == c.want[i], "blocking Allgatherv between posts: element %zu", i);
    post(&c, c1, &req[2]);
    MPI_Status st[3];
    MPI_Waitall(3, req, st);
    check(&a, "two_comms");
    check(&b, "two_comms");
    check(&c, "two_comms");
    free(got);
    drop(&a);
    drop(&b);
    drop(&c);
}

#ifdef INIT
/* Every collective's persistent form, started `starts` times, new contents
 * in the registered buffers before each start. */
static void persistent(MPI_Comm comm, int starts)
{
    enum { NP = 2 * NCOLL };
    struct op o[NP];
    MPI_Request req[NP];
    int n;
    MPI_Comm_size(comm, &n);
    for (int i = 0; i < NP; i++) {
        prepare(&o[i], i % NCOLL, i / NCOLL, i % n, i < NCOLL ? 9 + i : 2000, i, comm);
        CHECK(init(&o[i], comm, &req[i]) == MPI_SUCCESS, "%s_init", names[i % NCOLL]);
    }
    for (int s = 0; s < starts; s++) {
        for (int i = 0; i < NP; i++) {
            fill(o[i].send, o[i].nsend, s * 31 + i, o[i].r);
            fill(o[i].recv, o[i].nrecv, s * 17 + i, o[i].r);
            expect(&o[i], comm);
        }
        if (s % 2) MPI_Startall(NP, req);
        else
            for (int i = NP - 1; i >= 0; i--) MPI_Start(&req[i]);
        complete(s, NP, req);
        for (int i = 0; i < NP; i++) {
            CHECK(req[i] != MPI_REQUEST_NULL, "persistent request %d freed by completion", i);
            check(&o[i], "persistent");
        }
    }
    for (int i = 0; i < NP; i++) {
        MPI_Request_free(&req[i]);
        drop(&o[i]);
    }
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, stats = argc > 1 && !strcmp(argv[1], "--stats");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    for (int mode = 0; mode < 8; mode++) batch(MPI_COMM_WORLD, mode, mode);
    for (int mode = 0; mode < 4; mode++) batch(half, mode, mode + 3);
    for (int s = 0; s < 2; s++) two_comms(dup, half, s);
#ifdef INIT
    persistent(dup, 25);
#endif
    if (stats) {
        for (int c = 0; c < NCOLL; c++) {
            unsigned long long nb = strata_stats_local_calls(
                strata_call_id(coll_id[c], STRATA_FORM_NONBLOCKING), 1);
            CHECK(nb >= 8, "STRATA_STATS: %s served %llu times",
                  strata_call_name(strata_call_id(coll_id[c], STRATA_FORM_NONBLOCKING)), nb);
#ifdef INIT
            unsigned long long p = strata_stats_local_calls(
                strata_call_id(coll_id[c], STRATA_FORM_PERSISTENT), 1);
            CHECK(p == 2, "STRATA_STATS: %s counted %llu, want 2 (one per request)",
                  strata_call_name(strata_call_id(coll_id[c], STRATA_FORM_PERSISTENT)), p);
#endif
        }
        CHECK(!strcmp(strata_call_name(strata_call_id(STRATA_COLL_GATHERV,
                                                      STRATA_FORM_NONBLOCKING)), "MPI_Igatherv"),
              "name of MPI_Igatherv");
        CHECK(!strcmp(strata_call_name(strata_call_id(STRATA_COLL_SCAN, STRATA_FORM_PERSISTENT)),
                      "MPI_Scan_init"), "name of MPI_Scan_init");
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    test_pass("nonblocking_more");
    MPI_Finalize();
    return 0;
}
