/* Count mismatches between ranks (issue 29): an erroneous program in which
 * one rank passes a count half or double the others' must not make strata
 * write past anyone's buffer, hang or crash.  With MPI_ERRORS_RETURN on the
 * communicator, for each of MPI_Bcast, MPI_Scatter, MPI_Gather, MPI_Gatherv,
 * MPI_Scatterv, MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv,
 * MPI_Alltoallw, MPI_Reduce and MPI_Allreduce, blocks of 16 B to 1 MiB (the small paths and
 * the single-copy ones), the odd rank the root or another rank, roots first
 * and last, each algorithm forced in turn and the model's choice, on a
 * duplicate of MPI_COMM_WORLD and on a split with the ranks reversed:
 *   1. no byte of the guard zones around any send or receive buffer changes
 *      on any rank (the zones are at least as large as the whole buffer at
 *      the larger count, so any overrun lands in them), and no byte of a
 *      send buffer; a receive buffer may hold what strata copied (at most
 *      the smaller count: a small call copies through the segment and
 *      reports after) or nothing (a call refused before any data moved);
 *   2. each rank's error class: MPI_ERR_TRUNCATE where more would arrive
 *      than it posted, an error (any class) where less would arrive;
 *      MPI_SUCCESS for a rank that only sends; a rank whose receives agree
 *      with what is sent to it while other ranks disagree (a bystander, or
 *      a Scatter root's own block) gets MPI_SUCCESS only with every element
 *      it receives right, else an error (strata refused the call before
 *      anything moved);
 *   3. the same collective with matching counts right after it succeeds,
 *      is served by strata (STRATA_STATS route counters), and gives the
 *      values computed here independently, guards intact.
 * Every call returns on every rank, or ctest's timeout reports the hang.
 * A self-test of the checkers (a changed guard byte, a wrong element, the
 * expected classes) runs first, so the test cannot pass by checking nothing.
 *
 *   test_mismatch [--algos=all|model] [--bytes=16,208,...] [--comms=world,reversed]
 *                 [--case=GLOB] [--control] [--guards-only] [--keep-going] [--verbose]
 *                 [--nonblocking]
 *
 * --algos=model leaves the choice to the model (or to STRATA_<COLL>_ALGORITHM
 * from the environment); --case runs only the cases whose name (as printed
 * by --verbose, e.g. "MPI_Gather 65536B world root=0 odd=root half
 * parallel-write") matches the fnmatch(3) pattern; --control passes matching
 * counts everywhere (the harness itself must then pass on any build);
 * --guards-only skips the class and data checks (only the guard zones);
 * --nonblocking calls the MPI_I forms and waits (the error class through
 * the communicator's handler, which records it);
 * --keep-going reports every failure and exits 1 at the end instead of
 * aborting at the first (to survey a build). */
#include <fnmatch.h>
#include <malloc.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/select.h"
#include "route_check.h"
#include "testutil.h"
#include "util/colls.h"

enum { GUARD = 64 * 1024, EVERYONE = 63, MAX_RANKS = 63 };
static const unsigned char INTERIOR = 0xC3; /* a receive buffer's bytes before the call */

static int wrank, keep_going, verbose, control, guards_only, all_algos = 1;
static const char *comms_opt = "world,reversed", *case_glob = "*";
static long failures, cases;
static size_t sizes[16] = {16, 208, 4096, 65536, 1048576};
static int nsizes = 5;

/* Reports a failure and counts it; settle() acts on the count. */
static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL rank %d: ", wrank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    va_end(ap);
    failures++;
}

/* After each call's checks: every failure of that call has been reported;
 * stop the job there (unless --keep-going), as a corrupted communicator
 * may hang the next call and hide them. */
static void settle(void)
{
    if (failures && !keep_going) MPI_Abort(MPI_COMM_WORLD, 3);
}

/* ---- Buffers with guard zones ------------------------------------------ */

/* data[-before .. len + after) is allocated; the zones around data hold a
 * position-dependent byte pattern (so that a copy of one zone into another
 * shows too) and snap the whole allocation as it was before the call. */
