/* The subset of the CUDA driver API strata uses, declared here so that the
 * build needs neither cuda.h nor libcuda: strata finds these functions with
 * dlsym at run time (transport/device.c).  The names are the symbols
 * libcuda.so.1 exports (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on);
 * values and layouts are the driver ABI's, which is stable across releases.
 * tests/fake_cuda implements the same list. */
#ifndef STRATA_CUDA_API_H
#define STRATA_CUDA_API_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit on every platform strata builds on */
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

#define STRATA_CU_IPC_HANDLE_SIZE 64
typedef struct {
    char reserved[STRATA_CU_IPC_HANDLE_SIZE];
} CUipcMemHandle;

enum {
    STRATA_CUDA_SUCCESS = 0,
    STRATA_CUDA_ERROR_INVALID_VALUE = 1,
    STRATA_CUDA_ERROR_OUT_OF_MEMORY = 2,
    STRATA_CUDA_ERROR_NOT_INITIALIZED = 3,
    STRATA_CUDA_ERROR_NO_DEVICE = 100,
    STRATA_CUDA_ERROR_INVALID_DEVICE = 101,
    STRATA_CUDA_ERROR_INVALID_CONTEXT = 201,
    STRATA_CUDA_ERROR_MAP_FAILED = 205,
    STRATA_CUDA_ERROR_INVALID_HANDLE = 400,
    STRATA_CUDA_ERROR_NOT_READY = 600,
    STRATA_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    STRATA_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
};

/* CUpointer_attribute and CUmemorytype values. */
enum {
    STRATA_CU_POINTER_ATTRIBUTE_CONTEXT = 1,
    STRATA_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    STRATA_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    STRATA_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
};
enum { STRATA_CU_MEMORYTYPE_HOST = 1, STRATA_CU_MEMORYTYPE_DEVICE = 2 };
#define STRATA_CU_STREAM_NON_BLOCKING 0x1
#define STRATA_CU_EVENT_DISABLE_TIMING 0x2
#define STRATA_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1

/* X(return-less name, symbol, parameter list): every entry point strata
 * loads; all of them must be present or strata treats CUDA as absent. */
#define STRATA_CUDA_FUNCTIONS(X)                                                            \
    X(cuInit, "cuInit", (unsigned flags))                                                   \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                   \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice *dev, int ordinal))                             \
    X(cuDeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice dev))              \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *ctx, CUdevice dev)) \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext *ctx))                                 \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                  \
    X(cuPointerGetAttribute, "cuPointerGetAttribute",                                       \
      (void *data, int attribute, CUdeviceptr ptr))                                         \
    X(cuMemGetAddressRange, "cuMemGetAddressRange_v2",                                      \
      (CUdeviceptr *base, size_t *size, CUdeviceptr ptr))                                   \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **p, size_t bytes, unsigned flags))          \
    X(cuMemFreeHost, "cuMemFreeHost", (void *p))                                            \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",                                            \
      (void *dst, CUdeviceptr src, size_t bytes, CUstream s))                               \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",                                            \
      (CUdeviceptr dst, const void *src, size_t bytes, CUstream s))                         \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",                                            \
      (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))                         \
    X(cuStreamCreate, "cuStreamCreate", (CUstream *s, unsigned flags))                      \
    X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream s))                             \
    X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream s))                                  \
    X(cuEventCreate, "cuEventCreate", (CUevent *e, unsigned flags))                         \
    X(cuEventRecord, "cuEventRecord", (CUevent e, CUstream s))                              \
    X(cuEventSynchronize, "cuEventSynchronize", (CUevent e))                                \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent e))                                     \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle *h, CUdeviceptr ptr))         \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2",                                          \
      (CUdeviceptr *ptr, CUipcMemHandle h, unsigned flags))                                 \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr ptr))                        \
    X(cuGetErrorName, "cuGetErrorName", (CUresult err, const char **name))

#endif
