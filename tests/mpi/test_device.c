/* Collectives on device buffers (issue 20), checked against the host MPI.
 *
 * Each case runs a collective twice on the same data: through strata
 * (MPI_*) with the buffers of some ranks in device memory, and through the
 * host MPI (PMPI_*) on host copies.  The results must be byte-identical over
 * the whole span of every receive buffer (holes of derived types included).
 * Device memory comes from the driver strata loads (STRATA_CUDA_LIB: the
 * fake of tests/fake_cuda, whose device pages are PROT_NONE, so any host
 * access to them by strata or by the host MPI kills the test with SIGSEGV;
 * or a real libcuda.so.1).
 *
 * Which ranks hold device buffers (--who): all, none, even ranks (mixed in
 * one call), the root only.  Sizes cross STRATA_CUDA_CHUNK (the test sets it
 * to 64K), so pieces, partial pieces and one-piece calls all run.  At the end
 * the test checks that staging and (unless TEST_DEVICE_ONE_PER_NODE says
 * every node holds one rank) CUDA IPC moved bytes. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "transport/device.h"

static int rank, size, failures;

/* A buffer of `bytes` bytes, host (malloc) or device; `ref` is its host twin
 * for the PMPI_ reference run. */
struct buf {
    int device;
    size_t bytes;
    void *p;   /* what the call gets */
    char *ref; /* the reference's buffer */
    size_t ext, data; /* compare only the first `data` bytes of every `ext` (0: all) */
};

static void buf_make(struct buf *b, size_t bytes, int device, unsigned seed)
{
    b->device = device;
    b->bytes = bytes;
    b->ext = b->data = 0;
    size_t n = bytes ? bytes : 1;
    b->ref = malloc(n);
    for (size_t i = 0; i < n; i++) b->ref[i] = (char)((seed * 131u + i * 7u + (i >> 9)) & 0x7f);
    b->p = test_buf_place(b->ref, n, device);
}

/* Compares the call's buffer with the reference's, then frees both. */
static void buf_done(struct buf *b, const char *what)
{
    size_t n = b->bytes ? b->bytes : 1;
    char *got = test_buf_take(b->p, n, b->device);
    for (size_t i = 0; i < b->bytes; i++)
        if (got[i] != b->ref[i] && (!b->ext || i % b->ext < b->data)) {
            fprintf(stderr, "rank %d: %s (%s buffer): byte %zu of %zu is %d, the host MPI gives %d\n",
                    rank, what, b->device ? "device" : "host", i, b->bytes, got[i], b->ref[i]);
            failures++;
            break;
        }
    free(got);
    free(b->ref);
}

enum who { ALL, NONE, EVEN, ROOT };
static const char *const who_names[] = {"all", "none", "even", "root"};

static int on_device(enum who w, int r, int root)
{
    switch (w) {
    case ALL: return 1;
    case NONE: return 0;
    case EVEN: return r % 2 == 0;
    default: return r == root;
    }
}

/* Element types: int (sum), double (max), a strided vector (holes; bcast
 * and block collectives), MPI_DOUBLE_INT (minloc; holes in its extent). */
static MPI_Datatype strided;

struct kind {
    const char *name;
    MPI_Datatype type;
    MPI_Op op;
};

/* Initial data that reductions keep exact: small integers of each type. */
static void fill_values(struct buf *b, MPI_Datatype type, long long count, unsigned seed)
{
    char *tmp = b->ref;
    if (type == MPI_INT) {
        for (long long i = 0; i < count; i++) ((int *)tmp)[i] = (int)((seed * 7 + i) % 1000) - 500;
    } else if (type == MPI_DOUBLE) {
        for (long long i = 0; i < count; i++) ((double *)tmp)[i] = (double)((seed * 13 + i * 3) % 777);
    } else if (type == MPI_DOUBLE_INT) {
        struct { double d; int i; } *v = (void *)tmp;
        for (long long i = 0; i < count; i++) {
            v[i].d = (double)((seed + i) % 5);
            v[i].i = (int)seed;
        }
    } else {
        return;
    }
    if (b->device) CHECK_CU(cu.htod((CUdeviceptr)(uintptr_t)b->p, b->ref, b->bytes));
    else memcpy(b->p, b->ref, b->bytes);
}