struct guarded {
    unsigned char *alloc, *snap, *data;
    size_t before, len, after;
};

/* The guard pattern: a period of 4093 bytes (prime: no copy of the zone
 * shifted by a whole number of elements or pages matches it). */
enum { PERIOD = 4093 };

static void fill_guard(unsigned char *z, size_t n)
{
    size_t have = n < PERIOD ? n : PERIOD;
    for (size_t o = 0; o < have; o++) z[o] = (unsigned char)(((o * 2654435761u) >> 13) ^ 0x5A);
    for (; have < n; have *= 2) memcpy(z + have, z, have <= n - have ? have : n - have);
}

static void guarded_alloc(struct guarded *g, size_t len, size_t after)
{
    g->before = GUARD;
    g->len = len;
    g->after = after;
    size_t total = g->before + len + after;
    g->alloc = malloc(total);
    g->snap = malloc(total);
    CHECK(g->alloc && g->snap, "out of memory (%zu bytes)", total);
    g->data = g->alloc + g->before;
    fill_guard(g->alloc, g->before);
    memset(g->data, INTERIOR, len);
    fill_guard(g->data + len, after);
}

/* Once the data is in place: what every byte must stay. */
static void guarded_snap(struct guarded *g) { memcpy(g->snap, g->alloc, g->before + g->len + g->after); }

static void guarded_free(struct guarded *g)
{
    free(g->alloc);
    free(g->snap);
}

/* Changed bytes of alloc[from, to): how many, and the first (SIZE_MAX: none). */
struct change {
    size_t first, n;
};

static struct change changed(const struct guarded *g, size_t from, size_t to)
{
    struct change c = {SIZE_MAX, 0};
    if (to <= from || !memcmp(g->alloc + from, g->snap + from, to - from)) return c;
    for (size_t o = from; o < to; o++)
        if (g->alloc[o] != g->snap[o]) {
            if (c.first == SIZE_MAX) c.first = o;
            c.n++;
        }
    return c;
}

/* The zone before data, the data, the zone after it. */
static struct change zone_before(const struct guarded *g) { return changed(g, 0, g->before); }
static struct change zone_data(const struct guarded *g) { return changed(g, g->before, g->before + g->len); }
static struct change zone_after(const struct guarded *g)
{
    return changed(g, g->before + g->len, g->before + g->len + g->after);
}

/* Fails if a guard zone changed (and, with data, the data itself).
 * Offsets are from the start of the posted buffer. */
static void check_unchanged(const struct guarded *g, int data, const char *buf, const char *what)
{
    struct change b = zone_before(g), a = zone_after(g);
    if (b.n)
        failf("%s: %zu bytes of the guard zone before the %s buffer changed, the first at offset "
              "%lld",
              what, b.n, buf, (long long)b.first - (long long)g->before);
    if (a.n)
        failf("%s: %zu bytes of the guard zone after the %s buffer (%zu bytes) changed, the first "
              "at offset %zu (%zu past its end)",
              what, a.n, buf, g->len, a.first - g->before, a.first - g->before - g->len);
    if (!data) return;
    struct change d = zone_data(g);
    if (d.n)
        failf("%s: data moved although ranks disagree: %zu of the %zu bytes of the %s buffer "
              "changed, the first at offset %zu",
              what, d.n, g->len, buf, d.first - g->before);
}

/* ---- The collectives, one row each -------------------------------------- */

/* Which ranks send to which (for the expected error classes). */
enum flow { ROOT_TO_ALL, ALL_TO_ROOT, ALL_TO_ALL };
/* How many blocks of the rank's count a buffer holds. */
enum blocks { NONE, ONE, ONE_AT_ROOT, ALL_AT_ROOT, ALL };

/* One rank's arguments of one call. */
struct call {
    MPI_Comm comm;
    int rank, size, root;
    int count;                 /* elements (doubles) per block, this rank's */
    int counts[MAX_RANKS];     /* v-forms: every block `count` ... */
    int displs[MAX_RANKS];     /* ... in reverse rank order */
    struct guarded send, recv; /* MPI_Bcast: recv is the buffer */
};

