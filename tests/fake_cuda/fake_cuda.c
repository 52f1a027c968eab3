/* libfakecuda.so: a stand-in for libcuda.so.1 on machines without a GPU,
 * loaded by strata through STRATA_CUDA_LIB.  It exports the driver API
 * symbols strata and its tests call (src/transport/cuda_api.h, plus the
 * synchronous copies and cuMemAlloc/cuMemFree the tests use) and keeps the
 * rules real hardware enforces, so that a test passing on it proves something:
 *
 * - Device memory is a memfd mapped PROT_NONE at the address handed out:
 *   any host load or store there (memcpy by strata, the host MPI reading a
 *   device pointer) is a SIGSEGV.  The fake itself copies through a second,
 *   private read-write mapping of the same memfd.
 * - IPC handles name the owner's pid, memfd number and allocation id; the
 *   importer opens /proc/PID/fd/N (checking the id against the memfd's name,
 *   so a recycled descriptor is refused) and maps it PROT_NONE again at an
 *   address of its own.  Opening one's own handle fails as on CUDA; opening
 *   a handle twice counts references and returns the same address.
 * - Every stream is a worker thread that runs its copies in order, after
 *   FAKECUDA_DELAY_US microseconds each: a caller that reads a staging
 *   buffer before synchronising reads stale data.
 * - The legacy default stream (the NULL handle) is one more such thread.  A
 *   synchronous copy from pageable memory to the device returns once the
 *   bytes are staged, before they land (CUDA's documented behaviour, seen on
 *   an H200: a non-blocking stream read an application's input before its
 *   cuMemcpyHtoD had landed); copies between devices are asynchronous too;
 *   a synchronous copy to the host first waits for the legacy stream and
 *   every blocking stream.  Work on a blocking stream (flags 0) waits for
 *   the legacy stream's earlier work; work on a non-blocking one does not.
 *   cuMemFree and cuMemFreeHost wait for every stream, as on CUDA.
 * - Errors as CUDA returns them: NOT_INITIALIZED before cuInit, NO_DEVICE
 *   with FAKECUDA_DEVICES=0, INVALID_CONTEXT for a copy or allocation with
 *   no current context, INVALID_VALUE for a pointer that is not device
 *   memory where device memory is required (or device memory where host
 *   memory is), INVALID_HANDLE for a bad IPC handle.
 * - FAKECUDA_FAIL_COPY_AFTER=N: the N+1-th asynchronous copy of the process
 *   fails (INVALID_VALUE), to test strata's handling of a copy failing
 *   mid-call (the tests' own copies are synchronous and never fail). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "transport/cuda_api.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_ALLOCS 4096
#define FAKE_MAGIC 0x46414b45u

/* The mark strata looks for (transport/device.c): this driver's device
 * memory is host memory behind PROT_NONE, never to be handed to GPU code
 * (the reduction plugin). */
EXPORT const int strata_fake_cuda = 1;

enum kind { FREE_SLOT, DEVICE, IPC_OPENED, HOST_PINNED, HOST_REGISTERED };

struct alloc {
    enum kind kind;
    uintptr_t base;  /* the address the caller sees */
    char *alias;     /* where the fake reads and writes it */
    size_t size, mapped;
    int fd, refs;
    unsigned long long id;
    pid_t owner;     /* IPC_OPENED: the exporting process */
};

/* The handle's layout inside CUipcMemHandle's 64 bytes. */
struct handle {
    uint32_t magic;
    int32_t pid, fd;
    uint64_t size, id;
};

struct CUctx_st { int device; };
static struct CUctx_st contexts[8];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc allocs[MAX_ALLOCS];
static unsigned long long next_id = 1;
static int initialised, ndevices = -1;
static long copies_left = -1; /* FAKECUDA_FAIL_COPY_AFTER */
static unsigned delay_us;
static __thread CUcontext current;
/* Frees wait for every stream, as cuMemFree and cuMemFreeHost do on CUDA. */
static void device_idle(void);

