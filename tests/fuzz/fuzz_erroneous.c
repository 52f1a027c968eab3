/* --erroneous: calls whose counts differ between ranks (issue 29).
 *
 * Each drawn call gets one rank whose count differs (fuzz_draw_wrong) and
 * runs through strata alone: the host MPI is never given such a call (Open
 * MPI 4.1.4 overruns or waits for ever on some).  Every buffer lies between
 * guard zones of a known pattern, the one after it as large as the whole
 * buffer at the larger count over every block and then some, so that any
 * write past a buffer lands in a zone.  What strata guarantees
 * (docs/TESTING.md, "Bad arguments"), checked on every rank:
 *   - no byte of a zone changed, nor of a buffer the call only reads (a
 *     send buffer, Bcast's root buffer, the receive buffer of a rank that
 *     receives nothing);
 *   - more sent to a rank than it posted: MPI_ERR_TRUNCATE; less: an error;
 *     a rank that receives, whose own counts agree with what is sent to it
 *     while other ranks disagree (a bystander): an error, or MPI_SUCCESS with
 *     its data right (checked for the collectives fuzz_expect.c computes);
 *     a rank that only sends: MPI_SUCCESS;
 *   - strata served the call (STRATA_STATS: not handed to the host);
 *   - it returned (the watchdog, --call-timeout, ends the job otherwise).
 * The caller then runs the same call with agreeing counts through the
 * fuzzer's normal path (host and strata compared) and requires strata to
 * serve it. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/ops.h"
#include "context/context.h"
#include "fuzz.h"
#include "testutil.h"
#include "util/stats.h"

enum { ANY_ERROR = -2, BYSTANDER = -1 };
enum { ZONE_BEFORE = 4096, ZONE_AFTER_MIN = 4096 };

void fuzz_draw_wrong(const struct fuzz_call *c, int size, struct fuzz_wrong *w)
{
    struct fuzz_rng r = {fuzz_hash(fuzz_opt.seed ^ 0xe770, (uint64_t)c->index)};
    size_t e = c->elems, u = c->unit, k = 1 + fuzz_below(&r, 3);
    w->odd = size > 0 ? (int)fuzz_below(&r, (uint64_t)size) : 0;
    switch (fuzz_below(&r, 5)) {
    case 0: w->odd_elems = e / 2 / u * u; snprintf(w->how, sizeof w->how, "half"); break;
    case 1: w->odd_elems = 2 * e; snprintf(w->how, sizeof w->how, "double"); break;
    case 2:
        w->odd_elems = e + k * u;
        snprintf(w->how, sizeof w->how, "%zu more", k * u);
        break;
    case 3:
        if (e >= k * u) {
            w->odd_elems = e - k * u;
            snprintf(w->how, sizeof w->how, "%zu fewer", k * u);
            break;
        }
        /* fall through */
    default: w->odd_elems = 0; snprintf(w->how, sizeof w->how, "0"); break;
    }
    if (w->odd_elems == e) {
        w->odd_elems = e + u;
        snprintf(w->how, sizeof w->how, "%zu more", u);
    }
}

static size_t elems_of(const struct fuzz_call *c, const struct fuzz_wrong *w, int rank)
{
    return rank == w->odd ? w->odd_elems : c->elems;
}

/* Whether rank s sends to rank d != s. */
static int flows(enum strata_coll coll, int root, int s, int d)
{
    switch (coll) {
    case STRATA_COLL_BCAST:
    case STRATA_COLL_SCATTER:
    case STRATA_COLL_SCATTERV: return s == root;
    case STRATA_COLL_GATHER:
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_REDUCE: return d == root;
    default: return 1;
    }
}

/* Base elements of the block from s to d by the count of rank `of` (s: what
 * is sent, d: what is expected); the v-collectives' blocks as fuzz_check.c
 * builds them from fuzz_vcount. */
