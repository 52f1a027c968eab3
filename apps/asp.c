/* ASP: all-pairs shortest paths by parallel Floyd-Warshall, the application
 * the HierKNEM and ADAPT papers measure their broadcasts with.
 *
 * The N x N distance matrix is dealt in blocks of contiguous rows over the
 * ranks (unequal when the rank count does not divide N).  Iteration k: the
 * owner of row k broadcasts it (MPI_Bcast, root = owner, N ints) and every
 * rank relaxes its rows through vertex k:  d[i][j] = min(d[i][j], d[i][k] +
 * d[k][j]).  N broadcasts of 4N bytes, light computation between them: with
 * many ranks the broadcasts dominate the run time, which is the point.
 *
 * The graph is random but reproducible: the weight of edge (i, j) is a
 * function of (seed, i, j), so each rank builds its own rows and any rank
 * count gives the same matrix.  Weights are integers, so the result is exact
 * whatever the order of the relaxations, and --verify compares it, on rank
 * 0, element for element with a serial Floyd-Warshall.  The checksum is a
 * function of the final matrix alone (not of the rank count), so any two
 * runs on the same N and seed can be compared. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

static const char *usage =
    "usage: asp N [SEED] [--verify] [--json FILE]\n"
    "  N          vertices: an N x N matrix of 32-bit distances, N broadcasts of 4N bytes\n"
    "             (2 to 65536; K suffix allowed)\n"
    "  SEED       graph seed (default 1): weights 1..999, three edges in four missing\n"
    "  --verify   rank 0 gathers the matrix and compares it with a serial Floyd-Warshall\n"
    "  --json F   rank 0 writes the result as JSON to F\n";

/* No path: large enough that no real path reaches it ((N-1) * 999 < INF
 * for any N allowed), small enough that INF + INF does not overflow. */
#define INF (INT_MAX / 2)
#define MAX_WEIGHT 999
#define MISSING_PER_4 3

static int edge_weight(uint64_t seed, long i, long j)
{
    if (i == j) return 0;
    uint64_t h = app_key(seed, (uint64_t)i, (uint64_t)j);
    if ((h & 3) < MISSING_PER_4) return INF;
    return 1 + (int)((h >> 2) % MAX_WEIGHT);
}

static void fill_rows(int *rows, long first, long count, long n, uint64_t seed)
{
    for (long i = 0; i < count; i++)
        for (long j = 0; j < n; j++) rows[i * n + j] = edge_weight(seed, first + i, j);
}

/* Row i through vertex k.  dik + dk[j] <= INF + INF < INT_MAX: no overflow,
 * and a path through a missing edge stays at or above INF. */
static void relax(int *restrict di, const int *restrict dk, long k, long n)
{
    int dik = di[k];
    if (dik >= INF) return;
    for (long j = 0; j < n; j++) {
        int via = dik + dk[j];
        di[j] = via < di[j] ? via : di[j];
    }
}

/* Sum over the elements of a mixed (position, distance) pair: independent
 * of how the rows are split, and any changed or misplaced value changes it. */
static uint64_t rows_checksum(const int *rows, long first, long count, long n)
{
    uint64_t sum = 0;
    for (long i = 0; i < count; i++)
        for (long j = 0; j < n; j++)
            sum += app_key(0x41535021, (uint64_t)((first + i) * n + j),
                           (uint32_t)rows[i * n + j]);
    return sum;
}

static void serial_floyd_warshall(int *d, long n)
{
    for (long k = 0; k < n; k++)
        for (long i = 0; i < n; i++)
            if (i != k) relax(&d[i * n], &d[k * n], k, n);
}

/* Rank 0: gathers the rows, recomputes serially and compares.  Returns 1 if
 * the matrices and checksums agree, 0 if not (after saying where), on rank
 * 0; -1 elsewhere. */
