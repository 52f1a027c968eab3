/* Reductions of device data: the choice of reducer, the CPU reducer, and the
 * dispatch (coll/device_reduce.h). */
#include "coll/device_reduce.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/ops.h"
#include "config/config.h"
#include "util/log.h"

/* ---- element sizes ---- */

#define PAIR(V, I) struct { V v; I i; }
static const unsigned char kind_size[STRATA_DK_COUNT] = {
    [STRATA_DK_I8] = 1, [STRATA_DK_U8] = 1, [STRATA_DK_I16] = 2, [STRATA_DK_U16] = 2,
    [STRATA_DK_I32] = 4, [STRATA_DK_U32] = 4, [STRATA_DK_I64] = 8, [STRATA_DK_U64] = 8,
    [STRATA_DK_F32] = sizeof(float), [STRATA_DK_F64] = sizeof(double),
    [STRATA_DK_F80] = sizeof(long double), [STRATA_DK_C32] = sizeof(float _Complex),
    [STRATA_DK_C64] = sizeof(double _Complex), [STRATA_DK_C80] = sizeof(long double _Complex),
    [STRATA_DK_BOOL] = sizeof(_Bool), [STRATA_DK_BYTE] = 1,
    [STRATA_DK_P_FLOAT] = sizeof(PAIR(float, int)), [STRATA_DK_P_DOUBLE] = sizeof(PAIR(double, int)),
    [STRATA_DK_P_LONG] = sizeof(PAIR(long, int)), [STRATA_DK_P_INT] = sizeof(PAIR(int, int)),
    [STRATA_DK_P_SHORT] = sizeof(PAIR(short, int)),
    [STRATA_DK_P_LDOUBLE] = sizeof(PAIR(long double, int)), [STRATA_DK_FLOG] = 4,
    [STRATA_DK_P_REAL2] = sizeof(PAIR(float, float)),
    [STRATA_DK_P_DOUBLE2] = sizeof(PAIR(double, double)),
};
#undef PAIR

size_t strata_device_kind_size(int kind)
{
    return kind >= 0 && kind < STRATA_DK_COUNT ? kind_size[kind] : 0;
}

/* ---- the CPU reducer ---- */

static int cpu_has(int op, int kind) { return strata_reduce_kernel_at(op, kind) != NULL; }

/* The CPU loops read the host's LOGICAL words themselves (coll/ops.c). */
static void cpu_set_logical(int32_t f, int32_t t) { (void)f, (void)t; }

enum { CPU_NO_KERNEL = 1, CPU_NO_MEMORY = 2 };

static int cpu_reduce(void *queue, int op, int kind, uint64_t dst, uint64_t a, uint64_t b,
                      size_t count)
{
    struct strata_device_lane *lane = queue;
    strata_reduce_fn fn = strata_reduce_kernel_at(op, kind);
    if (!fn) return CPU_NO_KERNEL;
    if (!count) return 0;
    size_t bytes = count * kind_size[kind];
    /* Host scratch of its own: the lane's pinned buffers belong to the
     * collective calling this. */
    char *h = malloc(2 * bytes);
    if (!h) return CPU_NO_MEMORY;
    strata_device_to_host(lane, h, (const void *)(uintptr_t)a, bytes);
    strata_device_to_host(lane, h + bytes, (const void *)(uintptr_t)b, bytes);
    strata_device_sync(lane);
    fn(h, h, h + bytes, count);
    strata_device_from_host(lane, (void *)(uintptr_t)dst, h, bytes);
    /* The copy reads h until the lane is synchronised: only then free it. */
    strata_device_sync(lane);
    free(h);
    return 0;
}

static const char *cpu_error_name(int err)
{
    return err == CPU_NO_KERNEL ? "no CPU kernel" : err == CPU_NO_MEMORY ? "out of host memory"
                                                                         : "unknown";
}

static const struct strata_device_reducer cpu = {
    STRATA_DEVICE_REDUCER_ABI, "CPU (staged through host memory)", cpu_has, cpu_set_logical,
    cpu_reduce, cpu_error_name,
};

const struct strata_device_reducer *strata_device_cpu_reducer(void) { return &cpu; }

/* ---- the choice ---- */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct strata_device_reducer *chosen = &cpu;
static char why[900] = "CPU";

