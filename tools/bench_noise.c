/* strata-bench --noise: the options, the noise itself (the rate form's
 * per-rank clocks, the late form's late ranks), the blocks and calls that
 * meet it, the figures.  What is injected and reported, and why: bench_noise.h. */
#include "bench_noise.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#define PERIOD_S (1.0 / BENCH_NOISE_HZ)
#define PROBE_MIN_S 0.05          /* a probe shorter than this is retried with 4x the calls */
#define MAX_BLOCK_CALLS 10000000
#define MAX_BLOCK_S 60.0
#define SLOW_BLOCK_FACTOR 4.0     /* bounds a row's time when one implementation is far slower */

void bench_noise_defaults(struct bench_noise_options *opt)
{
    *opt = (struct bench_noise_options){
        .max_ms = 0, .form = BENCH_NOISE_RATE, .calls = BENCH_NOISE_DEFAULT_CALLS,
        .rounds = BENCH_NOISE_DEFAULT_ROUNDS, .block_s = BENCH_NOISE_DEFAULT_BLOCK_S,
        .seed = BENCH_NOISE_DEFAULT_SEED};
}

/* ---- options ---------------------------------------------------------- */

/* A number above 0, at most `hi`; -1 otherwise. */
static double parse_positive(const char *text, double hi)
{
    char *end;
    errno = 0;
    double v = text ? strtod(text, &end) : -1;
    if (!text || errno || end == text || *end || !(v > 0) || v > hi) return -1;
    return v;
}

/* An integer lo..hi (no sign); -1 otherwise. */
static long long parse_integer(const char *text, long long lo, long long hi)
{
    char *end;
    if (!text) return -1;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return errno || end == text || *end || *text == '-' || v < lo || v > hi ? -1 : v;
}

/* Whether `a` is option `name`, alone (*val: the next argument, *i moved past
 * it; NULL if none) or as name=VALUE. */
static int is_option(const char *a, const char *name, int argc, char **argv, int *i,
                     const char **val)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) || (a[n] && a[n] != '=')) return 0;
    *val = a[n] == '=' ? a + n + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

int bench_noise_option(int argc, char **argv, int *i, struct bench_noise_options *opt,
                       int verbose)
{
    const char *a = argv[*i], *val, *bad = NULL;
    if (!strcmp(a, "--noise") || !strncmp(a, "--noise=", 8)) {
        opt->max_ms = a[7] ? parse_positive(a + 8, BENCH_NOISE_MAX_MS) : BENCH_NOISE_DEFAULT_MS;
        if (opt->max_ms > 0) return 1;
        if (verbose)
            fprintf(stderr, "strata-bench: --noise=MS takes a length in ms, above 0, at most %g\n",
                    BENCH_NOISE_MAX_MS);
        return -1;
    }
    long long v;
    if (is_option(a, "--noise-form", argc, argv, i, &val)) {
        if (val && !strcmp(val, "rate")) opt->form = BENCH_NOISE_RATE;
        else if (val && !strcmp(val, "late")) opt->form = BENCH_NOISE_LATE;
        else bad = "--noise-form takes rate or late";
    } else if (is_option(a, "--noise-calls", argc, argv, i, &val)) {
        if ((v = parse_integer(val, 1, 100000)) < 0) bad = "--noise-calls takes 1..100000";
        else opt->calls = (int)v;
    } else if (is_option(a, "--noise-rounds", argc, argv, i, &val)) {
        if ((v = parse_integer(val, 1, BENCH_NOISE_MAX_ROUNDS)) < 0)
            bad = "--noise-rounds takes 1..32";
        else opt->rounds = (int)v;
    } else if (is_option(a, "--noise-block", argc, argv, i, &val)) {
        double s = parse_positive(val, MAX_BLOCK_S);
        if (s < 0) bad = "--noise-block takes seconds, above 0, at most 60";
        else opt->block_s = s;
    } else if (is_option(a, "--noise-seed", argc, argv, i, &val)) {
        if ((v = parse_integer(val, 0, LLONG_MAX)) < 0) bad = "--noise-seed takes an integer >= 0";
        else opt->seed = (uint64_t)v;
    } else {
        return 0;
    }
    if (bad) {
        if (verbose) fprintf(stderr, "strata-bench: %s\n", bad);
        return -1;
    }
    if (opt->max_ms == 0) opt->max_ms = BENCH_NOISE_DEFAULT_MS;
    return 1;
}