struct row {
    const char *name;
    enum strata_coll coll;
    enum flow flow;
    enum blocks sblocks, rblocks;
    int personal; /* a block per destination (Scatter, Alltoall), else one for all */
    int sum;      /* MPI_SUM of every rank's block */
    int (*call)(struct call *x);
};

/* --nonblocking: each call is the MPI_I form and its MPI_Wait.  strata
 * reports a nonblocking operation's error through the communicator's
 * handler when it completes (the request itself completes): the handler
 * of this mode records the class, which the call's result then is. */
static int nonblocking, recorded;
static void record_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    recorded = *code;
}
static int waited(int rc, MPI_Request *req)
{
    if (rc == MPI_SUCCESS) rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? recorded : rc;
}
#define FORM(call, icall) \
    (nonblocking ? (recorded = MPI_SUCCESS, waited(icall, &req)) : (call))

#define S x->send.data
#define R x->recv.data
#define D MPI_DOUBLE
static int do_bcast(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Bcast(R, x->count, D, x->root, x->comm),
                MPI_Ibcast(R, x->count, D, x->root, x->comm, &req));
}
static int do_scatter(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Scatter(S, x->count, D, R, x->count, D, x->root, x->comm),
                MPI_Iscatter(S, x->count, D, R, x->count, D, x->root, x->comm, &req));
}
static int do_gather(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Gather(S, x->count, D, R, x->count, D, x->root, x->comm),
                MPI_Igather(S, x->count, D, R, x->count, D, x->root, x->comm, &req));
}
static int do_gatherv(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Gatherv(S, x->count, D, R, x->counts, x->displs, D, x->root, x->comm),
                MPI_Igatherv(S, x->count, D, R, x->counts, x->displs, D, x->root, x->comm, &req));
}
static int do_scatterv(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Scatterv(S, x->counts, x->displs, D, R, x->count, D, x->root, x->comm),
                MPI_Iscatterv(S, x->counts, x->displs, D, R, x->count, D, x->root, x->comm, &req));
}
static int do_allgather(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Allgather(S, x->count, D, R, x->count, D, x->comm),
                MPI_Iallgather(S, x->count, D, R, x->count, D, x->comm, &req));
}
static int do_allgatherv(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Allgatherv(S, x->count, D, R, x->counts, x->displs, D, x->comm),
                MPI_Iallgatherv(S, x->count, D, R, x->counts, x->displs, D, x->comm, &req));
}
static int do_alltoall(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Alltoall(S, x->count, D, R, x->count, D, x->comm),
                MPI_Ialltoall(S, x->count, D, R, x->count, D, x->comm, &req));
}
static int do_alltoallv(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Alltoallv(S, x->counts, x->displs, D, R, x->counts, x->displs, D, x->comm),
                MPI_Ialltoallv(S, x->counts, x->displs, D, R, x->counts, x->displs, D, x->comm,
                               &req));
}
/* Alltoallw as Alltoallv: every block a double, at its displacement in bytes. */
static int do_alltoallw(struct call *x)
{
    MPI_Request req;
    int bytes[MAX_RANKS];
    MPI_Datatype types[MAX_RANKS];
    for (int j = 0; j < x->size; j++) {
        bytes[j] = x->displs[j] * (int)sizeof(double);
        types[j] = D;
    }
    return FORM(MPI_Alltoallw(S, x->counts, bytes, types, R, x->counts, bytes, types, x->comm),
                MPI_Ialltoallw(S, x->counts, bytes, types, R, x->counts, bytes, types, x->comm,
                               &req));
}
static int do_reduce(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Reduce(S, R, x->count, D, MPI_SUM, x->root, x->comm),
                MPI_Ireduce(S, R, x->count, D, MPI_SUM, x->root, x->comm, &req));
}
static int do_allreduce(struct call *x)
{
    MPI_Request req;
    return FORM(MPI_Allreduce(S, R, x->count, D, MPI_SUM, x->comm),
                MPI_Iallreduce(S, R, x->count, D, MPI_SUM, x->comm, &req));
}
#undef S
#undef R
#undef D