static size_t page_round(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

/* The allocation holding [p, p+n), or NULL (call with lock held). */
static struct alloc *find(uintptr_t p, size_t n)
{
    for (int i = 0; i < MAX_ALLOCS; i++) {
        struct alloc *a = &allocs[i];
        if (a->kind != FREE_SLOT && p >= a->base && p - a->base <= a->size &&
            n <= a->size - (p - a->base) && (p < a->base + a->size || n == 0))
            return a;
    }
    return NULL;
}

static struct alloc *slot(void)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].kind == FREE_SLOT) return &allocs[i];
    return NULL;
}

static int is_device(const struct alloc *a)
{
    return a && (a->kind == DEVICE || a->kind == IPC_OPENED);
}

EXPORT CUresult cuInit(unsigned flags)
{
    if (flags) return STRATA_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    const char *n = getenv("FAKECUDA_DEVICES");
    ndevices = n ? atoi(n) : 1;
    if (ndevices > 8) ndevices = 8;
    for (int i = 0; i < 8; i++) contexts[i].device = i;
    const char *d = getenv("FAKECUDA_DELAY_US");
    delay_us = d ? (unsigned)atoi(d) : 0;
    const char *f = getenv("FAKECUDA_FAIL_COPY_AFTER");
    copies_left = f ? atol(f) : -1;
    initialised = 1;
    pthread_mutex_unlock(&lock);
    return ndevices > 0 ? STRATA_CUDA_SUCCESS : STRATA_CUDA_ERROR_NO_DEVICE;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    if (!v) return STRATA_CUDA_ERROR_INVALID_VALUE;
    *v = 12000;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!count) return STRATA_CUDA_ERROR_INVALID_VALUE;
    *count = ndevices;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!dev) return STRATA_CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= ndevices) return STRATA_CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= ndevices) return STRATA_CUDA_ERROR_INVALID_DEVICE;
    if (!name || len <= 0) return STRATA_CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "fake CUDA device %d (libfakecuda)", dev);
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= ndevices) return STRATA_CUDA_ERROR_INVALID_DEVICE;
    if (!ctx) return STRATA_CUDA_ERROR_INVALID_VALUE;
    *ctx = &contexts[dev];
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    return dev >= 0 && dev < ndevices ? STRATA_CUDA_SUCCESS : STRATA_CUDA_ERROR_INVALID_DEVICE;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx) return STRATA_CUDA_ERROR_INVALID_VALUE;
    *ctx = current;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (ctx && (ctx < contexts || ctx >= contexts + ndevices))
        return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return STRATA_CUDA_SUCCESS;
}

/* Maps size bytes of fd twice: PROT_NONE where the caller sees it, read-write
 * for the fake. */
static CUresult map_twice(struct alloc *a, int fd, size_t size)
{
    size_t mapped = page_round(size);
    void *base = mmap(NULL, mapped, PROT_NONE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    void *alias = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (alias == MAP_FAILED) {
        munmap(base, mapped);
        return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->base = (uintptr_t)base;
    a->alias = alias;
    a->size = size;
    a->mapped = mapped;
    a->fd = fd;
    a->refs = 1;
    return STRATA_CUDA_SUCCESS;
}

static void unmap(struct alloc *a)
{
    munmap((void *)a->base, a->mapped);
    munmap(a->alias, a->mapped);
    close(a->fd);
    memset(a, 0, sizeof *a);
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!dptr || bytes == 0) return STRATA_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct alloc *a = slot();
    CUresult rc = STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    char name[64];
    snprintf(name, sizeof name, "fakecuda-%llu", next_id);
    int fd = a ? memfd_create(name, 0) : -1;
    if (fd >= 0 && ftruncate(fd, (off_t)page_round(bytes)) == 0 &&
        (rc = map_twice(a, fd, bytes)) == STRATA_CUDA_SUCCESS) {
        a->kind = DEVICE;
        a->id = next_id++;
        a->owner = getpid();
        *dptr = a->base;
    } else if (fd >= 0) {
        close(fd);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    device_idle();
    pthread_mutex_lock(&lock);
    struct alloc *a = find(dptr, 0);
    CUresult rc = STRATA_CUDA_ERROR_INVALID_VALUE;
    if (a && a->kind == DEVICE && a->base == dptr) {
        unmap(a);
        rc = STRATA_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr ptr)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&lock);
    struct alloc *a = find(ptr, 1);
    CUresult rc = STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!is_device(a)) {
        rc = STRATA_CUDA_ERROR_INVALID_VALUE;
    } else {
        if (base) *base = a->base;
        if (size) *size = a->size;
        rc = STRATA_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!data) return STRATA_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct alloc *a = find(ptr, 1);
    struct alloc copy = a ? *a : (struct alloc){0};
    pthread_mutex_unlock(&lock);
    /* Pageable host memory CUDA never saw: as CUDA, an error. */
    if (!a) return STRATA_CUDA_ERROR_INVALID_VALUE;
    switch (attribute) {
    case STRATA_CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = is_device(&copy) ? STRATA_CU_MEMORYTYPE_DEVICE : STRATA_CU_MEMORYTYPE_HOST;
        return STRATA_CUDA_SUCCESS;
    case STRATA_CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = 0;
        return STRATA_CUDA_SUCCESS;
    case STRATA_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = 0;
        return STRATA_CUDA_SUCCESS;
    case STRATA_CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = &contexts[0];
        return STRATA_CUDA_SUCCESS;
    default:
        return STRATA_CUDA_ERROR_INVALID_VALUE;
    }
}