int bench_noise_check(const struct bench_noise_options *opt, int verbose)
{
    /* Longer events than the period would overlap the next one's slot. */
    if (opt->form == BENCH_NOISE_RATE && opt->max_ms > PERIOD_S * 1e3) {
        if (verbose)
            fprintf(stderr, "strata-bench: --noise=MS is at most %g with --noise-form=rate "
                            "(one event per %g ms)\n", PERIOD_S * 1e3, PERIOD_S * 1e3);
        return -1;
    }
    return 0;
}

void bench_noise_usage(FILE *to)
{
    fprintf(to,
            "  --noise[=MS]   time every row again with noise (ADAPT's experiment; MS default\n"
            "                 %g, the paper used 10 and 20); default sizes " BENCH_NOISE_DEFAULT_SIZES
            ", colls\n                 " BENCH_NOISE_DEFAULT_COLLS "\n"
            "  --noise-form rate|late\n"
            "                 rate (default): on every rank, at %g Hz, a busy-wait of U(0, MS)\n"
            "                 ms; calls back to back; reports the slowdown of the mean call\n"
            "                 late: in every call one random rank busy-waits U(0, MS) ms\n"
            "                 before entering; reports the late cost\n"
            "  --noise-rounds R  rate: rounds of 4 blocks per row (default %d)\n"
            "  --noise-block S   rate: a quiet block lasts at least S s (default %g)\n"
            "  --noise-calls N   rate: at least N calls per block; late: noisy calls per\n"
            "                 implementation and row (default %d)\n"
            "  --noise-seed S the noise's seed (default %u)\n",
            BENCH_NOISE_DEFAULT_MS, BENCH_NOISE_HZ, BENCH_NOISE_DEFAULT_ROUNDS,
            BENCH_NOISE_DEFAULT_BLOCK_S, BENCH_NOISE_DEFAULT_CALLS, BENCH_NOISE_DEFAULT_SEED);
}

/* ---- random numbers and time ------------------------------------------ */

