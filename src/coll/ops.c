/* Vectorisable reduction loops, one per (operation, element kind).
 *
 * Integer arithmetic is done in unsigned types and converted back, so it
 * wraps like the host MPI's instead of overflowing (undefined in C). */
#include "coll/ops.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

/* dst may alias a, so only b is restrict: the compiler vectorises with a
 * run-time overlap check. */
#define LOOP(name, T, expr)                                                        \
    static void name(void *dst_, const void *a_, const void *restrict b_, size_t n) \
    {                                                                              \
        T *d = dst_;                                                               \
        const T *a = a_;                                                           \
        const T *restrict b = b_;                                                  \
        for (size_t i = 0; i < n; i++) d[i] = (T)(expr);                           \
    }

/* U: the unsigned type arithmetic is done in (at least unsigned int). */
#define INTEGER_KERNELS(tag, T, U)                                                 \
    LOOP(sum_##tag, T, (U)a[i] + (U)b[i])                                          \
    LOOP(prod_##tag, T, (U)a[i] * (U)b[i])                                         \
    LOOP(max_##tag, T, a[i] > b[i] ? a[i] : b[i])                                  \
    LOOP(min_##tag, T, a[i] < b[i] ? a[i] : b[i])                                  \
    LOOP(land_##tag, T, a[i] && b[i])                                              \
    LOOP(lor_##tag, T, a[i] || b[i])                                               \
    LOOP(lxor_##tag, T, !a[i] != !b[i])                                            \
    LOOP(band_##tag, T, a[i] & b[i])                                               \
    LOOP(bor_##tag, T, a[i] | b[i])                                                \
    LOOP(bxor_##tag, T, a[i] ^ b[i])

INTEGER_KERNELS(i8, int8_t, unsigned)
INTEGER_KERNELS(u8, uint8_t, unsigned)
INTEGER_KERNELS(i16, int16_t, unsigned)
INTEGER_KERNELS(u16, uint16_t, unsigned)
INTEGER_KERNELS(i32, int32_t, uint32_t)
INTEGER_KERNELS(u32, uint32_t, uint32_t)
INTEGER_KERNELS(i64, int64_t, uint64_t)
INTEGER_KERNELS(u64, uint64_t, uint64_t)

#define FLOAT_KERNELS(tag, T)                                                      \
    LOOP(sum_##tag, T, a[i] + b[i])                                                \
    LOOP(prod_##tag, T, a[i] * b[i])                                               \
    LOOP(max_##tag, T, a[i] > b[i] ? a[i] : b[i])                                  \
    LOOP(min_##tag, T, a[i] < b[i] ? a[i] : b[i])

FLOAT_KERNELS(f32, float)
FLOAT_KERNELS(f64, double)
FLOAT_KERNELS(f80, long double)

LOOP(sum_c32, float _Complex, a[i] + b[i])
LOOP(prod_c32, float _Complex, a[i] * b[i])
LOOP(sum_c64, double _Complex, a[i] + b[i])
LOOP(prod_c64, double _Complex, a[i] * b[i])
LOOP(sum_c80, long double _Complex, a[i] + b[i])
LOOP(prod_c80, long double _Complex, a[i] * b[i])

LOOP(land_bool, bool, a[i] && b[i])
LOOP(lor_bool, bool, a[i] || b[i])
LOOP(lxor_bool, bool, a[i] != b[i])

/* Value-index pairs, laid out as the C structs MPI defines them from. */
#define PAIR_KERNELS(tag, V)                                                       \
    struct pair_##tag { V v; int i; };                                             \
    static void minloc_##tag(void *dst_, const void *a_, const void *restrict b_, size_t n) \
    {                                                                              \
        struct pair_##tag *d = dst_;                                               \
        const struct pair_##tag *a = a_, *restrict b = b_;                         \
        for (size_t k = 0; k < n; k++)                                             \
            d[k] = b[k].v < a[k].v || (b[k].v == a[k].v && b[k].i < a[k].i) ? b[k] : a[k]; \
    }                                                                              \
    static void maxloc_##tag(void *dst_, const void *a_, const void *restrict b_, size_t n) \
    {                                                                              \
        struct pair_##tag *d = dst_;                                               \
        const struct pair_##tag *a = a_, *restrict b = b_;                         \
        for (size_t k = 0; k < n; k++)                                             \
            d[k] = b[k].v > a[k].v || (b[k].v == a[k].v && b[k].i < a[k].i) ? b[k] : a[k]; \
    }

PAIR_KERNELS(float, float)
PAIR_KERNELS(double, double)
PAIR_KERNELS(long, long)
PAIR_KERNELS(int, int)
PAIR_KERNELS(short, short)
PAIR_KERNELS(ldouble, long double)

enum kind {
    K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64,
    K_F32, K_F64, K_F80, K_C32, K_C64, K_C80, K_BOOL, K_BYTE,
    K_P_FLOAT, K_P_DOUBLE, K_P_LONG, K_P_INT, K_P_SHORT, K_P_LDOUBLE, K_NONE
};

/* The element kind of a signed or unsigned C integer of `size` bytes. */
static enum kind int_kind(size_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? K_I8 : K_U8;
    case 2: return is_signed ? K_I16 : K_U16;
    case 4: return is_signed ? K_I32 : K_U32;
    case 8: return is_signed ? K_I64 : K_U64;
    default: return K_NONE;
    }
}

static enum kind kind_of(MPI_Datatype t)
{
    /* Handles are link-time addresses in Open MPI and constants in MPICH, so
     * compare one by one rather than switch. */
    const struct { MPI_Datatype type; size_t size; int is_signed; } ints[] = {
        {MPI_SIGNED_CHAR, 1, 1}, {MPI_UNSIGNED_CHAR, 1, 0},
        {MPI_SHORT, sizeof(short), 1}, {MPI_UNSIGNED_SHORT, sizeof(short), 0},
        {MPI_INT, sizeof(int), 1}, {MPI_UNSIGNED, sizeof(int), 0},
        {MPI_LONG, sizeof(long), 1}, {MPI_UNSIGNED_LONG, sizeof(long), 0},
        {MPI_LONG_LONG, sizeof(long long), 1}, {MPI_UNSIGNED_LONG_LONG, sizeof(long long), 0},
        {MPI_INT8_T, 1, 1}, {MPI_UINT8_T, 1, 0}, {MPI_INT16_T, 2, 1}, {MPI_UINT16_T, 2, 0},
        {MPI_INT32_T, 4, 1}, {MPI_UINT32_T, 4, 0}, {MPI_INT64_T, 8, 1}, {MPI_UINT64_T, 8, 0},
        {MPI_AINT, sizeof(MPI_Aint), 1}, {MPI_OFFSET, sizeof(MPI_Offset), 1},
        {MPI_COUNT, sizeof(MPI_Count), 1},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (t == ints[i].type) return int_kind(ints[i].size, ints[i].is_signed);
    const struct { MPI_Datatype type; enum kind kind; } others[] = {
        {MPI_FLOAT, K_F32}, {MPI_DOUBLE, K_F64}, {MPI_LONG_DOUBLE, K_F80},
        {MPI_C_FLOAT_COMPLEX, K_C32}, {MPI_C_DOUBLE_COMPLEX, K_C64},
        {MPI_C_LONG_DOUBLE_COMPLEX, K_C80}, {MPI_C_BOOL, K_BOOL}, {MPI_BYTE, K_BYTE},
        {MPI_FLOAT_INT, K_P_FLOAT}, {MPI_DOUBLE_INT, K_P_DOUBLE}, {MPI_LONG_INT, K_P_LONG},
        {MPI_2INT, K_P_INT}, {MPI_SHORT_INT, K_P_SHORT}, {MPI_LONG_DOUBLE_INT, K_P_LDOUBLE},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (t == others[i].type) return others[i].kind;
    return K_NONE;
}

#define INT_ROW(tag)                                                               \
    {sum_##tag, prod_##tag, max_##tag, min_##tag, land_##tag, lor_##tag,           \
     lxor_##tag, band_##tag, bor_##tag, bxor_##tag, NULL, NULL}
#define FLOAT_ROW(tag)                                                             \
    {sum_##tag, prod_##tag, max_##tag, min_##tag, NULL, NULL, NULL, NULL, NULL,     \
     NULL, NULL, NULL}
#define PAIR_ROW(tag)                                                              \
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, minloc_##tag,     \
     maxloc_##tag}

enum op_index { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
                O_MINLOC, O_MAXLOC, O_NONE };

static const strata_reduce_fn kernels[K_NONE][O_NONE] = {
    [K_I8] = INT_ROW(i8),   [K_U8] = INT_ROW(u8),   [K_I16] = INT_ROW(i16),
    [K_U16] = INT_ROW(u16), [K_I32] = INT_ROW(i32), [K_U32] = INT_ROW(u32),
    [K_I64] = INT_ROW(i64), [K_U64] = INT_ROW(u64),
    [K_F32] = FLOAT_ROW(f32), [K_F64] = FLOAT_ROW(f64), [K_F80] = FLOAT_ROW(f80),
    [K_C32] = {sum_c32, prod_c32}, [K_C64] = {sum_c64, prod_c64},
    [K_C80] = {sum_c80, prod_c80},
    [K_BOOL] = {[O_LAND] = land_bool, [O_LOR] = lor_bool, [O_LXOR] = lxor_bool},
    /* MPI_BYTE takes only the bitwise operations. */
    [K_BYTE] = {[O_BAND] = band_u8, [O_BOR] = bor_u8, [O_BXOR] = bxor_u8},
    [K_P_FLOAT] = PAIR_ROW(float), [K_P_DOUBLE] = PAIR_ROW(double),
    [K_P_LONG] = PAIR_ROW(long), [K_P_INT] = PAIR_ROW(int), [K_P_SHORT] = PAIR_ROW(short),
    [K_P_LDOUBLE] = PAIR_ROW(ldouble),
};

static enum op_index op_of(MPI_Op op)
{
    const MPI_Op ops[O_NONE] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR,
                                MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    for (int i = 0; i < O_NONE; i++)
        if (op == ops[i]) return (enum op_index)i;
    return O_NONE;
}

strata_reduce_fn strata_reduce_kernel(MPI_Op op, MPI_Datatype type)
{
    enum op_index o = op_of(op);
    enum kind k = o == O_NONE ? K_NONE : kind_of(type);
    return k == K_NONE ? NULL : kernels[k][o];
}
