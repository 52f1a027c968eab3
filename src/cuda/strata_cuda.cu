/* libstrata_cuda.so: GPU kernels for the reductions strata does on device
 * data (the reducer interface of transport/device_reduce.h).
 *
 * Built with nvcc only when CMake finds it; loaded by strata with dlopen only
 * when the driver it loaded is a real one with a device.  One elementwise
 * kernel per (operation, element kind), a grid-stride loop, launched on the
 * communicator's lane stream, so it is ordered after the copies strata
 * issued there.  The arithmetic follows coll/ops.c (integers wrap in
 * unsigned arithmetic; MINLOC/MAXLOC take the lower index on ties), so the
 * results are those of the CPU reduction bit for bit for integer, logical
 * and bitwise operations and, since each element is one operation in both,
 * for floating point too (no fused multiply-add: -fmad=false).
 *
 * No kernel for 80-bit long double (MPI_LONG_DOUBLE, its complex and its
 * pair): a GPU has no such type; has() says so and strata reduces those on
 * the CPU.  Never run on a GPU as of this writing (docs/TESTING.md). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "transport/device_reduce.h"
}

/* Rounded-to-nearest add and multiply without contraction, per type. */
__device__ static inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ static inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ static inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ static inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }

namespace {

__constant__ int32_t flog_false, flog_true;

template <typename T> struct Pair { T v; int i; };
template <typename T> struct SamePair { T v; T i; };
struct C32 { float re, im; };
struct C64 { double re, im; };

/* Integer operations on T, arithmetic in U (unsigned: wraps). */
template <typename T, typename U, int OP> __device__ T int_op(T a, T b)
{
    switch (OP) {
    case STRATA_DOP_SUM: return (T)((U)a + (U)b);
    case STRATA_DOP_PROD: return (T)((U)a * (U)b);
    case STRATA_DOP_MAX: return a > b ? a : b;
    case STRATA_DOP_MIN: return a < b ? a : b;
    case STRATA_DOP_LAND: return (T)(a && b);
    case STRATA_DOP_LOR: return (T)(a || b);
    case STRATA_DOP_LXOR: return (T)(!a != !b);
    case STRATA_DOP_BAND: return (T)(a & b);
    case STRATA_DOP_BOR: return (T)(a | b);
    default: return (T)(a ^ b);
    }
}

template <typename T, int OP> __device__ T float_op(T a, T b)
{
    switch (OP) {
    case STRATA_DOP_SUM: return add_rn(a, b);
    case STRATA_DOP_PROD: return mul_rn(a, b);
    case STRATA_DOP_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

template <typename F> __global__ void map2(size_t n, F f)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x)
        f(k);
}

template <typename F> cudaError_t launch(cudaStream_t s, size_t n, F f)
{
    if (n == 0) return cudaSuccess;
    size_t blocks = (n + 255) / 256;
    if (blocks > 4096) blocks = 4096; /* grid-stride beyond: enough to fill any GPU */
    map2<<<(unsigned)blocks, 256, 0, s>>>(n, f);
    return cudaGetLastError();
}


template <typename T, typename U, int OP>
cudaError_t run_int(cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    T *dp = (T *)d;
    const T *ap = (const T *)a, *bp = (const T *)b;
    return launch(s, n, [=] __device__(size_t k) { dp[k] = int_op<T, U, OP>(ap[k], bp[k]); });
}

template <typename T, typename U>
cudaError_t int_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    switch (op) {
    case STRATA_DOP_SUM: return run_int<T, U, STRATA_DOP_SUM>(s, d, a, b, n);
    case STRATA_DOP_PROD: return run_int<T, U, STRATA_DOP_PROD>(s, d, a, b, n);
    case STRATA_DOP_MAX: return run_int<T, U, STRATA_DOP_MAX>(s, d, a, b, n);
    case STRATA_DOP_MIN: return run_int<T, U, STRATA_DOP_MIN>(s, d, a, b, n);
    case STRATA_DOP_LAND: return run_int<T, U, STRATA_DOP_LAND>(s, d, a, b, n);
    case STRATA_DOP_LOR: return run_int<T, U, STRATA_DOP_LOR>(s, d, a, b, n);
    case STRATA_DOP_LXOR: return run_int<T, U, STRATA_DOP_LXOR>(s, d, a, b, n);
    case STRATA_DOP_BAND: return run_int<T, U, STRATA_DOP_BAND>(s, d, a, b, n);
    case STRATA_DOP_BOR: return run_int<T, U, STRATA_DOP_BOR>(s, d, a, b, n);
    case STRATA_DOP_BXOR: return run_int<T, U, STRATA_DOP_BXOR>(s, d, a, b, n);
    default: return cudaErrorInvalidValue;
    }
}

template <typename T, int OP>
cudaError_t run_float(cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    T *dp = (T *)d;
    const T *ap = (const T *)a, *bp = (const T *)b;
    return launch(s, n, [=] __device__(size_t k) { dp[k] = float_op<T, OP>(ap[k], bp[k]); });
}

