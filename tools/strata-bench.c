/* strata-bench: strata's collectives against the host MPI's, side by side.
 *
 *   strata-run -n N strata-bench [--sizes 8,1K,64K,1M,4M] [--colls bcast,...]
 *                                [--iters N] [--cold] [--json FILE] [--algorithms]
 *                                [--noise[=MS]] [--noise-form rate|late] [--noise-rounds R]
 *                                [--noise-block S] [--noise-calls N] [--noise-seed S]
 *
 * The program links libstrata, so MPI_X is strata's entry point (which
 * serves the call or hands it to the host MPI) and PMPI_X is the host MPI's
 * own.  The machine moves its vCPUs between near and far placements every few
 * seconds, which changes any timing 2-4x; comparing separate runs would
 * compare placements, so both implementations are timed alternately in one
 * process, call after call, and each gets the same preparation:
 *
 *   rewrite the send buffer (a new value pattern, so no call finds last
 *   call's data already in place), optionally evict the caches (--cold),
 *   PMPI_Barrier, time one call on every rank.
 *
 * A call's time is the maximum over the ranks (the collective is done when
 * its last rank is done); the table reports the median over the calls, and
 * the minimum.  For bcast, a third contestant gives the floor of a single-copy
 * path: one process_vm_readv (CMA) copy of the same bytes from rank 0 to rank 1.
 *
 * --algorithms validates the cost model: for every collective with several
 * algorithms, each row is timed once with strata's own choice ("tuned") and
 * once per algorithm and factor forced, each beside the host MPI, and the
 * model's prediction is printed next to the measured time.
 *
 * --noise[=MS] is ADAPT's noise experiment (section 5.1.1; sizes 4M and
 * collectives bcast,reduce unless given).  After each row's quiet calls, the
 * rate form (the default) runs blocks of back-to-back calls of one
 * implementation, quiet and with noise: every rank busy-waits U(0, MS) ms
 * (10 by default; the paper uses 10 and 20) at 10 Hz of wall time, at call
 * boundaries; it reports each implementation's slowdown, the growth of the
 * mean time per call.  --noise-form=late instead gives one random rank per
 * call a delay of U(0, MS) ms before it enters, and reports the late cost.
 * The exact schedules and figures, and why: bench_noise.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "bench_noise.h"
#include "coll/select.h"
#include "context/context.h"
#include "interpose/route.h"
#include "strata.h"

#define MAX_SIZES 32
#define DEFAULT_SIZES "8,1K,64K,1M,4M"
#define WARMUP_ITERS 5
#define MIN_ITERS 15
#define MAX_ITERS 2000
#define ROW_BUDGET_S 0.2          /* adaptive iterations: ~this long per row */
#define FLUSH_BYTES (64u << 20)   /* twice the 32 MiB L3 */
#define CACHE_LINE 64
#define BENCH_ROOT 0

/* The contestants of one row, in the order iteration 0 runs them. */
enum variant { V_NATIVE, V_STRATA, V_COPY, NVARIANTS };

struct options {
    size_t sizes[MAX_SIZES];
    int nsizes;
    int want[STRATA_NCOLLS];      /* 1 = benchmark this collective */
    int iters;                    /* 0 = adaptive */
    int cold;
    int algorithms;               /* --algorithms: every algorithm forced in turn */
    const char *json;
    struct bench_noise_options noise; /* --noise: max_ms > 0 */
};

struct stats {
    double median, min, max;      /* µs */
};

struct row {
    enum strata_coll coll;
    size_t bytes;                 /* per rank block, as moved */
    int count;                    /* elements passed to the call */
    MPI_Datatype type;
    int iters;
    int nvariants;                /* 3 when the CMA copy is timed too */
    int copy_failed;
    struct stats st[NVARIANTS];
    const char *refusal;          /* NULL: strata serves it */
    const char *algorithm;        /* --algorithms: the algorithm forced, or the tuned choice */
    int k;                        /* its factor (0: none) */
    int tuned;                    /* strata chose (nothing forced) */
    double predicted;             /* the model's prediction, µs (< 0: none) */
    struct bench_noise_row noise; /* --noise */
};

struct bench {
    int rank, size, nodes;
    struct options opt;
    char *send, *recv;            /* sized for the largest row */
    size_t buf_bytes;
    unsigned char *flush;         /* --cold only */
    struct strata_ctx *ctx;
    int copy_ok;                  /* rank 1 can read rank 0's memory */
    pid_t peer_pid;               /* on rank 1: rank 0's pid and send buffer */
    uint64_t peer_addr;
    unsigned seed;                /* changes every rewrite */
    struct row *rows;             /* rank 0: every row, for --json */
    int nrows;
    int noise_rows;               /* rows timed with noise so far: the noise's key */
    const struct row *noisy_row;  /* the row run_noisy_calls is timing */
};

