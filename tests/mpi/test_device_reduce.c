/* The device reducers (coll/device_reduce.h) against the CPU reduction and
 * the host MPI's own (PMPI_Reduce_local), every predefined operation on every
 * predefined type strata reduces, several counts, dst apart from and equal
 * to the first operand.
 *
 * The operands live in device memory of the driver strata loaded
 * (STRATA_CUDA_LIB: the fake of tests/fake_cuda, whose device pages are
 * PROT_NONE, so a reducer touching them from the CPU dies with SIGSEGV; or
 * a real libcuda.so.1, where the reducer is the GPU plugin when it loads).
 * The reference is strata's CPU loop on host copies, checked in turn
 * against PMPI_Reduce_local (except where the host MPI has a known bug).
 * The test goes through strata_device_reduce, the dispatch collectives use,
 * and also calls the CPU reducer's table directly, so both the dispatch and
 * the interface are exercised.  One process is enough: nothing here talks
 * to another rank.
 *   test_device_reduce [expect]   expect: "cpu" or "gpu", the reducer that
 *                                 must have been chosen */
#include <complex.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/device_reduce.h"
#include "coll/ops.h"
#include "cuda_driver.h"
#include "transport/device.h"

static int failures;

static const struct { MPI_Datatype type; const char *name; } types[] = {
#define T(t) {t, #t}
    T(MPI_INT8_T), T(MPI_UINT8_T), T(MPI_SHORT), T(MPI_UNSIGNED_SHORT), T(MPI_INT),
    T(MPI_UNSIGNED), T(MPI_LONG), T(MPI_UNSIGNED_LONG), T(MPI_FLOAT), T(MPI_DOUBLE),
    T(MPI_LONG_DOUBLE), T(MPI_C_FLOAT_COMPLEX), T(MPI_C_DOUBLE_COMPLEX),
    T(MPI_C_LONG_DOUBLE_COMPLEX), T(MPI_C_BOOL), T(MPI_BYTE), T(MPI_FLOAT_INT),
    T(MPI_DOUBLE_INT), T(MPI_LONG_INT), T(MPI_2INT), T(MPI_SHORT_INT), T(MPI_LONG_DOUBLE_INT),
    T(MPI_INTEGER), T(MPI_REAL), T(MPI_DOUBLE_PRECISION), T(MPI_DOUBLE_COMPLEX),
    T(MPI_LOGICAL), T(MPI_2INTEGER), T(MPI_2REAL), T(MPI_2DOUBLE_PRECISION),
#undef T
};
static const struct { MPI_Op op; const char *name; } ops[] = {
    {MPI_SUM, "SUM"},   {MPI_PROD, "PROD"}, {MPI_MAX, "MAX"},       {MPI_MIN, "MIN"},
    {MPI_LAND, "LAND"}, {MPI_LOR, "LOR"},   {MPI_LXOR, "LXOR"},     {MPI_BAND, "BAND"},
    {MPI_BOR, "BOR"},   {MPI_BXOR, "BXOR"}, {MPI_MINLOC, "MINLOC"}, {MPI_MAXLOC, "MAXLOC"},
};

static unsigned rnd(unsigned *s) { return *s = *s * 1103515245u + 12345u, *s >> 16; }

/* A small value: exact in every float type, products too; many ties. */
static int small(unsigned *s) { return (int)(rnd(s) % 9) - 4; }

#define PAIR(V, I) struct { V v; I i; }