/* splitmix64's finaliser: a stateless mix, so a draw needs only its keys. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) from the top 53 bits. */
static double unit(uint64_t x)
{
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* The next uniform of a stream (splitmix64: the state steps by the golden gamma). */
static double next_unit(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15u;
    return unit(mix(*state));
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_noise_spin_until(double start, double seconds)
{
    /* Busy: OS noise takes the CPU, it does not give it to the other ranks. */
    while (MPI_Wtime() - start < seconds) {
    }
}

/* ---- rate form -------------------------------------------------------- */

/* One rank's noise during one block. */
struct noise_clock {
    uint64_t state;
    double max_s;
    double next;                  /* when the next event is due; INFINITY: a quiet block */
    double length;                /* its length, s */
    double injected;              /* measured spin time, s */
    int events;
};

static void clock_start(struct noise_clock *c, const struct bench_noise_options *opt,
                        uint64_t key, double t0, int noisy)
{
    *c = (struct noise_clock){.state = key, .max_s = opt->max_ms * 1e-3};
    c->next = noisy ? t0 + next_unit(&c->state) * PERIOD_S : INFINITY;
    c->length = next_unit(&c->state) * c->max_s;
}

/* Before a call: every event now due, each a busy-wait of its length. */
static void clock_catch_up(struct noise_clock *c)
{
    double t = monotonic_s();
    while (t >= c->next) {
        double start = t, end = t + c->length;
        while ((t = monotonic_s()) < end) {
        }
        c->injected += t - start;
        c->events++;
        c->next += PERIOD_S;
        c->length = next_unit(&c->state) * c->max_s;
    }
}

/* One block on this rank: {loop time, noise spent, events}.  No barrier
 * inside the loop: the calls run back to back, as in IMB. */
static void run_block(const struct bench_noise_options *opt, MPI_Comm comm, uint64_t key,
                      int impl, int noisy, int calls, bench_noise_loop_fn call, void *ctx,
                      double out[3])
{
    struct noise_clock clock;
    PMPI_Barrier(comm);
    double t0 = monotonic_s();
    clock_start(&clock, opt, key, t0, noisy);
    for (int i = 0; i < calls; i++) {
        clock_catch_up(&clock);
        call(ctx, impl);
    }
    out[0] = monotonic_s() - t0;
    out[1] = clock.injected;
    out[2] = clock.events;
}

/* Calls per block: from quiet back-to-back loops of both implementations,
 * timed on the slowest rank (the same figures on every rank after the
 * Allreduce), so that the faster implementation's quiet block lasts
 * opt->block_s and the slower one's at most SLOW_BLOCK_FACTOR times that. */
static int probe_calls(const struct bench_noise_options *opt, MPI_Comm comm,
                       bench_noise_loop_fn call, void *ctx)
{
    for (int n = 2;; n *= 4) {
        double took[2];
        for (int impl = 0; impl < 2; impl++) {
            PMPI_Barrier(comm);
            double t0 = monotonic_s();
            for (int i = 0; i < n; i++) call(ctx, impl);
            took[impl] = monotonic_s() - t0;
        }
        PMPI_Allreduce(MPI_IN_PLACE, took, 2, MPI_DOUBLE, MPI_MAX, comm);
        double fast = fmin(took[0], took[1]), slow = fmax(took[0], took[1]);
        if (fast < PROBE_MIN_S && n < MAX_BLOCK_CALLS / 4) continue;
        double fit = fmin(ceil(opt->block_s / (fast / n)),
                          ceil(SLOW_BLOCK_FACTOR * opt->block_s / (slow / n)));
        return fit < opt->calls ? opt->calls : fit > MAX_BLOCK_CALLS ? MAX_BLOCK_CALLS : (int)fit;
    }
}

/* The noise of one rank in one round of one row; both noisy blocks of the
 * round replay it. */
static uint64_t noise_key(const struct bench_noise_options *opt, int row, int round, int rank)
{
    return mix(mix(mix(mix(opt->seed) ^ (uint64_t)row) ^ (uint64_t)round) ^ (uint64_t)rank);
}

int bench_noise_run_rate_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
                             bench_noise_loop_fn call, void *ctx, struct bench_noise_row *out)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    double *all = rank == 0 ? malloc(3 * (size_t)size * sizeof *all) : NULL;
    int failed = rank == 0 && !all, any_failed;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, comm);
    if (any_failed) {
        free(all);
        return -1;
    }
    int calls = probe_calls(opt, comm, call, ctx), rounds = opt->rounds;
    /* Rank 0's tallies: [impl][quiet 0, noisy 1][round] block times, s; the
     * noisy blocks' injected fractions and events, summed over ranks and rounds. */
    double block[2][2][BENCH_NOISE_MAX_ROUNDS] = {{{0}}}, injected[2] = {0}, events[2] = {0};
    for (int round = 0; round < rounds; round++) {
        uint64_t key = noise_key(opt, row, round, rank);
        for (int j = 0; j < 4; j++) {
            int kind = (j + round) % 4, impl = kind % 2, noisy = kind / 2;
            double mine[3];
            run_block(opt, comm, key, impl, noisy, calls, call, ctx, mine);
            PMPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, comm);
            for (int p = 0; all && p < size; p++) {
                const double *r = all + 3 * p;
                if (r[0] > block[impl][noisy][round]) block[impl][noisy][round] = r[0];
                if (noisy) {
                    injected[impl] += r[0] > 0 ? r[1] / r[0] : 0;
                    events[impl] += r[2];
                }
            }
        }
    }
    if (all) {
        *out = (struct bench_noise_row){.form = BENCH_NOISE_RATE, .calls = calls, .rounds = rounds};
        for (int impl = 0; impl < 2; impl++) {
            struct bench_noise_rate_stats *s = &out->rate[impl];
            double quiet = 0, noisy = 0;
            for (int round = 0; round < rounds; round++) {
                double q = block[impl][0][round], n = block[impl][1][round];
                quiet += q;
                noisy += n;
                s->round_slowdown[round] = q > 0 ? (n / q - 1) * 100 : 0;
            }
            s->quiet_mean = quiet / ((double)rounds * calls) * 1e6;
            s->noisy_mean = noisy / ((double)rounds * calls) * 1e6;
            s->slowdown = quiet > 0 ? (noisy / quiet - 1) * 100 : 0;
            s->injected = injected[impl] / ((double)rounds * size) * 100;
            s->events = events[impl] / ((double)rounds * size);
        }
    }
    free(all);
    return 0;
}