/* The collective calls of one implementation, so that strata's and the host
 * MPI's calls are built from the very same arguments. */
struct coll_api {
    int (*bcast)(void *, int, MPI_Datatype, int, MPI_Comm);
    int (*reduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*allgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*gather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*scatter)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm);
    int (*alltoall)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    int (*barrier)(MPI_Comm);
};

static const struct coll_api native_api = {
    PMPI_Bcast, PMPI_Reduce, PMPI_Allreduce, PMPI_Allgather,
    PMPI_Gather, PMPI_Scatter, PMPI_Alltoall, PMPI_Barrier,
};
static const struct coll_api strata_api = {
    MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather,
    MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Barrier,
};

static const char *short_name(enum strata_coll coll)
{
    static const char *names[STRATA_NCOLLS] = {
        "bcast", "reduce", "allreduce", "allgather", "gather", "scatter", "alltoall", "barrier",
    };
    return names[coll];
}

/* ---- options ---------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: strata-run -n N strata-bench [options]\n"
            "  --sizes LIST   bytes per rank block, K/M/G suffixes (default " DEFAULT_SIZES ")\n"
            "                 reduce/allreduce: a vector of bytes/8 doubles (at least 1)\n"
            "  --colls LIST   bcast,reduce,allreduce,allgather,gather,scatter,alltoall,barrier\n"
            "                 (default all)\n"
            "  --iters N      timed calls per implementation and row (default adaptive,\n"
            "                 about %.1f s per row, %d to %d calls)\n"
            "  --cold         also evict the caches before every call (writes %u MiB)\n"
            "  --json FILE    write every result to FILE as JSON\n"
            "  --algorithms   time every algorithm of bcast, gather, scatter, allgather and\n"
            "                 alltoall forced in turn (and strata's own choice), each beside the\n"
            "                 host MPI, with the cost model's prediction\n",
            ROW_BUDGET_S, MIN_ITERS, MAX_ITERS, FLUSH_BYTES >> 20);
    bench_noise_usage(to);
}

/* "64K" -> 65536; 0 on a malformed size. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return 0;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'I' && toupper((unsigned char)end[1]) == 'B') end += 2;
    else if (toupper((unsigned char)*end) == 'B') end++;
    if (*end || v > ((unsigned long long)INT_MAX >> shift)) return 0;
    return (size_t)(v << shift);
}

/* Splits a comma-separated list, calling take() on each item; -1 on error. */
static int for_each_item(const char *list, int (*take)(struct options *, const char *),
                         struct options *opt)
{
    char *copy = strdup(list), *save = NULL;
    int rc = copy && *copy ? 0 : -1;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item && !rc;
         item = strtok_r(NULL, ",", &save))
        rc = take(opt, item);
    free(copy);
    return rc;
}

static int take_size(struct options *opt, const char *item)
{
    size_t bytes = parse_size(item);
    if (!bytes || opt->nsizes == MAX_SIZES) return -1;
    opt->sizes[opt->nsizes++] = bytes;
    return 0;
}

static int take_coll(struct options *opt, const char *item)
{
    int c = strata_coll_parse(item);
    if (c < 0) return -1;
    opt->want[c] = 1;
    return 0;
}

/* Every rank parses the same argv and so reaches the same verdict without
 * communicating.  Returns 0 to run, 1 for --help, 2 on a bad option. */
