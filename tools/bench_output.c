/* strata-bench's result files: --json (every field is described by
 * tools/bench-schema.json, which the tests check each run against) and --csv
 * (one line per row and implementation, for spreadsheets; the noise figures
 * are in the JSON only).  Both are written beside the target and renamed
 * into place, so that an interrupted run never leaves half a file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "strata.h"

/* What "format_version" says: 2 added the per-rank spread, bandwidth,
 * root_shift and sweep (files without the field are version 1). */
#define JSON_FORMAT_VERSION 2

static double bandwidth_Bps(const struct bench_row *r, enum bench_variant v, int ranks)
{
    size_t bytes = bench_bandwidth_bytes(r, ranks);
    return bytes && r->st[v].median > 0 ? (double)bytes / (r->st[v].median * 1e-6) : 0;
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

static void json_stats(FILE *f, const char *key, const struct bench_row *r, enum bench_variant v,
                       int ranks)
{
    const struct bench_stats *s = &r->st[v];
    fprintf(f, "\"%s\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f, "
               "\"rank_mean\": {\"min\": %.4f, \"median\": %.4f, \"max\": %.4f}, "
               "\"bandwidth_Bps\": ",
            key, s->median, s->min, s->max, s->rank_min, s->rank_median, s->rank_max);
    double bw = bandwidth_Bps(r, v, ranks);
    if (bw > 0) fprintf(f, "%.6g}", bw);
    else fprintf(f, "null}");
}

static void json_row(FILE *f, const struct bench_row *r, int ranks)
{
    fprintf(f, "    {\"collective\": \"%s\", \"bytes\": %zu, \"count\": %d, \"datatype\": \"%s\", "
               "\"iterations\": %d, \"bandwidth_bytes\": %zu,\n     ",
            bench_coll_name(r->coll), r->bytes, r->count,
            r->type == MPI_DOUBLE ? "MPI_DOUBLE" : "MPI_BYTE", r->iters,
            bench_bandwidth_bytes(r, ranks));
    json_stats(f, "native", r, V_NATIVE, ranks);
    fprintf(f, ",\n     ");
    json_stats(f, "strata", r, V_STRATA, ranks);
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

static void json_method(FILE *f, const struct bench *b)
{
    fprintf(f, "  \"method\": {\"units\": \"microseconds\", \"cold\": %s, \"alloc_mem\": %s, "
            "\"iterations\": ", b->opt.cold ? "true" : "false", b->opt.alloc_mem ? "true" : "false");
    if (b->opt.iters) fprintf(f, "%d", b->opt.iters);
    else fprintf(f, "\"adaptive\"");
    fprintf(f, ", \"root\": %d, \"root_shift\": %s, \"sweep\": %s, \"pattern\": \"%s\",\n"
               "             \"per_call\": \"max over ranks\", \"timer_tick_s\": %g,\n"
               "             \"rank_mean\": \"each rank's mean time per call; min, median, max "
               "over the ranks\",\n"
               "             \"bandwidth\": \"bandwidth_bytes / median; bandwidth_bytes: the "
               "message for bcast, reduce, allreduce, scan, exscan; ranks * bytes for allgather, "
               "gather, scatter, alltoall, reduce_scatter_block, reduce_scatter and the "
               "v-collectives (largest block); 0 for barrier\",\n"
               "             \"noise\": ",
            BENCH_ROOT, b->opt.root_shift ? "true" : "false", b->opt.sweep ? "true" : "false",
            bench_pattern_name(b->opt.pattern), MPI_Wtick());
    if (b->opt.noise.max_ms > 0) bench_noise_json_method(f, &b->opt.noise);
    else fprintf(f, "null");
    fprintf(f, ",\n             \"load\": {\"processes\": %d, \"kind\": \"%s\", \"pinned\": %s}",
            b->opt.load, bench_load_kind_name(b->opt.load_kind), b->opt.load_pin ? "true" : "false");
    fprintf(f, "},\n");
}

/* Closes f and moves tmp onto path; -1 (errno set) if anything failed. */
static int finish_file(FILE *f, const char *tmp, const char *path)
{
    int write_failed = ferror(f);
    int close_failed = fclose(f) != 0; /* errno says why */
    if (write_failed || close_failed) {
        if (!close_failed) errno = EIO;
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return rename(tmp, path);
}

static FILE *open_temporary(const char *path, char *tmp, size_t len)
{
    if ((size_t)snprintf(tmp, len, "%s.tmp", path) >= len) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return fopen(tmp, "w");
}

int bench_write_json(const struct bench *b, const char *command, const char *mpi)
{
    char tmp[4096], date[64];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    FILE *f = open_temporary(b->opt.json, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "{\n  \"tool\": \"strata-bench\",\n  \"format_version\": %d,\n"
               "  \"strata_version\": \"%s\",\n  \"date\": \"%s\",\n",
            JSON_FORMAT_VERSION, strata_version(), date);
    fprintf(f, "  \"command\": ");
    json_string(f, command);
    fprintf(f, ",\n");
    json_machine(f, b, mpi);
    json_method(f, b);
    fprintf(f, "  \"results\": [\n");
    for (int i = 0; i < b->nrows; i++) {
        json_row(f, &b->rows[i], b->size);
        fprintf(f, i + 1 < b->nrows ? ",\n" : "\n");
    }
    fprintf(f, "  ]\n}\n");
    return finish_file(f, tmp, b->opt.json);
}

/* ---- CSV -------------------------------------------------------------- */

#define CSV_COLUMNS                                                                          \
    "collective,bytes,count,datatype,ranks,nodes,root_shift,cold,algorithm,k,tuned,"         \
    "predicted_us,implementation,path,reason,iterations,median_us,min_us,max_us,"            \
    "rank_min_us,rank_median_us,rank_max_us,bandwidth_bytes,bandwidth_Bps,ratio_to_native"

/* A field quoted where CSV needs it (RFC 4180). */
static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_line(FILE *f, const struct bench *b, const struct bench_row *r,
                     enum bench_variant v)
{
    static const char *names[NVARIANTS] = {"native", "strata", "one_copy"};
    fprintf(f, "%s,%zu,%d,%s,%d,%d,%d,%d,", bench_coll_name(r->coll), r->bytes, r->count,
            r->type == MPI_DOUBLE ? "MPI_DOUBLE" : "MPI_BYTE", b->size, b->nodes,
            b->opt.root_shift, b->opt.cold);
    if (r->algorithm) fprintf(f, "%s,%d,%d,%.4f,", r->algorithm, r->k, r->tuned, r->predicted);
    else fprintf(f, ",,,,");
    fprintf(f, "%s,%s,", names[v], r->refusal ? "native" : "strata");
    csv_text(f, r->refusal ? r->refusal : "");
    const struct bench_stats *s = &r->st[v];
    fprintf(f, ",%d,%.4f,%.4f,%.4f,", r->iters, s->median, s->min, s->max);
    /* The copy is rank 1's alone: no spread over ranks, no ratio; its
     * bandwidth counts the bytes copied. */
    if (v == V_COPY) {
        fprintf(f, ",,,%zu,", r->bytes);
        if (s->median > 0) fprintf(f, "%.6g", (double)r->bytes / (s->median * 1e-6));
        fprintf(f, ",\n");
        return;
    }
    fprintf(f, "%.4f,%.4f,%.4f,%zu,", s->rank_min, s->rank_median, s->rank_max,
            bench_bandwidth_bytes(r, b->size));
    double bw = bandwidth_Bps(r, v, b->size);
    if (bw > 0) fprintf(f, "%.6g", bw);
    fputc(',', f);
    if (r->st[V_NATIVE].median > 0) fprintf(f, "%.4f", s->median / r->st[V_NATIVE].median);
    fputc('\n', f);
}

int bench_write_csv(const struct bench *b)
{
    char tmp[4096];
    FILE *f = open_temporary(b->opt.csv, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "%s\n", CSV_COLUMNS);
    for (int i = 0; i < b->nrows; i++) {
        const struct bench_row *r = &b->rows[i];
        csv_line(f, b, r, V_NATIVE);
        csv_line(f, b, r, V_STRATA);
        if (r->nvariants == 3 && !r->copy_failed) csv_line(f, b, r, V_COPY);
    }
    return finish_file(f, tmp, b->opt.csv);
}