/* Pinned host memory: ordinary memory the fake records as host. */
static CUresult add_host(void *p, size_t bytes, enum kind kind)
{
    pthread_mutex_lock(&lock);
    CUresult rc = STRATA_CUDA_SUCCESS;
    struct alloc *a;
    if (find((uintptr_t)p, bytes)) rc = STRATA_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (!(a = slot())) rc = STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    else *a = (struct alloc){kind, (uintptr_t)p, p, bytes, 0, -1, 1, next_id++, getpid()};
    pthread_mutex_unlock(&lock);
    return rc;
}

static CUresult remove_host(void *p, enum kind kind)
{
    pthread_mutex_lock(&lock);
    struct alloc *a = find((uintptr_t)p, 0);
    CUresult rc = STRATA_CUDA_ERROR_INVALID_VALUE;
    if (a && a->kind == kind && a->base == (uintptr_t)p) {
        memset(a, 0, sizeof *a);
        rc = STRATA_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!p || bytes == 0) return STRATA_CUDA_ERROR_INVALID_VALUE;
    void *m = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (m == MAP_FAILED) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = add_host(m, bytes, HOST_PINNED);
    if (rc) munmap(m, page_round(bytes));
    else *p = m;
    return rc;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    device_idle();
    pthread_mutex_lock(&lock);
    struct alloc *a = find((uintptr_t)p, 0);
    size_t size = a && a->kind == HOST_PINNED && a->base == (uintptr_t)p ? a->size : 0;
    pthread_mutex_unlock(&lock);
    if (!size) return STRATA_CUDA_ERROR_INVALID_VALUE;
    remove_host(p, HOST_PINNED);
    munmap(p, page_round(size));
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!p || bytes == 0) return STRATA_CUDA_ERROR_INVALID_VALUE;
    return add_host(p, bytes, HOST_REGISTERED);
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    return remove_host(p, HOST_REGISTERED) ? STRATA_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
                                           : STRATA_CUDA_SUCCESS;
}

/* ---- copies ---- */

/* Where the fake reads or writes [p, p+n): the device alias for device
 * memory (want_device), p itself for host memory; NULL when p is not the
 * kind of memory asked for (CUDA: INVALID_VALUE). */
static char *resolve(uintptr_t p, size_t n, int want_device)
{
    pthread_mutex_lock(&lock);
    struct alloc *a = find(p, n);
    char *at = NULL;
    if (want_device && is_device(a)) at = a->alias + (p - a->base);
    /* Host memory: anything but device memory (pageable memory is not
     * known to the fake, and copies from it are legal). */
    else if (!want_device && !is_device(a) && !(p == 0 && n)) at = (char *)p;
    pthread_mutex_unlock(&lock);
    return at;
}