static int parse_options(int argc, char **argv, struct options *opt, int verbose)
{
    const char *sizes = DEFAULT_SIZES, *colls = NULL;
    int sizes_given = 0;
    memset(opt, 0, sizeof *opt);
    bench_noise_defaults(&opt->noise);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = !strcmp(a, "--sizes") || !strcmp(a, "--colls") ||
                          !strcmp(a, "--iters") || !strcmp(a, "--json");
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        if (!strcmp(a, "--cold")) { opt->cold = 1; continue; }
        if (!strcmp(a, "--algorithms")) { opt->algorithms = 1; continue; }
        int noise = bench_noise_option(argc, argv, &i, &opt->noise, verbose);
        if (noise < 0) return 2;
        if (noise) continue;
        if (!takes_value) {
            if (verbose) fprintf(stderr, "strata-bench: unknown option %s\n", a);
            return 2;
        }
        if (!val) {
            if (verbose) fprintf(stderr, "strata-bench: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--sizes")) {
            sizes = val;
            sizes_given = 1;
        }
        else if (!strcmp(a, "--colls")) colls = val;
        else if (!strcmp(a, "--json")) opt->json = val;
        else {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || n < 1 || n > 10000000) {
                if (verbose) fprintf(stderr, "strata-bench: --iters takes 1..10000000\n");
                return 2;
            }
            opt->iters = (int)n;
        }
    }
    if (opt->noise.max_ms > 0 && opt->algorithms) {
        if (verbose) fprintf(stderr, "strata-bench: --noise does not combine with --algorithms\n");
        return 2;
    }
    if (bench_noise_check(&opt->noise, verbose)) return 2;
    if (opt->noise.max_ms > 0 && !sizes_given) sizes = BENCH_NOISE_DEFAULT_SIZES;
    if (opt->noise.max_ms > 0 && !colls) colls = BENCH_NOISE_DEFAULT_COLLS;
    if (for_each_item(sizes, take_size, opt)) {
        if (verbose) fprintf(stderr, "strata-bench: bad --sizes '%s' (at most %d sizes, "
                                     "each 1 byte to 2 GiB-1, e.g. 8,64K,1M)\n", sizes, MAX_SIZES);
        return 2;
    }
    if (!colls) {
        for (int c = 0; c < STRATA_NCOLLS; c++) opt->want[c] = 1;
    } else if (for_each_item(colls, take_coll, opt)) {
        if (verbose) fprintf(stderr, "strata-bench: bad --colls '%s'\n", colls);
        return 2;
    }
    return 0;
}

/* ---- buffers ---------------------------------------------------------- */

/* Bytes the send and receive buffers need for a block of `bytes` per rank:
 * the rooted and all-to-all collectives hold one block per rank. */
static size_t buffer_bytes_for(const struct bench *b, size_t bytes)
{
    size_t doubles = (bytes + 7) / 8; /* reduce rounds up to one double */
    return (doubles ? doubles : 1) * 8 * (size_t)b->size;
}