static size_t block_elems(const struct fuzz_call *c, const struct fuzz_wrong *w, int size,
                          int s, int d, int of)
{
    size_t e = elems_of(c, w, of);
    switch (c->coll) {
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_ALLGATHERV: return fuzz_vcount(c, e, size, s);
    case STRATA_COLL_SCATTERV: return fuzz_vcount(c, e, size, d);
    case STRATA_COLL_ALLTOALLV: return fuzz_vcount(c, e, size, (s + d) % size);
    default: return e;
    }
}

/* Whether rank me's receive buffer is significant (it receives). */
static int receives(const struct fuzz_call *c, int root, int in_place, int me)
{
    switch (c->coll) {
    case STRATA_COLL_BCAST: return me != root;
    case STRATA_COLL_GATHER:
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_REDUCE: return me == root;
    case STRATA_COLL_SCATTER:
    case STRATA_COLL_SCATTERV: return !(me == root && in_place);
    default: return 1;
    }
}

/* The class rank me must get: MPI_ERR_TRUNCATE, ANY_ERROR, BYSTANDER or
 * MPI_SUCCESS (also where the blocks agree after all: a v-collective's
 * pattern may give a rank's changed count no block).  This mode found two
 * places where strata's differed (a rank that posted 0 elements got
 * MPI_SUCCESS; an in-place Allgather or Alltoall gave MPI_ERR_OTHER where
 * MPI_ERR_TRUNCATE was due), both fixed. */
static int expected_class(const struct fuzz_call *c, const struct fuzz_wrong *w, int size,
                          int root, int in_place, int me)
{
    int more = 0, less = 0, differ = 0;
    for (int s = 0; s < size; s++)
        for (int d = 0; d < size; d++) {
            if (s == d || !flows(c->coll, root, s, d)) continue;
            size_t sent = block_elems(c, w, size, s, d, s), want = block_elems(c, w, size, s, d, d);
            differ |= sent != want;
            more |= d == me && sent > want;
            less |= d == me && sent < want;
        }
    if (more && fuzz_opt.self_erroneous == 1) return MPI_SUCCESS; /* the planted mistake */
    if (more) return MPI_ERR_TRUNCATE;
    if (less) return ANY_ERROR;
    return differ && receives(c, root, in_place, me) ? BYSTANDER : MPI_SUCCESS;
}

/* Appends a failure to out's report (the first ones that fit). */
__attribute__((format(printf, 2, 3))) static void fail(struct fuzz_outcome *out, const char *fmt, ...)
{
    size_t n = strlen(out->report);
    if (n + 8 < sizeof out->report) {
        if (n) n += (size_t)snprintf(out->report + n, sizeof out->report - n, "; ");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(out->report + n, sizeof out->report - n, fmt, ap);
        va_end(ap);
    }
    out->mismatch = 1;
}

/* The guard zones of strata's copy of b, and (`whole`) the buffer itself
 * against the original. */
static void check_buf(const struct buf *b, int whole, struct fuzz_outcome *out)
{
    const unsigned char *m = b->mem[STRATA];
    if (!m) return;
    size_t first = SIZE_MAX, n = 0;
    for (size_t i = 0; i < b->zone[0]; i++)
        if (m[-1 - (ptrdiff_t)i] != fuzz_guard_byte(i, 0)) first = i, n++;
    if (n)
        fail(out, "%zu bytes of the guard zone before %s changed, the first at offset -%zu", n,
             b->name, first + 1);
    first = SIZE_MAX, n = 0;
    for (size_t i = 0; i < b->zone[1]; i++)
        if (m[b->bytes + i] != fuzz_guard_byte(i, 1)) {
            if (!n) first = i;
            n++;
        }
    if (n)
        fail(out, "%zu bytes of the guard zone after %s (%zu bytes) changed, the first at "
             "offset %zu (%zu past its end)", n, b->name, b->bytes, b->bytes + first, first);
    if (!whole || b->pass || !memcmp(m, b->mem[ORIG], b->bytes)) return;
    first = SIZE_MAX, n = 0;
    for (size_t i = 0; i < b->bytes; i++)
        if (m[i] != b->mem[ORIG][i]) {
            if (!n) first = i;
            n++;
        }
    fail(out, "%zu of the %zu bytes of %s changed, which the call only reads, the first at "
         "offset %zu", n, b->bytes, b->name, first);
}