/* Element k of kind `kind` at p, a value the kind's operations take. */
static void fill(int kind, char *p, size_t n, unsigned seed)
{
    unsigned s = seed;
    size_t es = strata_device_kind_size(kind);
    memset(p, 0, n * es); /* padding the same in both runs */
    for (size_t k = 0; k < n; k++) {
        char *e = p + k * es;
        switch (kind) {
        case STRATA_DK_F32: *(float *)e = (float)small(&s) / 2; break;
        case STRATA_DK_F64: *(double *)e = (double)small(&s) / 2; break;
        case STRATA_DK_F80: *(long double *)e = (long double)small(&s) / 2; break;
        case STRATA_DK_C32: *(float _Complex *)e = CMPLXF(small(&s), small(&s)); break;
        case STRATA_DK_C64: *(double _Complex *)e = CMPLX(small(&s), small(&s)); break;
        case STRATA_DK_C80: *(long double _Complex *)e = CMPLXL(small(&s), small(&s)); break;
        case STRATA_DK_BOOL: *(_Bool *)e = rnd(&s) & 1; break;
        case STRATA_DK_FLOG: {
            static const int32_t words[] = {0, 1, -1, 2};
            *(int32_t *)e = words[rnd(&s) % 4];
            break;
        }
        case STRATA_DK_P_FLOAT: { PAIR(float, int) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_DOUBLE: { PAIR(double, int) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_LONG: { PAIR(long, int) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_INT: { PAIR(int, int) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_SHORT: { PAIR(short, int) x = {(short)small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_LDOUBLE: { PAIR(long double, int) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_REAL2: { PAIR(float, float) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        case STRATA_DK_P_DOUBLE2: { PAIR(double, double) x = {small(&s), small(&s)}; memcpy(e, &x, sizeof x); break; }
        default: /* integers and bytes: any bits (wrapping included) */
            for (size_t b = 0; b < es; b++) e[b] = (char)rnd(&s);
        }
    }
}

/* Whether element k agrees, on the bytes the value holds (long double's
 * padding and a pair's are not values). */
static int same(int kind, const char *x, const char *y)
{
    switch (kind) {
    case STRATA_DK_F80: return *(const long double *)x == *(const long double *)y;
    case STRATA_DK_C80:
        return *(const long double _Complex *)x == *(const long double _Complex *)y;
#define PAIR_SAME(V, I) { const PAIR(V, I) *a = (const void *)x, *b = (const void *)y; return a->v == b->v && a->i == b->i; }
    case STRATA_DK_P_FLOAT: PAIR_SAME(float, int)
    case STRATA_DK_P_DOUBLE: PAIR_SAME(double, int)
    case STRATA_DK_P_LONG: PAIR_SAME(long, int)
    case STRATA_DK_P_SHORT: PAIR_SAME(short, int)
    case STRATA_DK_P_LDOUBLE: PAIR_SAME(long double, int)
#undef PAIR_SAME
    default: return !memcmp(x, y, strata_device_kind_size(kind));
    }
}

/* The host MPIs' reduction bugs of MACHINE-NOTES.md: Open MPI 4.1's op/avx
 * saturates small integer sums and gets MPI_UNSIGNED_LONG's MIN/MAX wrong;
 * MPICH 4.0.2 compares unsigned MIN/MAX as signed.  There strata's loop is
 * right and the host's answer is not the reference. */
static int host_bugs;
static int known_host_bug(int dop, int kind)
{
    int small_int = kind == STRATA_DK_I8 || kind == STRATA_DK_U8 || kind == STRATA_DK_I16 ||
                    kind == STRATA_DK_U16;
    int unsigned_int = kind == STRATA_DK_U8 || kind == STRATA_DK_U16 || kind == STRATA_DK_U32 ||
                       kind == STRATA_DK_U64;
    return (dop == STRATA_DOP_SUM && small_int) ||
           ((dop == STRATA_DOP_MIN || dop == STRATA_DOP_MAX) && unsigned_int);
}

static void *dev_alloc(size_t bytes)
{
    CUdeviceptr d;
    CHECK_CU(cu.alloc(&d, bytes ? bytes : 1));
    return (void *)(uintptr_t)d;
}

/* One case: through the dispatch (table NULL) or one reducer's table. */
static void one(const struct strata_device_reducer *table, struct strata_device_lane *lane,
                int t, int o, size_t n, int in_place)
{
    int dop, kind;
    if (strata_reduce_classify(ops[o].op, types[t].type, &dop, &kind)) return;
    size_t es = strata_device_kind_size(kind), bytes = n * es;
    char *a = malloc(bytes + 1), *b = malloc(bytes + 1), *want = malloc(bytes + 1),
         *got = malloc(bytes + 1), *host = malloc(bytes + 1);
    fill(kind, a, n, 7u * (unsigned)t + 13u * (unsigned)o + (unsigned)n);
    fill(kind, b, n, 11u * (unsigned)t + 5u * (unsigned)o + (unsigned)n + 1u);
    /* The expected result: strata's CPU loop on host copies (the reduction
     * every host-memory path uses), itself compared with the host MPI's
     * PMPI_Reduce_local below. */
    memcpy(want, a, bytes);
    if (n) strata_reduce_kernel_at(dop, kind)(want, want, b, n);
    memcpy(host, b, bytes);
    if (n && PMPI_Reduce_local(a, host, (int)n, types[t].type, ops[o].op) != MPI_SUCCESS) {
        fprintf(stderr, "strata reduces %s on %s, which the host rejects\n", ops[o].name,
                types[t].name);
        failures++;
        goto out;
    }
    for (size_t k = 0; k < n && !table; k++)
        if (!same(kind, host + k * es, want + k * es)) {
            if (known_host_bug(dop, kind)) {
                host_bugs++;
                break;
            }
            fprintf(stderr, "strata's CPU loop and the host MPI differ: %s on %s, element %zu\n",
                    ops[o].name, types[t].name, k);
            failures++;
            break;
        }
    void *da = dev_alloc(bytes), *db = dev_alloc(bytes), *dd = in_place ? da : dev_alloc(bytes);
    if (bytes) {
        CHECK_CU(cu.htod((CUdeviceptr)(uintptr_t)da, a, bytes));
        CHECK_CU(cu.htod((CUdeviceptr)(uintptr_t)db, b, bytes));
    }
    if (!table) {
        if (strata_device_reduce(lane, ops[o].op, types[t].type, dd, da, db, n)) {
            fprintf(stderr, "dispatch refuses %s on %s\n", ops[o].name, types[t].name);
            failures++;
        }
    } else {
        int rc = table->reduce(lane, dop, kind, (uint64_t)(uintptr_t)dd, (uint64_t)(uintptr_t)da,
                               (uint64_t)(uintptr_t)db, n);
        if (rc) {
            fprintf(stderr, "%s: %s on %s: %s\n", table->name, ops[o].name, types[t].name,
                    table->error_name(rc));
            failures++;
        }
    }
    strata_device_sync(lane);
    if (bytes) CHECK_CU(cu.dtoh(got, (CUdeviceptr)(uintptr_t)dd, bytes));
    for (size_t k = 0; k < n; k++)
        if (!same(kind, got + k * es, want + k * es)) {
            fprintf(stderr, "%s %s on %s, %zu elements%s: element %zu differs from the host's\n",
                    table ? table->name : "dispatch", ops[o].name, types[t].name, n,
                    in_place ? " (dst = a)" : "", k);
            failures++;
            break;
        }
    CHECK_CU(cu.free((CUdeviceptr)(uintptr_t)da));
    CHECK_CU(cu.free((CUdeviceptr)(uintptr_t)db));
    if (!in_place) CHECK_CU(cu.free((CUdeviceptr)(uintptr_t)dd));
out:
    free(a), free(b), free(want), free(got), free(host);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* A pair the host rejects must be reported here, not end the job:
     * strata names only pairs the host accepts (coll/ops.c asks it at
     * MPI_Init), so the host's reference is taken only for those, and a
     * rejection is a failure of strata's.  MPI_Reduce_local raises its
     * errors on MPI_COMM_WORLD or, MPI-4's rule, MPI_COMM_SELF. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    load_cuda();
    if (!strata_device_available()) {
        fprintf(stderr, "strata sees no device: %s\n", strata_device_why());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const struct strata_device_reducer *r = strata_device_reducer();
    printf("reducer: %s\n", strata_device_reducer_why());
    const char *expect = argc > 1 ? argv[1] : NULL;
    if (expect && !strcmp(expect, "cpu") != (r == strata_device_cpu_reducer())) {
        fprintf(stderr, "expected the %s reducer, strata chose: %s\n", expect,
                strata_device_reducer_why());
        failures++;
    }
    void *probe = dev_alloc(64);
    struct strata_device_lane *lane = NULL;
    if (strata_device_enter(&lane, probe)) MPI_Abort(MPI_COMM_WORLD, 2);
    static const size_t counts[] = {0, 1, 7, 1000, 70001};
    int kinds_seen[STRATA_DK_COUNT] = {0}, cases = 0;
    const int ntypes = (int)(sizeof types / sizeof types[0]);
    const int nops = (int)(sizeof ops / sizeof ops[0]);
    for (int t = 0; t < ntypes; t++)
        for (int o = 0; o < nops; o++) {
            int dop, kind;
            if (strata_reduce_classify(ops[o].op, types[t].type, &dop, &kind)) continue;
            kinds_seen[kind] = 1;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                one(NULL, lane, t, o, counts[c], (int)c & 1);
                cases++;
            }
            /* The CPU reducer's table itself, and the chosen one's when
             * another (its queue is then the stream, not the lane). */
            one(strata_device_cpu_reducer(), lane, t, o, 1000, 0);
            cases++;
        }
    int missing = 0;
    for (int k = 0; k < STRATA_DK_COUNT; k++)
        if (!kinds_seen[k] && k != STRATA_DK_FLOG) {
            /* LOGICAL is left to the host where its encoding is not probed
             * to be one strata follows (coll/ops.c); every other kind must
             * have been reached by this type list. */
            fprintf(stderr, "element kind %d never exercised\n", k);
            missing++;
        }
    failures += missing;
    strata_device_leave(lane);
    strata_device_lane_free(lane);
    CHECK_CU(cu.free((CUdeviceptr)(uintptr_t)probe));
    printf("%d cases, %d failures; %d where the host MPI's known bugs made it differ from "
           "strata's CPU loop\n", cases, failures, host_bugs);
    MPI_Finalize();
    return failures ? 1 : 0;
}