static void *alloc_touched(size_t bytes)
{
    /* Page-aligned, and every page faulted in now, not inside a timed call. */
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    void *p = aligned_alloc(4096, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

static int alloc_buffers(struct bench *b)
{
    size_t largest = 0;
    for (int i = 0; i < b->opt.nsizes; i++)
        if (b->opt.sizes[i] > largest) largest = b->opt.sizes[i];
    b->buf_bytes = buffer_bytes_for(b, largest);
    b->send = alloc_touched(b->buf_bytes);
    b->recv = alloc_touched(b->buf_bytes);
    b->flush = b->opt.cold ? alloc_touched(FLUSH_BYTES) : NULL;
    return b->send && b->recv && (!b->opt.cold || b->flush) ? 0 : -1;
}

/* A fresh value pattern: the data differs on every call, so nothing the
 * previous call left in a cache or in a receive buffer matches it.  Small
 * integers as doubles keep the reductions on the fast path (no NaN, no
 * denormals) and exact. */
static void fill_pattern(char *buf, size_t bytes, unsigned seed)
{
    double *d = (double *)buf;
    size_t n = bytes / 8;
    for (size_t i = 0; i < n; i++) d[i] = (double)((seed + i) & 0xffff);
    for (size_t i = n * 8; i < bytes; i++) buf[i] = (char)(seed + i);
}

/* Reads and writes every line of a buffer twice the L3, which evicts the
 * benchmark's buffers.  A read-modify-write per line cannot be turned into a
 * memset with non-temporal stores, which would bypass the cache instead. */
static void flush_caches(struct bench *b)
{
    for (size_t i = 0; i < FLUSH_BYTES; i += CACHE_LINE) b->flush[i]++;
}

/* The bytes this rank sends in this row; the rest is received. */
static size_t send_bytes(const struct bench *b, const struct row *r)
{
    switch (r->coll) {
    case STRATA_COLL_BCAST: return b->rank == BENCH_ROOT ? r->bytes : 0;
    case STRATA_COLL_SCATTER: return b->rank == BENCH_ROOT ? r->bytes * (size_t)b->size : 0;
    case STRATA_COLL_ALLTOALL: return r->bytes * (size_t)b->size;
    case STRATA_COLL_BARRIER: return 0;
    default: return r->bytes;
    }
}

static void prepare_call(struct bench *b, const struct row *r)
{
    fill_pattern(b->send, send_bytes(b, r), (unsigned)b->rank * 7919u + ++b->seed);
    if (b->flush) flush_caches(b);
}

/* ---- the calls -------------------------------------------------------- */

/* One collective through `api`; bcast works in the send buffer on every rank
 * (the root's data, the others' destination).  Separate send and receive
 * buffers everywhere else: no MPI_IN_PLACE. */
static void call_collective(const struct coll_api *api, struct bench *b, const struct row *r)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = r->count;
    MPI_Datatype t = r->type;
    switch (r->coll) {
    case STRATA_COLL_BCAST: api->bcast(b->send, n, t, BENCH_ROOT, w); break;
    case STRATA_COLL_REDUCE: api->reduce(b->send, b->recv, n, t, MPI_SUM, BENCH_ROOT, w); break;
    case STRATA_COLL_ALLREDUCE: api->allreduce(b->send, b->recv, n, t, MPI_SUM, w); break;
    case STRATA_COLL_ALLGATHER: api->allgather(b->send, n, t, b->recv, n, t, w); break;
    case STRATA_COLL_GATHER: api->gather(b->send, n, t, b->recv, n, t, BENCH_ROOT, w); break;
    case STRATA_COLL_SCATTER: api->scatter(b->send, n, t, b->recv, n, t, BENCH_ROOT, w); break;
    case STRATA_COLL_ALLTOALL: api->alltoall(b->send, n, t, b->recv, n, t, w); break;
    case STRATA_COLL_BARRIER: api->barrier(w); break;
    default: break;
    }
}

/* Rank 1 reads rank 0's bcast data with one process_vm_readv (looping only
 * if the kernel returns a short count).  Returns -1 if the copy failed. */
static int copy_from_root(struct bench *b, size_t bytes)
{
    size_t done = 0;
    while (done < bytes) {
        struct iovec local = {b->send + done, bytes - done};
        struct iovec remote = {(void *)(uintptr_t)(b->peer_addr + done), bytes - done};
        ssize_t got = process_vm_readv(b->peer_pid, &local, 1, &remote, 1, 0);
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

/* One timed contestant: prepare, synchronise, time this rank's part. */
static double time_variant(struct bench *b, struct row *r, enum variant v)
{
    prepare_call(b, r);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (v == V_NATIVE) call_collective(&native_api, b, r);
    else if (v == V_STRATA) call_collective(&strata_api, b, r);
    else if (b->rank == 1 && copy_from_root(b, r->bytes)) r->copy_failed = 1;
    return MPI_Wtime() - t0;
}

/* Iteration i runs every contestant once.  Native and strata swap places
 * every iteration, so each goes first half the time and each follows the
 * other as often; the CMA copy, when timed, always comes last, so that it
 * precedes (and disturbs) both of them alike. */
static void time_one_iteration(struct bench *b, struct row *r, int i, double *times)
{
    enum variant first = i % 2 ? V_STRATA : V_NATIVE;
    enum variant order[NVARIANTS] = {first, first == V_NATIVE ? V_STRATA : V_NATIVE, V_COPY};
    for (int k = 0; k < r->nvariants; k++)
        times[order[k] * r->iters + i] = time_variant(b, r, order[k]);
}

/* ---- rows ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct stats summarize(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return (struct stats){median * 1e6, t[0] * 1e6, t[n - 1] * 1e6};
}

/* Warm-up calls (connections, the host MPI's lazily built structures), then
 * the number of timed iterations: --iters, or what fits the row budget.  The
 * estimate is the median warm-up iteration (the first one pays for the lazy
 * set-up), slowest rank, so every rank arrives at the same count. */
static int choose_iterations(struct bench *b, struct row *r)
{
    double scratch[NVARIANTS * WARMUP_ITERS], wall[WARMUP_ITERS];
    r->iters = WARMUP_ITERS;
    for (int i = 0; i < WARMUP_ITERS; i++) {
        double t0 = MPI_Wtime();
        time_one_iteration(b, r, i, scratch);
        wall[i] = MPI_Wtime() - t0;
    }
    double per_iter = summarize(wall, WARMUP_ITERS).median * 1e-6;
    PMPI_Allreduce(MPI_IN_PLACE, &per_iter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (b->opt.iters) return b->opt.iters;
    double fit = ROW_BUDGET_S / (per_iter > 0 ? per_iter : 1e-9);
    return fit < MIN_ITERS ? MIN_ITERS : fit > MAX_ITERS ? MAX_ITERS : (int)fit;
}

/* Times one (collective, size) row.  Per-rank times stay local during the
 * loop, so the only communication between calls is the barrier; one
 * PMPI_Reduce(MAX) afterwards gives each call's time over all ranks. */
static int run_collective(struct bench *b, struct row *r)
{
    r->nvariants = r->coll == STRATA_COLL_BCAST && b->copy_ok && !r->algorithm ? 3 : 2;
    r->iters = choose_iterations(b, r);
    r->copy_failed = 0;
    size_t n = (size_t)r->nvariants * (size_t)r->iters;
    double *mine = malloc(n * sizeof *mine);
    double *all = b->rank == 0 ? malloc(n * sizeof *all) : NULL;
    if (!mine || (b->rank == 0 && !all)) return -1;
    for (int i = 0; i < r->iters; i++) time_one_iteration(b, r, i, mine);
    PMPI_Reduce(mine, all, (int)n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int failed = r->copy_failed;
    PMPI_Allreduce(&failed, &r->copy_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (all)
        for (int v = 0; v < r->nvariants; v++) r->st[v] = summarize(all + v * r->iters, r->iters);
    free(mine);
    free(all);
    return 0;
}

/* A late-form call (a bench_noise_call_fn): prepared and synchronised as
 * time_variant, and the late rank spends its delay inside its timed region
 * before it enters the collective. */
static double time_noisy_call(void *ctx, int impl, const struct bench_noise_draw *draw,
                              double *late_s)
{
    struct bench *b = ctx;
    prepare_call(b, b->noisy_row);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    *late_s = 0;
    if (b->rank == draw->late_rank) {
        bench_noise_spin_until(t0, draw->delay_s);
        *late_s = MPI_Wtime() - t0;
    }
    call_collective(impl ? &strata_api : &native_api, b, b->noisy_row);
    return MPI_Wtime() - t0;
}

/* A rate-form call (a bench_noise_loop_fn): back to back with the previous
 * one, as in IMB's loop, so no new values and no barrier; the data stay
 * those the last quiet call prepared. */
static void loop_call(void *ctx, int impl)
{
    struct bench *b = ctx;
    call_collective(impl ? &strata_api : &native_api, b, b->noisy_row);
}

/* --noise: the row again with noise, after its quiet calls. */
static int run_noisy_calls(struct bench *b, struct row *r)
{
    double quiet_us[2] = {r->st[V_NATIVE].median, r->st[V_STRATA].median};
    b->noisy_row = r;
    int rc = b->opt.noise.form == BENCH_NOISE_RATE
                 ? bench_noise_run_rate_row(&b->opt.noise, b->noise_rows, MPI_COMM_WORLD,
                                            loop_call, b, &r->noise)
                 : bench_noise_run_late_row(&b->opt.noise, b->noise_rows, MPI_COMM_WORLD,
                                            quiet_us, time_noisy_call, b, &r->noise);
    b->noise_rows++;
    b->noisy_row = NULL;
    return rc;
}

static struct row make_row(const struct bench *b, enum strata_coll coll, size_t bytes)
{
    struct row r = {.coll = coll, .bytes = bytes, .count = (int)bytes, .type = MPI_BYTE};
    if (coll == STRATA_COLL_REDUCE || coll == STRATA_COLL_ALLREDUCE) {
        r.count = bytes / 8 ? (int)(bytes / 8) : 1;
        r.type = MPI_DOUBLE;
        r.bytes = (size_t)r.count * 8;
    } else if (coll == STRATA_COLL_BARRIER) {
        r.count = 0;
        r.bytes = 0;
    }
    r.refusal = strata_route_refusal(b->ctx, coll);
    r.predicted = -1;
    return r;
}

/* ---- output ----------------------------------------------------------- */

static void format_size(size_t bytes, char *out, size_t len)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) snprintf(out, len, "%zuM", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0) snprintf(out, len, "%zuK", bytes >> 10);
    else snprintf(out, len, "%zu", bytes);
}

static void print_table_header(void)
{
    /* Row widths; a "µ" is two bytes wide for printf but one column on screen. */
    printf("\n%-10s %6s %6s %10s %9s %10s %9s %8s  %-6s %9s\n", "collective", "size", "calls",
           "native", "min", "strata", "min", "strata/", "path", "1 copy");
    printf("%-10s %6s %6s %11s %10s %11s %10s %8s  %-6s %10s\n", "", "bytes", "", "median µs",
           "µs", "median µs", "µs", "native", "", "µs");
}

static void print_row(const struct row *r)
{
    char size[32], copy[32] = "-";
    format_size(r->bytes, size, sizeof size);
    if (r->nvariants == 3 && !r->copy_failed)
        snprintf(copy, sizeof copy, "%.2f", r->st[V_COPY].median);
    double ratio = r->st[V_NATIVE].median > 0 ? r->st[V_STRATA].median / r->st[V_NATIVE].median : 0;
    printf("%-10s %6s %6d %10.2f %9.2f %10.2f %9.2f %8.3f  %-6s %9s\n", short_name(r->coll),
           size, r->iters, r->st[V_NATIVE].median, r->st[V_NATIVE].min, r->st[V_STRATA].median,
           r->st[V_STRATA].min, ratio, r->refusal ? "native" : "strata", copy);
    fflush(stdout);
}

static void print_noise_row(const struct row *r)
{
    char size[32];
    format_size(r->bytes, size, sizeof size);
    bench_noise_print_row(short_name(r->coll), size, r->refusal ? "native" : "strata", &r->noise);
}

static void print_algorithm_header(void)
{
    printf("\n%-10s %6s %-20s %4s %10s %10s %9s %10s %8s\n", "collective", "size", "algorithm",
           "k", "predicted", "strata", "strata/", "native", "strata/");
    printf("%-10s %6s %-20s %4s %11s %11s %9s %11s %8s\n", "", "bytes", "", "", "µs",
           "median µs", "predicted", "median µs", "native");
}

static void print_algorithm_row(const struct row *r)
{
    char size[32], k[16] = "-", name[64];
    format_size(r->bytes, size, sizeof size);
    if (r->k) snprintf(k, sizeof k, "%d", r->k);
    snprintf(name, sizeof name, "%s%s", r->tuned ? "tuned: " : "", r->algorithm);
    double vs_model = r->predicted > 0 ? r->st[V_STRATA].median / r->predicted : 0;
    double vs_native = r->st[V_NATIVE].median > 0 ? r->st[V_STRATA].median / r->st[V_NATIVE].median : 0;
    printf("%-10s %6s %-20s %4s %10.2f %10.2f %9.3f %10.2f %8.3f\n", short_name(r->coll), size,
           name, k, r->predicted, r->st[V_STRATA].median, vs_model, r->st[V_NATIVE].median,
           vs_native);
    fflush(stdout);
}

/* Collective names sharing one hand-off reason, one line per reason. */
static void print_paths(const struct bench *b)
{
    int done[STRATA_NCOLLS] = {0};
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        if (!b->opt.want[c] || done[c]) continue;
        const char *why = strata_route_refusal(b->ctx, (enum strata_coll)c);
        printf("path      : %s for ", why ? "native (handed to the host MPI)" : "strata");
        for (int d = c; d < STRATA_NCOLLS; d++) {
            const char *other = strata_route_refusal(b->ctx, (enum strata_coll)d);
            if (!b->opt.want[d] || done[d] || (why ? !other || strcmp(why, other) : !!other))
                continue;
            printf("%s%s", d == c ? "" : ",", short_name((enum strata_coll)d));
            done[d] = 1;
        }
        printf(why ? "\n            (%s)\n" : "\n", why);
    }
}

/* The command line as one string, arguments quoted where a shell needs it. */
static void format_command(int argc, char **argv, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && used < len; i++) {
        const char *a = i == 0 && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[i];
        int quote = !*a || strpbrk(a, " \t\"'$\\*?;&|<>()`") != NULL;
        used += (size_t)snprintf(out + used, len - used, quote ? "%s'%s'" : "%s%s",
                                 i ? " " : "", a);
    }
}

static void host_mpi_name(char *out, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    snprintf(out, len, "%s", version);
}

static void print_header(const struct bench *b, const char *command, const char *mpi)
{
    printf("strata-bench: strata %s\n", strata_version());
    printf("host MPI  : %s\n", mpi);
    printf("ranks     : %d on %d node%s\n", b->size, b->nodes, b->nodes == 1 ? "" : "s");
    printf("command   : %s\n", command);
    printf("method    : host MPI (PMPI_) and strata (MPI_) alternate call by call; before each\n"
           "            call the send buffer gets new values%s, then PMPI_Barrier;\n"
           "            a call's time is the max over ranks; median and min over the calls\n",
           b->opt.cold ? " and the caches are evicted" : "");
    if (b->opt.noise.max_ms > 0) bench_noise_print_method(&b->opt.noise);
    printf("1 copy    : %s\n",
           b->copy_ok ? "one process_vm_readv of the bcast bytes, rank 0 -> rank 1"
           : !b->opt.want[STRATA_COLL_BCAST] || b->opt.algorithms ? "- (bcast rows only)"
                                                                 : "- (CMA between rank 0 and rank 1 unavailable)");
    print_paths(b);
    fflush(stdout);
}

/* ---- JSON ------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_stats(FILE *f, const char *key, const struct stats *s)
{
    fprintf(f, "\"%s\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}", key, s->median,
            s->min, s->max);
}

static void json_row(FILE *f, const struct row *r)
{
    fprintf(f, "    {\"collective\": \"%s\", \"bytes\": %zu, \"count\": %d, \"datatype\": \"%s\", "
               "\"iterations\": %d,\n     ",
            short_name(r->coll), r->bytes, r->count, r->type == MPI_DOUBLE ? "MPI_DOUBLE" : "MPI_BYTE",
            r->iters);
    json_stats(f, "native", &r->st[V_NATIVE]);
    fprintf(f, ",\n     ");
    json_stats(f, "strata", &r->st[V_STRATA]);
    if (r->st[V_NATIVE].median > 0)
        fprintf(f, ",\n     \"ratio\": %.4f", r->st[V_STRATA].median / r->st[V_NATIVE].median);
    else
        fprintf(f, ",\n     \"ratio\": null");
    fprintf(f, ", \"path\": \"%s\", \"reason\": ", r->refusal ? "native" : "strata");
    if (r->refusal) json_string(f, r->refusal);
    else fprintf(f, "null");
    if (r->nvariants == 3 && !r->copy_failed)
        fprintf(f, ", \"one_copy_us\": %.4f", r->st[V_COPY].median);
    else
        fprintf(f, ", \"one_copy_us\": null");
    if (r->algorithm) {
        fprintf(f, ",\n     \"algorithm\": \"%s\", \"k\": %d, \"tuned\": %s, \"predicted_us\": %.4f",
                r->algorithm, r->k, r->tuned ? "true" : "false", r->predicted);
    }
    if (r->noise.calls) {
        fprintf(f, ",\n     ");
        bench_noise_json_row(f, &r->noise);
    }
    fprintf(f, "}");
}

static void json_machine(FILE *f, const struct bench *b, const char *mpi)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    fprintf(f, "  \"machine\": {\"host_mpi\": ");
    json_string(f, mpi);
    fprintf(f, ", \"built_for\": \"%s\", \"ranks\": %d, \"nodes\": %d, \"hostname\": ",
            STRATA_HOST_MPI, b->size, b->nodes);
    json_string(f, host);
    fprintf(f, ", \"cpus_online\": %ld},\n", sysconf(_SC_NPROCESSORS_ONLN));
}

/* Written beside FILE and renamed into place, so that an interrupted run
 * never leaves half a JSON document. */
static int write_json(const struct bench *b, const char *command, const char *mpi)
{
    char tmp[4096], date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(tmp, sizeof tmp, "%s.tmp", b->opt.json);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "{\n  \"tool\": \"strata-bench\",\n  \"strata_version\": \"%s\",\n  \"date\": \"%s\",\n",
            strata_version(), date);
    fprintf(f, "  \"command\": ");
    json_string(f, command);
    fprintf(f, ",\n");
    json_machine(f, b, mpi);
    fprintf(f, "  \"method\": {\"units\": \"microseconds\", \"cold\": %s, \"iterations\": ",
            b->opt.cold ? "true" : "false");
    if (b->opt.iters) fprintf(f, "%d", b->opt.iters);
    else fprintf(f, "\"adaptive\"");
    fprintf(f, ", \"root\": %d, \"per_call\": \"max over ranks\", \"timer_tick_s\": %g,\n"
               "             \"noise\": ", BENCH_ROOT, MPI_Wtick());
    if (b->opt.noise.max_ms > 0) bench_noise_json_method(f, &b->opt.noise);
    else fprintf(f, "null");
    fprintf(f, "},\n");
    fprintf(f, "  \"results\": [\n");
    for (int i = 0; i < b->nrows; i++) {
        json_row(f, &b->rows[i]);
        fprintf(f, i + 1 < b->nrows ? ",\n" : "\n");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f)) return -1;
    return rename(tmp, b->opt.json);
}

