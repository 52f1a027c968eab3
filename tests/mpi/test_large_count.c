/* Large counts through strata, every result checked against values computed
 * here.
 *
 *   test_large_count [--mib=M]
 *     (the suite's part, run with a small STRATA_CMA_MAX_PER_CALL) Bcast
 *     from every root, Allreduce, Allgather, Gather, Scatter and Alltoall of
 *     about M MiB (default 6) and of odd sizes, so that every CMA copy is
 *     cut in many system calls at odd offsets; then derived datatypes whose
 *     count * extent passes INT_MAX (2 GiB) while the data stays small:
 *     doubles 1 MiB apart, in buffers reserved but mostly never touched.
 *
 *   test_large_count --huge
 *     Bcast and Allreduce whose count * type size passes 2^31 bytes (count
 *     fits an int; 8- and 16-byte types), a Bcast of more than 2 GiB with
 *     holes, an Allgather whose receive count passes INT_MAX elements, and
 *     (where the host has MPI-4's _c forms) MPI_Bcast_c of more than INT_MAX
 *     bytes beside ranks calling MPI_Bcast with 2-byte elements, then the
 *     same with MPI_Ibcast_c and MPI_Bcast_init_c beside their int forms.
 *     About 4.5 GiB of memory per rank: scripts/large-counts.sh runs it on 2
 *     ranks, outside the suite. */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "context/context.h"
#include "route/route.h"
#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

static int rank, size;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    CHECK(p, "cannot allocate %zu bytes", bytes);
    return p;
}

/* Address space for `bytes`, of which only the pages touched take memory. */
static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "cannot reserve %zu bytes of address space", bytes);
    return p;
}

/* Runs a collective that must succeed and be served by strata (not handed
 * to the host MPI): STRATA_STATS counts the routes. */
#define SERVED(coll, what, call)                                                           \
    do {                                                                                   \
        unsigned long long before_ = strata_stats_local_calls((coll), 1);                  \
        CHECK((call) == MPI_SUCCESS, "%s failed", (what));                                 \
        CHECK(strata_stats_local_calls((coll), 1) == before_ + 1,                          \
              "%s was handed to the host MPI", (what));                                    \
    } while (0)

static unsigned char byte_at(size_t i, int seed) { return (unsigned char)((i * 7919) >> 3 ^ seed); }

/* ---- The suite's part: megabytes, cut in small CMA calls ---- */

