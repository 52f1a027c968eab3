/* The CUDA driver, loaded at run time, and the staging lanes (device.h). */
#include "transport/device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "transport/cuda_api.h"
#include "util/log.h"
#include "util/stats.h"

/* The driver's entry points, filled by load(). */
static struct {
#define FIELD(name, symbol, params) CUresult (*name) params;
    STRATA_CUDA_FUNCTIONS(FIELD)
#undef FIELD
} cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int available;
static int fake; /* the driver is tests/fake_cuda's (it exports strata_fake_cuda) */
static char why[768] = "device support not looked at yet";

static const char *error_name(CUresult err)
{
    const char *name = NULL;
    if (cu.cuGetErrorName && cu.cuGetErrorName(err, &name) == 0 && name) return name;
    return "an unknown CUDA error";
}

static void load(void)
{
    const struct strata_config *cfg = strata_config();
    const char *lib = cfg ? cfg->cuda_lib : "libcuda.so.1";
    if (cfg && !cfg->cuda) {
        snprintf(why, sizeof why, "off (STRATA_CUDA=0)");
        return;
    }
    /* RTLD_LOCAL: the driver's symbols stay out of the application's way. */
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "no CUDA driver (%s does not load)", lib);
        return;
    }
#define LOOKUP(name, symbol, params)                                                  \
    if (!(*(void **)&cu.name = dlsym(h, symbol))) {                                   \
        snprintf(why, sizeof why, "%s lacks %s: device support off", lib, symbol);   \
        return;                                                                       \
    }
    STRATA_CUDA_FUNCTIONS(LOOKUP)
#undef LOOKUP
    int n = 0;
    CUresult rc = cu.cuInit(0);
    if (rc == 0) rc = cu.cuDeviceGetCount(&n);
    if (rc != 0 || n <= 0) {
        snprintf(why, sizeof why, "%s: no device (%s)", lib,
                 rc ? error_name(rc) : "cuDeviceGetCount says 0");
        return;
    }
    char name[128] = "?";
    CUdevice dev;
    if (cu.cuDeviceGet(&dev, 0) == 0) cu.cuDeviceGetName(name, sizeof name, dev);
    /* The test driver marks itself: its "device memory" is host memory
     * behind PROT_NONE, which GPU code must never be handed. */
    fake = dlsym(h, "strata_fake_cuda") != NULL;
    snprintf(why, sizeof why, "%s: %d device%s (%s)%s", lib, n, n > 1 ? "s" : "", name,
             fake ? ", the test driver" : "");
    available = 1;
    /* The library stays loaded for the life of the process: the driver
     * cannot be unloaded safely while contexts live. */
}

int strata_device_available(void)
{
    pthread_once(&once, load);
    return available;
}

int strata_device_real(void)
{
    pthread_once(&once, load);
    return available && !fake;
}

const char *strata_device_why(void)
{
    pthread_once(&once, load);
    return why;
}

int strata_device_is_device(const void *p)
{
    if (!p || !strata_device_available()) return 0;
    unsigned type = 0;
    int managed = 0;
    /* Pageable host memory the driver never saw is an error here: host. */
    if (cu.cuPointerGetAttribute(&type, STRATA_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 (CUdeviceptr)(uintptr_t)p) != 0 ||
        type != STRATA_CU_MEMORYTYPE_DEVICE)
        return 0;
    if (cu.cuPointerGetAttribute(&managed, STRATA_CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 (CUdeviceptr)(uintptr_t)p) == 0 &&
        managed)
        return 0;
    return 1;
}

/* ---- lanes ---- */

struct strata_device_lane {
    CUcontext ctx;
    CUstream stream;
    CUevent ev[STRATA_DEVICE_EVENTS];
    void *pinned[STRATA_DEVICE_PINNED];
    size_t cap[STRATA_DEVICE_PINNED];
    CUcontext saved; /* the thread's context before enter */
};

/* A CUDA call failing inside a collective: the other ranks are inside the
 * same call and cannot be told, so, as when a node transport fails
 * (transport/failure.c), the job ends with a message naming the call rather
 * than hang or hand back a wrong result. */
static void failed(const char *what, CUresult err)
{
    strata_error("device transport: %s failed: %s (%d); a collective on device buffers cannot "
                 "complete",
                 what, error_name(err), err);
    abort();
}