template <typename T>
cudaError_t float_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    switch (op) {
    case STRATA_DOP_SUM: return run_float<T, STRATA_DOP_SUM>(s, d, a, b, n);
    case STRATA_DOP_PROD: return run_float<T, STRATA_DOP_PROD>(s, d, a, b, n);
    case STRATA_DOP_MAX: return run_float<T, STRATA_DOP_MAX>(s, d, a, b, n);
    case STRATA_DOP_MIN: return run_float<T, STRATA_DOP_MIN>(s, d, a, b, n);
    default: return cudaErrorInvalidValue;
    }
}

/* Complex: C's (a+bi)(c+di) = (ac-bd) + (ad+bc)i, each step rounded (the
 * CPU loop is compiled without contraction of these into fma on x86-64). */
template <typename C, typename R>
cudaError_t complex_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    C *dp = (C *)d;
    const C *ap = (const C *)a, *bp = (const C *)b;
    if (op == STRATA_DOP_SUM)
        return launch(s, n, [=] __device__(size_t k) {
            C x = ap[k], y = bp[k], r;
            r.re = add_rn(x.re, y.re);
            r.im = add_rn(x.im, y.im);
            dp[k] = r;
        });
    if (op == STRATA_DOP_PROD)
        return launch(s, n, [=] __device__(size_t k) {
            C x = ap[k], y = bp[k], r;
            r.re = add_rn(mul_rn(x.re, y.re), -mul_rn(x.im, y.im));
            r.im = add_rn(mul_rn(x.re, y.im), mul_rn(x.im, y.re));
            dp[k] = r;
        });
    return cudaErrorInvalidValue;
}

template <typename P>
cudaError_t pair_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    P *dp = (P *)d;
    const P *ap = (const P *)a, *bp = (const P *)b;
    if (op == STRATA_DOP_MINLOC)
        return launch(s, n, [=] __device__(size_t k) {
            P x = ap[k], y = bp[k];
            dp[k] = y.v < x.v || (y.v == x.v && y.i < x.i) ? y : x;
        });
    if (op == STRATA_DOP_MAXLOC)
        return launch(s, n, [=] __device__(size_t k) {
            P x = ap[k], y = bp[k];
            dp[k] = y.v > x.v || (y.v == x.v && y.i < x.i) ? y : x;
        });
    return cudaErrorInvalidValue;
}