/* ---- late form -------------------------------------------------------- */

static struct bench_noise_draw draw_late_rank(const struct bench_noise_options *opt, int row,
                                              int call, int nranks)
{
    uint64_t key = mix(mix(opt->seed ^ mix((uint64_t)row)) ^ (uint64_t)call);
    int late = (int)(unit(mix(key ^ 1)) * nranks);
    return (struct bench_noise_draw){
        .late_rank = late < nranks ? late : nranks - 1,
        .delay_s = unit(mix(key ^ 2)) * opt->max_ms * 1e-3,
    };
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* From one implementation's call times and the late ranks' delays (seconds,
 * `calls` of each), and the row's quiet median (µs). */
static int summarize_late(const double *times, const double *delays, int calls,
                          double quiet_median_us, struct bench_noise_late_stats *out)
{
    double *noisy = malloc((size_t)calls * sizeof *noisy);
    double *late = malloc((size_t)calls * sizeof *late);
    if (!noisy || !late || calls < 1) {
        free(noisy);
        free(late);
        return -1;
    }
    double noisy_sum = 0, late_sum = 0, delay_sum = 0;
    for (int i = 0; i < calls; i++) {
        noisy[i] = times[i] * 1e6;
        late[i] = (times[i] - delays[i]) * 1e6;
        noisy_sum += noisy[i];
        late_sum += late[i];
        delay_sum += delays[i] * 1e6;
    }
    out->quiet_median = quiet_median_us;
    out->noisy_mean = noisy_sum / calls;
    out->late_cost_mean = late_sum / calls;
    out->noisy_median = median_of(noisy, calls);
    out->late_cost_median = median_of(late, calls);
    out->late_factor = quiet_median_us > 0 ? out->late_cost_median / quiet_median_us : 0;
    double delay_mean = delay_sum / calls;
    out->slowdown = delay_mean > 0 ? (out->noisy_mean - quiet_median_us) / delay_mean : 0;
    free(noisy);
    free(late);
    return 0;
}

/* Per-rank times and delays stay local during the loop (the barrier inside
 * each call is the only communication between calls); one PMPI_Reduce(MAX)
 * afterwards.  Layout: [impl][call] times, then the same of delays; the
 * delays reduce to the late rank's own, every other rank having 0. */
int bench_noise_run_late_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
                             const double quiet_us[2], bench_noise_call_fn time_call, void *ctx,
                             struct bench_noise_row *out)
{
    int rank, size, calls = opt->calls;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    size_t n = 2 * 2 * (size_t)calls;
    double *mine = malloc(n * sizeof *mine);
    double *all = rank == 0 ? malloc(n * sizeof *all) : NULL;
    if (!mine || (rank == 0 && !all)) {
        free(mine);
        free(all);
        return -1;
    }
    double *delays = mine + 2 * calls;
    for (int i = 0; i < calls; i++) {
        struct bench_noise_draw draw = draw_late_rank(opt, row, i, size);
        for (int k = 0; k < 2; k++) {
            int impl = (i + k) % 2; /* each goes first in half the calls */
            mine[impl * calls + i] = time_call(ctx, impl, &draw, &delays[impl * calls + i]);
        }
    }
    PMPI_Reduce(mine, all, (int)n, MPI_DOUBLE, MPI_MAX, 0, comm);
    int rc = 0;
    if (all) {
        const double *all_delays = all + 2 * calls;
        double delay_sum = 0;
        for (int i = 0; i < 2 * calls; i++) delay_sum += all_delays[i];
        *out = (struct bench_noise_row){.form = BENCH_NOISE_LATE, .calls = calls};
        out->delay_mean = delay_sum / (2 * calls) * 1e6;
        for (int impl = 0; impl < 2 && !rc; impl++)
            rc = summarize_late(all + impl * calls, all_delays + impl * calls, calls,
                                quiet_us[impl], &out->late[impl]);
    }
    free(mine);
    free(all);
    return rc;
}

/* ---- output ----------------------------------------------------------- */

