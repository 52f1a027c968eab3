/* Vectorisable reduction loops, one per (operation, element kind).
 *
 * C's predefined types first, then Fortran's (whose accepted operations
 * differ between host MPIs).  Integer arithmetic is done in unsigned types
 * and converted back, so it wraps like the host MPI's instead of overflowing
 * (undefined in C). */
#include "coll/ops.h"

#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "transport/device_reduce.h"
#include "util/log.h"
#include "util/mpi_names.h"
#include "util/hot.h"

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

/* Fortran LOGICAL in the host's encoding: its .false. and .true. words and
 * "anything but .false. is true", all three checked against the host's own
 * operations once (fortran_logical_probe) rather than assumed to be C's. */
static int32_t flog_false, flog_true;
LOOP(land_flog, int32_t, (a[i] != flog_false && b[i] != flog_false) ? flog_true : flog_false)
LOOP(lor_flog, int32_t, (a[i] != flog_false || b[i] != flog_false) ? flog_true : flog_false)
LOOP(lxor_flog, int32_t, ((a[i] != flog_false) != (b[i] != flog_false)) ? flog_true : flog_false)

/* Value-index pairs, laid out as the C structs MPI defines them from. */
#define PAIR_KERNELS(tag, V) PAIR_KERNELS_INDEX(tag, V, int)
#define PAIR_KERNELS_INDEX(tag, V, IX)                                             \
    struct pair_##tag { V v; IX i; };                                              \
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
/* Fortran's pairs hold the index in the value's own type (MPI_2REAL,
 * MPI_2DOUBLE_PRECISION); MPI_2INTEGER is the int pair above. */
PAIR_KERNELS_INDEX(real2, float, float)
PAIR_KERNELS_INDEX(double2, double, double)

enum kind {
    K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64,
    K_F32, K_F64, K_F80, K_C32, K_C64, K_C80, K_BOOL, K_BYTE,
    K_P_FLOAT, K_P_DOUBLE, K_P_LONG, K_P_INT, K_P_SHORT, K_P_LDOUBLE,
    /* Fortran only: LOGICAL, real pairs */
    K_FLOG, K_P_REAL2, K_P_DOUBLE2, K_NONE
};

/* The device reducers number kinds and operations as this file does
 * (transport/device_reduce.h): checked here, where both are seen. */
#define SAME(k) _Static_assert((int)K_##k == (int)STRATA_DK_##k, "kind " #k " numbered alike");
SAME(I8) SAME(U8) SAME(I16) SAME(U16) SAME(I32) SAME(U32) SAME(I64) SAME(U64) SAME(F32)
SAME(F64) SAME(F80) SAME(C32) SAME(C64) SAME(C80) SAME(BOOL) SAME(BYTE) SAME(P_FLOAT)
SAME(P_DOUBLE) SAME(P_LONG) SAME(P_INT) SAME(P_SHORT) SAME(P_LDOUBLE) SAME(FLOG) SAME(P_REAL2)
SAME(P_DOUBLE2)
_Static_assert((int)K_NONE == (int)STRATA_DK_COUNT, "as many kinds as the device reducers");
#undef SAME

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

/* The element kind of every predefined C type strata reduces.  Handles are
 * link-time addresses in Open MPI and constants in MPICH, so they are
 * compared one by one rather than switched on; the table is static (built
 * on the stack at every call, it cost more than a small reduction's
 * combining: issue 14) and lists the types reductions use most first. */
