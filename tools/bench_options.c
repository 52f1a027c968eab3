/* strata-bench's command line: the options, their checks, the help. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_usage(FILE *to)
{
    fprintf(to,
            "usage: strata-run -n N strata-bench [options]\n"
            "  --sizes LIST   bytes per rank block, K/M/G suffixes (default " BENCH_DEFAULT_SIZES ")\n"
            "                 reduce/allreduce/scan/exscan: a vector of bytes/8 doubles (at least\n"
            "                 1); reduce_scatter(_block): bytes/8 doubles per rank's block\n"
            "  --colls LIST   bcast,reduce,allreduce,allgather,gather,scatter,alltoall,barrier,\n"
            "                 reduce_scatter_block,reduce_scatter,scan,exscan,\n"
            "                 gatherv,scatterv,allgatherv,alltoallv (default all)\n"
            "  --pattern P    the v-collectives' blocks: uniform (each the size), empty (rank\n"
            "                 N/2's block empty), skewed (block j: size/(j+1), a power law)\n"
            "  --sweep        every collective (or those of --colls) at every power of 2 from\n"
            "                 %u B to %u MiB, iterations adaptive as below (not with --sizes)\n"
            "  --overlap      the nonblocking forms (MPI_Ibcast, ...): post + wait, then\n"
            "                 post + compute + wait, and the share hidden (overlap%%), strata\n"
            "                 beside the host MPI (--iters calls each, default 50)\n"
            "  --device       MPI_Bcast and MPI_Allreduce (of --colls) on device buffers:\n"
            "                 strata, the application's own staging (copy to host, host MPI,\n"
            "                 copy back) and plain host buffers (--iters calls, default 20;\n"
            "                 STRATA_CUDA_LIB picks the driver, tests' fake one included)\n"
            "  --nonblocking  the nonblocking forms: alone, the --overlap table (start-to-\n"
            "                 completion latency and overlap%%); with --noise, ADAPT's noise\n"
            "                 experiment on them (post + wait; default colls bcast,reduce,\n"
            "                 allreduce).  Run with STRATA_PROGRESS=thread to time the\n"
            "                 progress thread (strata-bench then asks MPI_THREAD_MULTIPLE)\n"
            "  --persistent   persistent forms: MPI_<coll>_init once, then per call\n"
            "                 MPI_Start + MPI_Wait, strata's beside its blocking form and the\n"
            "                 host's persistent form (--iters calls each, default 200)\n"
            "  --iters N      timed calls per implementation and row (default adaptive,\n"
            "                 about %.1f s per row, %d to %d calls)\n"
            "  --root-shift   rooted collectives (bcast, reduce, gather, scatter): the root of\n"
            "                 call i is rank i %% N, as IMB's root_shift (default: rank %d)\n"
            "  --cold         also evict the caches before every call (writes %u MiB)\n"
            "  --alloc-mem    the buffers come from MPI_Alloc_mem (on transport map: memory\n"
            "                 peers map, copied with memcpy; the host MPI uses the same)\n"
            "  --json FILE    write every result to FILE as JSON (fields: tools/bench-schema.json)\n"
            "  --csv FILE     write every result to FILE as CSV, one line per row and\n"
            "                 implementation (columns: first line of the file)\n"
            "  --algorithms   time every algorithm of bcast, gather, scatter, allgather and\n"
            "                 alltoall forced in turn (and strata's own choice), each beside the\n"
            "                 host MPI, with the cost model's prediction\n"
            "  --fit FILE     with --algorithms: write the model in use to FILE with each\n"
            "                 algorithm's measured median over its prediction (\"measured\"\n"
            "                 lines: per-algorithm corrections selection starts from; use it\n"
            "                 as STRATA_MODEL or install it as the model cache)\n"
            "  --load N       N busy processes on each node beside the job (started by its\n"
            "                 first rank, gone when the run ends or dies; default 0)\n"
            "  --load-kind spin|noise\n"
            "                 spin (default): pure busy loops; noise: each busy-waits U(0, %g)\n"
            "                 ms, then sleeps U(0, %g) ms, again and again, like OS noise\n"
            "  --load-pin     competitor i bound to CPU i mod CPUs (default: unpinned)\n",
            BENCH_SWEEP_MIN, BENCH_SWEEP_MAX >> 20, BENCH_ROW_BUDGET_S, BENCH_MIN_ITERS,
            BENCH_MAX_ITERS, BENCH_ROOT, BENCH_FLUSH_BYTES >> 20, BENCH_LOAD_NOISE_MAX_MS,
            BENCH_LOAD_NOISE_MAX_MS);
    bench_noise_usage(to);
    fprintf(to,
            "  (with --root-shift, the noisy calls' root moves on at every call)\n"
            "figures: a call's time is the slowest rank's; per row and implementation the\n"
            "  median, min and max over the calls; the per-rank spread: each rank's mean\n"
            "  time per call, min/median/max over the ranks; bandwidth: bytes / median time,\n"
            "  counting the message for bcast, reduce, allreduce, scan and exscan, the whole\n"
            "  gathered or scattered buffer (N blocks) for allgather, gather and scatter, and\n"
            "  one rank's send buffer (N blocks) for alltoall, reduce_scatter_block and\n"
            "  reduce_scatter; none for barrier\n");
}

const char *bench_pattern_name(int pattern)
{
    static const char *names[] = {"uniform", "empty", "skewed"};
    return pattern >= 0 && pattern < 3 ? names[pattern] : "?";
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
static int for_each_item(const char *list, int (*take)(struct bench_options *, const char *),
                         struct bench_options *opt)
{
    char *copy = strdup(list), *save = NULL;
    int rc = copy && *copy ? 0 : -1;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item && !rc;
         item = strtok_r(NULL, ",", &save))
        rc = take(opt, item);
    free(copy);
    return rc;
}

static int take_size(struct bench_options *opt, const char *item)
{
    size_t bytes = parse_size(item);
    if (!bytes || opt->nsizes == BENCH_MAX_SIZES) return -1;
    opt->sizes[opt->nsizes++] = bytes;
    return 0;
}

static int take_coll(struct bench_options *opt, const char *item)
{
    int c = strata_coll_parse(item);
    if (c < 0 || !bench_coll_supported(c)) return -1;
    opt->want[c] = 1;
    return 0;
}

static void sweep_sizes(struct bench_options *opt)
{
    opt->nsizes = 0;
    for (size_t s = BENCH_SWEEP_MIN; s <= BENCH_SWEEP_MAX && opt->nsizes < BENCH_MAX_SIZES; s *= 2)
        opt->sizes[opt->nsizes++] = s;
}

/* Why these options do not fit together; NULL if they do. */
static const char *conflict(const struct bench_options *opt, int sizes_given)
{
    if (opt->noise.max_ms > 0 && opt->algorithms) return "--noise does not combine with --algorithms";
    if (opt->overlap && (opt->algorithms || opt->noise.max_ms > 0 || opt->json || opt->csv))
        return "--overlap does not combine with --algorithms, --noise, --json or --csv";
    if (opt->device && (opt->overlap || opt->algorithms || opt->noise.max_ms > 0 || opt->json ||
                        opt->csv))
        return "--device does not combine with --overlap, --algorithms, --noise, --json or --csv";
    if (opt->nonblocking && opt->algorithms) return "--nonblocking does not combine with --algorithms";
    if (opt->fit && !opt->algorithms) return "--fit needs --algorithms (it fits what they measure)";
    if (opt->persistent && (opt->overlap || opt->nonblocking || opt->algorithms ||
                            opt->noise.max_ms > 0 || opt->json || opt->csv))
        return "--persistent does not combine with --overlap, --nonblocking, --algorithms, "
               "--noise, --json or --csv";
    if (opt->persistent && !bench_persistent_available())
        return "--persistent: the host MPI defines no persistent collectives";
    if (opt->sweep && sizes_given) return "--sweep sets the sizes: leave out --sizes";
    /* A noisy row takes seconds: a sweep of them would take an hour. */
    if (opt->sweep && opt->noise.max_ms > 0) return "--sweep does not combine with --noise";
    return NULL;
}