static size_t span_of(MPI_Datatype type, long long count)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    return count ? (size_t)count * (size_t)extent : 0;
}

static void label(char *out, size_t len, const char *coll, const char *type, long long count,
                  int root, enum who w, int in_place)
{
    snprintf(out, len, "%s %s x%lld root %d, device on %s%s", coll, type, count, root,
             who_names[w], in_place ? ", in place" : "");
    if (getenv("TEST_DEVICE_TRACE")) fprintf(stderr, "rank %d: %s\n", rank, out);
}

static void run_bcast(MPI_Datatype type, const char *tname, long long count, int root, enum who w)
{
    char what[160];
    label(what, sizeof what, "MPI_Bcast", tname, count, root, w, 0);
    struct buf b;
    buf_make(&b, span_of(type, count), on_device(w, rank, root), (unsigned)(rank == root ? 1 : rank + 10));
    MPI_Bcast(b.p, (int)count, type, root, MPI_COMM_WORLD);
    PMPI_Bcast(b.ref, (int)count, type, root, MPI_COMM_WORLD);
    buf_done(&b, what);
}

static void run_reduce(const struct kind *k, long long count, int root, enum who w, int all,
                       int in_place)
{
    char what[160];
    label(what, sizeof what, all ? "MPI_Allreduce" : "MPI_Reduce", k->name, count, root, w,
          in_place);
    int dev = on_device(w, rank, root);
    size_t bytes = span_of(k->type, count);
    struct buf s, r;
    buf_make(&s, bytes, dev, (unsigned)rank);
    buf_make(&r, bytes, dev, 99);
    fill_values(&s, k->type, count, (unsigned)rank + 1);
    if (k->type == MPI_DOUBLE_INT) {
        /* The padding of a result is undefined: the host MPI and strata's
         * CPU reduction leave different bytes there. */
        MPI_Aint lb, ext;
        MPI_Type_get_extent(k->type, &lb, &ext);
        r.ext = (size_t)ext;
        r.data = sizeof(double) + sizeof(int);
    }
    int here_in_place = in_place && (all || rank == root);
    if (here_in_place) fill_values(&r, k->type, count, (unsigned)rank + 1);
    /* The reference never runs in place: MPICH 4.0's own in-place Reduce at
     * a root other than 0 crashes from a few thousand doubles up (it reads
     * MPI_IN_PLACE as a buffer).  Its input is the root's receive buffer. */
    char *copy = NULL;
    if (here_in_place) {
        copy = malloc(bytes ? bytes : 1);
        memcpy(copy, r.ref, bytes);
    }
    const void *sp = here_in_place ? MPI_IN_PLACE : s.p, *sr = here_in_place ? copy : s.ref;
    if (all) {
        MPI_Allreduce(sp, r.p, (int)count, k->type, k->op, MPI_COMM_WORLD);
        PMPI_Allreduce(sr, r.ref, (int)count, k->type, k->op, MPI_COMM_WORLD);
    } else {
        MPI_Reduce(sp, r.p, (int)count, k->type, k->op, root, MPI_COMM_WORLD);
        PMPI_Reduce(sr, r.ref, (int)count, k->type, k->op, root, MPI_COMM_WORLD);
    }
    free(copy);
    buf_done(&s, what);
    buf_done(&r, what);
}

enum block { GATHER, SCATTER, ALLGATHER, ALLTOALL };
static const char *const block_names[] = {"MPI_Gather", "MPI_Scatter", "MPI_Allgather",
                                          "MPI_Alltoall"};

