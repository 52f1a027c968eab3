/* strata-bench --device: collectives on device (GPU) buffers, three ways,
 * per collective (MPI_Bcast, MPI_Allreduce of doubles, sum) and size:
 *
 *   strata   MPI_* on device buffers: strata stages them (pipelined pieces,
 *            CUDA IPC inside a node for large broadcasts)
 *   manual   what an application does on an MPI that does not know GPUs:
 *            copy the device buffer to pinned host memory (cuMemcpyDtoH),
 *            the host MPI's own collective (PMPI_*), copy back (cuMemcpyHtoD)
 *   host     MPI_* on ordinary host buffers: the same collective with no
 *            device in the way (on the fake device: the staging's overhead)
 *
 * Device memory comes from the driver strata loads (STRATA_CUDA_LIB, or
 * libcuda.so.1): on a machine without a GPU, point it at tests/fake_cuda's
 * libfakecuda.so, whose "device" is host memory the CPU cannot touch, so the
 * figures then measure staging logic, not a GPU.  A figure is the slowest
 * rank's mean time per call over the iterations (--iters, default 20),
 * after 3 warm-up calls; the three ways alternate row by row. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "transport/cuda_api.h"
#include "transport/device.h"

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*host_alloc)(void **, size_t, unsigned);
    CUresult (*free_host)(void *);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
} cu;

/* Loads the driver the way strata does; 0, or -1 with why. */
static int load(char *why, size_t len)
{
    const char *lib = getenv("STRATA_CUDA_LIB");
    if (!lib) lib = "libcuda.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return snprintf(why, len, "%s does not load", lib), -1;
    static const char *const names[] = {"cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
                                        "cuCtxSetCurrent", "cuMemAlloc_v2", "cuMemFree_v2",
                                        "cuMemHostAlloc", "cuMemFreeHost", "cuMemcpyHtoD_v2",
                                        "cuMemcpyDtoH_v2"};
    void **slots = (void **)&cu;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(slots[i] = dlsym(h, names[i]))) return snprintf(why, len, "%s lacks %s", lib, names[i]), -1;
    CUdevice dev;
    CUcontext ctx;
    if (cu.init(0) || cu.device_get(&dev, 0) || cu.retain(&ctx, dev) || cu.set_current(ctx))
        return snprintf(why, len, "%s: no usable device", lib), -1;
    return 0;
}

enum way { STRATA, MANUAL, HOST, WAYS };
static const char *const way_names[] = {"strata", "manual", "host"};

struct bufs {
    void *dsend, *drecv;   /* device */
    char *hsend, *hrecv;   /* pinned host: manual staging */
    char *psend, *precv;   /* plain host: the host way */
};

static double one_call(enum way w, int coll, struct bufs *x, size_t bytes, int root)
{
    int n = (int)(bytes / sizeof(double));
    double t = MPI_Wtime();
    int bcast = coll == STRATA_COLL_BCAST;
    switch (w) {
    case STRATA:
        if (bcast) MPI_Bcast(x->dsend, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        else MPI_Allreduce(x->dsend, x->drecv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case MANUAL: {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (!bcast || rank == root) cu.dtoh(x->hsend, (CUdeviceptr)(uintptr_t)x->dsend, bytes);
        if (bcast) {
            PMPI_Bcast(x->hsend, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
            if (rank != root) cu.htod((CUdeviceptr)(uintptr_t)x->dsend, x->hsend, bytes);
        } else {
            PMPI_Allreduce(x->hsend, x->hrecv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            cu.htod((CUdeviceptr)(uintptr_t)x->drecv, x->hrecv, (size_t)n * sizeof(double));
        }
        break;
    }
    default:
        if (bcast) MPI_Bcast(x->psend, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
        else MPI_Allreduce(x->psend, x->precv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
    return MPI_Wtime() - t;
}

void bench_run_device(struct bench *b)
{
    char why[600] = "";
    int ok = load(why, sizeof why) == 0, all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        if (b->rank == 0)
            printf("--device: SKIPPED, no device on every rank (rank 0: %s); point "
                   "STRATA_CUDA_LIB at tests/fake_cuda's libfakecuda.so to run it without a GPU\n",
                   ok ? "has one" : why);
        return;
    }
    size_t most = 8;
    for (int s = 0; s < b->opt.nsizes; s++)
        if (b->opt.sizes[s] > most) most = b->opt.sizes[s];
    most = (most + 7) / 8 * 8;
    struct bufs x = {0};
    CUdeviceptr d1, d2;
    int failed = cu.alloc(&d1, most) || cu.alloc(&d2, most) ||
                 cu.host_alloc((void **)&x.hsend, most, 0) ||
                 cu.host_alloc((void **)&x.hrecv, most, 0) || !(x.psend = calloc(1, most)) ||
                 !(x.precv = calloc(1, most));
    int any_failed;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed) {
        if (b->rank == 0) fprintf(stderr, "strata-bench --device: cannot allocate the buffers\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    x.dsend = (void *)(uintptr_t)d1;
    x.drecv = (void *)(uintptr_t)d2;
    memset(x.hsend, 0, most); /* doubles of value 0: sums stay finite */
    cu.htod(d1, x.hsend, most);
    cu.htod(d2, x.hsend, most);
    int iters = b->opt.iters ? b->opt.iters : 20;
    if (b->rank == 0) {
        printf("--device: %s\n", strata_device_why());
        printf("%-14s %10s %12s %12s %12s %9s %9s\n", "collective", "bytes", "strata us",
               "manual us", "host us", "manual/st", "st/host");
    }
    static const int colls[] = {STRATA_COLL_BCAST, STRATA_COLL_ALLREDUCE};
    for (size_t ci = 0; ci < 2; ci++) {
        int coll = colls[ci];
        if (!b->opt.want[coll]) continue;
        for (int s = 0; s < b->opt.nsizes; s++) {
            size_t bytes = b->opt.sizes[s];
            if (coll == STRATA_COLL_ALLREDUCE) bytes = bytes < 8 ? 8 : bytes / 8 * 8;
            double mean[WAYS];
            for (int w = 0; w < WAYS; w++) {
                for (int i = 0; i < 3; i++) one_call((enum way)w, coll, &x, bytes, b->root);
                PMPI_Barrier(MPI_COMM_WORLD);
                double sum = 0;
                for (int i = 0; i < iters; i++) sum += one_call((enum way)w, coll, &x, bytes, b->root);
                double mine = sum / iters;
                PMPI_Allreduce(&mine, &mean[w], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            }
            if (b->rank == 0)
                printf("%-14s %10zu %12.1f %12.1f %12.1f %9.2f %9.2f\n",
                       strata_coll_name((enum strata_coll)coll), bytes, mean[STRATA] * 1e6,
                       mean[MANUAL] * 1e6, mean[HOST] * 1e6, mean[MANUAL] / mean[STRATA],
                       mean[STRATA] / mean[HOST]);
        }
    }
    if (b->rank == 0)
        printf("(%s: %d calls per figure, the slowest rank's mean; manual/st > 1: strata is "
               "faster than staging by hand)\n", way_names[0], iters);
    cu.free(d1);
    cu.free(d2);
    cu.free_host(x.hsend);
    cu.free_host(x.hrecv);
    free(x.psend);
    free(x.precv);
}