/* A bystander's MPI_SUCCESS: its data must be right.  Computed for the
 * collectives that move data in blocks (fuzz_expect.c); the v-collectives'
 * and reductions' bystanders are held to the guard zones only.  `elems`:
 * the bystander's own count.  Every block it receives was sent at that
 * count (that is what makes it a bystander), and it need not be the call's:
 * the odd rank itself is one where nothing reaches it from another rank,
 * the root of a Scatter whose count differs (its own block, at its own
 * count).  Expecting that root's block at the others' count (c->elems)
 * failed this check wrongly, about 1 run in 10 (seed 0x204, call 57: the
 * root got MPI_SUCCESS only when it looked before the others had stamped;
 * fuzz.erroneous.odd-first makes it look first every time). */
static void check_bystander(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                            const struct exec *x, struct fuzz_outcome *out)
{
    const struct buf *r = &x->recv;
    if (fuzz_is_reduction(c->coll) || fuzz_is_v(c->coll) || r->pass || !r->bytes) return;
    unsigned char *want = malloc(r->bytes);
    CHECK(want != NULL, "out of memory");
    fuzz_expect_recv(c, elems, fc, x, want);
    for (size_t i = 0; i < r->bytes; i++)
        if (r->mem[STRATA][i] != want[i] && !fuzz_padding_byte(r->l, i, 0)) {
            fail(out, "a bystander (its receives agree) got MPI_SUCCESS but byte %zu of %s is "
                 "0x%02x, expected 0x%02x", i, r->name, r->mem[STRATA][i], want[i]);
            break;
        }
    free(want);
}

/* --odd-first: every rank but the odd one waits for the odd rank's word
 * that its call returned, at most half a second (the odd rank may be
 * unable to return alone: a Gather root waiting for blocks), before it
 * starts; odd_first_end takes the word afterwards if it came late.  Point
 * to point, through the host MPI. */
enum { ODD_FIRST_TAG = 0x0dd };

static void odd_first_begin(const struct fuzz_comm *fc, const struct fuzz_wrong *w,
                            MPI_Request *req, int *word)
{
    *req = MPI_REQUEST_NULL;
    if (!fuzz_opt.odd_first || fc->rank == w->odd) return;
    PMPI_Irecv(word, 1, MPI_INT, w->odd, ODD_FIRST_TAG, fc->comm, req);
    for (int ms = 0; ms < 500; ms++) {
        int done = 0;
        PMPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done) return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void odd_first_end(const struct fuzz_comm *fc, const struct fuzz_wrong *w,
                          MPI_Request *req)
{
    if (!fuzz_opt.odd_first) return;
    if (fc->rank != w->odd) {
        PMPI_Wait(req, MPI_STATUS_IGNORE);
        return;
    }
    int word = 1;
    for (int r = 0; r < fc->size; r++)
        if (r != w->odd) PMPI_Send(&word, 1, MPI_INT, r, ODD_FIRST_TAG, fc->comm);
}

/* The nonblocking and persistent forms report through the communicator's
 * handler (the request completes): this one records the code. */
static int recorded;
static void record_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    recorded = *code;
}

static const char *class_text(int cls, char *buf)
{
    int n = 0;
    if (cls == MPI_SUCCESS) return "MPI_SUCCESS";
    PMPI_Error_string(cls, buf, &n);
    return buf;
}