static const struct {
    MPI_Datatype type;
    unsigned char size;  /* integers: their width, for int_kind */
    signed char is_signed; /* integers: 1 or 0; other kinds: -1 (kind below) */
    unsigned char kind;  /* enum kind of the others */
} c_types[] = {
    {MPI_DOUBLE, 0, -1, K_F64}, {MPI_INT, sizeof(int), 1, 0}, {MPI_FLOAT, 0, -1, K_F32},
    {MPI_LONG, sizeof(long), 1, 0}, {MPI_UNSIGNED, sizeof(int), 0, 0},
    {MPI_LONG_LONG, sizeof(long long), 1, 0}, {MPI_UNSIGNED_LONG, sizeof(long), 0, 0},
    {MPI_INT64_T, 8, 1, 0}, {MPI_UINT64_T, 8, 0, 0}, {MPI_INT32_T, 4, 1, 0},
    {MPI_UINT32_T, 4, 0, 0}, {MPI_DOUBLE_INT, 0, -1, K_P_DOUBLE}, {MPI_2INT, 0, -1, K_P_INT},
    {MPI_BYTE, 0, -1, K_BYTE}, {MPI_C_BOOL, 0, -1, K_BOOL},
    {MPI_SIGNED_CHAR, 1, 1, 0}, {MPI_UNSIGNED_CHAR, 1, 0, 0},
    {MPI_SHORT, sizeof(short), 1, 0}, {MPI_UNSIGNED_SHORT, sizeof(short), 0, 0},
    {MPI_UNSIGNED_LONG_LONG, sizeof(long long), 0, 0},
    {MPI_INT8_T, 1, 1, 0}, {MPI_UINT8_T, 1, 0, 0}, {MPI_INT16_T, 2, 1, 0},
    {MPI_UINT16_T, 2, 0, 0},
    {MPI_AINT, sizeof(MPI_Aint), 1, 0}, {MPI_OFFSET, sizeof(MPI_Offset), 1, 0},
    {MPI_COUNT, sizeof(MPI_Count), 1, 0},
    {MPI_LONG_DOUBLE, 0, -1, K_F80}, {MPI_C_FLOAT_COMPLEX, 0, -1, K_C32},
    {MPI_C_DOUBLE_COMPLEX, 0, -1, K_C64}, {MPI_C_LONG_DOUBLE_COMPLEX, 0, -1, K_C80},
    {MPI_FLOAT_INT, 0, -1, K_P_FLOAT}, {MPI_LONG_INT, 0, -1, K_P_LONG},
    {MPI_SHORT_INT, 0, -1, K_P_SHORT}, {MPI_LONG_DOUBLE_INT, 0, -1, K_P_LDOUBLE},
};

/* The last type this thread looked up, and its kind: a program calls with
 * the same few types, and the scan above cost 180 instructions for a type
 * late in the table or absent from it (MPI_BYTE, MPI_CHAR, a derived type),
 * twice per call (issue 14, 1 KiB rows).  Caching a handle is safe both
 * ways: a predefined handle never changes meaning, and a freed derived
 * type's handle can only come back as another derived type (Open MPI's
 * predefined handles are static objects, MPICH's a handle kind of their
 * own).  Zero-initialised (valid = 0), initial-exec as the library's other
 * thread-locals. */
static _Thread_local struct {
    MPI_Datatype type;
    int size;            /* the host's MPI_Type_size of a predefined type, else -1 */
    unsigned char kind;
    unsigned char valid;
} last_kind __attribute__((tls_model("initial-exec")));

/* kind_of past the cache: the scan, and the cache filled with its answer. */
__attribute__((noinline)) static enum kind kind_of_scan(MPI_Datatype t)
{
    enum kind k = K_NONE;
    for (size_t i = 0; i < sizeof c_types / sizeof c_types[0]; i++)
        if (t == c_types[i].type) {
            k = c_types[i].is_signed < 0 ? (enum kind)c_types[i].kind
                                         : int_kind(c_types[i].size, c_types[i].is_signed);
            break;
        }
    /* A predefined type's size never changes: asked once here, not per call
     * (an entry asks for it up to five times, 25-60 instructions each). */
    int size = -1;
    if (k != K_NONE && (PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 0)) size = -1;
    last_kind.type = t;
    last_kind.size = size;
    last_kind.kind = (unsigned char)k;
    last_kind.valid = 1;
    return k;
}

/* Inline: an entry asks up to seven times per call, and the hit is two
 * compares (a call each cost 20 instructions). */
