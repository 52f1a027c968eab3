/* The CUDA driver calls the device tests make themselves, from the same
 * library strata loads (STRATA_CUDA_LIB: the fake of tests/fake_cuda, or a
 * real libcuda.so.1), opened with dlopen as strata does: the program needs
 * no CUDA at link time.  Header-only, for test_device.c, test_device_v.c
 * and test_device_reduce.c. */
#ifndef STRATA_TEST_CUDA_DRIVER_H
#define STRATA_TEST_CUDA_DRIVER_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "transport/cuda_api.h"

static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
} cu;

/* A driver call that fails ends the job (names the call and the rank). */
#define CHECK_CU(call)                                                         \
    do {                                                                       \
        CUresult rc_ = (call);                                                 \
        if (rc_) {                                                             \
            int r_ = -1;                                                       \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                \
            fprintf(stderr, "rank %d: %s failed: %d\n", r_, #call, rc_);       \
            MPI_Abort(MPI_COMM_WORLD, 2);                                      \
        }                                                                      \
    } while (0)

/* Loads the driver and makes device 0's primary context current. */
static void load_cuda(void)
{
    const char *lib = getenv("STRATA_CUDA_LIB");
    void *h = dlopen(lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", lib ? lib : "libcuda.so.1", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *(void **)&cu.init = dlsym(h, "cuInit");
    *(void **)&cu.device_get = dlsym(h, "cuDeviceGet");
    *(void **)&cu.retain = dlsym(h, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.set_current = dlsym(h, "cuCtxSetCurrent");
    *(void **)&cu.alloc = dlsym(h, "cuMemAlloc_v2");
    *(void **)&cu.free = dlsym(h, "cuMemFree_v2");
    *(void **)&cu.htod = dlsym(h, "cuMemcpyHtoD_v2");
    *(void **)&cu.dtoh = dlsym(h, "cuMemcpyDtoH_v2");
    CUdevice dev;
    CUcontext ctx;
    CHECK_CU(cu.init(0));
    CHECK_CU(cu.device_get(&dev, 0));
    CHECK_CU(cu.retain(&ctx, dev));
    CHECK_CU(cu.set_current(ctx));
}

/* A buffer the tests hand to a collective: n bytes copied from host `src`
 * into new device memory (device) or new malloc'd host memory. */
static inline void *test_buf_place(const void *src, size_t n, int device)
{
    if (device) {
        CUdeviceptr d;
        CHECK_CU(cu.alloc(&d, n));
        CHECK_CU(cu.htod(d, src, n));
        return (void *)(uintptr_t)d;
    }
    void *p = malloc(n);
    memcpy(p, src, n);
    return p;
}

/* The n bytes of a test_buf_place buffer, in new malloc'd host memory; the
 * buffer itself is freed. */
static inline char *test_buf_take(void *p, size_t n, int device)
{
    char *got = malloc(n);
    if (device) {
        CHECK_CU(cu.dtoh(got, (CUdeviceptr)(uintptr_t)p, n));
        CHECK_CU(cu.free((CUdeviceptr)(uintptr_t)p));
    } else {
        memcpy(got, p, n);
        free(p);
    }
    return got;
}

#endif