int strata_device_enter(struct strata_device_lane **plane, const void *p)
{
    CUcontext cur = NULL, want = NULL;
    CUresult rc = cu.cuCtxGetCurrent(&cur);
    if (rc) failed("cuCtxGetCurrent", rc);
    struct strata_device_lane *lane = *plane;
    if (!lane) {
        /* The application's current context, or the one p was allocated in. */
        want = cur;
        if (!want &&
            (rc = cu.cuPointerGetAttribute(&want, STRATA_CU_POINTER_ATTRIBUTE_CONTEXT,
                                           (CUdeviceptr)(uintptr_t)p)))
            failed("cuPointerGetAttribute(CONTEXT)", rc);
        if (!(lane = calloc(1, sizeof *lane))) {
            strata_error("device transport: out of memory for a lane");
            abort();
        }
        lane->ctx = want;
    }
    lane->saved = cur;
    if (cur != lane->ctx && (rc = cu.cuCtxSetCurrent(lane->ctx))) failed("cuCtxSetCurrent", rc);
    if (!lane->stream) {
        /* A blocking stream: strata's copies and kernels follow the work the
         * application gave the legacy default stream before the call.  A
         * synchronous cuMemcpyHtoD from pageable memory returns before its
         * bytes land; on a non-blocking stream strata read such inputs stale
         * (first run on a GPU, an H200: wrong results from 4 bytes up). */
        if ((rc = cu.cuStreamCreate(&lane->stream, 0)))
            failed("cuStreamCreate", rc);
        for (int i = 0; i < STRATA_DEVICE_EVENTS; i++)
            if ((rc = cu.cuEventCreate(&lane->ev[i], STRATA_CU_EVENT_DISABLE_TIMING)))
                failed("cuEventCreate", rc);
    }
    *plane = lane;
    return 0;
}

void strata_device_leave(struct strata_device_lane *lane)
{
    if (lane && lane->saved != lane->ctx) cu.cuCtxSetCurrent(lane->saved);
}

void strata_device_lane_free(struct strata_device_lane *lane)
{
    if (!lane) return;
    CUcontext cur = NULL;
    cu.cuCtxGetCurrent(&cur);
    if (cur != lane->ctx) cu.cuCtxSetCurrent(lane->ctx);
    if (lane->stream) {
        cu.cuStreamSynchronize(lane->stream);
        for (int i = 0; i < STRATA_DEVICE_EVENTS; i++) cu.cuEventDestroy(lane->ev[i]);
        cu.cuStreamDestroy(lane->stream);
    }
    for (int i = 0; i < STRATA_DEVICE_PINNED; i++)
        if (lane->pinned[i]) cu.cuMemFreeHost(lane->pinned[i]);
    if (cur != lane->ctx) cu.cuCtxSetCurrent(cur);
    free(lane);
}

void *strata_device_pinned(struct strata_device_lane *lane, int which, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (lane->cap[which] >= bytes) return lane->pinned[which];
    /* The stream may still copy into the old buffer. */
    cu.cuStreamSynchronize(lane->stream);
    if (lane->pinned[which]) cu.cuMemFreeHost(lane->pinned[which]);
    lane->pinned[which] = NULL;
    lane->cap[which] = 0;
    size_t want = bytes < (64u << 10) ? (64u << 10) : bytes; /* small calls share one size */
    CUresult rc = cu.cuMemHostAlloc(&lane->pinned[which], want, 0);
    if (rc) failed("cuMemHostAlloc (pinned staging buffer)", rc);
    lane->cap[which] = want;
    return lane->pinned[which];
}

static _Atomic unsigned long long counted[STRATA_DEVICE_PATHS];

void strata_device_count(enum strata_device_path path, size_t bytes)
{
    /* A statistic: no ordering with anything else. */
    atomic_fetch_add_explicit(&counted[path], bytes, memory_order_relaxed);
    if (strata_stats_enabled()) strata_stats_device_bytes((int)path, bytes);
}

unsigned long long strata_device_counted(enum strata_device_path path)
{
    return atomic_load_explicit(&counted[path], memory_order_relaxed);
}

const char *strata_device_path_name(enum strata_device_path path)
{
    static const char *const names[STRATA_DEVICE_PATHS] = {"staged", "ipc", "network"};
    return names[path];
}

void strata_device_to_host(struct strata_device_lane *lane, void *host, const void *dev,
                           size_t n)
{
    if (!n) return;
    CUresult rc = cu.cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, n, lane->stream);
    if (rc) failed("copying device memory to host (cuMemcpyDtoHAsync)", rc);
    strata_device_count(STRATA_DEVICE_STAGED, n);
}

