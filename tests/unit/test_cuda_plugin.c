/* libstrata_cuda.so loads with every symbol resolved (RTLD_NOW), exports
 * its entry point, refuses another ABI, and then either sees a device (a GPU
 * machine: its table must have the kernels transport/device_reduce.h
 * promises) or says plainly why not (no GPU: the usual case in CI).  No
 * kernel runs here; tests/mpi/test_device_reduce.c runs them on a GPU.
 *   test_cuda_plugin path/to/libstrata_cuda.so */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "transport/device_reduce.h"

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL: %s\n", dlerror());
        return 1;
    }
    strata_cuda_plugin_fn entry;
    if (!(*(void **)&entry = dlsym(h, STRATA_CUDA_PLUGIN_SYMBOL))) {
        fprintf(stderr, "FAIL: no %s\n", STRATA_CUDA_PLUGIN_SYMBOL);
        return 1;
    }
    char why[256] = "";
    if (entry(STRATA_DEVICE_REDUCER_ABI + 1, why, sizeof why) || !strstr(why, "ABI")) {
        fprintf(stderr, "FAIL: another ABI not refused (%s)\n", why);
        return 1;
    }
    const struct strata_device_reducer *r = entry(STRATA_DEVICE_REDUCER_ABI, why, sizeof why);
    if (!r) {
        if (!why[0]) {
            fprintf(stderr, "FAIL: refused without a reason\n");
            return 1;
        }
        printf("plugin loads, symbols resolve; no device here: %s\n", why);
        return 0;
    }
    int bad = r->abi != STRATA_DEVICE_REDUCER_ABI || !r->has(STRATA_DOP_SUM, STRATA_DK_F64) ||
              !r->has(STRATA_DOP_BXOR, STRATA_DK_U64) ||
              !r->has(STRATA_DOP_MINLOC, STRATA_DK_P_DOUBLE) ||
              r->has(STRATA_DOP_SUM, STRATA_DK_F80) || r->has(STRATA_DOP_BAND, STRATA_DK_F64);
    printf("plugin sees a device: %s%s\n", r->name, bad ? " (its table is wrong)" : "");
    return bad;
}