static const struct row rows[] = {
    {"MPI_Bcast", STRATA_COLL_BCAST, ROOT_TO_ALL, NONE, ONE, 0, 0, do_bcast},
    {"MPI_Scatter", STRATA_COLL_SCATTER, ROOT_TO_ALL, ALL_AT_ROOT, ONE, 1, 0, do_scatter},
    {"MPI_Gather", STRATA_COLL_GATHER, ALL_TO_ROOT, ONE, ALL_AT_ROOT, 0, 0, do_gather},
    {"MPI_Gatherv", STRATA_COLL_GATHERV, ALL_TO_ROOT, ONE, ALL_AT_ROOT, 0, 0, do_gatherv},
    {"MPI_Scatterv", STRATA_COLL_SCATTERV, ROOT_TO_ALL, ALL_AT_ROOT, ONE, 1, 0, do_scatterv},
    {"MPI_Allgather", STRATA_COLL_ALLGATHER, ALL_TO_ALL, ONE, ALL, 0, 0, do_allgather},
    {"MPI_Allgatherv", STRATA_COLL_ALLGATHERV, ALL_TO_ALL, ONE, ALL, 0, 0, do_allgatherv},
    {"MPI_Alltoall", STRATA_COLL_ALLTOALL, ALL_TO_ALL, ALL, ALL, 1, 0, do_alltoall},
    {"MPI_Alltoallv", STRATA_COLL_ALLTOALLV, ALL_TO_ALL, ALL, ALL, 1, 0, do_alltoallv},
    {"MPI_Alltoallw", STRATA_COLL_ALLTOALLW, ALL_TO_ALL, ALL, ALL, 1, 0, do_alltoallw},
    {"MPI_Reduce", STRATA_COLL_REDUCE, ALL_TO_ROOT, ONE, ONE_AT_ROOT, 0, 1, do_reduce},
    {"MPI_Allreduce", STRATA_COLL_ALLREDUCE, ALL_TO_ALL, ONE, ONE, 0, 1, do_allreduce},
};
enum { NROWS = sizeof rows / sizeof rows[0] };

static int rooted(const struct row *w) { return w->flow != ALL_TO_ALL; }

static int nblocks(enum blocks b, int rank, int size, int root)
{
    switch (b) {
    case NONE: return 0;
    case ONE: return 1;
    case ONE_AT_ROOT: return rank == root;
    case ALL_AT_ROOT: return rank == root ? size : 0;
    default: return size;
    }
}

/* The rank whose block sits at position p of a multi-block buffer: the
 * v-forms lay blocks out in reverse rank order. */
static int peer_at(const struct row *w, int p, int size)
{
    return strata_coll_is_v(strata_coll_engine(w->coll)) ? size - 1 - p : p;
}

/* Element i of what rank s sends rank r (EVERYONE: a block for all).
 * Integers below 2^32, so sums of a few are exact in a double. */
static double datum(int s, int r, int i) { return ((double)(s * 64 + r)) * 1048576.0 + i; }

/* Element k of a correct call's receive buffer on rank me. */
static double expected(const struct row *w, const struct call *x, size_t k)
{
    int i = (int)(k % (size_t)x->count), p = (int)(k / (size_t)x->count);
    if (w->sum) {
        double s = 0;
        for (int r = 0; r < x->size; r++) s += datum(r, EVERYONE, i);
        return s;
    }
    int from = nblocks(w->rblocks, x->rank, x->size, x->root) == 1 ? x->root : peer_at(w, p, x->size);
    return datum(from, w->personal ? x->rank : EVERYONE, i);
}

/* Elements of the receive buffer on this rank that differ from expected(). */
static size_t wrong_elements(const struct row *w, const struct call *x, size_t *first)
{
    const double *got = (const double *)x->recv.data;
    size_t n = x->recv.len / sizeof(double), bad = 0;
    *first = SIZE_MAX;
    for (size_t k = 0; k < n; k++)
        if (got[k] != expected(w, x, k)) {
            if (!bad) *first = k;
            bad++;
        }
    return bad;
}

/* The zone after a buffer of `blocks` blocks: the whole buffer at the larger
 * count `maxc`, so that any overrun by what peers believe lands in it. */
