/* MPI_Reduce_scatter_block, MPI_Reduce_scatter, MPI_Scan and MPI_Exscan
 * through strata, each result compared with the host MPI's (PMPI_ on the
 * same input): counts 0, 1, odd, and (unless --no-large) large enough to
 * cross the single-copy threshold and the chunk size; sum, prod, max, min,
 * band, lor, maxloc on int, double, float, long long, MPI_2INT,
 * MPI_DOUBLE_INT (padded); a contiguous derived type with a non-commutative
 * user op (strata's where rank order is kept); in place; irregular counts with zeros; several
 * communicators.  STRATA_STATS must be on: every call is checked to have
 * been served by strata, or handed to the host, as expected. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "net/net.h"
#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

struct dint { double d; int i; };

enum kind { K_INT, K_DOUBLE, K_FLOAT, K_LL, K_2INT, K_DINT, K_AFFINE };

struct tcase {
    const char *name;
    enum kind kind;
    int op;        /* index into ops[] below; -1: the affine user op */
};

static MPI_Datatype affine_type; /* 2 unsigned ints: x -> m x + c (mod 2^32) */
static MPI_Op affine_op;         /* composition: associative, not commutative */

/* inout = in o inout, in from the lower rank: apply `in` first, then inout. */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        unsigned m = b[2 * i] * a[2 * i], c = b[2 * i] * a[2 * i + 1] + b[2 * i + 1];
        b[2 * i] = m;
        b[2 * i + 1] = c;
    }
}

static MPI_Op op_of(const struct tcase *t)
{
    switch (t->op) {
    case 0: return MPI_SUM;
    case 1: return MPI_PROD;
    case 2: return MPI_MAX;
    case 3: return MPI_MIN;
    case 4: return MPI_BAND;
    case 5: return MPI_LOR;
    case 6: return MPI_MAXLOC;
    default: return affine_op;
    }
}

static MPI_Datatype type_of(enum kind k)
{
    switch (k) {
    case K_INT: return MPI_INT;
    case K_DOUBLE: return MPI_DOUBLE;
    case K_FLOAT: return MPI_FLOAT;
    case K_LL: return MPI_LONG_LONG;
    case K_2INT: return MPI_2INT;
    case K_DINT: return MPI_DOUBLE_INT;
    default: return affine_type;
    }
}

static size_t extent_of(enum kind k)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(type_of(k), &lb, &ext);
    return (size_t)ext;
}