void bench_noise_print_method(const struct bench_noise_options *opt)
{
    if (opt->form == BENCH_NOISE_LATE) {
        printf("noise     : late form: per row %d more calls each; in every one a rank drawn at\n"
               "            random busy-waits U(0, %g ms) after the barrier, before the call (seed\n"
               "            %llu; the host and strata meet the same schedule); late cost = call\n"
               "            time - that delay (median), late factor = late cost / quiet median\n",
               opt->calls, opt->max_ms, (unsigned long long)opt->seed);
        return;
    }
    printf("noise     : rate form (ADAPT 5.1.1): every rank busy-waits U(0, %g ms) at %g Hz\n"
           "            (own random phase, seed %llu), served at call boundaries; per row %d\n"
           "            rounds of 4 blocks (host quiet, strata quiet, host noisy, strata noisy,\n"
           "            order rotated), each >= %g s and >= %d calls back to back, no barrier\n"
           "            between calls; a block's time is the max over ranks of the loop;\n"
           "            slowdown = noisy / quiet mean per call - 1; injected = noise spent /\n"
           "            wall time per rank (expect %.1f%%)\n",
           opt->max_ms, BENCH_NOISE_HZ, (unsigned long long)opt->seed, opt->rounds, opt->block_s,
           opt->calls, opt->max_ms / 2 * 1e-3 * BENCH_NOISE_HZ * 100);
}

void bench_noise_print_header(const struct bench_noise_options *opt)
{
    /* A "µ" is two bytes wide for printf but one column on screen. */
    if (opt->form == BENCH_NOISE_RATE) {
        printf("\n%-10s %6s %7s %6s | %-38s | %-38s | %8s  %-6s\n", "collective", "size",
               "calls", "rounds", "native (host MPI)", "strata", "strata/", "path");
        printf("%-10s %6s %7s %6s | %10s %10s %8s %7s | %10s %10s %8s %7s | %8s\n", "", "bytes",
               "/block", "", "quiet", "noisy", "slowdown", "noise", "quiet", "noisy", "slowdown",
               "noise", "native");
        printf("%-10s %6s %7s %6s | %11s %11s %8s %7s | %11s %11s %8s %7s | %8s\n", "", "", "", "",
               "µs/call", "µs/call", "%", "%", "µs/call", "µs/call", "%", "%", "slowdown");
        return;
    }
    printf("\n%-10s %6s %5s %9s | %-37s | %-37s | %8s  %-6s\n", "collective", "size", "calls",
           "delay", "native (host MPI)", "strata", "strata/", "path");
    printf("%-10s %6s %5s %10s | %9s %9s %9s %7s | %9s %9s %9s %7s | %8s\n", "", "bytes", "",
           "mean µs", "quiet", "noisy", "late", "late", "quiet", "noisy", "late", "late",
           "native");
    printf("%-10s %6s %5s %9s | %9s %9s %9s %7s | %9s %9s %9s %7s | %8s\n", "", "", "", "",
           "median", "mean", "cost med", "factor", "median", "mean", "cost med", "factor",
           "late cost");
}

/* strata's slowdown / the host's; undefined (NaN) unless the host slowed down. */
static double slowdown_ratio(const struct bench_noise_row *n)
{
    return n->rate[0].slowdown > 0 ? n->rate[1].slowdown / n->rate[0].slowdown : NAN;
}

void bench_noise_print_row(const char *coll, const char *size, const char *path,
                           const struct bench_noise_row *n)
{
    if (n->form == BENCH_NOISE_RATE) {
        const struct bench_noise_rate_stats *h = &n->rate[0], *s = &n->rate[1];
        char vs[32] = "-";
        if (!isnan(slowdown_ratio(n))) snprintf(vs, sizeof vs, "%.3f", slowdown_ratio(n));
        printf("%-10s %6s %7d %6d | %10.2f %10.2f %8.1f %7.2f | %10.2f %10.2f %8.1f %7.2f | %8s"
               "  %-6s\n", coll, size, n->calls, n->rounds, h->quiet_mean, h->noisy_mean,
               h->slowdown, h->injected, s->quiet_mean, s->noisy_mean, s->slowdown, s->injected,
               vs, path);
        fflush(stdout);
        return;
    }
    const struct bench_noise_late_stats *h = &n->late[0], *s = &n->late[1];
    double vs = h->late_cost_median > 0 ? s->late_cost_median / h->late_cost_median : 0;
    printf("%-10s %6s %5d %9.1f | %9.2f %9.1f %9.2f %7.2f | %9.2f %9.1f %9.2f %7.2f | %8.3f"
           "  %-6s\n", coll, size, n->calls, n->delay_mean, h->quiet_median, h->noisy_mean,
           h->late_cost_median, h->late_factor, s->quiet_median, s->noisy_mean, s->late_cost_median,
           s->late_factor, vs, path);
    fflush(stdout);
}

