/* The fake CUDA driver keeps the rules the device tests rely on: a host
 * read of device memory (or of an IPC mapping of it) faults; asynchronous
 * copies complete later, in order, and synchronising waits for them; IPC
 * handles open in another process and not in one's own; CUDA's errors for
 * no context, host pointers where device memory is required and the reverse.
 * Usage: test_fake_cuda path/to/libfakecuda.so */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/cuda_api.h"

static int failures;
#define EXPECT(cond)                                                            \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "line %d: expected %s\n", __LINE__, #cond);         \
            failures++;                                                         \
        }                                                                       \
    } while (0)

static void *h;
static void *sym(const char *name)
{
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "the fake lacks %s\n", name);
        exit(1);
    }
    return f;
}
#define FN(name, ...) ((CUresult(*)(__VA_ARGS__))sym(name))

/* Runs f in a child; returns the signal that killed it, or 0 (and its exit
 * status in *status). */
static int in_child(void (*f)(void *), void *arg, int *status)
{
    pid_t pid = fork();
    if (pid == 0) {
        f(arg);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void touch(void *p)
{
    /* The default action, so that the process dies of the signal even
     * under a sanitizer that would catch it and exit. */
    signal(SIGSEGV, SIG_DFL);
    volatile char c = *(volatile char *)p;
    (void)c;
}

struct ipc_arg {
    CUipcMemHandle handle;
    size_t n;
};

/* In another process: open the handle, check its contents, write a byte,
 * and check that the mapping faults on a host read. */
static void child_ipc(void *p)
{
    struct ipc_arg *a = p;
    CUdeviceptr at = 0;
    if (FN("cuIpcOpenMemHandle_v2", CUdeviceptr *, CUipcMemHandle, unsigned)(&at, a->handle, 1))
        _exit(10);
    CUdeviceptr again = 0;
    if (FN("cuIpcOpenMemHandle_v2", CUdeviceptr *, CUipcMemHandle, unsigned)(&again, a->handle, 1) ||
        again != at)
        _exit(11);
    char *got = malloc(a->n);
    if (FN("cuMemcpyDtoH_v2", void *, CUdeviceptr, size_t)(got, at, a->n)) _exit(12);
    for (size_t i = 0; i < a->n; i++)
        if (got[i] != (char)i) _exit(13);
    char x = 42;
    if (FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(at + 1, &x, 1)) _exit(14);
    /* From pageable memory the copy lands later: wait for it, as a real
     * program must before others read the bytes. */
    if (FN("cuStreamSynchronize", CUstream)(NULL)) _exit(16);
    int st;
    if (in_child(touch, (void *)(uintptr_t)at, &st) != SIGSEGV) _exit(15);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 2 || !(h = dlopen(argv[1], RTLD_NOW))) {
        fprintf(stderr, "usage: test_fake_cuda libfakecuda.so\n");
        return 1;
    }
    setenv("FAKECUDA_DELAY_US", "100000", 1); /* 0.1 s per queued copy */
    int n = -1;
    EXPECT(FN("cuDeviceGetCount", int *)(&n) == STRATA_CUDA_ERROR_NOT_INITIALIZED);
    EXPECT(FN("cuInit", unsigned)(0) == 0);
    EXPECT(FN("cuDeviceGetCount", int *)(&n) == 0 && n == 1);
    CUdeviceptr d = 0;
    EXPECT(FN("cuMemAlloc_v2", CUdeviceptr *, size_t)(&d, 4096) ==
           STRATA_CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx;
    EXPECT(FN("cuDevicePrimaryCtxRetain", CUcontext *, CUdevice)(&ctx, 0) == 0);
    EXPECT(FN("cuCtxSetCurrent", CUcontext)(ctx) == 0);
    const size_t size = 10000;
    EXPECT(FN("cuMemAlloc_v2", CUdeviceptr *, size_t)(&d, size) == 0);

    /* Classification. */
    unsigned type = 0;
    char *host = malloc(size);
    void *pinned = NULL;
    EXPECT(FN("cuPointerGetAttribute", void *, int, CUdeviceptr)(&type, 2, d + 10) == 0 &&
           type == STRATA_CU_MEMORYTYPE_DEVICE);
    EXPECT(FN("cuPointerGetAttribute", void *, int, CUdeviceptr)(&type, 2,
                                                                (uintptr_t)host) ==
           STRATA_CUDA_ERROR_INVALID_VALUE);
    EXPECT(FN("cuMemHostAlloc", void **, size_t, unsigned)(&pinned, size, 0) == 0);
    EXPECT(FN("cuPointerGetAttribute", void *, int, CUdeviceptr)(&type, 2,
                                                                (uintptr_t)pinned) == 0 &&
           type == STRATA_CU_MEMORYTYPE_HOST);

    /* A host read of device memory faults. */
    int status;
    EXPECT(in_child(touch, (void *)(uintptr_t)d, &status) == SIGSEGV);

    /* Copies, and the wrong kind of pointer. */
    for (size_t i = 0; i < size; i++) host[i] = (char)i;
    EXPECT(FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(d, host, size) == 0);
    EXPECT(FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(
               (uintptr_t)host, host, size) == STRATA_CUDA_ERROR_INVALID_VALUE);
    EXPECT(FN("cuMemcpyDtoH_v2", void *, CUdeviceptr, size_t)(host, d + 1, size) ==
           STRATA_CUDA_ERROR_INVALID_VALUE); /* runs past the allocation */
    EXPECT(FN("cuMemcpyDtoH_v2", void *, CUdeviceptr, size_t)((void *)(uintptr_t)d, d, 8) ==
           STRATA_CUDA_ERROR_INVALID_VALUE); /* device memory as the host side */
    /* The first copy came from pageable memory: it lands on the legacy
     * stream, which the non-blocking stream below does not follow. */
    EXPECT(FN("cuStreamSynchronize", CUstream)(NULL) == 0);

    /* Asynchronous: not done right after, done after synchronising, in order. */
    CUstream s;
    CUevent e;
    EXPECT(FN("cuStreamCreate", CUstream *, unsigned)(&s, 1) == 0);
    EXPECT(FN("cuEventCreate", CUevent *, unsigned)(&e, 2) == 0);
    memset(pinned, 0, size);
    EXPECT(FN("cuMemcpyDtoHAsync_v2", void *, CUdeviceptr, size_t, CUstream)(pinned, d, size, s) ==
           0);
    EXPECT(FN("cuEventRecord", CUevent, CUstream)(e, s) == 0);
    EXPECT(((char *)pinned)[size - 1] == 0);
    EXPECT(FN("cuEventQuery", CUevent)(e) == STRATA_CUDA_ERROR_NOT_READY);
    EXPECT(FN("cuEventSynchronize", CUevent)(e) == 0);
    EXPECT(((char *)pinned)[size - 1] == (char)(size - 1));
    ((char *)pinned)[0] = 7;
    EXPECT(FN("cuMemcpyHtoDAsync_v2", CUdeviceptr, const void *, size_t, CUstream)(d, pinned, 1, s) ==
           0);
    EXPECT(FN("cuMemcpyDtoHAsync_v2", void *, CUdeviceptr, size_t, CUstream)(host, d, 1, s) == 0);
    EXPECT(FN("cuStreamSynchronize", CUstream)(s) == 0);
    EXPECT(host[0] == 7); /* the second copy ran after the first */
    ((char *)pinned)[0] = 0;
    EXPECT(FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(d, pinned, 1) == 0);

    /* The legacy stream: a synchronous copy from pageable memory lands later,
     * and a blocking stream's work follows it (a non-blocking one's need
     * not: strata's lane once read application inputs stale that way). */
    CUstream blocking;
    EXPECT(FN("cuStreamCreate", CUstream *, unsigned)(&blocking, 0) == 0);
    host[0] = 9;
    EXPECT(FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(d, host, 1) == 0);
    host[0] = 0; /* staged at the call: later changes do not travel */
    EXPECT(FN("cuMemcpyDtoHAsync_v2", void *, CUdeviceptr, size_t, CUstream)(pinned, d, 1,
                                                                            blocking) == 0);
    EXPECT(FN("cuStreamSynchronize", CUstream)(blocking) == 0);
    EXPECT(((char *)pinned)[0] == 9);
    EXPECT(FN("cuStreamDestroy_v2", CUstream)(blocking) == 0);
    ((char *)pinned)[0] = 0;
    EXPECT(FN("cuMemcpyHtoD_v2", CUdeviceptr, const void *, size_t)(d, pinned, 1) == 0);

    /* IPC: another process opens it (twice: one mapping), writes, faults. */
    struct ipc_arg a = {.n = size};
    EXPECT(FN("cuIpcGetMemHandle", CUipcMemHandle *, CUdeviceptr)(&a.handle, d) == 0);
    CUdeviceptr own;
    EXPECT(FN("cuIpcOpenMemHandle_v2", CUdeviceptr *, CUipcMemHandle, unsigned)(&own, a.handle, 1) ==
           STRATA_CUDA_ERROR_INVALID_CONTEXT);
    EXPECT(in_child(child_ipc, &a, &status) == 0 && status == 0);
    if (status) fprintf(stderr, "IPC child exit status %d\n", status);
    EXPECT(FN("cuMemcpyDtoH_v2", void *, CUdeviceptr, size_t)(host, d, 2) == 0 && host[1] == 42);
    CUipcMemHandle bad;
    memset(&bad, 0, sizeof bad);
    EXPECT(FN("cuIpcOpenMemHandle_v2", CUdeviceptr *, CUipcMemHandle, unsigned)(&own, bad, 1) ==
           STRATA_CUDA_ERROR_INVALID_HANDLE);

    EXPECT(FN("cuStreamDestroy_v2", CUstream)(s) == 0);
    EXPECT(FN("cuEventDestroy_v2", CUevent)(e) == 0);
    EXPECT(FN("cuMemFreeHost", void *)(pinned) == 0);
    EXPECT(FN("cuMemFree_v2", CUdeviceptr)(d) == 0);
    EXPECT(FN("cuMemFree_v2", CUdeviceptr)(d) == STRATA_CUDA_ERROR_INVALID_VALUE);
    free(host);
    printf("test_fake_cuda: %d failures\n", failures);
    return failures != 0;
}