cudaError_t bool_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    /* C's _Bool: one byte holding 0 or 1. */
    uint8_t *dp = (uint8_t *)d;
    const uint8_t *ap = (const uint8_t *)a, *bp = (const uint8_t *)b;
    switch (op) {
    case STRATA_DOP_LAND:
        return launch(s, n, [=] __device__(size_t k) { dp[k] = ap[k] && bp[k]; });
    case STRATA_DOP_LOR:
        return launch(s, n, [=] __device__(size_t k) { dp[k] = ap[k] || bp[k]; });
    case STRATA_DOP_LXOR:
        return launch(s, n, [=] __device__(size_t k) { dp[k] = ap[k] != bp[k]; });
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t flog_kind(int op, cudaStream_t s, void *d, const void *a, const void *b, size_t n)
{
    int32_t *dp = (int32_t *)d;
    const int32_t *ap = (const int32_t *)a, *bp = (const int32_t *)b;
    switch (op) {
    case STRATA_DOP_LAND:
        return launch(s, n, [=] __device__(size_t k) {
            dp[k] = ap[k] != flog_false && bp[k] != flog_false ? flog_true : flog_false;
        });
    case STRATA_DOP_LOR:
        return launch(s, n, [=] __device__(size_t k) {
            dp[k] = ap[k] != flog_false || bp[k] != flog_false ? flog_true : flog_false;
        });
    case STRATA_DOP_LXOR:
        return launch(s, n, [=] __device__(size_t k) {
            dp[k] = (ap[k] != flog_false) != (bp[k] != flog_false) ? flog_true : flog_false;
        });
    default: return cudaErrorInvalidValue;
    }
}

const unsigned INT_OPS = (1u << (STRATA_DOP_BXOR + 1)) - 1; /* SUM..BXOR */
const unsigned FLOAT_OPS = 1u << STRATA_DOP_SUM | 1u << STRATA_DOP_PROD |
                           1u << STRATA_DOP_MAX | 1u << STRATA_DOP_MIN;
const unsigned CPLX_OPS = 1u << STRATA_DOP_SUM | 1u << STRATA_DOP_PROD;
const unsigned LOGIC_OPS = 1u << STRATA_DOP_LAND | 1u << STRATA_DOP_LOR | 1u << STRATA_DOP_LXOR;
const unsigned BIT_OPS = 1u << STRATA_DOP_BAND | 1u << STRATA_DOP_BOR | 1u << STRATA_DOP_BXOR;
const unsigned LOC_OPS = 1u << STRATA_DOP_MINLOC | 1u << STRATA_DOP_MAXLOC;

/* The operations with a kernel, per kind: those of coll/ops.c's table less
 * the 80-bit kinds. */
const unsigned kind_ops[STRATA_DK_COUNT] = {
    INT_OPS, INT_OPS, INT_OPS, INT_OPS, INT_OPS, INT_OPS, INT_OPS, INT_OPS, /* I8..U64 */
    FLOAT_OPS, FLOAT_OPS, 0,                                               /* F32 F64 F80 */
    CPLX_OPS, CPLX_OPS, 0,                                                 /* C32 C64 C80 */
    LOGIC_OPS, BIT_OPS,                                                    /* BOOL BYTE */
    LOC_OPS, LOC_OPS, LOC_OPS, LOC_OPS, LOC_OPS, 0, /* pairs; long double's none */
    LOGIC_OPS, LOC_OPS, LOC_OPS,                    /* FLOG REAL2 DOUBLE2 */
};

int has(int op, int kind)
{
    return op >= 0 && op < STRATA_DOP_COUNT && kind >= 0 && kind < STRATA_DK_COUNT &&
           (kind_ops[kind] >> op & 1u);
}

void set_logical(int32_t f, int32_t t)
{
    cudaMemcpyToSymbol(flog_false, &f, sizeof f);
    cudaMemcpyToSymbol(flog_true, &t, sizeof t);
}

int reduce(void *queue, int op, int kind, uint64_t dst, uint64_t a, uint64_t b, size_t n)
{
    if (!has(op, kind)) return (int)cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)queue;
    void *d = (void *)(uintptr_t)dst;
    const void *x = (const void *)(uintptr_t)a, *y = (const void *)(uintptr_t)b;
    cudaError_t rc;
    switch (kind) {
    case STRATA_DK_I8: rc = int_kind<int8_t, unsigned>(op, s, d, x, y, n); break;
    case STRATA_DK_U8: rc = int_kind<uint8_t, unsigned>(op, s, d, x, y, n); break;
    case STRATA_DK_BYTE: rc = int_kind<uint8_t, unsigned>(op, s, d, x, y, n); break;
    case STRATA_DK_I16: rc = int_kind<int16_t, unsigned>(op, s, d, x, y, n); break;
    case STRATA_DK_U16: rc = int_kind<uint16_t, unsigned>(op, s, d, x, y, n); break;
    case STRATA_DK_I32: rc = int_kind<int32_t, uint32_t>(op, s, d, x, y, n); break;
    case STRATA_DK_U32: rc = int_kind<uint32_t, uint32_t>(op, s, d, x, y, n); break;
    case STRATA_DK_I64: rc = int_kind<int64_t, uint64_t>(op, s, d, x, y, n); break;
    case STRATA_DK_U64: rc = int_kind<uint64_t, uint64_t>(op, s, d, x, y, n); break;
    case STRATA_DK_F32: rc = float_kind<float>(op, s, d, x, y, n); break;
    case STRATA_DK_F64: rc = float_kind<double>(op, s, d, x, y, n); break;
    case STRATA_DK_C32: rc = complex_kind<C32, float>(op, s, d, x, y, n); break;
    case STRATA_DK_C64: rc = complex_kind<C64, double>(op, s, d, x, y, n); break;
    case STRATA_DK_BOOL: rc = bool_kind(op, s, d, x, y, n); break;
    case STRATA_DK_FLOG: rc = flog_kind(op, s, d, x, y, n); break;
    case STRATA_DK_P_FLOAT: rc = pair_kind<Pair<float>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_DOUBLE: rc = pair_kind<Pair<double>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_LONG: rc = pair_kind<Pair<long>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_INT: rc = pair_kind<Pair<int>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_SHORT: rc = pair_kind<Pair<short>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_REAL2: rc = pair_kind<SamePair<float>>(op, s, d, x, y, n); break;
    case STRATA_DK_P_DOUBLE2: rc = pair_kind<SamePair<double>>(op, s, d, x, y, n); break;
    default: rc = cudaErrorInvalidValue; break;
    }
    return (int)rc;
}

const char *error_name(int err) { return cudaGetErrorName((cudaError_t)err); }

const struct strata_device_reducer table = {
    STRATA_DEVICE_REDUCER_ABI, "libstrata_cuda (GPU kernels)", has, set_logical, reduce,
    error_name,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const struct strata_device_reducer *
strata_cuda_reducer(int abi, char *why, size_t why_len)
{
    if (abi != STRATA_DEVICE_REDUCER_ABI) {
        snprintf(why, why_len, "built for reducer ABI %d, strata uses %d",
                 STRATA_DEVICE_REDUCER_ABI, abi);
        return NULL;
    }
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n < 1) {
        snprintf(why, why_len, "the CUDA runtime sees no device (%s)",
                 rc ? cudaGetErrorName(rc) : "0 devices");
        return NULL;
    }
    return &table;
}