static int verify(const int *mine, long lo, long hi, long n, uint64_t seed, uint64_t checksum,
                  MPI_Comm comm)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int *counts = NULL, *displs = NULL, *all = NULL, *expect = NULL;
    if (rank == 0) {
        counts = app_alloc("asp", sizeof *counts * (size_t)ranks);
        displs = app_alloc("asp", sizeof *displs * (size_t)ranks);
        for (int r = 0; r < ranks; r++) {
            long a, b;
            app_block(n, ranks, r, &a, &b);
            counts[r] = (int)((b - a) * n);
            displs[r] = (int)(a * n);
        }
        all = app_alloc("asp", sizeof *all * (size_t)(n * n));
    }
    MPI_Gatherv(mine, (int)((hi - lo) * n), MPI_INT, all, counts, displs, MPI_INT, 0, comm);
    if (rank != 0) return -1;

    expect = app_alloc("asp", sizeof *expect * (size_t)(n * n));
    fill_rows(expect, 0, n, n, seed);
    serial_floyd_warshall(expect, n);
    int ok = 1;
    for (long e = 0; e < n * n && ok; e++) {
        if (all[e] != expect[e]) {
            printf("asp: verify FAILED: d[%ld][%ld] = %d, the serial Floyd-Warshall gives %d "
                   "(row %ld is rank %d's)\n",
                   e / n, e % n, all[e], expect[e], e / n, app_block_owner(n, ranks, e / n));
            ok = 0;
        }
    }
    uint64_t serial_sum = rows_checksum(expect, 0, n, n);
    if (ok && serial_sum != checksum) {
        printf("asp: verify FAILED: checksum %016llx, the serial matrix's is %016llx\n",
               (unsigned long long)checksum, (unsigned long long)serial_sum);
        ok = 0;
    }
    if (ok) printf("asp: verify OK: equals a serial Floyd-Warshall (%ld x %ld)\n", n, n);
    free(counts);
    free(displs);
    free(all);
    free(expect);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);

    long n = 0, seed = 1;
    int want_verify = 0, positional = 0;
    const char *json = NULL;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--verify")) want_verify = 1;
        else if (!strcmp(argv[a], "--json")) {
            if (a + 1 == argc) app_die_usage("asp", usage, "--json takes a file name");
            json = argv[++a];
        }
        else if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help"))
            app_die_usage("asp", usage, "all-pairs shortest paths (Floyd-Warshall)");
        else if (argv[a][0] == '-') app_die_usage("asp", usage, "unknown option %s", argv[a]);
        else if (positional == 0) {
            n = app_count_arg("asp", usage, "N", argv[a], 2, 65536);
            positional++;
        } else if (positional == 1) {
            seed = app_count_arg("asp", usage, "SEED", argv[a], 0, LONG_MAX);
            positional++;
        } else app_die_usage("asp", usage, "unexpected argument %s", argv[a]);
    }
    if (positional == 0) app_die_usage("asp", usage, "N is missing");
    /* MPI_Gatherv counts and displacements are ints. */
    if (want_verify && n * n > INT_MAX)
        app_die_usage("asp", usage, "--verify gathers N x N ints on rank 0: N up to 46340");

    long lo, hi;
    app_block(n, ranks, rank, &lo, &hi);
    int *mine = app_alloc("asp", sizeof *mine * (size_t)((hi - lo) * n));
    int *row_k = app_alloc("asp", sizeof *row_k * (size_t)n);
    fill_rows(mine, lo, hi - lo, n, (uint64_t)seed);
    if (rank == 0) {
        long a, b;
        app_block(n, ranks, ranks - 1, &a, &b);
        printf("asp: N=%ld seed=%ld, %d ranks with %ld to %ld rows, %ld broadcasts of %zu "
               "bytes\n",
               n, seed, ranks, b - a, (n + ranks - 1) / ranks, n, sizeof(int) * (size_t)n);
        fflush(stdout);
    }

    MPI_Barrier(comm);
    double start = MPI_Wtime(), in_bcast = 0;
    for (long k = 0; k < n; k++) {
        int owner = app_block_owner(n, ranks, k);
        int *dk = owner == rank ? &mine[(k - lo) * n] : row_k;
        double t = MPI_Wtime();
        MPI_Bcast(dk, (int)n, MPI_INT, owner, comm);
        in_bcast += MPI_Wtime() - t;
        for (long i = lo; i < hi; i++)
            if (i != k) relax(&mine[(i - lo) * n], dk, k, n);
    }
    double total = MPI_Wtime() - start;

    uint64_t part = rows_checksum(mine, lo, hi - lo, n), *parts = NULL, checksum = 0;
    if (rank == 0) parts = app_alloc("asp", sizeof *parts * (size_t)ranks);
    MPI_Gather(&part, 1, MPI_UINT64_T, parts, 1, MPI_UINT64_T, 0, comm);
    for (int r = 0; rank == 0 && r < ranks; r++) checksum += parts[r];

    int verified = want_verify ? verify(mine, lo, hi, n, (uint64_t)seed, checksum, comm) : -1;
    char params[128];
    snprintf(params, sizeof params, "\"n\": %ld, \"seed\": %ld", n, seed);
    struct app_result result = {
        .app = "asp", .collective = "MPI_Bcast", .calls = n,
        .bytes_per_call = sizeof(int) * (size_t)n, .total_s = total, .coll_s = in_bcast,
        .checksum = checksum, .verified = verified, .params_json = params};
    int report_failed = app_report(comm, &result, json);
    free(parts);
    free(mine);
    free(row_k);
    MPI_Finalize();
    return report_failed || (rank == 0 && verified == 0) ? 1 : 0;
}