static CUresult take_copy(void)
{
    pthread_mutex_lock(&lock);
    CUresult rc = copies_left == 0 ? STRATA_CUDA_ERROR_INVALID_VALUE : STRATA_CUDA_SUCCESS;
    if (copies_left > 0) copies_left--;
    pthread_mutex_unlock(&lock);
    return rc;
}

/* One queued operation of a stream: a copy or an event to mark done. */
struct op {
    char *dst;
    const char *src;
    size_t n;
    CUevent event;
    int free_src;               /* src is the fake's staging copy */
    unsigned long after_legacy; /* runs once the legacy stream finished this many */
    struct op *next;
};

struct CUevent_st {
    pthread_mutex_t m;
    pthread_cond_t done_cv;
    unsigned long recorded, completed;
};

struct CUstream_st {
    CUcontext ctx;
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t cv;
    struct op *head, *tail;
    unsigned long queued, finished;
    int stop;
    int blocking;                    /* created with flags 0 */
    struct CUstream_st *next_stream; /* the list of every stream, for the host's waits */
};

/* The legacy default stream, started at its first use; and every stream
 * created (the list a synchronous copy to the host waits on). */
static struct CUstream_st *legacy;
static struct CUstream_st *streams;
static void *stream_main(void *arg);

static void forget_streams_in_child(void);
static void install_atfork(void) { pthread_atfork(NULL, NULL, forget_streams_in_child); }
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A child of fork has no stream threads: it starts its own legacy stream
 * (a test's child processes use the fake; CUDA itself forbids that). */
static void forget_streams_in_child(void)
{
    legacy = NULL;
    streams = NULL;
}

static struct CUstream_st *legacy_stream(void)
{
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&lock);
    if (!legacy) {
        struct CUstream_st *s = calloc(1, sizeof *s);
        if (s) {
            pthread_mutex_init(&s->m, NULL);
            pthread_cond_init(&s->cv, NULL);
            s->blocking = 1;
            if (pthread_create(&s->thread, NULL, stream_main, s)) free(s);
            else legacy = s;
        }
    }
    struct CUstream_st *s = legacy;
    pthread_mutex_unlock(&lock);
    return s;
}

static unsigned long legacy_queued(void)
{
    struct CUstream_st *l = legacy_stream();
    if (!l) return 0;
    pthread_mutex_lock(&l->m);
    unsigned long n = l->queued;
    pthread_mutex_unlock(&l->m);
    return n;
}

static void pause_a_little(void)
{
    if (!delay_us) return;
    struct timespec ts = {0, (long)delay_us * 1000};
    nanosleep(&ts, NULL);
}

static void *stream_main(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&s->m);
    for (;;) {
        while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->m);
        if (!s->head) break;
        struct op *o = s->head;
        pthread_mutex_unlock(&s->m);
        if (o->after_legacy) {
            pthread_mutex_lock(&legacy->m);
            while (legacy->finished < o->after_legacy) pthread_cond_wait(&legacy->cv, &legacy->m);
            pthread_mutex_unlock(&legacy->m);
        }
        if (o->event) {
            pthread_mutex_lock(&o->event->m);
            o->event->completed++;
            pthread_cond_broadcast(&o->event->done_cv);
            pthread_mutex_unlock(&o->event->m);
        } else {
            pause_a_little();
            memcpy(o->dst, o->src, o->n);
            if (o->free_src) free((void *)o->src);
        }
        pthread_mutex_lock(&s->m);
        s->head = o->next;
        if (!s->head) s->tail = NULL;
        s->finished++;
        pthread_cond_broadcast(&s->cv);
        free(o);
    }
    pthread_mutex_unlock(&s->m);
    return NULL;
}

