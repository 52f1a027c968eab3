/* A plain MPI program, not linked with strata: it runs all eight collectives
 * on deterministic data and rank 0 prints, per collective, how many calls
 * each rank made and a checksum of what every rank received.  Run natively
 * and with strata preloaded, the output must be identical
 * (tests/scripts/native_vs_preload.sh).
 *
 * Its communicators are named, so that strata's per-communicator messages
 * (STRATA_VERBOSE=1) can be matched to them: MPI_COMM_WORLD, "checksum-dup"
 * and "checksum-half0"/"checksum-half1" (even and odd world ranks).  The
 * calls printed are those of all ranks together; the checksums and counts
 * are collected with PMPI_ calls so that they do not add to them
 * (tests/scripts/bad_config.sh counts strata's per-call messages). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BCAST, REDUCE, ALLREDUCE, ALLGATHER, GATHER, SCATTER, ALLTOALL, BARRIER, NCOLL };
static const char *names[NCOLL] = {"MPI_Bcast",  "MPI_Reduce",  "MPI_Allreduce",
                                   "MPI_Allgather", "MPI_Gather", "MPI_Scatter",
                                   "MPI_Alltoall", "MPI_Barrier"};
static uint64_t sums[NCOLL];
static long calls[NCOLL];

/* FNV-1a, folded into the collective's running checksum. */
static void absorb(int coll, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint64_t h = sums[coll] ^ 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    sums[coll] = h;
}

static int value(int rank, size_t i, int salt)
{
    uint32_t x = (uint32_t)rank * 2654435761u ^ (uint32_t)i * 40503u ^ (uint32_t)salt * 97u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (int)(x % 20001) - 10000; /* small: sums of them never overflow */
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "prog_checksum: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void run(MPI_Comm comm, int salt)
{
    static const size_t counts[] = {1, 1000, 65536 + 3};
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        size_t n = counts[ci];
        int *a = xmalloc(n * sizeof(int)), *all = xmalloc(n * (size_t)size * sizeof(int));
        int *all2 = xmalloc(n * (size_t)size * sizeof(int));
        double *d = xmalloc(n * sizeof(double)), *dr = xmalloc(n * sizeof(double));
        int *r = xmalloc(n * sizeof(int));

        for (int root = 0; root < size; root++) {
            for (size_t i = 0; i < n; i++) a[i] = value(rank, i, salt + root);
            MPI_Bcast(a, (int)n, MPI_INT, root, comm);
            calls[BCAST]++;
            absorb(BCAST, a, n * sizeof(int));

            /* Integer-valued doubles: the sum is exact in any order. */
            for (size_t i = 0; i < n; i++) d[i] = value(rank, i, salt + 1);
            memset(dr, 0, n * sizeof(double));
            MPI_Reduce(d, dr, (int)n, MPI_DOUBLE, MPI_SUM, root, comm);
            calls[REDUCE]++;
            if (rank == root) absorb(REDUCE, dr, n * sizeof(double));
            for (size_t i = 0; i < n; i++) a[i] = value(rank, i, salt + 2);
            MPI_Reduce(a, r, (int)n, MPI_INT, MPI_MAX, root, comm);
            calls[REDUCE]++;
            if (rank == root) absorb(REDUCE, r, n * sizeof(int));

            for (size_t i = 0; i < n; i++) a[i] = value(rank, i, salt + 3);
            MPI_Gather(a, (int)n, MPI_INT, all, (int)n, MPI_INT, root, comm);
            calls[GATHER]++;
            if (rank == root) absorb(GATHER, all, n * (size_t)size * sizeof(int));

            for (size_t i = 0; i < n * (size_t)size; i++) all[i] = value(rank, i, salt + 4);
            MPI_Scatter(all, (int)n, MPI_INT, r, (int)n, MPI_INT, root, comm);
            calls[SCATTER]++;
            absorb(SCATTER, r, n * sizeof(int));
        }

        for (size_t i = 0; i < n; i++) d[i] = value(rank, i, salt + 5);
        MPI_Allreduce(d, dr, (int)n, MPI_DOUBLE, MPI_SUM, comm);
        calls[ALLREDUCE]++;
        absorb(ALLREDUCE, dr, n * sizeof(double));
        for (size_t i = 0; i < n; i++) a[i] = value(rank, i, salt + 6);
        MPI_Allreduce(MPI_IN_PLACE, a, (int)n, MPI_INT, MPI_MIN, comm);
        calls[ALLREDUCE]++;
        absorb(ALLREDUCE, a, n * sizeof(int));

        for (size_t i = 0; i < n; i++) a[i] = value(rank, i, salt + 7);
        MPI_Allgather(a, (int)n, MPI_INT, all, (int)n, MPI_INT, comm);
        calls[ALLGATHER]++;
        absorb(ALLGATHER, all, n * (size_t)size * sizeof(int));

        for (size_t i = 0; i < n * (size_t)size; i++) all[i] = value(rank, i, salt + 8);
        MPI_Alltoall(all, (int)n, MPI_INT, all2, (int)n, MPI_INT, comm);
        calls[ALLTOALL]++;
        absorb(ALLTOALL, all2, n * (size_t)size * sizeof(int));

        free(a);
        free(all);
        free(all2);
        free(d);
        free(dr);
        free(r);
    }
    MPI_Barrier(comm);
    calls[BARRIER]++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Named before their first collective, where strata announces them. */
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "checksum-dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    MPI_Comm_set_name(half, rank % 2 ? "checksum-half1" : "checksum-half0");

    run(MPI_COMM_WORLD, 0);
    run(dup, 100);
    run(half, 200);

    /* Rank 0 folds every rank's checksums, in rank order. */
    uint64_t *all = rank == 0 ? xmalloc(sizeof sums * (size_t)size) : NULL;
    PMPI_Gather(sums, NCOLL, MPI_UINT64_T, all, NCOLL, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    long total_calls[NCOLL];
    PMPI_Reduce(calls, total_calls, NCOLL, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int c = 0; c < NCOLL; c++) {
            uint64_t h = 0;
            for (int r = 0; r < size; r++) {
                h ^= all[(size_t)r * NCOLL + c];
                h *= 0x100000001b3ull;
            }
            printf("%s calls=%ld checksum=%016llx\n", names[c], total_calls[c],
                   (unsigned long long)h);
        }
        free(all);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