static void bytes_collectives(size_t bytes)
{
    unsigned char *buf = xmalloc(bytes);
    for (int root = 0; root < size; root++) {
        for (size_t i = 0; i < bytes; i++) buf[i] = rank == root ? byte_at(i, root) : 0;
        SERVED(STRATA_COLL_BCAST, "Bcast",
               MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD));
        for (size_t i = 0; i < bytes; i++)
            CHECK(buf[i] == byte_at(i, root), "Bcast of %zu bytes from %d: byte %zu is %d", bytes,
                  root, i, buf[i]);
    }
    free(buf);

    size_t count = bytes / sizeof(long long);
    long long *in = xmalloc(count * sizeof *in), *out = xmalloc(count * sizeof *out);
    for (size_t i = 0; i < count; i++) in[i] = (long long)i * (rank + 1);
    SERVED(STRATA_COLL_ALLREDUCE, "Allreduce",
           MPI_Allreduce(in, out, (int)count, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (size_t i = 0; i < count; i++)
        CHECK(out[i] == (long long)i * size * (size + 1) / 2,
              "Allreduce of %zu long longs: element %zu is %lld", count, i, out[i]);
    free(in);
    free(out);

    /* Block collectives: bytes / size per rank block. */
    size_t block = bytes / (size_t)size;
    unsigned char *send = xmalloc(block * (size_t)size), *recv = xmalloc(block * (size_t)size);
    for (size_t i = 0; i < block * (size_t)size; i++) send[i] = byte_at(i, rank);
    SERVED(STRATA_COLL_ALLGATHER, "Allgather",
           MPI_Allgather(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE,
                         MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < block; i++)
            CHECK(recv[(size_t)q * block + i] == byte_at(i, q),
                  "Allgather of %zu-byte blocks: byte %zu of rank %d is wrong", block, i, q);
    SERVED(STRATA_COLL_GATHER, "Gather",
           MPI_Gather(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE, size - 1,
                      MPI_COMM_WORLD));
    if (rank == size - 1)
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < block; i++)
                CHECK(recv[(size_t)q * block + i] == byte_at(i, q),
                      "Gather of %zu-byte blocks: byte %zu of rank %d is wrong", block, i, q);
    SERVED(STRATA_COLL_SCATTER, "Scatter",
           MPI_Scatter(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE, 0,
                       MPI_COMM_WORLD));
    for (size_t i = 0; i < block; i++)
        CHECK(recv[i] == byte_at((size_t)rank * block + i, 0),
              "Scatter of %zu-byte blocks: byte %zu is wrong", block, i);
    size_t piece = block / (size_t)size;
    SERVED(STRATA_COLL_ALLTOALL, "Alltoall",
           MPI_Alltoall(send, (int)piece, MPI_BYTE, recv, (int)piece, MPI_BYTE,
                        MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < piece; i++)
            CHECK(recv[(size_t)q * piece + i] == byte_at((size_t)rank * piece + i, q),
                  "Alltoall of %zu-byte pieces: byte %zu from rank %d is wrong", piece, i, q);
    free(send);
    free(recv);
}

/* Doubles STRIDE bytes apart: count * extent passes INT_MAX with COUNT of
 * them, yet each rank's data is COUNT doubles. */
#define STRIDE ((MPI_Aint)1 << 20)
#define COUNT 2304 /* 2304 MiB of extent */

static double value(int r, size_t i) { return (double)(r + 1) * 1e6 + (double)i; }

static void sparse_collectives(void)
{
    MPI_Datatype sparse;
    MPI_Type_create_resized(MPI_DOUBLE, 0, STRIDE, &sparse);
    MPI_Type_commit(&sparse);
    size_t span = (size_t)COUNT * (size_t)STRIDE;
    CHECK(span > INT_MAX, "the extent must pass INT_MAX");
    unsigned char *one = reserve(span), *all = reserve(span * (size_t)size);
#define AT(base, k) (*(double *)((base) + (size_t)(k) * (size_t)STRIDE))

    for (int root = 0; root < size; root++) {
        for (size_t i = 0; i < COUNT; i++) AT(one, i) = rank == root ? value(root, i) : -1;
        SERVED(STRATA_COLL_BCAST, "sparse Bcast",
               MPI_Bcast(one, COUNT, sparse, root, MPI_COMM_WORLD));
        for (size_t i = 0; i < COUNT; i++)
            CHECK(AT(one, i) == value(root, i), "sparse Bcast from %d: element %zu is %g", root, i,
                  AT(one, i));
    }
    for (size_t i = 0; i < COUNT; i++) AT(one, i) = value(rank, i);
    SERVED(STRATA_COLL_ALLGATHER, "sparse Allgather",
           MPI_Allgather(one, COUNT, sparse, all, COUNT, sparse, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < COUNT; i++)
            CHECK(AT(all, (size_t)q * COUNT + i) == value(q, i),
                  "sparse Allgather: element %zu of rank %d is %g", i, q,
                  AT(all, (size_t)q * COUNT + i));
    /* Contiguous doubles on one side, the sparse type on the other: the
     * signatures match, the layouts differ. */
    double *packed = xmalloc(sizeof(double) * COUNT * (size_t)size);
    SERVED(STRATA_COLL_GATHER, "Gather from the sparse type",
           MPI_Gather(one, COUNT, sparse, packed, COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < COUNT; i++)
                CHECK(packed[(size_t)q * COUNT + i] == value(q, i),
                      "Gather from the sparse type: element %zu of rank %d is %g", i, q,
                      packed[(size_t)q * COUNT + i]);
    if (rank == 0)
        for (size_t i = 0; i < (size_t)COUNT * (size_t)size; i++)
            packed[i] = value((int)(i / COUNT), i % COUNT) + 0.5;
    SERVED(STRATA_COLL_SCATTER, "Scatter into the sparse type",
           MPI_Scatter(packed, COUNT, MPI_DOUBLE, one, COUNT, sparse, 0, MPI_COMM_WORLD));
    for (size_t i = 0; i < COUNT; i++)
        CHECK(AT(one, i) == value(rank, i) + 0.5, "Scatter into the sparse type: element %zu is %g",
              i, AT(one, i));
    free(packed);
#undef AT
    munmap(one, span);
    munmap(all, span * (size_t)size);
    MPI_Type_free(&sparse);
}

/* ---- --huge: more than 2 GiB per call ---- */

static void huge_collectives(void)
{
    /* 2^28 + 2^20 doubles: 2.01 GiB.  Element i holds i + root (exact). */
    const int n = (1 << 28) + (1 << 20);
    size_t bytes = (size_t)n * sizeof(double);
    double *d = xmalloc(bytes);
    int root = size - 1;
    for (size_t i = 0; i < (size_t)n; i++) d[i] = rank == root ? (double)i + root : 0;
    SERVED(STRATA_COLL_BCAST, "huge Bcast",
           MPI_Bcast(d, n, MPI_DOUBLE, root, MPI_COMM_WORLD));
    for (size_t i = 0; i < (size_t)n; i++)
        CHECK(d[i] == (double)i + root, "Bcast of %zu bytes: element %zu is %g", bytes, i, d[i]);
    if (rank == 0) printf("ok: Bcast of %d doubles (%zu bytes)\n", n, bytes);

    /* In place, so two buffers of 2 GiB are enough per rank across the
     * whole program: element i of rank r is i % 1024 + r. */
    for (size_t i = 0; i < (size_t)n; i++) d[i] = (double)(i % 1024) + rank;
    SERVED(STRATA_COLL_ALLREDUCE, "huge Allreduce",
           MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    double ranks_sum = (double)size * (size - 1) / 2;
    for (size_t i = 0; i < (size_t)n; i++)
        CHECK(d[i] == (double)size * (double)(i % 1024) + ranks_sum,
              "Allreduce of %zu bytes: element %zu is %g", bytes, i, d[i]);
    if (rank == 0) printf("ok: Allreduce of %d doubles (%zu bytes)\n", n, bytes);

    /* A 16-byte type: (n / 2) complex doubles, the same bytes. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
    MPI_Type_commit(&pair);
    for (size_t i = 0; i < (size_t)n; i++) d[i] = rank == 0 ? (double)i * 0.5 : -1;
    SERVED(STRATA_COLL_BCAST, "huge Bcast of pairs",
           MPI_Bcast(d, n / 2, pair, 0, MPI_COMM_WORLD));
    for (size_t i = 0; i < (size_t)n; i++)
        CHECK(d[i] == (double)i * 0.5, "Bcast of %d pairs: element %zu is %g", n / 2, i, d[i]);
    MPI_Type_free(&pair);
    for (size_t i = 0; i < (size_t)n; i++) d[i] = 1.0 + (i % 3);
    SERVED(STRATA_COLL_ALLREDUCE, "huge Allreduce of complex doubles",
           MPI_Allreduce(MPI_IN_PLACE, d, n / 2, MPI_C_DOUBLE_COMPLEX, MPI_SUM,
                         MPI_COMM_WORLD));
    for (size_t i = 0; i < (size_t)n; i++)
        CHECK(d[i] == (double)size * (1.0 + (i % 3)), "Allreduce of %d complex: element %zu is %g",
              n / 2, i, d[i]);
    if (rank == 0) printf("ok: Bcast and Allreduce of %d 16-byte elements\n", n / 2);

    /* With holes: 2049 elements of 1 MiB of doubles, 4 KiB apart, hold more
     * than 2 GiB: strata packs them privately, in pieces MPI_Pack's int size
     * can take. */
    const int per_block = (1 << 20) / 8, blocks = 2049, gap = 4096 / 8;
    MPI_Datatype block, spaced;
    MPI_Type_contiguous(per_block, MPI_DOUBLE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)(per_block + gap) * 8, &spaced);
    MPI_Type_commit(&spaced);
    size_t stride = (size_t)per_block + gap;
    free(d);
    d = xmalloc((size_t)blocks * stride * sizeof(double));
    for (size_t b = 0; b < (size_t)blocks; b++)
        for (size_t i = 0; i < (size_t)per_block; i++)
            d[b * stride + i] = rank == 0 ? (double)(b * per_block + i) : -1;
    SERVED(STRATA_COLL_BCAST, "huge Bcast with holes",
           MPI_Bcast(d, blocks, spaced, 0, MPI_COMM_WORLD));
    for (size_t b = 0; b < (size_t)blocks; b++)
        for (size_t i = 0; i < (size_t)per_block; i++)
            CHECK(d[b * stride + i] == (double)(b * per_block + i),
                  "Bcast with holes: element %zu of block %zu is %g", i, b, d[b * stride + i]);
    if (rank == 0)
        printf("ok: Bcast of %zu bytes with holes\n", (size_t)blocks * per_block * sizeof(double));
    MPI_Type_free(&spaced);
    MPI_Type_free(&block);
    free(d);

    /* Allgather of 1.1 GB blocks of bytes: the receive count (blocks times
     * ranks) passes INT_MAX elements. */
    size_t each = (size_t)1100 << 20;
    unsigned char *mine = xmalloc(each), *all = xmalloc(each * (size_t)size);
    for (size_t i = 0; i < each; i++) mine[i] = byte_at(i, rank);
    SERVED(STRATA_COLL_ALLGATHER, "huge Allgather",
           MPI_Allgather(mine, (int)each, MPI_BYTE, all, (int)each, MPI_BYTE, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < each; i++)
            CHECK(all[(size_t)q * each + i] == byte_at(i, q),
                  "Allgather of %zu-byte blocks: byte %zu of rank %d is wrong", each, i, q);
    if (rank == 0) printf("ok: Allgather of %zu-byte blocks\n", each);
    free(mine);
    free(all);

#ifdef STRATA_HAVE_LARGE_COUNT
    /* MPI-4's large counts: even ranks pass more than INT_MAX bytes to
     * MPI_Bcast_c, odd ranks the same signature as 2-byte elements to
     * MPI_Bcast, whose count fits an int.  The ranks must take one route. */
    MPI_Count nbytes = (MPI_Count)INT_MAX + 4101;
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_BYTE, &two);
    MPI_Type_commit(&two);
    unsigned char *c = xmalloc((size_t)nbytes);
    for (size_t i = 0; i < (size_t)nbytes; i++) c[i] = rank == 1 ? byte_at(i, 5) : 0;
    if (rank % 2 == 0)
        SERVED(STRATA_COLL_BCAST, "MPI_Bcast_c of more than INT_MAX bytes",
               MPI_Bcast_c(c, nbytes, MPI_BYTE, 1, MPI_COMM_WORLD));
    else
        SERVED(STRATA_COLL_BCAST, "MPI_Bcast beside MPI_Bcast_c",
               MPI_Bcast(c, (int)(nbytes / 2), two, 1, MPI_COMM_WORLD));
    for (size_t i = 0; i < (size_t)nbytes; i++)
        CHECK(c[i] == byte_at(i, 5), "MPI_Bcast_c of %lld bytes: byte %zu is %d",
              (long long)nbytes, i, c[i]);
    if (rank == 0) printf("ok: MPI_Bcast_c of %lld bytes beside MPI_Bcast\n", (long long)nbytes);

    /* The same through the nonblocking and persistent forms: MPI_Ibcast_c
     * beside MPI_Ibcast, MPI_Bcast_init_c beside MPI_Bcast_init (where the
     * host has them), one route for both, counted under the C names. */
#ifdef STRATA_HAVE_PERSISTENT_COLL
    const int forms = 2;
#else
    const int forms = 1;
#endif
    for (int f = 1; f <= forms; f++) {
        const char *what = f == 1 ? "MPI_Ibcast_c beside MPI_Ibcast"
                                  : "MPI_Bcast_init_c beside MPI_Bcast_init";
        int id = strata_call_id(STRATA_COLL_BCAST,
                                f == 1 ? STRATA_FORM_NONBLOCKING : STRATA_FORM_PERSISTENT);
        for (size_t i = 0; i < (size_t)nbytes; i++) c[i] = rank == 1 ? byte_at(i, 5 + f) : 0;
        MPI_Request req;
        if (f == 1)
            SERVED(id, what,
                   rank % 2 == 0
                       ? MPI_Ibcast_c(c, nbytes, MPI_BYTE, 1, MPI_COMM_WORLD, &req)
                       : MPI_Ibcast(c, (int)(nbytes / 2), two, 1, MPI_COMM_WORLD, &req));
#ifdef STRATA_HAVE_PERSISTENT_COLL
        else {
            SERVED(id, what,
                   rank % 2 == 0 ? MPI_Bcast_init_c(c, nbytes, MPI_BYTE, 1, MPI_COMM_WORLD,
                                                    MPI_INFO_NULL, &req)
                                 : MPI_Bcast_init(c, (int)(nbytes / 2), two, 1, MPI_COMM_WORLD,
                                                  MPI_INFO_NULL, &req));
            CHECK(MPI_Start(&req) == MPI_SUCCESS, "%s: MPI_Start", what);
        }
#endif
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s: MPI_Wait", what);
        if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
        for (size_t i = 0; i < (size_t)nbytes; i++)
            CHECK(c[i] == byte_at(i, 5 + f), "%s of %lld bytes: byte %zu is %d", what,
                  (long long)nbytes, i, c[i]);
        if (rank == 0) printf("ok: %s, %lld bytes\n", what, (long long)nbytes);
    }
    MPI_Type_free(&two);
    free(c);
#endif
}

int main(int argc, char **argv)
{
    int huge = 0;
    size_t mib = 6;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--huge")) huge = 1;
        else if (!strncmp(argv[i], "--mib=", 6)) mib = strtoull(argv[i] + 6, NULL, 10);
        else {
            fprintf(stderr, "test_large_count: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    setenv("STRATA_STATS", "/dev/null", 0); /* to count the routes */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "run with 2 ranks or more");
    MPI_Barrier(MPI_COMM_WORLD);
    struct strata_ctx *ctx = strata_ctx_get(MPI_COMM_WORLD);
    CHECK(ctx && (ctx->plane || ctx->net), "strata must serve MPI_COMM_WORLD: %s",
          ctx ? ctx->plane_why : "no context");
    if (huge) {
        huge_collectives();
        test_pass("large counts (more than 2 GiB per call)");
    } else {
        bytes_collectives(mib << 20);
        bytes_collectives((mib << 20) + 4099); /* odd sizes: pieces at odd offsets */
        bytes_collectives(3 * 4096 + 17);
        if (rank == 0) printf("ok: Bcast, Allreduce, Gather, Scatter, Allgather, Alltoall\n");
        sparse_collectives();
        if (rank == 0) printf("ok: derived types with count * extent above INT_MAX\n");
        test_pass("large counts (suite)");
    }
    MPI_Finalize();
    return 0;
}
