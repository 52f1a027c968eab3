/* strata-bench's terminal output (rank 0): the header that says what was
 * run and how, one table row per row as it is timed, and after the rows the
 * per-rank spread and bandwidth of each. */
#include <string.h>

#include "bench.h"
#include "strata.h"

void bench_format_size(size_t bytes, char *out, size_t len)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) snprintf(out, len, "%zuM", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0) snprintf(out, len, "%zuK", bytes >> 10);
    else snprintf(out, len, "%zu", bytes);
}

void bench_print_table_header(void)
{
    /* Row widths; a "µ" is two bytes wide for printf but one column on screen. */
    printf("\n%-10s %6s %6s %10s %9s %10s %9s %8s  %-6s %9s\n", "collective", "size", "calls",
           "native", "min", "strata", "min", "strata/", "path", "1 copy");
    printf("%-10s %6s %6s %11s %10s %11s %10s %8s  %-6s %10s\n", "", "bytes", "", "median µs",
           "µs", "median µs", "µs", "native", "", "µs");
}

void bench_print_row(const struct bench_row *r)
{
    char size[32], copy[32] = "-";
    bench_format_size(r->bytes, size, sizeof size);
    if (r->nvariants == 3 && !r->copy_failed)
        snprintf(copy, sizeof copy, "%.2f", r->st[V_COPY].median);
    double ratio = r->st[V_NATIVE].median > 0 ? r->st[V_STRATA].median / r->st[V_NATIVE].median : 0;
    printf("%-10s %6s %6d %10.2f %9.2f %10.2f %9.2f %8.3f  %-6s %9s\n", bench_coll_name(r->coll),
           size, r->iters, r->st[V_NATIVE].median, r->st[V_NATIVE].min, r->st[V_STRATA].median,
           r->st[V_STRATA].min, ratio, r->refusal ? "native" : "strata", copy);
    fflush(stdout);
}

void bench_print_noise_row(const struct bench_row *r)
{
    char size[32];
    bench_format_size(r->bytes, size, sizeof size);
    bench_noise_print_row(bench_coll_name(r->coll), size, r->refusal ? "native" : "strata",
                          &r->noise);
}

void bench_print_algorithm_header(void)
{
    printf("\n%-10s %6s %-20s %4s %10s %10s %9s %10s %8s\n", "collective", "size", "algorithm",
           "k", "predicted", "strata", "strata/", "native", "strata/");
    printf("%-10s %6s %-20s %4s %11s %11s %9s %11s %8s\n", "", "bytes", "", "", "µs",
           "median µs", "predicted", "median µs", "native");
}

void bench_print_algorithm_row(const struct bench_row *r)
{
    char size[32], k[16] = "-", name[64];
    bench_format_size(r->bytes, size, sizeof size);
    if (r->k) snprintf(k, sizeof k, "%d", r->k);
    snprintf(name, sizeof name, "%s%s", r->tuned ? "tuned: " : "", r->algorithm);
    double vs_model = r->predicted > 0 ? r->st[V_STRATA].median / r->predicted : 0;
    double vs_native = r->st[V_NATIVE].median > 0 ? r->st[V_STRATA].median / r->st[V_NATIVE].median : 0;
    printf("%-10s %6s %-20s %4s %10.2f %10.2f %9.3f %10.2f %8.3f\n", bench_coll_name(r->coll),
           size, name, k, r->predicted, r->st[V_STRATA].median, vs_model, r->st[V_NATIVE].median,
           vs_native);
    fflush(stdout);
}

/* "  1.23" GB/s, or "-" where nothing is counted. */
static void format_bandwidth(const struct bench_row *r, enum bench_variant v, int ranks,
                             char *out, size_t len)
{
    size_t bytes = bench_bandwidth_bytes(r, ranks);
    if (!bytes || !(r->st[v].median > 0)) snprintf(out, len, "-");
    else snprintf(out, len, "%.3f", (double)bytes / (r->st[v].median * 1e-6) / 1e9);
}

void bench_print_rank_table(const struct bench *b)
{
    printf("\nper rank: each rank's mean µs per call, min / median / max over the %d ranks;\n"
           "bandwidth: counted bytes / median call time (see --help)\n", b->size);
    printf("%-10s %6s %9s | %-37s | %s\n", "collective", "size", "counted", "native", "strata");
    printf("%-10s %6s %9s | %9s %9s %9s %7s | %9s %9s %9s %7s\n", "", "bytes", "bytes", "min",
           "median", "max", "GB/s", "min", "median", "max", "GB/s");
    for (int i = 0; i < b->nrows; i++) {
        const struct bench_row *r = &b->rows[i];
        char size[32], counted[32], bw[2][32];
        bench_format_size(r->bytes, size, sizeof size);
        bench_format_size(bench_bandwidth_bytes(r, b->size), counted, sizeof counted);
        format_bandwidth(r, V_NATIVE, b->size, bw[0], sizeof bw[0]);
        format_bandwidth(r, V_STRATA, b->size, bw[1], sizeof bw[1]);
        const struct bench_stats *h = &r->st[V_NATIVE], *s = &r->st[V_STRATA];
        printf("%-10s %6s %9s | %9.2f %9.2f %9.2f %7s | %9.2f %9.2f %9.2f %7s\n",
               bench_coll_name(r->coll), size, counted, h->rank_min, h->rank_median, h->rank_max,
               bw[0], s->rank_min, s->rank_median, s->rank_max, bw[1]);
    }
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
            printf("%s%s", d == c ? "" : ",", bench_coll_name((enum strata_coll)d));
            done[d] = 1;
        }
        printf(why ? "\n            (%s)\n" : "\n", why);
    }
}

void bench_print_header(const struct bench *b, const char *command, const char *mpi)
{
    printf("strata-bench: strata %s\n", strata_version());
    printf("host MPI  : %s\n", mpi);
    printf("ranks     : %d on %d node%s\n", b->size, b->nodes, b->nodes == 1 ? "" : "s");
    printf("command   : %s\n", command);
    printf("method    : host MPI (PMPI_) and strata (MPI_) alternate call by call; before each\n"
           "            call the send buffer gets new values%s, then PMPI_Barrier;\n"
           "            a call's time is the max over ranks; median and min over the calls\n",
           b->opt.cold ? " and the caches are evicted" : "");
    if (b->opt.root_shift)
        printf("root      : shifts: call i of a row has root i %% %d (bcast, reduce, gather, "
               "scatter)\n", b->size);
    else
        printf("root      : rank %d\n", BENCH_ROOT);
    if (b->opt.noise.max_ms > 0) bench_noise_print_method(&b->opt.noise);
    if (b->opt.load > 0)
        printf("load      : %d %s process%s per node beside the job, %s, for the whole run\n",
               b->opt.load, bench_load_kind_name(b->opt.load_kind), b->opt.load == 1 ? "" : "es",
               b->opt.load_pin ? "pinned (i on CPU i mod CPUs)" : "unpinned");
    printf("1 copy    : %s\n",
           b->copy_ok ? "one process_vm_readv of the bcast bytes, rank 0 -> rank 1"
           : !b->opt.want[STRATA_COLL_BCAST] || b->opt.algorithms ? "- (bcast rows only)"
                                                                 : "- (CMA between rank 0 and rank 1 unavailable)");
    print_paths(b);
    fflush(stdout);
}