void fuzz_run_erroneous(const struct fuzz_call *c, const struct fuzz_wrong *w,
                        struct fuzz_comm *fc, struct fuzz_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->member = fc->comm != MPI_COMM_NULL;
    if (!out->member || fc->size < 2 ||
        strata_route_refusal(strata_ctx_get(fc->comm), c->coll))
        return;
    /* A reduction strata has no kernel for (user ops among them) may go to
     * the host MPI: not erroneous there. */
    if (fuzz_is_reduction(c->coll) &&
        !strata_reduce_kernel(fuzz_op_handle(c->op), fuzz_layout(c->base, c->shape[0][0])->type))
        return;
    out->ran_strata = 1;
    int me = fc->rank, P = fc->size;
    /* The zone after a buffer: the largest buffer any count makes. */
    size_t most = c->elems > w->odd_elems ? c->elems : w->odd_elems, per_elem = 0;
    for (int side = 0; side < 2; side++)
        for (int par = 0; par < 2; par++) {
            const struct fuzz_layout *l = fuzz_layout(c->base, c->shape[side][par]);
            size_t m = (l->extent + (size_t)l->per - 1) / (size_t)l->per;
            if (m > per_elem) per_elem = m;
        }
    fuzz_guard_zones(ZONE_BEFORE, ZONE_AFTER_MIN + most * per_elem * (size_t)P);
    struct exec x;
    fuzz_build(c, elems_of(c, w, me), fc, &x);
    fuzz_guard_zones(0, 0);

    static MPI_Errhandler recorder = MPI_ERRHANDLER_NULL;
    if (recorder == MPI_ERRHANDLER_NULL) MPI_Comm_create_errhandler(record_error, &recorder);
    MPI_Comm_set_errhandler(fc->comm, c->form ? recorder : MPI_ERRORS_RETURN);
    recorded = MPI_SUCCESS;
    int id = strata_call_id(c->coll, (enum strata_coll_form)c->form), early = 0, word;
    unsigned long long to_host = strata_stats_local_calls(id, 0);
    MPI_Request odd_word;
    odd_first_begin(fc, w, &odd_word, &word);
    fuzz_watchdog_arm("strata's erroneous call (MPI_)");
    int got = fuzz_invoke(c, &x, 1, &early);
    fuzz_watchdog_disarm();
    odd_first_end(fc, w, &odd_word);
    MPI_Comm_set_errhandler(fc->comm, MPI_ERRORS_RETURN);
    if (got == MPI_SUCCESS && recorded != MPI_SUCCESS) PMPI_Error_class(recorded, &got);
    out->strata_rc = got;

    if (fuzz_opt.self_erroneous == 2 && me == w->odd) { /* a planted overrun */
        struct buf *b = x.recv.mem[STRATA] ? &x.recv : &x.send;
        b->mem[STRATA][b->bytes + 7] ^= 1;
    }
    if (strata_stats_local_calls(id, 0) != to_host)
        fail(out, "strata handed the erroneous call to the host MPI");
    int root = x.root, in_place = x.in_place, recv_too = receives(c, root, in_place, me);
    check_buf(&x.send, 1, out);
    check_buf(&x.recv, !recv_too, out);
    int want = expected_class(c, w, P, root, in_place, me);
    char g[MPI_MAX_ERROR_STRING];
    if (want == MPI_ERR_TRUNCATE && got != MPI_ERR_TRUNCATE)
        fail(out, "more is sent to this rank than it posted: expected MPI_ERR_TRUNCATE, got "
             "\"%s\"", class_text(got, g));
    else if (want == ANY_ERROR && got == MPI_SUCCESS)
        fail(out, "less is sent to this rank than it posted: expected an error, got MPI_SUCCESS");
    else if (want == MPI_SUCCESS && got != MPI_SUCCESS)
        fail(out, "this rank %s: expected MPI_SUCCESS, got \"%s\"",
             recv_too ? "receives what it posted from every rank" : "only sends",
             class_text(got, g));
    else if (want == BYSTANDER && got == MPI_SUCCESS)
        check_bystander(c, elems_of(c, w, me), fc, &x, out);
    fuzz_release(c, &x);
}
