/* The eight newer collectives on device buffers (issue 20): Reduce_scatter
 * (block and vector), Scan, Exscan, Gatherv, Scatterv, Allgatherv,
 * Alltoallv, checked against the host MPI (PMPI_*) on host copies of the
 * same data, byte for byte over each receive buffer's whole span (holes
 * between v-blocks and inside a strided type included).
 *
 * Device memory comes from the driver strata loads (STRATA_CUDA_LIB: the
 * fake of tests/fake_cuda, whose device pages are PROT_NONE, so a host
 * access by strata or the host MPI is a SIGSEGV; or a real libcuda.so.1).
 * Device buffers on every rank, on even ranks only (host and device mixed in
 * one call), on one rank, on none; sizes from 0 to a few hundred KiB; in
 * place wherever the call allows it. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "transport/device.h"

static int rank, size, failures;

/* A buffer: what the call gets (host or device) and its host twin for the
 * PMPI_ reference.  Contents: small ints (exact under SUM and MAX). */
struct buf {
    int device;
    size_t bytes, cmp; /* compare the first cmp bytes */
    void *p;
    char *ref;
};

static void buf_make(struct buf *b, size_t bytes, int device, unsigned seed)
{
    b->device = device;
    b->bytes = b->cmp = bytes;
    size_t n = bytes ? bytes : 1;
    b->ref = malloc(n);
    int *w = (int *)b->ref;
    for (size_t i = 0; i < n / sizeof(int); i++) w[i] = (int)((seed * 131u + i * 7u) % 1000) - 500;
    b->p = test_buf_place(b->ref, n, device);
}

static void buf_done(struct buf *b, const char *what)
{
    size_t n = b->bytes ? b->bytes : 1;
    char *got = test_buf_take(b->p, n, b->device);
    for (size_t i = 0; i < b->cmp; i++)
        if (got[i] != b->ref[i]) {
            fprintf(stderr, "rank %d: %s (%s buffer): byte %zu of %zu is %d, the host MPI gives %d\n",
                    rank, what, b->device ? "device" : "host", i, b->bytes, got[i], b->ref[i]);
            failures++;
            break;
        }
    free(got);
    free(b->ref);
}

enum who { ALL, NONE, EVEN, ONE };
static const char *const who_names[] = {"all", "none", "even", "one"};
static int on_device(enum who w, int r, int root)
{
    return w == ALL || (w == EVEN && r % 2 == 0) || (w == ONE && r == root);
}

static MPI_Datatype strided; /* 2 ints of every 3 */

struct type { MPI_Datatype t; const char *name; int ints; /* ints of extent */ };

/* Rank q's count for base n: differs per rank, zero for some. */
static int count_of(int q, long long n) { return n ? (int)((n * (q + 1)) % (n + 3)) : 0; }

static void what_of(char *out, size_t len, const char *coll, const struct type *ty, long long n,
                    int root, enum who w, int ip)
{
    snprintf(out, len, "%s %s base %lld root %d, device on %s%s", coll, ty->name, n, root,
             who_names[w], ip ? ", in place" : "");
    if (getenv("TEST_DEVICE_TRACE")) fprintf(stderr, "rank %d: %s\n", rank, out);
}

/* Counts and displacements with gaps (one element between blocks, in
 * reverse rank order so displacements are not increasing). */
static void v_layout(long long n, int *counts, int *displs, int *total_ext)
{
    int at = 0;
    for (int q = size - 1; q >= 0; q--) {
        counts[q] = count_of(q, n);
        displs[q] = at;
        at += counts[q] + 1;
    }
    *total_ext = at;
}