static CUresult enqueue(CUstream s, char *dst, const char *src, size_t n, CUevent e,
                        int free_src)
{
    if (!s) s = legacy_stream();
    else if (s->ctx != current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!s) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    struct op *o = malloc(sizeof *o);
    if (!o) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    /* A blocking stream's work follows the legacy stream's earlier work. */
    unsigned long after = s != legacy && s->blocking ? legacy_queued() : 0;
    *o = (struct op){dst, src, n, e, free_src, after, NULL};
    pthread_mutex_lock(&s->m);
    if (s->tail) s->tail->next = o;
    else s->head = o;
    s->tail = o;
    s->queued++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    return STRATA_CUDA_SUCCESS;
}

static void drain(struct CUstream_st *s)
{
    pthread_mutex_lock(&s->m);
    while (s->finished < s->queued) pthread_cond_wait(&s->cv, &s->m);
    pthread_mutex_unlock(&s->m);
}

/* A synchronous copy to the host, or cuStreamSynchronize(NULL): the legacy
 * stream and every blocking stream finish what they were given. */
static void host_waits_for_device(void)
{
    struct CUstream_st *l = legacy_stream();
    if (l) drain(l);
    /* The list's lock held throughout, so no stream is destroyed under the
     * walk (stream threads never take it). */
    pthread_mutex_lock(&lock);
    for (struct CUstream_st *t = streams; t; t = t->next_stream)
        if (t->blocking) drain(t);
    pthread_mutex_unlock(&lock);
}

static void device_idle(void)
{
    struct CUstream_st *l = legacy_stream();
    if (l) drain(l);
    pthread_mutex_lock(&lock); /* as host_waits_for_device */
    for (struct CUstream_st *t = streams; t; t = t->next_stream) drain(t);
    pthread_mutex_unlock(&lock);
}

static CUresult copy(uintptr_t dst, int dst_dev, uintptr_t src, int src_dev, size_t n, CUstream s,
                     int async)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    char *d = resolve(dst, n, dst_dev);
    const char *from = resolve(src, n, src_dev);
    if (!d || !from) return STRATA_CUDA_ERROR_INVALID_VALUE;
    if (async && take_copy()) return STRATA_CUDA_ERROR_INVALID_VALUE;
    if (!n) return STRATA_CUDA_SUCCESS;
    if (async) return enqueue(s, d, from, n, NULL, 0);
    if (dst_dev) {
        /* To a device: staged now, landing later on the legacy stream. */
        char *staged = malloc(n);
        if (!staged) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(staged, from, n);
        return enqueue(NULL, d, staged, n, NULL, 1);
    }
    /* To the host: after the legacy stream and every blocking stream. */
    host_waits_for_device();
    pause_a_little();
    memcpy(d, from, n);
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy(dst, 1, (uintptr_t)src, 0, n, NULL, 0);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t)dst, 0, src, 1, n, NULL, 0);
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dst, 1, src, 1, n, NULL, 0);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dst, 1, (uintptr_t)src, 0, n, s, 1);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, 0, src, 1, n, s, 1);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, 1, src, 1, n, s, 1);
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    char *d = resolve(dst, n, 1);
    if (!d) return STRATA_CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *l = legacy_stream();
    if (l) drain(l); /* ordered after the legacy stream's copies */
    memset(d, v, n);
    return STRATA_CUDA_SUCCESS;
}

/* ---- streams and events ---- */

EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned flags)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!ps) return STRATA_CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_once(&atfork_once, install_atfork);
    s->ctx = current;
    s->blocking = !(flags & STRATA_CU_STREAM_NON_BLOCKING);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, stream_main, s)) {
        free(s);
        return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    s->next_stream = streams;
    streams = s;
    pthread_mutex_unlock(&lock);
    *ps = s;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!s) host_waits_for_device();
    else drain(s);
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!s) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    cuStreamSynchronize(s);
    pthread_mutex_lock(&s->m);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->m);
    pthread_join(s->thread, NULL);
    pthread_mutex_lock(&lock);
    for (struct CUstream_st **at = &streams; *at; at = &(*at)->next_stream)
        if (*at == s) {
            *at = s->next_stream;
            break;
        }
    pthread_mutex_unlock(&lock);
    free(s);
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *pe, unsigned flags)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!pe) return STRATA_CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&e->m, NULL);
    pthread_cond_init(&e->done_cv, NULL);
    *pe = e;
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!e) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&e->m);
    e->recorded++;
    pthread_mutex_unlock(&e->m);
    return enqueue(s, NULL, NULL, 0, e, 0);
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!e) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&e->m);
    while (e->completed < e->recorded) pthread_cond_wait(&e->done_cv, &e->m);
    pthread_mutex_unlock(&e->m);
    return STRATA_CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
    if (!e) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&e->m);
    int done = e->completed >= e->recorded;
    pthread_mutex_unlock(&e->m);
    return done ? STRATA_CUDA_SUCCESS : STRATA_CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    if (!e) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    cuEventSynchronize(e); /* CUDA defers the release; the fake waits */
    free(e);
    return STRATA_CUDA_SUCCESS;
}