static inline enum kind kind_of(MPI_Datatype t)
{
    if (__builtin_expect(last_kind.valid && last_kind.type == t, 1))
        return (enum kind)last_kind.kind;
    return kind_of_scan(t);
}

STRATA_HOT int strata_predefined_c_type(MPI_Datatype type) { return kind_of(type) != K_NONE; }

STRATA_HOT int strata_type_plain(MPI_Datatype type)
{
    enum kind k = kind_of(type);
    /* The pairs strata has always treated as padded (MPI_2INT is not). */
    return k != K_NONE && k != K_P_FLOAT && k != K_P_DOUBLE && k != K_P_LONG && k != K_P_SHORT &&
           k != K_P_LDOUBLE;
}

STRATA_HOT int strata_type_size_plain(MPI_Datatype type, int *size, int *plain)
{
    *plain = strata_type_plain(type); /* kind_of leaves type's entry in the cache */
    if (*plain && last_kind.size >= 0) {
        *size = last_kind.size;
        return MPI_SUCCESS;
    }
    *plain = 0;
    return strata_type_size(type, size);
}

STRATA_HOT int strata_type_size(MPI_Datatype type, int *size)
{
    if (kind_of(type) != K_NONE && last_kind.size >= 0) {
        *size = last_kind.size; /* kind_of left type's entry in the cache */
        return MPI_SUCCESS;
    }
    return PMPI_Type_size(type, size);
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
#define SAME(o) _Static_assert((int)O_##o == (int)STRATA_DOP_##o, "op " #o " numbered alike");
SAME(SUM) SAME(PROD) SAME(MAX) SAME(MIN) SAME(LAND) SAME(LOR) SAME(LXOR) SAME(BAND) SAME(BOR)
SAME(BXOR) SAME(MINLOC) SAME(MAXLOC)
_Static_assert((int)O_NONE == (int)STRATA_DOP_COUNT, "as many ops as the device reducers");
#undef SAME

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
    [K_FLOG] = {[O_LAND] = land_flog, [O_LOR] = lor_flog, [O_LXOR] = lxor_flog},
    [K_P_REAL2] = PAIR_ROW(real2), [K_P_DOUBLE2] = PAIR_ROW(double2),
};

/* Static, as c_types above. */
static const MPI_Op ops_table[O_NONE] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR,
                                         MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC,
                                         MPI_MAXLOC};

static enum op_index op_of(MPI_Op op)
{
    for (int i = 0; i < O_NONE; i++)
        if (op == ops_table[i]) return (enum op_index)i;
    return O_NONE;
}

/* ---- Fortran's predefined types ----
 *
 * Which operations the host takes on each differs between the MPIs and
 * their versions, beyond the standard's groups (MPI-4.1 6.9.2): Open MPI
 * takes the logical operations on its sized integers but not on
 * MPI_INTEGER, MPICH 4.0 and Intel MPI 2021 on every integer, MPICH 5 on
 * none (as the standard's groups say).  So the table below lists what strata
 * has kernels for, and the host is asked once which of those it accepts
 * (host_accepts): strata serves exactly those, and a combination the host
 * rejects still gets the host's own error (tests/mpi/test_fortran_types.c
 * compares every pair with the host). */
#define M(o) (1u << (o))
#define ARITH (M(O_SUM) | M(O_PROD) | M(O_MAX) | M(O_MIN))
#define LOGIC (M(O_LAND) | M(O_LOR) | M(O_LXOR))
#define BITS (M(O_BAND) | M(O_BOR) | M(O_BXOR))
#define LOC (M(O_MINLOC) | M(O_MAXLOC))
#define CPLX (M(O_SUM) | M(O_PROD))

/* How the host reduces a Fortran type: as which element (an integer's width
 * is its size) and with which operations. */
enum fkind { F_INT, F_REAL, F_DOUBLE, F_COMPLEX, F_DCOMPLEX, F_LOGICAL, F_2INT, F_2REAL, F_2DOUBLE };