void bench_noise_json_method(FILE *f, const struct bench_noise_options *opt)
{
    if (opt->form == BENCH_NOISE_RATE) {
        fprintf(f, "{\"form\": \"rate\", \"description\": \"every rank busy-waits U(0, max_ms) "
                   "at hz (own random phase), at call boundaries of back-to-back calls; blocks "
                   "of calls quiet and noisy per implementation; slowdown in %%\", "
                   "\"max_ms\": %g, \"hz\": %g, \"rounds\": %d, \"block_s\": %g, "
                   "\"calls\": %d, \"seed\": %llu}",
                opt->max_ms, BENCH_NOISE_HZ, opt->rounds, opt->block_s, opt->calls,
                (unsigned long long)opt->seed);
        return;
    }
    fprintf(f, "{\"form\": \"late\", \"description\": \"one late rank per call, uniform among "
               "the ranks, busy-waits U(0, max_ms) inside its timed region before entering the "
               "collective\", \"max_ms\": %g, \"calls\": %d, \"seed\": %llu}",
            opt->max_ms, opt->calls, (unsigned long long)opt->seed);
}

static void json_rate_stats(FILE *f, const char *key, const struct bench_noise_rate_stats *s,
                            int rounds)
{
    fprintf(f, "\"%s\": {\"quiet_mean\": %.4f, \"noisy_mean\": %.4f, \"slowdown\": %.4f, "
               "\"round_slowdown\": [", key, s->quiet_mean, s->noisy_mean, s->slowdown);
    for (int r = 0; r < rounds; r++) fprintf(f, "%s%.4f", r ? ", " : "", s->round_slowdown[r]);
    fprintf(f, "], \"injected\": %.4f, \"events\": %.4f}", s->injected, s->events);
}

static void json_late_stats(FILE *f, const char *key, const struct bench_noise_late_stats *s)
{
    fprintf(f, "\"%s\": {\"quiet_median\": %.4f, \"noisy_mean\": %.4f, \"noisy_median\": %.4f, "
               "\"late_cost_mean\": %.4f, \"late_cost_median\": %.4f, \"late_factor\": %.4f, "
               "\"slowdown\": %.4f}",
            key, s->quiet_median, s->noisy_mean, s->noisy_median, s->late_cost_mean,
            s->late_cost_median, s->late_factor, s->slowdown);
}

void bench_noise_json_row(FILE *f, const struct bench_noise_row *n)
{
    if (n->form == BENCH_NOISE_RATE) {
        fprintf(f, "\"noise\": {\"form\": \"rate\", \"calls_per_block\": %d, \"rounds\": %d,"
                   "\n       ", n->calls, n->rounds);
        json_rate_stats(f, "native", &n->rate[0], n->rounds);
        fprintf(f, ",\n       ");
        json_rate_stats(f, "strata", &n->rate[1], n->rounds);
        fprintf(f, ",\n       \"strata_vs_native_slowdown\": ");
        if (!isnan(slowdown_ratio(n))) fprintf(f, "%.4f}", slowdown_ratio(n));
        else fprintf(f, "null}");
        return;
    }
    fprintf(f, "\"noise\": {\"form\": \"late\", \"calls\": %d, \"delay_mean\": %.4f,\n       ",
            n->calls, n->delay_mean);
    json_late_stats(f, "native", &n->late[0]);
    fprintf(f, ",\n       ");
    json_late_stats(f, "strata", &n->late[1]);
    /* Ratios of the late costs, strata / host: of the medians, of the means. */
    const char *keys[2] = {"strata_vs_native", "strata_vs_native_mean"};
    double num[2] = {n->late[1].late_cost_median, n->late[1].late_cost_mean};
    double den[2] = {n->late[0].late_cost_median, n->late[0].late_cost_mean};
    for (int i = 0; i < 2; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : ",\n       ", keys[i]);
        if (den[i] > 0) fprintf(f, "%.4f", num[i] / den[i]);
        else fprintf(f, "null");
    }
    fprintf(f, "}");
}