/* The plugin's path: STRATA_CUDA_PLUGIN, else libstrata_cuda.so in the
 * directory libstrata was loaded from. */
static int plugin_path(char *out, size_t len)
{
    const struct strata_config *cfg = strata_config();
    if (cfg && cfg->cuda_plugin[0]) return snprintf(out, len, "%s", cfg->cuda_plugin) < (int)len;
    Dl_info info;
    if (!dladdr((void *)strata_device_reducer, &info) || !info.dli_fname) return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash ? (int)(slash - info.dli_fname) : 1;
    return snprintf(out, len, "%.*s/libstrata_cuda.so", dir, slash ? info.dli_fname : ".") <
           (int)len;
}

static void choose(void)
{
    const struct strata_config *cfg = strata_config();
    char path[600];
    if (cfg && !strcmp(cfg->cuda_plugin, "none")) {
        snprintf(why, sizeof why, "CPU (STRATA_CUDA_PLUGIN=none)");
    } else if (!strata_device_available()) {
        snprintf(why, sizeof why, "CPU (no device)");
    } else if (!strata_device_real()) {
        /* The fake's device memory is host memory behind PROT_NONE: GPU
         * code must never see it, and the CPU reducer serves it through the
         * same interface. */
        snprintf(why, sizeof why, "CPU (the test driver: the GPU plugin is never loaded for it)");
    } else if (!plugin_path(path, sizeof path)) {
        snprintf(why, sizeof why, "CPU (the plugin's path is too long)");
    } else {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        strata_cuda_plugin_fn entry = NULL;
        const struct strata_device_reducer *r = NULL;
        char reason[256] = "";
        if (!h)
            snprintf(reason, sizeof reason, "%s", dlerror());
        else if (!(*(void **)&entry = dlsym(h, STRATA_CUDA_PLUGIN_SYMBOL)))
            snprintf(reason, sizeof reason, "no %s in it", STRATA_CUDA_PLUGIN_SYMBOL);
        else if (!(r = entry(STRATA_DEVICE_REDUCER_ABI, reason, sizeof reason)))
            ; /* reason filled by the plugin */
        else if (r->abi != STRATA_DEVICE_REDUCER_ABI)
            snprintf(reason, sizeof reason, "its table is ABI %d, strata's %d", r->abi,
                     STRATA_DEVICE_REDUCER_ABI), r = NULL;
        if (r) {
            int32_t f, t;
            strata_reduce_logical_words(&f, &t);
            r->set_logical(f, t);
            chosen = r;
            snprintf(why, sizeof why, "%s (%s)", r->name, path);
        } else {
            /* The library stays loaded if it loaded: unloading code that
             * may have started CUDA's runtime is not safe. */
            snprintf(why, sizeof why, "CPU (GPU plugin %s not used: %s)", path, reason);
        }
    }
    strata_verbose(1, "device reductions: %s", why);
}

const struct strata_device_reducer *strata_device_reducer(void)
{
    pthread_once(&once, choose);
    return chosen;
}

const char *strata_device_reducer_why(void)
{
    pthread_once(&once, choose);
    return why;
}

/* ---- the dispatch ---- */

int strata_device_reduce(struct strata_device_lane *lane, MPI_Op op, MPI_Datatype type,
                         void *dst, const void *a, const void *b, size_t count)
{
    int dop, dkind;
    if (strata_reduce_classify(op, type, &dop, &dkind)) return -1;
    const struct strata_device_reducer *r = strata_device_reducer();
    void *queue = strata_device_stream(lane);
    if (!r->has(dop, dkind)) {
        /* The plugin lacks it (80-bit long double): the CPU reducer. */
        strata_verbose(3, "device reduction of kind %d: no GPU kernel, reduced on the CPU",
                       dkind);
        r = &cpu;
    }
    if (r == &cpu) queue = lane;
    int rc = r->reduce(queue, dop, dkind, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)a,
                       (uint64_t)(uintptr_t)b, count);
    if (rc) {
        strata_error("device reduction (%s) of %zu elements failed: %s (%d); a collective on "
                     "device buffers cannot complete",
                     r->name, count, r->error_name(rc), rc);
        abort();
    }
    return 0;
}