static size_t zone_for(int blocks, int maxc)
{
    size_t most = (size_t)blocks * maxc * sizeof(double);
    return most > GUARD ? most : GUARD;
}

/* This rank's buffers for a call with `count` elements per block. */
static void setup(const struct row *w, struct call *x, int count, int maxc)
{
    x->count = count;
    for (int j = 0; j < x->size; j++) {
        x->counts[j] = count;
        x->displs[j] = (x->size - 1 - j) * count;
    }
    int sb = nblocks(w->sblocks, x->rank, x->size, x->root);
    int rb = nblocks(w->rblocks, x->rank, x->size, x->root);
    size_t block = (size_t)count * sizeof(double);
    guarded_alloc(&x->send, sb * block, zone_for(sb, maxc));
    guarded_alloc(&x->recv, rb * block, zone_for(rb, maxc));
    double *s = (double *)x->send.data;
    for (size_t k = 0; k < (size_t)sb * count; k++) {
        int p = (int)(k / (size_t)count), i = (int)(k % (size_t)count);
        s[k] = datum(x->rank, w->personal ? peer_at(w, p, x->size) : EVERYONE, i);
    }
    if (w->sblocks == NONE && x->rank == x->root) /* MPI_Bcast's root sends its buffer */
        for (int i = 0; i < count; i++) ((double *)x->recv.data)[i] = datum(x->rank, EVERYONE, i);
    guarded_snap(&x->send);
    guarded_snap(&x->recv);
}

static void teardown(struct call *x)
{
    guarded_free(&x->send);
    guarded_free(&x->recv);
}

/* ---- One case ------------------------------------------------------------ */

struct mcase {
    const struct row *w;
    MPI_Comm comm;
    int root, odd;      /* odd: the rank whose count differs */
    int count, odd_count;
    char name[192];
};

static int count_of(const struct mcase *m, int r) { return r == m->odd ? m->odd_count : m->count; }

/* Whether rank s sends to rank r in this collective (s != r). */
static int flows(enum flow f, int s, int r, int root)
{
    return f == ALL_TO_ALL || (f == ROOT_TO_ALL && s == root) || (f == ALL_TO_ROOT && r == root);
}

/* Whether rank me receives anything in the case. */
static int receives_in(const struct mcase *m, int me, int size)
{
    return nblocks(m->w->rblocks, me, size, m->root) > 0 &&
           !(m->w->sblocks == NONE && me == m->root); /* MPI_Bcast's root sends */
}

/* A bystander: me receives, every count sent to it matches its own, and
 * yet the ranks disagree (MPI_SUCCESS with its data right, or an error). */
enum { BYSTANDER = -1 };

/* The class rank me must get: MPI_ERR_TRUNCATE where a peer sends it more
 * than it posted, MPI_ERR_OTHER (standing for any error) where one sends
 * less, BYSTANDER (above), MPI_SUCCESS for a rank that only sends or when
 * every rank agrees. */
static int expected_class(const struct mcase *m, int me, int size)
{
    int more = 0, less = 0;
    for (int s = 0; s < size; s++) {
        if (s == me || !flows(m->w->flow, s, me, m->root)) continue;
        more |= count_of(m, s) > count_of(m, me);
        less |= count_of(m, s) < count_of(m, me);
    }
    if (more) return MPI_ERR_TRUNCATE;
    if (less) return MPI_ERR_OTHER;
    return receives_in(m, me, size) && m->count != m->odd_count ? BYSTANDER : MPI_SUCCESS;
}