int bench_parse_options(int argc, char **argv, struct bench_options *opt, int verbose)
{
    const char *sizes = BENCH_DEFAULT_SIZES, *colls = NULL;
    int sizes_given = 0;
    memset(opt, 0, sizeof *opt);
    bench_noise_defaults(&opt->noise);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = !strcmp(a, "--sizes") || !strcmp(a, "--colls") || !strcmp(a, "--pattern") ||
                          !strcmp(a, "--iters") || !strcmp(a, "--json") || !strcmp(a, "--csv") || !strcmp(a, "--fit") ||
                          !strcmp(a, "--load") || !strcmp(a, "--load-kind");
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        if (!strcmp(a, "--cold")) { opt->cold = 1; continue; }
        if (!strcmp(a, "--alloc-mem")) { opt->alloc_mem = 1; continue; }
        if (!strcmp(a, "--algorithms")) { opt->algorithms = 1; continue; }
        if (!strcmp(a, "--root-shift")) { opt->root_shift = 1; continue; }
        if (!strcmp(a, "--sweep")) { opt->sweep = 1; continue; }
        if (!strcmp(a, "--overlap")) { opt->overlap = 1; continue; }
        if (!strcmp(a, "--nonblocking")) { opt->nonblocking = 1; continue; }
        if (!strcmp(a, "--persistent")) { opt->persistent = 1; continue; }
        if (!strcmp(a, "--load-pin")) { opt->load_pin = 1; continue; }
        if (!strcmp(a, "--device")) { opt->device = 1; continue; }
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
        else if (!strcmp(a, "--pattern")) {
            int p;
            for (p = 0; p < 3 && strcmp(val, bench_pattern_name(p)); p++) continue;
            if (p == 3) {
                if (verbose) fprintf(stderr, "strata-bench: --pattern takes uniform, empty or skewed\n");
                return 2;
            }
            opt->pattern = p;
        }
        else if (!strcmp(a, "--load-kind")) {
            if (bench_load_parse_kind(val, &opt->load_kind)) {
                if (verbose) fprintf(stderr, "strata-bench: --load-kind takes spin or noise\n");
                return 2;
            }
        }
        else if (!strcmp(a, "--load")) {
            char *end;
            long n = strtol(val, &end, 10);
            if (*end || end == val || n < 0 || n > BENCH_LOAD_MAX) {
                if (verbose) fprintf(stderr, "strata-bench: --load takes 0..%d\n", BENCH_LOAD_MAX);
                return 2;
            }
            opt->load = (int)n;
        }
        else if (!strcmp(a, "--json")) opt->json = val;
        else if (!strcmp(a, "--csv")) opt->csv = val;
        else if (!strcmp(a, "--fit")) opt->fit = val;
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
    if (opt->nonblocking && opt->noise.max_ms <= 0) opt->overlap = 1;
    const char *why = conflict(opt, sizes_given);
    if (why) {
        if (verbose) fprintf(stderr, "strata-bench: %s\n", why);
        return 2;
    }
    if (bench_noise_check(&opt->noise, verbose)) return 2;
    if (opt->noise.max_ms > 0 && !sizes_given) sizes = BENCH_NOISE_DEFAULT_SIZES;
    if (opt->nonblocking && opt->noise.max_ms > 0 && !colls) colls = "bcast,reduce,allreduce";
    if (opt->noise.max_ms > 0 && !colls) colls = BENCH_NOISE_DEFAULT_COLLS;
    if (opt->sweep) {
        sweep_sizes(opt);
    } else if (for_each_item(sizes, take_size, opt)) {
        if (verbose) fprintf(stderr, "strata-bench: bad --sizes '%s' (at most %d sizes, "
                                     "each 1 byte to 2 GiB-1, e.g. 8,64K,1M)\n",
                             sizes, BENCH_MAX_SIZES);
        return 2;
    }
    int nb = opt->overlap || opt->nonblocking || opt->persistent;
    if (!colls) {
        /* The nonblocking forms: the collectives the table has them for. */
        for (int c = 0; c < STRATA_NCOLLS; c++)
            opt->want[c] = bench_coll_supported(c) && (!nb || bench_nonblocking_supported(c));
    } else if (for_each_item(colls, take_coll, opt)) {
        if (verbose) fprintf(stderr, "strata-bench: bad --colls '%s'\n", colls);
        return 2;
    }
    for (int c = 0; nb && c < STRATA_NCOLLS; c++)
        if (opt->want[c] && !bench_nonblocking_supported(c)) {
            if (verbose)
                fprintf(stderr, "strata-bench: --overlap/--nonblocking/--persistent have no "
                                "form of %s\n", bench_coll_name(c));
            return 2;
        }
    /* bench_persistent.c builds the first eight's _init forms only. */
    for (int c = STRATA_COLL_BARRIER + 1; opt->persistent && c < STRATA_NCOLLS; c++)
        if (opt->want[c] && colls) {
            if (verbose)
                fprintf(stderr, "strata-bench: --persistent times the forms of bcast to barrier "
                                "only, not of %s\n", bench_coll_name(c));
            return 2;
        } else {
            opt->want[c] = 0;
        }
    return 0;
}
