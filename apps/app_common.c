/* Shared parts of the applications: see app_common.h. */
#include "app_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

uint64_t app_mix64(uint64_t key)
{
    uint64_t z = key + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t app_key(uint64_t seed, uint64_t a, uint64_t b)
{
    return app_mix64(app_mix64(app_mix64(seed) ^ a) ^ b);
}

double app_uniform(uint64_t mixed)
{
    return (double)(mixed >> 11) * 0x1p-52 - 1.0;
}

uint64_t app_fnv1a(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

void app_block(long n, int parts, int index, long *lo, long *hi)
{
    long base = n / parts, extra = n % parts;
    *lo = index * base + (index < extra ? index : extra);
    *hi = *lo + base + (index < extra ? 1 : 0);
}

int app_block_owner(long n, int parts, long i)
{
    long base = n / parts, extra = n % parts;
    long big = extra * (base + 1); /* items held by the blocks one larger */
    if (i < big) return (int)(i / (base + 1));
    return (int)(extra + (i - big) / base);
}

void app_die_usage(const char *app, const char *usage, const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", app);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n%s", usage);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

long app_count_arg(const char *app, const char *usage, const char *what, const char *text,
                   long min, long max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    long long scale = 1;
    if (end != text && *end) {
        switch (*end) {
        case 'k': case 'K': scale = 1ll << 10; break;
        case 'm': case 'M': scale = 1ll << 20; break;
        case 'g': case 'G': scale = 1ll << 30; break;
        default: scale = 0;
        }
        end++;
    }
    if (end == text || *end || errno || scale == 0 || v < 0 || v > max / scale || v * scale < min ||
        v * scale > max)
        app_die_usage(app, usage, "%s takes a whole number from %ld to %ld (K, M, G allowed), "
                      "not '%s'", what, min, max, text);
    return (long)(v * scale);
}

double app_positive_arg(const char *app, const char *usage, const char *what, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v) || v <= 0)
        app_die_usage(app, usage, "%s takes a number above zero, not '%s'", what, text);
    return v;
}

void *app_alloc(const char *app, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "%s: cannot allocate %zu bytes\n", app, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static const char *verdict(int verified)
{
    return verified > 0 ? "yes" : verified == 0 ? "no" : "skipped";
}

static int write_json(const char *path, const struct app_result *r, int ranks, double total_max,
                      double coll_max, double coll_mean)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f,
            "{\"app\": \"%s\", \"ranks\": %d, %s%s\"collective\": \"%s\", "
            "\"calls_per_rank\": %ld, \"bytes_per_call\": %zu,\n"
            " \"total_s\": %.6f, \"coll_max_s\": %.6f, \"coll_mean_s\": %.6f, "
            "\"checksum\": \"%016llx\", \"verified\": %s}\n",
            r->app, ranks, r->params_json ? r->params_json : "", r->params_json ? ", " : "",
            r->collective, r->calls, r->bytes_per_call, total_max, coll_max, coll_mean,
            (unsigned long long)r->checksum,
            r->verified > 0 ? "true" : r->verified == 0 ? "false" : "null");
    int failed = ferror(f);
    return fclose(f) == 0 && !failed ? 0 : -1;
}

int app_report(MPI_Comm comm, const struct app_result *r, const char *json_path)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    double mine[2] = {r->total_s, r->coll_s}, max[2], sum[2];
    MPI_Reduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rank != 0) return 0;
    double mean = sum[1] / ranks;
    printf("%s: %d ranks, total %.6f s; %s max %.6f s, mean %.6f s (%.1f%% of the total); "
           "%ld calls of %zu bytes\n",
           r->app, ranks, max[0], r->collective, max[1], mean,
           max[0] > 0 ? 100.0 * max[1] / max[0] : 0.0, r->calls, r->bytes_per_call);
    printf("%s: checksum %016llx\n", r->app, (unsigned long long)r->checksum);
    printf("RESULT app=%s ranks=%d total_s=%.6f coll=%s coll_max_s=%.6f coll_mean_s=%.6f "
           "calls=%ld bytes=%zu checksum=%016llx verified=%s\n",
           r->app, ranks, max[0], r->collective, max[1], mean, r->calls, r->bytes_per_call,
           (unsigned long long)r->checksum, verdict(r->verified));
    fflush(stdout);
    if (json_path && write_json(json_path, r, ranks, max[0], max[1], mean) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", r->app, json_path, strerror(errno));
        return -1;
    }
    return 0;
}