/* Integers: the standard's arithmetic and bitwise groups, and the logical
 * operations some hosts add.  Reals take the arithmetic ones only: MPICH
 * 4.0.2 also accepts the logical ones on reals but then leaves the buffer
 * as it was (no kernel behind the check), so those calls stay the host's
 * whatever a probe of acceptance would say. */
#define INT_OPS (ARITH | LOGIC | BITS)
#define REAL_OPS ARITH

static const struct fortran_type {
    MPI_Datatype type;
    enum fkind fkind;
    unsigned ops;     /* the candidates; the host's answer in fortran_ops */
} fortran_types[] = {
    {MPI_INTEGER, F_INT, INT_OPS},
    {MPI_INTEGER1, F_INT, INT_OPS},
    {MPI_INTEGER2, F_INT, INT_OPS},
    {MPI_INTEGER4, F_INT, INT_OPS},
    {MPI_INTEGER8, F_INT, INT_OPS},
    {MPI_REAL, F_REAL, REAL_OPS},
    {MPI_REAL4, F_REAL, REAL_OPS},
    {MPI_DOUBLE_PRECISION, F_DOUBLE, REAL_OPS},
    {MPI_REAL8, F_DOUBLE, REAL_OPS},
    {MPI_COMPLEX, F_COMPLEX, CPLX},
    {MPI_COMPLEX8, F_COMPLEX, CPLX},
    {MPI_DOUBLE_COMPLEX, F_DCOMPLEX, CPLX},
    {MPI_COMPLEX16, F_DCOMPLEX, CPLX},
    {MPI_LOGICAL, F_LOGICAL, LOGIC},
#ifdef OPEN_MPI
    {MPI_LOGICAL4, F_LOGICAL, LOGIC},
#endif
    {MPI_2INTEGER, F_2INT, LOC},
    {MPI_2REAL, F_2REAL, LOC},
    {MPI_2DOUBLE_PRECISION, F_2DOUBLE, LOC},
};
#define NFORTRAN (sizeof fortran_types / sizeof fortran_types[0])

/* Each Fortran type's element kind in this process, or K_NONE where its size
 * is not the C element's (a compiler with other default kinds): the host
 * then reduces it.  fortran_ops: the candidates the host accepted;
 * fortran_rejected: those it refused (the hand-off reason says so). */
static enum kind fortran_kind[NFORTRAN];
static unsigned fortran_ops[NFORTRAN], fortran_rejected[NFORTRAN];
static pthread_once_t fortran_once = PTHREAD_ONCE_INIT;

/* MPI_Reduce_local has no communicator: its errors are raised on
 * MPI_COMM_WORLD (MPI-3.1 8.3; Open MPI 4.1 and 5.0, MPICH 4.0, Intel MPI
 * 2021) or MPI_COMM_SELF (MPI-4's rule; MPICH 5 takes either), found by
 * running each host with MPI_ERRORS_RETURN on one of the two.  Both return
 * errors while the host is asked, and get the application's handlers back
 * afterwards, whatever they were. */
struct saved_handlers {
    MPI_Errhandler world, self;
};

static void errors_return(struct saved_handlers *s)
{
    s->world = s->self = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &s->world);
    PMPI_Comm_get_errhandler(MPI_COMM_SELF, &s->self);
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static void errors_restore(struct saved_handlers *s)
{
    if (s->world != MPI_ERRHANDLER_NULL) {
        PMPI_Comm_set_errhandler(MPI_COMM_WORLD, s->world);
        PMPI_Errhandler_free(&s->world); /* the reference get_errhandler gave */
    }
    if (s->self != MPI_ERRHANDLER_NULL) {
        PMPI_Comm_set_errhandler(MPI_COMM_SELF, s->self);
        PMPI_Errhandler_free(&s->self);
    }
}

/* Whether the host accepts op on one element of type: zero bytes are a
 * value of every Fortran type (0, 0.0, .false. in every encoding in use, a
 * pair of those).  The same question with the same bytes on every rank of
 * the job, running the same library: every rank gets the same answer and
 * takes the same path. */