void strata_device_from_host(struct strata_device_lane *lane, void *dev, const void *host,
                             size_t n)
{
    if (!n) return;
    CUresult rc = cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dev, host, n, lane->stream);
    if (rc) failed("copying host memory to the device (cuMemcpyHtoDAsync)", rc);
    strata_device_count(STRATA_DEVICE_STAGED, n);
}

void strata_device_to_device(struct strata_device_lane *lane, void *dst, const void *src,
                             size_t n)
{
    if (!n) return;
    CUresult rc = cu.cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
                                       n, lane->stream);
    if (rc) failed("copying device to device (cuMemcpyDtoDAsync)", rc);
}

void strata_device_mark(struct strata_device_lane *lane, int e)
{
    CUresult rc = cu.cuEventRecord(lane->ev[e], lane->stream);
    if (rc) failed("cuEventRecord", rc);
}

void strata_device_wait(struct strata_device_lane *lane, int e)
{
    CUresult rc = cu.cuEventSynchronize(lane->ev[e]);
    if (rc) failed("cuEventSynchronize", rc);
}

void strata_device_settle(struct strata_device_lane *lane)
{
    /* The lane is a blocking stream: an event recorded on it completes only
     * after the legacy stream's earlier work. */
    strata_device_mark(lane, 0);
    strata_device_wait(lane, 0);
}

void strata_device_sync(struct strata_device_lane *lane)
{
    CUresult rc = cu.cuStreamSynchronize(lane->stream);
    if (rc) failed("cuStreamSynchronize", rc);
}

void *strata_device_stream(struct strata_device_lane *lane) { return lane->stream; }

/* ---- IPC ---- */

int strata_device_export(const void *p, struct strata_device_handle *h)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    CUipcMemHandle ipc;
    if (!strata_device_available() ||
        cu.cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)p) ||
        cu.cuIpcGetMemHandle(&ipc, base))
        return -1;
    memcpy(h->bytes, ipc.reserved, sizeof h->bytes);
    h->offset = (size_t)((CUdeviceptr)(uintptr_t)p - base);
    return 0;
}

/* Opened peer allocations, keyed by handle: CUDA allows one open per
 * handle and context, so a second call must reuse the first mapping.  At
 * most IMPORTS_MAX are kept, most recently used first; the oldest is closed
 * to make room (no copy from it is in flight: every call synchronises its
 * lane before returning), so that an application allocating a new buffer
 * per call does not pile up mappings of memory its peers have freed. */
#define IMPORTS_MAX 32
struct import {
    unsigned char bytes[64];
    CUdeviceptr at;
    struct import *next;
};
static struct import *imports;
static pthread_mutex_t imports_lock = PTHREAD_MUTEX_INITIALIZER;

void *strata_device_import(const struct strata_device_handle *h)
{
    pthread_mutex_lock(&imports_lock);
    struct import **link = &imports, *i;
    int n = 0;
    while ((i = *link) && memcmp(i->bytes, h->bytes, sizeof i->bytes)) {
        link = &i->next;
        n++;
    }
    CUdeviceptr at = 0;
    if (i) {
        /* Found: move it to the front. */
        *link = i->next;
        i->next = imports;
        imports = i;
        at = i->at;
    } else {
        CUipcMemHandle ipc;
        memcpy(ipc.reserved, h->bytes, sizeof ipc.reserved);
        CUresult rc = cu.cuIpcOpenMemHandle(&at, ipc, STRATA_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (rc) {
            strata_verbose(1, "device transport: cuIpcOpenMemHandle failed (%s)",
                           error_name(rc));
            at = 0;
        } else if ((i = malloc(sizeof *i))) {
            memcpy(i->bytes, h->bytes, sizeof i->bytes);
            i->at = at;
            i->next = imports;
            imports = i;
            if (n + 1 > IMPORTS_MAX) {
                /* n entries were behind the new one: close the last. */
                struct import **last = &imports;
                while ((*last)->next) last = &(*last)->next;
                cu.cuIpcCloseMemHandle((*last)->at);
                free(*last);
                *last = NULL;
            }
        } else {
            /* No memory to remember it: closed, and the node stages through host
             * memory instead (the caller reports it). */
            cu.cuIpcCloseMemHandle(at);
            at = 0;
        }
    }
    pthread_mutex_unlock(&imports_lock);
    return at ? (char *)(uintptr_t)at + h->offset : NULL;
}

void strata_device_ipc_forget(void)
{
    pthread_mutex_lock(&imports_lock);
    while (imports) {
        struct import *i = imports;
        imports = i->next;
        cu.cuIpcCloseMemHandle(i->at);
        free(i);
    }
    pthread_mutex_unlock(&imports_lock);
}