/* ---- IPC ---- */

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr ptr)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!h) return STRATA_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    struct alloc *a = find(ptr, 1);
    CUresult rc = STRATA_CUDA_ERROR_INVALID_VALUE;
    if (a && a->kind == DEVICE) {
        struct handle hd = {FAKE_MAGIC, (int32_t)getpid(), a->fd, a->size, a->id};
        memset(h, 0, sizeof *h);
        memcpy(h->reserved, &hd, sizeof hd);
        rc = STRATA_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *ptr, CUipcMemHandle h, unsigned flags)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    if (!current) return STRATA_CUDA_ERROR_INVALID_CONTEXT;
    if (!ptr) return STRATA_CUDA_ERROR_INVALID_VALUE;
    struct handle hd;
    memcpy(&hd, h.reserved, sizeof hd);
    if (hd.magic != FAKE_MAGIC || hd.size == 0) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    if (hd.pid == getpid()) return STRATA_CUDA_ERROR_INVALID_CONTEXT; /* as CUDA */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        struct alloc *a = &allocs[i];
        if (a->kind == IPC_OPENED && a->owner == hd.pid && a->id == hd.id) {
            a->refs++;
            *ptr = a->base;
            pthread_mutex_unlock(&lock);
            return STRATA_CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&lock);
    char path[64], link[128], want[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)hd.pid, (int)hd.fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    snprintf(want, sizeof want, "/memfd:fakecuda-%llu ", (unsigned long long)hd.id);
    if (n <= 0) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    link[n] = '\0';
    if (strncmp(link, want, strlen(want))) return STRATA_CUDA_ERROR_INVALID_HANDLE;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return STRATA_CUDA_ERROR_MAP_FAILED;
    struct stat st;
    if (fstat(fd, &st) || (uint64_t)st.st_size < hd.size) {
        close(fd);
        return STRATA_CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&lock);
    struct alloc *a = slot();
    CUresult rc = a ? map_twice(a, fd, hd.size) : STRATA_CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == STRATA_CUDA_SUCCESS) {
        a->kind = IPC_OPENED;
        a->id = hd.id;
        a->owner = hd.pid;
        *ptr = a->base;
    } else {
        close(fd);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr ptr)
{
    if (!initialised) return STRATA_CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&lock);
    struct alloc *a = find(ptr, 0);
    CUresult rc = STRATA_CUDA_ERROR_INVALID_VALUE;
    if (a && a->kind == IPC_OPENED && a->base == ptr) {
        if (--a->refs == 0) unmap(a);
        rc = STRATA_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuGetErrorName(CUresult err, const char **name)
{
    if (!name) return STRATA_CUDA_ERROR_INVALID_VALUE;
    switch (err) {
    case 0: *name = "CUDA_SUCCESS"; break;
    case 1: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case 3: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; break;
    case 101: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case 201: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case 205: *name = "CUDA_ERROR_MAP_FAILED"; break;
    case 400: *name = "CUDA_ERROR_INVALID_HANDLE"; break;
    case 600: *name = "CUDA_ERROR_NOT_READY"; break;
    case 712: *name = "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"; break;
    case 713: *name = "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"; break;
    default: *name = NULL; return STRATA_CUDA_ERROR_INVALID_VALUE;
    }
    return STRATA_CUDA_SUCCESS;
}