static int host_accepts(MPI_Datatype type, MPI_Op op)
{
    _Alignas(16) unsigned char a[64] = {0}, b[64] = {0};
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0 || (size_t)size > sizeof a)
        return 0;
    return PMPI_Reduce_local(a, b, 1, type, op) == MPI_SUCCESS;
}

/* The host's LOGICAL words, from its own operations on one process
 * (MPI_Reduce_local): .false. is what LOR makes of two zeros, .true. what
 * it makes of 1 and -1 (true in every Fortran encoding in use).  The
 * kernels' rule, "not .false. is true", is then checked on words that
 * encodings disagree on; a host that differs keeps its LOGICAL reductions. */
static int fortran_logical_probe(void)
{
    int32_t a = 0, b = 0;
    if (PMPI_Reduce_local(&a, &b, 1, MPI_LOGICAL, MPI_LOR) != MPI_SUCCESS) return 0;
    flog_false = b;
    a = 1, b = -1;
    if (PMPI_Reduce_local(&a, &b, 1, MPI_LOGICAL, MPI_LOR) != MPI_SUCCESS) return 0;
    flog_true = b;
    if (flog_true == flog_false) return 0;
    const int32_t words[] = {0, 1, -1, 2, 3, 256, flog_true, flog_false};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        int32_t x = words[i], y = flog_true, want = x != flog_false ? flog_true : flog_false;
        if (PMPI_Reduce_local(&x, &y, 1, MPI_LOGICAL, MPI_LAND) != MPI_SUCCESS || y != want)
            return 0;
        x = words[i], y = flog_false;
        if (PMPI_Reduce_local(&x, &y, 1, MPI_LOGICAL, MPI_LXOR) != MPI_SUCCESS || y != want)
            return 0;
    }
    return 1;
}

/* The refused candidates, one line at STRATA_VERBOSE=2 (world rank 0: the
 * answer is every rank's). */
static void say_rejected(void)
{
    char text[1200], tn[192];
    size_t len = 0;
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (size_t i = 0; i < NFORTRAN && len < sizeof text; i++) {
        if (!fortran_rejected[i]) continue;
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s:", len ? "; " : "",
                                strata_type_name(fortran_types[i].type, tn, sizeof tn));
        for (int o = 0; o < O_NONE && len < sizeof text; o++)
            if (fortran_rejected[i] & M(o))
                len += (size_t)snprintf(text + len, sizeof text - len, " %s",
                                        strata_predefined_op_name(ops_table[o]));
    }
    if (len && rank == 0)
        strata_verbose(2, "the host MPI rejects these operations on Fortran types, so strata "
                          "leaves them to it (its error is its own): %s", text);
}