/* ---- setup ------------------------------------------------------------ */

/* Counts the nodes (real ones, not strata's virtual ones) and returns the
 * world rank of the first rank on this rank's node. */
static int discover_nodes(struct bench *b)
{
    MPI_Comm node;
    int local, leader = b->rank;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &local);
    PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
    int first = local == 0;
    PMPI_Allreduce(&first, &b->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Comm_free(&node);
    return leader;
}

/* Rank 1 learns rank 0's pid and send buffer, and tries one small read: the
 * CMA column is shown only if rank 1 shares rank 0's node and may read it. */
static void setup_copy_peer(struct bench *b, int node_leader)
{
    b->copy_ok = 0;
    if (b->size < 2 || !b->opt.want[STRATA_COLL_BCAST] || b->opt.algorithms) return;
    uint64_t info[2] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)b->send};
    if (b->rank == 0) PMPI_Send(info, 2, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
    if (b->rank == 1) {
        PMPI_Recv(info, 2, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        b->peer_pid = (pid_t)info[0];
        b->peer_addr = info[1];
        b->copy_ok = node_leader == 0 && copy_from_root(b, 8) == 0;
    }
    PMPI_Bcast(&b->copy_ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
}

static void record_row(struct bench *b, const struct row *r)
{
    if (b->rank != 0) return;
    if (r->algorithm) print_algorithm_row(r);
    else if (r->noise.calls) print_noise_row(r);
    else print_row(r);
    struct row *grown = realloc(b->rows, (size_t)(b->nrows + 1) * sizeof *grown);
    if (!grown) return;
    b->rows = grown;
    b->rows[b->nrows++] = *r;
}

static void run_all_rows(struct bench *b)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        if (!b->opt.want[c]) continue;
        int nsizes = c == STRATA_COLL_BARRIER ? 1 : b->opt.nsizes;
        for (int s = 0; s < nsizes; s++) {
            struct row r = make_row(b, (enum strata_coll)c, b->opt.sizes[s]);
            if (run_collective(b, &r) || (b->opt.noise.max_ms > 0 && run_noisy_calls(b, &r))) {
                fprintf(stderr, "strata-bench: out of memory\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            record_row(b, &r);
        }
    }
}

/* One --algorithms row: `name_k` forced (NULL: strata's own choice). */
static void run_algorithm_row(struct bench *b, enum strata_coll c, size_t bytes,
                              const struct strata_algorithm *al, int k)
{
    struct row r = make_row(b, c, bytes);
    struct strata_model_shape shape;
    strata_select_shape(b->ctx->plane, &shape);
    if (al) {
        char name_k[96], err[256];
        snprintf(name_k, sizeof name_k, "%s:%d", al->name, k);
        if (strata_select_force(c, al->k_meaning ? name_k : al->name, err, sizeof err)) return;
    } else {
        struct strata_choice ch;
        strata_select_force(c, NULL, NULL, 0);
        strata_select(b->ctx->plane, c, r.bytes, &ch);
        al = ch.al;
        k = ch.k;
        r.tuned = 1;
    }
    r.algorithm = al->name;
    r.k = al->k_meaning ? k : 0;
    r.predicted = strata_model_predict(strata_select_model(), al, &shape, r.bytes, k);
    if (run_collective(b, &r)) {
        fprintf(stderr, "strata-bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    record_row(b, &r);
    strata_select_force(c, NULL, NULL, 0);
}

/* Factors: 1 for an algorithm without one, else the powers of two below
 * size, then size - 1 (every other rank at once). */
static int factors_to_try(const struct strata_algorithm *al, int size, int *out)
{
    int n = 0;
    if (!al->k_meaning) {
        out[n++] = 1;
        return n;
    }
    for (int k = 1; k < size - 1 && n < 32; k *= 2) out[n++] = k;
    out[n++] = size > 1 ? size - 1 : 1;
    return n;
}

/* --algorithms: per collective and size, strata's choice, then every
 * algorithm that can run here, with each factor worth trying. */
static void run_algorithm_rows(struct bench *b)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        if (!b->opt.want[c] || strata_route_refusal(b->ctx, (enum strata_coll)c)) continue;
        for (int s = 0; s < b->opt.nsizes; s++) {
            int any = 0;
            for (int id = 0; id < STRATA_NALGOS; id++) {
                const struct strata_algorithm *al = strata_algorithm((enum strata_algo)id);
                if (al->coll != c) continue;
                if (!any++) run_algorithm_row(b, (enum strata_coll)c, b->opt.sizes[s], NULL, 0);
                int ks[40], nk = factors_to_try(al, b->size, ks);
                for (int i = 0; i < nk; i++) {
                    if (strata_algorithm_refusal(al, b->size, b->ctx->plane->use_cma, ks[i]))
                        continue;
                    run_algorithm_row(b, (enum strata_coll)c, b->opt.sizes[s], al, ks[i]);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    struct bench b = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    int rc = parse_options(argc, argv, &b.opt, b.rank == 0);
    if (rc) {
        if (rc == 1 && b.rank == 0) usage(stdout);
        if (rc == 2 && b.rank == 0) usage(stderr);
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    /* Collective on first use; the route of each collective is read from it. */
    b.ctx = strata_ctx_get(MPI_COMM_WORLD);
    int leader = discover_nodes(&b);
    int failed = alloc_buffers(&b) != 0, any_failed;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed) {
        if (b.rank == 0) fprintf(stderr, "strata-bench: cannot allocate the buffers\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    setup_copy_peer(&b, leader);

    char command[4096], mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    format_command(argc, argv, command, sizeof command);
    host_mpi_name(mpi, sizeof mpi);
    if (b.rank == 0) {
        print_header(&b, command, mpi);
        if (b.opt.algorithms) print_algorithm_header();
        else if (b.opt.noise.max_ms > 0) bench_noise_print_header(&b.opt.noise);
        else print_table_header();
    }
    if (b.opt.algorithms) run_algorithm_rows(&b);
    else run_all_rows(&b);
    if (b.rank == 0 && b.opt.json && write_json(&b, command, mpi)) {
        fprintf(stderr, "strata-bench: cannot write %s: %s\n", b.opt.json, strerror(errno));
        rc = 1;
    }
    free(b.rows);
    free(b.send);
    free(b.recv);
    free(b.flush);
    MPI_Finalize();
    return rc;
}