static void run_rs(const struct type *ty, long long n, enum who w, int block, int ip)
{
    char what[160];
    what_of(what, sizeof what, block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter", ty, n,
            0, w, ip);
    int counts[64], total = 0;
    for (int q = 0; q < size; q++) total += counts[q] = block ? (int)n : count_of(q, n);
    size_t ext = (size_t)ty->ints * sizeof(int);
    int dev = on_device(w, rank, 0);
    struct buf s, r;
    buf_make(&s, ip ? 0 : (size_t)total * ext, dev, (unsigned)rank + 1);
    buf_make(&r, (size_t)(ip ? total : counts[rank]) * ext, dev, (unsigned)rank + 7);
    /* In place the output is the first block; the rest is undefined. */
    if (ip) r.cmp = (size_t)counts[rank] * ext;
    /* The reference is never in place (the input is a copy of r). */
    char *in = ip ? malloc(r.bytes + 1) : s.ref;
    if (ip) memcpy(in, r.ref, r.bytes);
    char *out = malloc((size_t)counts[rank] * ext + 1);
    memcpy(out, r.ref, (size_t)counts[rank] * ext);
    const void *sp = ip ? MPI_IN_PLACE : s.p;
    if (block) {
        MPI_Reduce_scatter_block(sp, r.p, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Reduce_scatter_block(in, out, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Reduce_scatter(sp, r.p, counts, ty->t, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Reduce_scatter(in, out, counts, ty->t, MPI_SUM, MPI_COMM_WORLD);
    }
    memcpy(r.ref, out, (size_t)counts[rank] * ext);
    free(out);
    if (ip) free(in);
    buf_done(&s, what);
    buf_done(&r, what);
}

static void run_scan(const struct type *ty, long long n, enum who w, int ex, int ip)
{
    char what[160];
    what_of(what, sizeof what, ex ? "MPI_Exscan" : "MPI_Scan", ty, n, 0, w, ip);
    size_t bytes = (size_t)n * (size_t)ty->ints * sizeof(int);
    int dev = on_device(w, rank, 0);
    struct buf s, r;
    buf_make(&s, ip ? 0 : bytes, dev, (unsigned)rank + 3);
    buf_make(&r, bytes, dev, (unsigned)rank + 9);
    char *in = ip ? malloc(bytes + 1) : s.ref;
    if (ip) memcpy(in, r.ref, bytes);
    if (ex && rank == 0) r.cmp = 0; /* Exscan leaves rank 0's result undefined */
    if (ex) {
        MPI_Exscan(ip ? MPI_IN_PLACE : s.p, r.p, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Exscan(in, r.ref, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Scan(ip ? MPI_IN_PLACE : s.p, r.p, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Scan(in, r.ref, (int)n, ty->t, MPI_SUM, MPI_COMM_WORLD);
    }
    if (ip) free(in);
    buf_done(&s, what);
    buf_done(&r, what);
}

enum vc { GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV };
static const char *const vc_names[] = {"MPI_Gatherv", "MPI_Scatterv", "MPI_Allgatherv",
                                       "MPI_Alltoallv"};

static void run_v(enum vc c, const struct type *ty, long long n, int root, enum who w, int ip)
{
    char what[160];
    int rooted = c == GATHERV || c == SCATTERV;
    if (ip && rooted && rank != root) ip = 0;
    what_of(what, sizeof what, vc_names[c], ty, n, root, w, ip);
    size_t ext = (size_t)ty->ints * sizeof(int);
    int counts[64], displs[64], span;
    v_layout(n, counts, displs, &span);
    int dev = on_device(w, rank, root);
    int mine = counts[rank];
    /* Alltoallv: rank r sends count_of((r + q) % size) elements to q, so
     * what q expects from r is the same number (and in place, where both
     * sides use the receive layout, it is symmetric too). */
    int scounts[64], sdispls[64], rcounts[64], rdispls[64], sspan = 0, rspan = 0;
    if (c == ALLTOALLV) {
        for (int q = 0; q < size; q++) {
            scounts[q] = count_of((rank + q) % size, n);
            rcounts[q] = count_of((q + rank) % size, n);
        }
        for (int q = size - 1; q >= 0; q--) {
            sdispls[q] = sspan, sspan += scounts[q] + 1;
            rdispls[q] = rspan, rspan += rcounts[q] + 1;
        }
        if (ip) { /* in place: one layout for both sides */
            memcpy(scounts, rcounts, sizeof scounts);
            memcpy(sdispls, rdispls, sizeof sdispls);
            sspan = rspan;
        }
    }
    size_t sbytes = 0, rbytes = 0;
    switch (c) {
    case GATHERV: sbytes = (size_t)mine * ext; rbytes = rank == root ? (size_t)span * ext : 0; break;
    case SCATTERV: sbytes = rank == root ? (size_t)span * ext : 0; rbytes = (size_t)mine * ext; break;
    case ALLGATHERV: sbytes = (size_t)mine * ext; rbytes = (size_t)span * ext; break;
    case ALLTOALLV: sbytes = (size_t)sspan * ext; rbytes = (size_t)rspan * ext; break;
    }
    if (ip) sbytes = c == SCATTERV ? sbytes : 0;
    struct buf s, r;
    buf_make(&s, sbytes, dev, (unsigned)rank * 3 + 1);
    buf_make(&r, c == SCATTERV && ip ? 0 : rbytes, dev, (unsigned)rank * 5 + 2);
    const void *sp = s.p, *sr = s.ref;
    void *rp = r.p, *rr = r.ref;
    if (ip && c == SCATTERV) rp = rr = MPI_IN_PLACE;
    else if (ip) sp = sr = MPI_IN_PLACE;
    switch (c) {
    case GATHERV:
        MPI_Gatherv(sp, mine, ty->t, rp, counts, displs, ty->t, root, MPI_COMM_WORLD);
        PMPI_Gatherv(sr, mine, ty->t, rr, counts, displs, ty->t, root, MPI_COMM_WORLD);
        break;
    case SCATTERV:
        MPI_Scatterv(sp, counts, displs, ty->t, rp, mine, ty->t, root, MPI_COMM_WORLD);
        PMPI_Scatterv(sr, counts, displs, ty->t, rr, mine, ty->t, root, MPI_COMM_WORLD);
        break;
    case ALLGATHERV:
        MPI_Allgatherv(sp, mine, ty->t, rp, counts, displs, ty->t, MPI_COMM_WORLD);
        PMPI_Allgatherv(sr, mine, ty->t, rr, counts, displs, ty->t, MPI_COMM_WORLD);
        break;
    case ALLTOALLV:
        MPI_Alltoallv(sp, scounts, sdispls, ty->t, rp, rcounts, rdispls, ty->t, MPI_COMM_WORLD);
        PMPI_Alltoallv(sr, scounts, sdispls, ty->t, rr, rcounts, rdispls, ty->t, MPI_COMM_WORLD);
        break;
    }
    buf_done(&s, what);
    buf_done(&r, what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) MPI_Abort(MPI_COMM_WORLD, 2);
    load_cuda();
    MPI_Type_vector(1, 2, 3, MPI_INT, &strided);
    MPI_Datatype tmp = strided;
    MPI_Type_create_resized(tmp, 0, 3 * sizeof(int), &strided);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&strided);
    const struct type types[] = {{MPI_INT, "int", 1}, {strided, "strided", 3}};
    const long long bases[] = {0, 1, 1000, 20001};
    const enum who whos[] = {ALL, EVEN, ONE, NONE};
    int cases = 0;
    for (int wi = 0; wi < 4; wi++)
        for (int bi = 0; bi < 4; bi++)
            for (int ti = 0; ti < 2; ti++) {
                const struct type *ty = &types[ti];
                long long n = ti ? bases[bi] / 4 : bases[bi];
                int root = (wi + bi) % size;
                for (int ip = 0; ip < 2; ip++) {
                    /* Reductions on int only (keeps the test short; the
                     * strided type runs through the v-collectives). */
                    if (ti == 0) {
                        run_rs(ty, n, whos[wi], 1, ip);
                        run_rs(ty, n, whos[wi], 0, ip);
                        run_scan(ty, n, whos[wi], 0, ip);
                        run_scan(ty, n, whos[wi], 1, ip);
                        cases += 4;
                    }
                    for (int c = GATHERV; c <= ALLTOALLV; c++) {
                        run_v((enum vc)c, ty, n / (ti ? 1 : 4), root, whos[wi], ip);
                        cases++;
                    }
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
    unsigned long long staged = strata_device_counted(STRATA_DEVICE_STAGED), total = 0;
    PMPI_Allreduce(&staged, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total == 0) {
        if (rank == 0) fprintf(stderr, "no device bytes staged: the device path did not run\n");
        failures++;
    }
    int all = 0;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_device_v: %d ranks, %d calls per rank, %d failures; device bytes staged %llu\n",
               size, cases, all, total);
    MPI_Type_free(&strided);
    MPI_Finalize();
    return all ? 1 : 0;
}