static void check_class(const struct mcase *m, struct call *x, int rc)
{
    int me = x->rank, size = x->size;
    int want = expected_class(m, me, size), got = route_error_class(rc);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    if (want == MPI_ERR_TRUNCATE && got != MPI_ERR_TRUNCATE)
        failf("%s: rank %d posted %d elements per block, a peer sends more: expected "
              "MPI_ERR_TRUNCATE, got class %d%s%s",
              m->name, me, count_of(m, me), got, len ? ": " : " (MPI_SUCCESS)", msg);
    else if (want == MPI_ERR_OTHER && got == MPI_SUCCESS)
        failf("%s: rank %d posted %d elements per block and a peer sends fewer: expected an "
              "error, got MPI_SUCCESS",
              m->name, me, count_of(m, me));
    else if (want == BYSTANDER && got == MPI_SUCCESS) {
        size_t first;
        if (wrong_elements(m->w, x, &first))
            failf("%s: rank %d's receives agree and it got MPI_SUCCESS, but element %zu is "
                  "wrong (%.0f, expected %.0f)",
                  m->name, me, first, ((double *)x->recv.data)[first], expected(m->w, x, first));
    }
    else if (want == MPI_SUCCESS && got != MPI_SUCCESS)
        failf("%s: rank %d only sends, or every rank agrees: expected MPI_SUCCESS, got class %d: "
              "%s",
              m->name, me, got, msg);
}

/* The same collective with every count m->count: right, served, in bounds. */
static void correct_call(const struct mcase *m, struct call *x, const char *what)
{
    /* STRATA_STATS counts a nonblocking call under its own name. */
    int id = nonblocking ? strata_call_id(m->w->coll, STRATA_FORM_NONBLOCKING) : (int)m->w->coll;
    unsigned long long served = route_calls(id, 1);
    setup(m->w, x, m->count, m->count);
    int rc = m->w->call(x);
    if (rc != MPI_SUCCESS) failf("%s: returned class %d", what, route_error_class(rc));
    check_unchanged(&x->send, 1, "send", what);
    check_unchanged(&x->recv, 0, "receive", what);
    size_t first, bad = wrong_elements(m->w, x, &first);
    if (bad)
        failf("%s: %zu of %zu received elements wrong, the first %zu: %.0f, expected %.0f", what,
              bad, x->recv.len / sizeof(double), first, ((double *)x->recv.data)[first],
              expected(m->w, x, first));
    if (route_calls(id, 1) != served + 1)
        failf("%s: not served by strata (STRATA_STATS counts it as the host MPI's)", what);
    teardown(x);
    settle();
}

static void run_case(const struct mcase *m)
{
    struct call x = {.comm = m->comm, .root = m->root};
    MPI_Comm_rank(m->comm, &x.rank);
    MPI_Comm_size(m->comm, &x.size);
    int agree = m->count == m->odd_count;
    if (verbose && wrank == 0) printf("case: %s\n", m->name), fflush(stdout);
    int maxc = m->count > m->odd_count ? m->count : m->odd_count;
    setup(m->w, &x, count_of(m, x.rank), maxc);
    int rc = m->w->call(&x);
    check_unchanged(&x.send, 1, "send", m->name);
    check_unchanged(&x.recv, 0, "receive", m->name);
    if (!guards_only) check_class(m, &x, rc);
    if (agree) { /* --control: the call was a correct one */
        size_t first;
        if (wrong_elements(m->w, &x, &first)) failf("%s: wrong result (element %zu)", m->name, first);
    }
    teardown(&x);
    settle();
    char what[256];
    snprintf(what, sizeof what, "the correct call after %s", m->name);
    correct_call(m, &x, what);
    cases++;
}

/* ---- The matrix ---------------------------------------------------------- */

/* Every size, root (first, last), odd rank (the root, another) and factor
 * (half, double) of row w on comm, under the algorithm chosen now. */
static void run_row(const struct row *w, MPI_Comm comm, const char *cname, const char *algo)
{
    int size;
    MPI_Comm_size(comm, &size);
    for (int si = 0; si < nsizes; si++)
        for (int ri = 0; ri < 2; ri++)
            for (int who = 0; who < (rooted(w) ? 2 : 1); who++)
                for (int f = 0; f < 2; f++) {
                    struct mcase m = {.w = w, .comm = comm};
                    /* Unrooted: the "root" only places the odd rank. */
                    m.root = ri ? size - 1 : 0;
                    m.odd = who ? (m.root + 1) % size : m.root;
                    m.count = (int)(sizes[si] / sizeof(double));
                    m.odd_count = control ? m.count : f ? 2 * m.count : m.count / 2;
                    char odd[32];
                    if (rooted(w) && !who) snprintf(odd, sizeof odd, "odd=root");
                    else snprintf(odd, sizeof odd, "odd=%d", m.odd);
                    if (rooted(w))
                        snprintf(m.name, sizeof m.name, "%s %zuB %s root=%d %s %s %s", w->name,
                                 sizes[si], cname, m.root, odd, f ? "double" : "half", algo);
                    else
                        snprintf(m.name, sizeof m.name, "%s %zuB %s %s %s %s", w->name,
                                 sizes[si], cname, odd, f ? "double" : "half", algo);
                    if (fnmatch(case_glob, m.name, 0)) continue;
                    run_case(&m);
                }
}