static void run_block(enum block c, MPI_Datatype type, const char *tname, long long count,
                      int root, enum who w, int in_place)
{
    char what[160];
    int rooted = c == GATHER || c == SCATTER;
    if (in_place && rooted && rank != root) in_place = 0; /* only the root may */
    label(what, sizeof what, block_names[c], tname, count, root, w, in_place);
    int dev = on_device(w, rank, root);
    size_t one = span_of(type, count), many = one * (size_t)size;
    size_t sbytes = c == SCATTER ? (rank == root ? many : 0) : c == ALLTOALL ? many : one;
    size_t rbytes = c == SCATTER ? one : c == GATHER ? (rank == root ? many : 0) : many;
    struct buf s, r;
    buf_make(&s, sbytes, dev, (unsigned)rank * 3 + 1);
    buf_make(&r, rbytes, dev, (unsigned)rank * 5 + 2);
    int ip = in_place;
    const void *sp = s.p, *sr = s.ref;
    void *rp = r.p, *rr = r.ref;
    if (ip && c == SCATTER) rp = rr = MPI_IN_PLACE;
    else if (ip) sp = sr = MPI_IN_PLACE;
    int n = (int)count;
    switch (c) {
    case GATHER:
        MPI_Gather(sp, n, type, rp, n, type, root, MPI_COMM_WORLD);
        PMPI_Gather(sr, n, type, rr, n, type, root, MPI_COMM_WORLD);
        break;
    case SCATTER:
        MPI_Scatter(sp, n, type, rp, n, type, root, MPI_COMM_WORLD);
        PMPI_Scatter(sr, n, type, rr, n, type, root, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(sp, n, type, rp, n, type, MPI_COMM_WORLD);
        PMPI_Allgather(sr, n, type, rr, n, type, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(sp, n, type, rp, n, type, MPI_COMM_WORLD);
        PMPI_Alltoall(sr, n, type, rr, n, type, MPI_COMM_WORLD);
        break;
    }
    buf_done(&s, what);
    buf_done(&r, what);
}

/* Nonblocking collectives in a device job.  On device buffers they are
 * refused with MPI_ERR_BUFFER on every rank (strata cannot stage a call that
 * runs after it returns, and must not hand the host a device pointer), the
 * buffer left as it was, and nothing hangs; on host buffers they give the
 * host MPI's result, across STRATA_CUDA_CHUNK (taken whole, no pieces).
 * Returns the number of calls made per rank. */
static int run_nonblocking(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int calls = 0;
    const long long counts[] = {1, 3000, 70001};
    for (int ci = 0; ci < 3; ci++) {
        long long count = counts[ci];
        int root = ci % size;
        struct buf b;
        buf_make(&b, (size_t)count * sizeof(int), 1, 40u + (unsigned)ci);
        MPI_Request req = MPI_REQUEST_NULL;
        int rc = MPI_Ibcast(b.p, (int)count, MPI_INT, root, comm, &req);
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        /* A rank that was not refused holds a live request; waiting on it
         * while others were refused would hang, so the job ends instead. */
        int posted = rc == MPI_SUCCESS, any_posted = 0;
        PMPI_Allreduce(&posted, &any_posted, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (cls != MPI_ERR_BUFFER) {
            fprintf(stderr, "rank %d: MPI_Ibcast of %lld ints on a device buffer (root %d) "
                    "returned %d (class %d), expected class MPI_ERR_BUFFER\n",
                    rank, count, root, rc, cls);
            failures++;
        }
        if (any_posted) {
            fprintf(stderr, "rank %d: MPI_Ibcast on device buffers was posted on some rank\n",
                    rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        char what[96];
        label(what, sizeof what, "refused MPI_Ibcast", "int", count, root, ALL, 0);
        buf_done(&b, what); /* refused: the device buffer is unchanged */
        calls++;

        /* Host buffers in the same job: MPI_Iallreduce against PMPI_Allreduce. */
        int *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out),
            *ref = malloc((size_t)count * sizeof *ref);
        for (long long i = 0; i < count; i++) {
            in[i] = (int)((rank + 1) * 7919 + i * 31 + ci);
            out[i] = -1;
        }
        rc = MPI_Iallreduce(in, out, (int)count, MPI_INT, MPI_SUM, comm, &req);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        PMPI_Allreduce(in, ref, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "rank %d: MPI_Iallreduce of %lld ints on host buffers returned %d\n",
                    rank, count, rc);
            failures++;
        } else {
            for (long long i = 0; i < count; i++)
                if (out[i] != ref[i]) {
                    fprintf(stderr, "rank %d: MPI_Iallreduce of %lld ints on host buffers: "
                            "element %lld is %d, the host MPI gives %d\n",
                            rank, count, i, out[i], ref[i]);
                    failures++;
                    break;
                }
        }
        free(in);
        free(out);
        free(ref);
        calls++;
    }
    MPI_Comm_free(&comm);
    return calls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    load_cuda();
    /* 2 ints of every 3: holes between runs. */
    MPI_Type_vector(1, 2, 3, MPI_INT, &strided);
    MPI_Datatype tmp = strided;
    MPI_Type_create_resized(tmp, 0, 3 * sizeof(int), &strided);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&strided);

    const struct kind kinds[] = {{"int", MPI_INT, MPI_SUM},
                                 {"double", MPI_DOUBLE, MPI_MAX},
                                 {"double_int", MPI_DOUBLE_INT, MPI_MINLOC}};
    /* Elements: none, one, below a 64K piece, just above, several pieces
     * with a partial last one. */
    const long long counts[] = {0, 1, 3000, 16400, 70001};
    const enum who whos[] = {ALL, EVEN, ROOT, NONE};
    int roots[] = {0, size - 1};
    int cases = 0;
    for (int wi = 0; wi < 4; wi++)
        for (int ri = 0; ri < 2; ri++) {
            int root = roots[ri];
            enum who w = whos[wi];
            if (ri == 1 && (w == NONE || size == 1)) continue;
            for (int ci = 0; ci < 5; ci++) {
                long long count = counts[ci];
                run_bcast(MPI_INT, "int", count, root, w);
                run_bcast(strided, "strided", count / 2, root, w);
                for (int ki = 0; ki < 3; ki++) {
                    long long n = ki == 2 ? count / 3 : count;
                    run_reduce(&kinds[ki], n, root, w, 0, 0);
                    run_reduce(&kinds[ki], n, root, w, 1, ki == 0);
                    /* MPICH 4.0's in-place Reduce at a root other than 0 crashes in
                     * MPICH itself (host buffers too) where strata hands the call
                     * to it (one rank per node): not run there. */
#ifdef MPICH_VERSION
                    if (ki == 1 && root == 0) run_reduce(&kinds[ki], n, root, w, 0, 1);
#else
                    if (ki == 1) run_reduce(&kinds[ki], n, root, w, 0, 1);
#endif
                }
                long long per = count / 8;
                for (int c = GATHER; c <= ALLTOALL; c++) {
                    run_block((enum block)c, MPI_INT, "int", per, root, w, 0);
                    run_block((enum block)c, MPI_INT, "int", per, root, w, 1);
                    if (ci == 2) run_block((enum block)c, strided, "strided", per / 4, root, w, 0);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                cases += 20;
            }
        }
    cases += run_nonblocking();
    /* The paths must have run: staging everywhere, and CUDA IPC for the
     * large broadcasts among device buffers on every rank (a node of two
     * ranks or more copies from its source device to device). */
    unsigned long long moved[2] = {strata_device_counted(STRATA_DEVICE_STAGED),
                                   strata_device_counted(STRATA_DEVICE_IPC)},
                       total[2];
    PMPI_Allreduce(moved, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const char *one = getenv("TEST_DEVICE_ONE_PER_NODE");
    int one_per_node = one && atoi(one);
    if (total[0] == 0 || (size > 1 && !one_per_node && total[1] == 0)) {
        if (rank == 0)
            fprintf(stderr, "device bytes staged %llu, through IPC %llu: a path did not run\n",
                    total[0], total[1]);
        failures++;
    }
    int all_failures = 0;
    PMPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_device: %d ranks, %d calls per rank, %d failures; device bytes staged %llu, "
               "through CUDA IPC %llu\n",
               size, cases, all_failures, total[0], total[1]);
    MPI_Type_free(&strided);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