static const struct tcase cases[] = {
    {"int sum", K_INT, 0},          {"double prod", K_DOUBLE, 1},
    {"float max", K_FLOAT, 2},      {"long long min", K_LL, 3},
    {"int band", K_INT, 4},         {"int lor", K_INT, 5},
    {"2int maxloc", K_2INT, 6},     {"double_int maxloc", K_DINT, 6},
    {"affine user op on a contiguous type", K_AFFINE, -1},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

/* Element i of rank r's input (deterministic, small, exact in floating point). */
static void fill(const struct tcase *t, void *buf, size_t n, int r, int salt)
{
    size_t ext = extent_of(t->kind);
    memset(buf, 0, n * ext);
    for (size_t i = 0; i < n; i++) {
        unsigned v = (unsigned)(i * 2654435761u + (unsigned)r * 40503u + (unsigned)salt * 977u);
        char *e = (char *)buf + i * ext;
        switch (t->kind) {
        case K_INT:
            *(int *)e = t->op == 4 ? (int)(v | 0x0f0f0000u) : t->op == 5 ? (int)((v >> 7) % 5 == 0)
                                                                    : (int)((v >> 5) % 23) - 11;
            break;
        case K_DOUBLE: *(double *)e = ((v >> 9) % 3 == 0) ? 0.5 : ((v >> 9) % 3 == 1) ? 1.0 : 2.0; break;
        case K_FLOAT: *(float *)e = (float)((int)((v >> 4) % 1001) - 500) * 0.25f; break;
        case K_LL: *(long long *)e = (long long)(v >> 3) * ((v & 1) ? -1 : 1) * 1000003LL; break;
        case K_2INT: ((int *)e)[0] = (int)((v >> 11) % 7); ((int *)e)[1] = r; break;
        case K_DINT: ((struct dint *)e)->d = (double)((v >> 11) % 5); ((struct dint *)e)->i = r; break;
        case K_AFFINE:
            ((unsigned *)e)[0] = 2 * ((v >> 3) % 1000) + 1;
            ((unsigned *)e)[1] = v >> 8;
            break;
        }
    }
}

/* Element-wise comparison, ignoring padding. */
static int same(const struct tcase *t, const void *x, const void *y, size_t n, size_t *at)
{
    size_t ext = extent_of(t->kind);
    for (size_t i = 0; i < n; i++) {
        const char *a = (const char *)x + i * ext, *b = (const char *)y + i * ext;
        int eq = t->kind == K_DINT ? ((const struct dint *)a)->d == ((const struct dint *)b)->d &&
                                         ((const struct dint *)a)->i == ((const struct dint *)b)->i
                                   : memcmp(a, b, ext) == 0;
        if (!eq) {
            *at = i;
            return 0;
        }
    }
    return 1;
}

/* Whether strata is expected to serve the call on c (else the host). */
static int expect_served(MPI_Comm c, const struct tcase *t, enum strata_coll coll)
{
    struct strata_ctx *ctx = strata_ctx_get(c);
    if (!ctx || !ctx->served) return 0;
    if (ctx->size > 1 && !ctx->plane && !ctx->net) return 0;
    if (ctx->net && t->op < 0) return 0;   /* non-commutative across nodes */
    if (ctx->net && (coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN))
        for (int n = 0; n < ctx->net->nnodes; n++)
            if (!ctx->net->contiguous[n]) return 0;
    return 1;
}

static int checks;

static void check_route(MPI_Comm c, const struct tcase *t, enum strata_coll coll,
                        unsigned long long s0, unsigned long long h0, const char *what)
{
    int served = expect_served(c, t, coll);
    unsigned long long s1 = strata_stats_local_calls(coll, 1), h1 = strata_stats_local_calls(coll, 0);
    CHECK(served ? s1 == s0 + 1 : h1 == h0 + 1, "%s %s: expected %s (served %llu->%llu, host %llu->%llu)",
          strata_coll_name(coll), what, served ? "strata" : "the host MPI", s0, s1, h0, h1);
}

/* One Reduce_scatter(_block) on c: counts[q] per rank (block: all equal). */
static void run_rs(MPI_Comm c, const struct tcase *t, const int *counts, int block, int in_place,
                   int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    size_t total = 0, first = 0, ext = extent_of(t->kind);
    for (int q = 0; q < size; q++) {
        if (q < rank) first += (size_t)counts[q];
        total += (size_t)counts[q];
    }
    size_t mine = (size_t)counts[rank];
    char *send = malloc(total * ext + 1), *recv = malloc(total * ext + 1),
         *ref = malloc(total * ext + 1);
    fill(t, send, total, rank, salt);
    MPI_Datatype type = type_of(t->kind);
    MPI_Op op = op_of(t);
    if (block) PMPI_Reduce_scatter_block(send, ref, counts[0], type, op, c);
    else PMPI_Reduce_scatter(send, ref, counts, type, op, c);
    enum strata_coll coll = block ? STRATA_COLL_REDUCE_SCATTER_BLOCK : STRATA_COLL_REDUCE_SCATTER;
    unsigned long long s0 = strata_stats_local_calls(coll, 1), h0 = strata_stats_local_calls(coll, 0);
    int rc;
    memset(recv, 0x5a, total * ext + 1);
    if (in_place) memcpy(recv, send, total * ext);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    if (block) rc = MPI_Reduce_scatter_block(sb, recv, counts[0], type, op, c);
    else rc = MPI_Reduce_scatter(sb, recv, counts, type, op, c);
    char what[160];
    snprintf(what, sizeof what, "%s, %zu of %zu elements%s on %d ranks", t->name, mine, total,
             in_place ? ", in place" : "", size);
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    size_t at = 0;
    CHECK(same(t, recv, ref, mine, &at), "%s: element %zu (of block at %zu) differs from the host's",
          what, at, first);
    if (!in_place && mine < total)
        CHECK((unsigned char)recv[mine * ext] == 0x5a, "%s: wrote past the block", what);
    check_route(c, t, coll, s0, h0, what);
    checks++;
    free(send);
    free(recv);
    free(ref);
}

static void run_scan(MPI_Comm c, const struct tcase *t, int count, int exclusive, int in_place,
                     int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    size_t ext = extent_of(t->kind), n = (size_t)count;
    char *send = malloc(n * ext + 1), *recv = malloc(n * ext + 1), *ref = malloc(n * ext + 1);
    fill(t, send, n, rank, salt);
    MPI_Datatype type = type_of(t->kind);
    MPI_Op op = op_of(t);
    if (exclusive) PMPI_Exscan(send, ref, count, type, op, c);
    else PMPI_Scan(send, ref, count, type, op, c);
    enum strata_coll coll = exclusive ? STRATA_COLL_EXSCAN : STRATA_COLL_SCAN;
    unsigned long long s0 = strata_stats_local_calls(coll, 1), h0 = strata_stats_local_calls(coll, 0);
    memset(recv, 0x5a, n * ext + 1);
    if (in_place) memcpy(recv, send, n * ext);
    int rc = exclusive ? MPI_Exscan(in_place ? MPI_IN_PLACE : send, recv, count, type, op, c)
                       : MPI_Scan(in_place ? MPI_IN_PLACE : send, recv, count, type, op, c);
    char what[160];
    snprintf(what, sizeof what, "%s, %d elements%s on %d ranks", t->name, count,
             in_place ? ", in place" : "", size);
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    size_t at = 0;
    if (!(exclusive && rank == 0))
        CHECK(same(t, recv, ref, n, &at), "%s %s: element %zu differs from the host's",
              exclusive ? "Exscan" : "Scan", what, at);
    CHECK((unsigned char)recv[n * ext] == 0x5a, "%s: wrote past the buffer", what);
    check_route(c, t, coll, s0, h0, what);
    checks++;
    free(send);
    free(recv);
    free(ref);
}

static void run_comm(MPI_Comm c, int large)
{
    int size;
    MPI_Comm_size(c, &size);
    int small[] = {0, 1, 7, 600};
    int big[] = {70001};
    int *counts = malloc(sizeof(int) * (size_t)size);
    for (int ci = 0; ci < NCASES; ci++) {
        const struct tcase *t = &cases[ci];
        for (int s = 0; s < 4 + (large ? 1 : 0); s++) {
            int n = s < 4 ? small[s] : big[0];
            /* Large vectors: the plain types only (time). */
            if (s == 4 && ci != 0 && ci != 1 && ci != 7 && ci != 8) continue;
            for (int in_place = 0; in_place < 2; in_place++) {
                for (int q = 0; q < size; q++) counts[q] = n;
                run_rs(c, t, counts, 1, in_place, s);
                /* Irregular: zeros and uneven blocks. */
                for (int q = 0; q < size; q++) counts[q] = q % 3 == 1 ? 0 : n + (q * 5) % 7;
                run_rs(c, t, counts, 0, in_place, s + 1);
                run_scan(c, t, n, 0, in_place, s + 2);
                run_scan(c, t, n, 1, in_place, s + 3);
            }
        }
    }
    free(counts);
}

/* The MPI-4 _c forms, where the host has them: the same paths, counted under
 * the C name. */
static void large_forms(void)
{
#ifdef STRATA_HAVE_LARGE_COUNT
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 300 };
    long long *in = malloc(sizeof(long long) * N * (size_t)size);
    long long *out = malloc(sizeof(long long) * N * (size_t)size);
    long long *ref = malloc(sizeof(long long) * N * (size_t)size);
    MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)size);
    int *icounts = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < N * size; i++) in[i] = (long long)i * 31 + rank * 7;
    for (int q = 0; q < size; q++) icounts[q] = (int)(counts[q] = q % 2 ? N : N / 3);
    for (int i = 0; i < 4; i++) {
        enum strata_coll coll = i == 0 ? STRATA_COLL_REDUCE_SCATTER_BLOCK
                                : i == 1 ? STRATA_COLL_REDUCE_SCATTER
                                : i == 2 ? STRATA_COLL_SCAN
                                         : STRATA_COLL_EXSCAN;
        unsigned long long s0 = strata_stats_local_calls(coll, 1);
        int rc;
        size_t n = i == 0 ? N : i == 1 ? (size_t)icounts[rank] : N;
        switch (i) {
        case 0:
            PMPI_Reduce_scatter_block(in, ref, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            rc = MPI_Reduce_scatter_block_c(in, out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            break;
        case 1:
            PMPI_Reduce_scatter(in, ref, icounts, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            rc = MPI_Reduce_scatter_c(in, out, counts, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            break;
        case 2:
            PMPI_Scan(in, ref, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            rc = MPI_Scan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            break;
        default:
            PMPI_Exscan(in, ref, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            rc = MPI_Exscan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            break;
        }
        CHECK(rc == MPI_SUCCESS, "%s_c: rc %d", strata_coll_name(coll), rc);
        if (!(i == 3 && rank == 0))
            CHECK(!memcmp(out, ref, n * sizeof *out), "%s_c: differs from the host's",
                  strata_coll_name(coll));
        CHECK(strata_stats_local_calls(coll, 1) == s0 + 1, "%s_c: not served under the C name",
              strata_coll_name(coll));
        checks++;
    }
    free(in);
    free(out);
    free(ref);
    free(counts);
    free(icounts);
#endif
}

/* Arguments the host MPI must judge, the same on every rank: each call goes
 * to the host on every rank and returns the host's error class. */
static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

static void bad_args(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int size;
    MPI_Comm_size(c, &size);
    int *counts = malloc(sizeof(int) * (size_t)size), in[64] = {0}, out[64];
    for (int q = 0; q < size; q++) counts[q] = q == size - 1 ? -1 : 1;
    /* MPICH 4.0 does not check a negative count here: it fails an assertion
     * in its pack code (the host's behaviour, which strata passes on).  The
     * standard ABI build runs on MPICH's or Intel MPI's libmpi_abi: the same. */
#if defined(MPICH) || defined(MPI_ABI_VERSION)
    int first = 2;
#else
    int first = 0;
#endif
    for (int i = first; i < 4; i++) {
        enum strata_coll coll = i == 0 ? STRATA_COLL_REDUCE_SCATTER_BLOCK
                                : i == 1 ? STRATA_COLL_REDUCE_SCATTER
                                : i == 2 ? STRATA_COLL_SCAN
                                         : STRATA_COLL_EXSCAN;
        unsigned long long h0 = strata_stats_local_calls(coll, 0);
        int host, mine;
        switch (i) {
        case 0: /* a negative count */
            host = PMPI_Reduce_scatter_block(in, out, -1, MPI_INT, MPI_SUM, c);
            mine = MPI_Reduce_scatter_block(in, out, -1, MPI_INT, MPI_SUM, c);
            break;
        case 1: /* a negative count in the array */
            host = PMPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c);
            mine = MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, c);
            break;
        case 2: /* no op */
            host = PMPI_Scan(in, out, 4, MPI_INT, MPI_OP_NULL, c);
            mine = MPI_Scan(in, out, 4, MPI_INT, MPI_OP_NULL, c);
            break;
        default: /* no op (a null datatype is strata's to answer: below) */
            host = PMPI_Exscan(in, out, 4, MPI_INT, MPI_OP_NULL, c);
            mine = MPI_Exscan(in, out, 4, MPI_INT, MPI_OP_NULL, c);
            break;
        }
        CHECK(host != MPI_SUCCESS && error_class(mine) == error_class(host),
              "%s with bad arguments: class %d, the host's %d", strata_coll_name(coll),
              error_class(mine), error_class(host));
        CHECK(strata_stats_local_calls(coll, 0) == h0 + 1, "%s with bad arguments: not handed "
              "to the host MPI", strata_coll_name(coll));
        checks++;
    }
    /* A null datatype: strata's own MPI_ERR_TYPE on every host, not handed
     * over (serve/null_type.h), since MPICH 5.0 fails an assertion on it
     * (dt_ptr, mpir_datatype.h) and Open MPI says MPI_ERR_OP.  The host's
     * reference only where it returns an error. */
    unsigned long long h0 = strata_stats_local_calls(STRATA_COLL_EXSCAN, 0);
    int mine = MPI_Exscan(in, out, 4, MPI_DATATYPE_NULL, MPI_SUM, c);
    CHECK(error_class(mine) == MPI_ERR_TYPE, "Exscan with MPI_DATATYPE_NULL: class %d",
          error_class(mine));
    CHECK(strata_stats_local_calls(STRATA_COLL_EXSCAN, 0) == h0,
          "Exscan with MPI_DATATYPE_NULL: handed to the host MPI");
#if !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 50000000) && !defined(MPI_ABI_VERSION)
    CHECK(PMPI_Exscan(in, out, 4, MPI_DATATYPE_NULL, MPI_SUM, c) != MPI_SUCCESS,
          "the host MPI accepts Exscan with MPI_DATATYPE_NULL");
#endif
    checks++;
    free(counts);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int large = 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--no-large")) large = 0;
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_type);
    MPI_Type_commit(&affine_type);
    MPI_Op_create(affine_fn, 0, &affine_op);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    run_comm(MPI_COMM_WORLD, large);
    if (test_errors_return())
        bad_args();
    else
        test_skip_errors("bad arguments to Reduce_scatter and the scans");
    if (expect_served(MPI_COMM_WORLD, &cases[0], STRATA_COLL_SCAN)) large_forms();
    /* Reversed rank order, then the even and odd ranks (odd sizes). */
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    run_comm(rev, 0);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    run_comm(half, 0);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);

    MPI_Op_free(&affine_op);
    MPI_Type_free(&affine_type);
    if (rank == 0) printf("%d checks\n", checks);
    test_pass("rs_scan");
    MPI_Finalize();
    return 0;
}