/* Row w with each algorithm that can run here forced in turn (--algos=all),
 * then the model's (or the environment's) choice. */
static void run_algorithms(const struct row *w, MPI_Comm comm, const char *cname)
{
    struct strata_ctx *ctx = strata_ctx_get(comm);
    int size, single_copy = ctx && ctx->plane && strata_plane_single_copy(ctx->plane);
    MPI_Comm_size(comm, &size);
    int engine = strata_coll_engine(w->coll); /* Alltoallw: Alltoallv's algorithms */
    for (int id = 0; id < STRATA_NALGOS && all_algos; id++) {
        const struct strata_algorithm *al = strata_algorithm(id);
        if (al->coll != engine || strata_algorithm_refusal(al, size, single_copy, al->k_default))
            continue;
        char err[256];
        CHECK(!strata_select_force(engine, al->name, err, sizeof err), "%s", err);
        run_row(w, comm, cname, al->name);
    }
    strata_select_force(engine, NULL, NULL, 0);
    run_row(w, comm, cname, "model");
}

static void run_comm(MPI_Comm comm, const char *cname)
{
    if (nonblocking) {
        MPI_Errhandler eh;
        MPI_Comm_create_errhandler(record_error, &eh);
        MPI_Comm_set_errhandler(comm, eh);
        MPI_Errhandler_free(&eh);
    } else {
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx && ctx->plane, "strata must serve the %s communicator on one node: %s", cname,
          ctx ? ctx->plane_why : "no context");
    for (int i = 0; i < NROWS; i++) run_algorithms(&rows[i], comm, cname);
}

/* ---- Self-test of the checkers ------------------------------------------- */

/* A checker that never fires would let any build pass: each must see a
 * planted fault, here, before the matrix trusts it. */
static void self_test(void)
{
    struct guarded g;
    guarded_alloc(&g, 100, 200);
    guarded_snap(&g);
    CHECK(!zone_before(&g).n && !zone_data(&g).n && !zone_after(&g).n, "fresh buffer reads as changed");
    g.data[100 + 5] ^= 1;
    g.data[100 + 150] = (unsigned char)~g.data[100 + 150];
    g.data[-3] ^= 0x80;
    g.data[42] ^= 4;
    struct change a = zone_after(&g), b = zone_before(&g), d = zone_data(&g);
    CHECK(a.n == 2 && a.first == g.before + 105, "after-zone change: %zu bytes at %zu", a.n, a.first);
    CHECK(b.n == 1 && b.first == g.before - 3, "before-zone change: %zu bytes at %zu", b.n, b.first);
    CHECK(d.n == 1 && d.first == g.before + 42, "data change: %zu bytes at %zu", d.n, d.first);
    guarded_free(&g);

    /* A correct Gather's root buffer, then one element off. */
    struct call x = {.rank = 1, .size = 3, .root = 1};
    const struct row *w = &rows[2];
    CHECK(w->coll == STRATA_COLL_GATHER, "rows[2] is not MPI_Gather");
    setup(w, &x, 5, 5);
    double *r = (double *)x.recv.data;
    for (size_t k = 0; k < 15; k++) r[k] = datum((int)(k / 5), EVERYONE, (int)(k % 5));
    size_t first;
    CHECK(wrong_elements(w, &x, &first) == 0, "a right Gather reads as wrong at %zu", first);
    r[7] += 1;
    CHECK(wrong_elements(w, &x, &first) == 1 && first == 7, "a wrong element went unseen");
    teardown(&x);

    /* Classes: Gather with the root's count halved (the case). */
    struct mcase m = {.w = w, .root = 0, .odd = 0, .count = 8, .odd_count = 4};
    CHECK(expected_class(&m, 0, 3) == MPI_ERR_TRUNCATE && expected_class(&m, 1, 3) == MPI_SUCCESS,
          "Gather, root halved: wrong expected classes");
    m.odd = 2; /* a sender sends less: the root errs, the senders do not */
    CHECK(expected_class(&m, 0, 3) == MPI_ERR_OTHER && expected_class(&m, 2, 3) == MPI_SUCCESS,
          "Gather, a sender halved: wrong expected classes");
    m.w = &rows[0]; /* Bcast, a non-root halved: the third rank hears of it too */
    CHECK(m.w->coll == STRATA_COLL_BCAST, "rows[0] is not MPI_Bcast");
    CHECK(expected_class(&m, 2, 3) == MPI_ERR_TRUNCATE && expected_class(&m, 1, 3) == BYSTANDER &&
              expected_class(&m, 0, 3) == MPI_SUCCESS,
          "Bcast, a non-root halved: wrong expected classes");
    m.w = &rows[NROWS - 1]; /* Allreduce: everyone receives from the odd rank */
    CHECK(expected_class(&m, 2, 3) == MPI_ERR_TRUNCATE && expected_class(&m, 0, 3) == MPI_ERR_OTHER,
          "Allreduce, one rank halved: wrong expected classes");
}