static void fortran_kinds_init(void)
{
    for (size_t i = 0; i < NFORTRAN; i++) {
        const struct fortran_type *f = &fortran_types[i];
        int size = 0;
        fortran_kind[i] = K_NONE;
        if (f->type == MPI_DATATYPE_NULL || PMPI_Type_size(f->type, &size) != MPI_SUCCESS)
            continue;
        size_t s = (size_t)size;
        enum kind k = K_NONE;
        switch (f->fkind) {
        case F_INT: k = int_kind(s, 1); break;
        case F_REAL: k = s == sizeof(float) ? K_F32 : K_NONE; break;
        case F_DOUBLE: k = s == sizeof(double) ? K_F64 : K_NONE; break;
        case F_COMPLEX: k = s == sizeof(float _Complex) ? K_C32 : K_NONE; break;
        case F_DCOMPLEX: k = s == sizeof(double _Complex) ? K_C64 : K_NONE; break;
        case F_LOGICAL: k = s == sizeof(int32_t) ? K_FLOG : K_NONE; break;
        case F_2INT: k = s == sizeof(struct pair_int) ? K_P_INT : K_NONE; break;
        case F_2REAL: k = s == sizeof(struct pair_real2) ? K_P_REAL2 : K_NONE; break;
        case F_2DOUBLE: k = s == sizeof(struct pair_double2) ? K_P_DOUBLE2 : K_NONE; break;
        }
        fortran_kind[i] = k;
    }
    /* Asked of the host once, into a table the calls only read. */
    struct saved_handlers saved;
    errors_return(&saved);
    for (size_t i = 0; i < NFORTRAN; i++) {
        if (fortran_kind[i] == K_NONE) continue;
        for (int o = 0; o < O_NONE; o++) {
            if (!(fortran_types[i].ops & M(o))) continue;
            if (host_accepts(fortran_types[i].type, ops_table[o]))
                fortran_ops[i] |= M(o);
            else
                fortran_rejected[i] |= M(o);
        }
    }
    /* Only after the size check: MPI_LOGICAL must be a 4-byte word to probe. */
    int logical_ok = 0;
    for (size_t i = 0; i < NFORTRAN; i++)
        if (fortran_types[i].type == MPI_LOGICAL && fortran_kind[i] == K_FLOG &&
            (fortran_ops[i] & LOGIC) == LOGIC)
            logical_ok = fortran_logical_probe();
    errors_restore(&saved);
    for (size_t i = 0; i < NFORTRAN && !logical_ok; i++)
        if (fortran_kind[i] == K_FLOG) fortran_kind[i] = K_NONE;
    if (!logical_ok)
        strata_verbose(1, "MPI_LOGICAL reductions go to the host MPI: its encoding of "
                          ".true./.false. is not one strata's kernels follow");
    say_rejected();
}

void strata_reduce_probe_host(void) { pthread_once(&fortran_once, fortran_kinds_init); }

/* The kind of a Fortran type under operation o, K_NONE if not served. */
static enum kind fortran_kind_of(enum op_index o, MPI_Datatype type)
{
    for (size_t i = 0; i < NFORTRAN; i++) {
        if (type != fortran_types[i].type) continue;
        if (!(fortran_types[i].ops & M(o))) return K_NONE;
        pthread_once(&fortran_once, fortran_kinds_init);
        return fortran_ops[i] & M(o) ? fortran_kind[i] : K_NONE;
    }
    return K_NONE;
}

int strata_reduce_host_rejects(MPI_Op op, MPI_Datatype type)
{
    enum op_index o = op_of(op);
    if (o == O_NONE) return 0;
    for (size_t i = 0; i < NFORTRAN; i++) {
        if (type != fortran_types[i].type) continue;
        pthread_once(&fortran_once, fortran_kinds_init);
        return (fortran_rejected[i] & M(o)) != 0;
    }
    return 0;
}

static strata_reduce_fn fortran_kernel(enum op_index o, MPI_Datatype type)
{
    enum kind k = fortran_kind_of(o, type);
    return k == K_NONE ? NULL : kernels[k][o];
}

int strata_reduce_classify(MPI_Op op, MPI_Datatype type, int *dop, int *dkind)
{
    enum op_index o = op_of(op);
    if (o == O_NONE) return -1;
    enum kind k = kind_of(type);
    if (k == K_NONE) k = fortran_kind_of(o, type);
    if (k == K_NONE || !kernels[k][o]) return -1;
    *dop = (int)o;
    *dkind = (int)k;
    return 0;
}

strata_reduce_fn strata_reduce_kernel_at(int dop, int dkind)
{
    if (dop < 0 || dop >= O_NONE || dkind < 0 || dkind >= K_NONE) return NULL;
    return kernels[dkind][dop];
}

void strata_reduce_logical_words(int32_t *false_word, int32_t *true_word)
{
    pthread_once(&fortran_once, fortran_kinds_init);
    *false_word = flog_false;
    *true_word = flog_true;
}

STRATA_HOT strata_reduce_fn strata_reduce_kernel(MPI_Op op, MPI_Datatype type)
{
    enum op_index o = op_of(op);
    if (o == O_NONE) return NULL;
    enum kind k = kind_of(type);
    return k == K_NONE ? fortran_kernel(o, type) : kernels[k][o];
}
