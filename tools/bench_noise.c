/* strata-bench --noise: the schedule of late ranks, the delay, the figures.
 * What is injected and what is reported, and why: bench_noise.h. */
#include "bench_noise.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

void bench_noise_defaults(struct bench_noise_options *opt)
{
    *opt = (struct bench_noise_options){
        .max_ms = 0, .calls = BENCH_NOISE_DEFAULT_CALLS, .seed = BENCH_NOISE_DEFAULT_SEED};
}

/* "10", "2.5" ms: above 0, at most BENCH_NOISE_MAX_MS; -1 otherwise. */
static double parse_ms(const char *text)
{
    char *end;
    errno = 0;
    double ms = strtod(text, &end);
    if (errno || end == text || *end || !(ms > 0) || ms > BENCH_NOISE_MAX_MS) return -1;
    return ms;
}

/* An integer lo..hi (no sign); -1 otherwise. */
static long long parse_integer(const char *text, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    return errno || end == text || *end || *text == '-' || v < lo || v > hi ? -1 : v;
}

int bench_noise_option(int argc, char **argv, int *i, struct bench_noise_options *opt,
                       int verbose)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--noise") || !strncmp(a, "--noise=", 8)) {
        opt->max_ms = a[7] ? parse_ms(a + 8) : BENCH_NOISE_DEFAULT_MS;
        if (opt->max_ms > 0) return 1;
        if (verbose)
            fprintf(stderr, "strata-bench: --noise=MS takes a delay in ms, above 0, at most %g\n",
                    BENCH_NOISE_MAX_MS);
        return -1;
    }
    int calls = !strcmp(a, "--noise-calls");
    if (!calls && strcmp(a, "--noise-seed")) return 0;
    long long v = *i + 1 < argc ? parse_integer(argv[++*i], calls ? 1 : 0,
                                                calls ? 100000 : LLONG_MAX) : -1;
    if (v < 0) {
        if (verbose)
            fprintf(stderr, calls ? "strata-bench: --noise-calls takes 1..100000\n"
                                  : "strata-bench: --noise-seed takes an integer >= 0\n");
        return -1;
    }
    if (calls) opt->calls = (int)v;
    else opt->seed = (uint64_t)v;
    return 1;
}

void bench_noise_usage(FILE *to)
{
    fprintf(to,
            "  --noise[=MS]   time every row again, with a late rank in every call: a rank\n"
            "                 drawn at random busy-waits U(0, MS) ms before entering the call\n"
            "                 (MS default %g; the ADAPT paper used 10 and 20)\n"
            "  --noise-calls N\n"
            "                 noisy calls per implementation and row (default %d)\n"
            "  --noise-seed S the late-rank schedule's seed (default %u)\n",
            BENCH_NOISE_DEFAULT_MS, BENCH_NOISE_DEFAULT_CALLS, BENCH_NOISE_DEFAULT_SEED);
}

/* splitmix64: a stateless mix, so a draw needs only its coordinates. */
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

void bench_noise_spin_until(double start, double seconds)
{
    /* Busy: OS noise takes the CPU, it does not give it to the other ranks. */
    while (MPI_Wtime() - start < seconds) {
    }
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
static int summarize(const double *times, const double *delays, int calls,
                     double quiet_median_us, struct bench_noise_stats *out)
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
int bench_noise_run_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
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
        out->calls = calls;
        out->delay_mean = delay_sum / (2 * calls) * 1e6;
        rc = summarize(all, all_delays, calls, quiet_us[0], &out->native) ||
                     summarize(all + calls, all_delays + calls, calls, quiet_us[1], &out->strata)
                 ? -1 : 0;
    }
    free(mine);
    free(all);
    return rc;
}

void bench_noise_print_method(const struct bench_noise_options *opt)
{
    printf("noise     : per row %d more calls each; in every one a rank drawn at random\n"
           "            busy-waits U(0, %g ms) after the barrier, before the call (seed %llu;\n"
           "            the host and strata meet the same schedule); late cost = call time\n"
           "            - that delay (median), late factor = late cost / quiet median\n",
           opt->calls, opt->max_ms, (unsigned long long)opt->seed);
}

void bench_noise_print_header(void)
{
    /* A "µ" is two bytes wide for printf but one column on screen. */
    printf("\n%-10s %6s %5s %9s | %-37s | %-37s | %8s  %-6s\n", "collective", "size", "calls",
           "delay", "native (host MPI)", "strata", "strata/", "path");
    printf("%-10s %6s %5s %10s | %9s %9s %9s %7s | %9s %9s %9s %7s | %8s\n", "", "bytes", "",
           "mean µs", "quiet", "noisy", "late", "late", "quiet", "noisy", "late", "late",
           "native");
    printf("%-10s %6s %5s %9s | %9s %9s %9s %7s | %9s %9s %9s %7s | %8s\n", "", "", "", "",
           "median", "mean", "cost med", "factor", "median", "mean", "cost med", "factor",
           "late cost");
}

void bench_noise_print_row(const char *coll, const char *size, const char *path,
                           const struct bench_noise_row *n)
{
    const struct bench_noise_stats *h = &n->native, *s = &n->strata;
    double vs = h->late_cost_median > 0 ? s->late_cost_median / h->late_cost_median : 0;
    printf("%-10s %6s %5d %9.1f | %9.2f %9.1f %9.2f %7.2f | %9.2f %9.1f %9.2f %7.2f | %8.3f"
           "  %-6s\n", coll, size, n->calls, n->delay_mean, h->quiet_median, h->noisy_mean,
           h->late_cost_median, h->late_factor, s->quiet_median, s->noisy_mean, s->late_cost_median,
           s->late_factor, vs, path);
    fflush(stdout);
}

void bench_noise_json_method(FILE *f, const struct bench_noise_options *opt)
{
    fprintf(f, "{\"form\": \"one late rank per call, uniform among the ranks, busy-waits "
               "U(0, max_ms) inside its timed region before entering the collective\", "
               "\"max_ms\": %g, \"calls\": %d, \"seed\": %llu}",
            opt->max_ms, opt->calls, (unsigned long long)opt->seed);
}

static void json_stats(FILE *f, const char *key, const struct bench_noise_stats *s)
{
    fprintf(f, "\"%s\": {\"quiet_median\": %.4f, \"noisy_mean\": %.4f, \"noisy_median\": %.4f, "
               "\"late_cost_mean\": %.4f, \"late_cost_median\": %.4f, \"late_factor\": %.4f, "
               "\"slowdown\": %.4f}",
            key, s->quiet_median, s->noisy_mean, s->noisy_median, s->late_cost_mean,
            s->late_cost_median, s->late_factor, s->slowdown);
}

void bench_noise_json_row(FILE *f, const struct bench_noise_row *n)
{
    fprintf(f, "\"noise\": {\"calls\": %d, \"delay_mean\": %.4f,\n       ", n->calls,
            n->delay_mean);
    json_stats(f, "native", &n->native);
    fprintf(f, ",\n       ");
    json_stats(f, "strata", &n->strata);
    /* Ratios of the late costs, strata / host: of the medians, of the means. */
    const char *keys[2] = {"strata_vs_native", "strata_vs_native_mean"};
    double num[2] = {n->strata.late_cost_median, n->strata.late_cost_mean};
    double den[2] = {n->native.late_cost_median, n->native.late_cost_mean};
    for (int i = 0; i < 2; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : ",\n       ", keys[i]);
        if (den[i] > 0) fprintf(f, "%.4f", num[i] / den[i]);
        else fprintf(f, "null");
    }
    fprintf(f, "}");
}