/* ---- Options, main ------------------------------------------------------- */

static void parse_sizes(const char *list)
{
    nsizes = 0;
    for (const char *p = list; *p && nsizes < 16;) {
        char *end;
        sizes[nsizes] = strtoul(p, &end, 10);
        CHECK(end != p && sizes[nsizes] >= 2 * sizeof(double) && sizes[nsizes] <= (64u << 20),
              "--bytes=%s: sizes of 16 B to 64 MiB", list);
        sizes[nsizes] -= sizes[nsizes] % sizeof(double); /* whole doubles */
        nsizes++;
        p = *end == ',' ? end + 1 : end;
    }
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--algos=model")) all_algos = 0;
        else if (!strcmp(a, "--algos=all")) all_algos = 1;
        else if (!strncmp(a, "--bytes=", 8)) parse_sizes(a + 8);
        else if (!strncmp(a, "--comms=", 8)) comms_opt = a + 8;
        else if (!strncmp(a, "--case=", 7)) case_glob = a + 7;
        else if (!strcmp(a, "--control")) control = 1;
        else if (!strcmp(a, "--nonblocking")) nonblocking = 1;
        else if (!strcmp(a, "--guards-only")) guards_only = 1;
        else if (!strcmp(a, "--keep-going")) keep_going = 1;
        else if (!strcmp(a, "--verbose")) verbose = 1;
        else CHECK(0, "unknown option %s", a);
    }
}

int main(int argc, char **argv)
{
    setenv("STRATA_STATS", "/dev/null", 0); /* the route counters count only then */
    /* Megabyte buffers are allocated and freed per call: keep them in the
     * heap rather than mapping and faulting them in afresh each time. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= MAX_RANKS, "run with 2 to %d ranks", MAX_RANKS);
    parse_options(argc, argv);
    self_test();
    if (strstr(comms_opt, "world")) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        run_comm(c, "world");
        MPI_Comm_free(&c);
    }
    if (strstr(comms_opt, "reversed")) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &c);
        run_comm(c, "reversed");
        MPI_Comm_free(&c);
    }
    long total_failures = 0, total_cases = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&cases, &total_cases, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total_cases > 0, "no case matched --case=%s", case_glob);
    if (wrank == 0)
        printf("%ld cases%s, %ld failures (summed over ranks)\n", cases,
               control ? " (control: counts agree)" : "", total_failures);
    if (total_failures) {
        MPI_Finalize();
        return 1;
    }
    test_pass("mismatch");
    MPI_Finalize();
    return 0;
}
