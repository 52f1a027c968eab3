/* Reduction part of the node-collective matrix: every predefined op on every
 * predefined C datatype it applies to (MPI-3.1 section 5.9.2), with Reduce at
 * every root and Allreduce, in place or not, checked element by element
 * against a result computed here from every rank's regenerated input.
 *
 * Inputs are chosen so that the expected result does not depend on the order
 * of combination: integers wrap (any order gives the same bits), floating
 * SUM uses integer values and PROD small exact factors, MIN/MAX/MINLOC/MAXLOC
 * are order-free.  The order strata documents for floating point is checked
 * separately (node_fp_suite) with random values: bit-identical on every rank,
 * from call to call, for every root, and equal to a fold in the documented
 * hierarchical order.
 *
 * The host MPI's PMPI_ result is compared too, except for the combinations
 * where the host is known to be wrong (shared/MACHINE-NOTES.md). */
#include <complex.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll/ops.h"
#include "context/context.h"
#include "route/route.h"
#include "pair_types.h"
#include "node_common.h"

enum { GUARD = 64 };
#define SENTINEL 0xA5

enum op_id { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
             O_MINLOC, O_MAXLOC, NOPS };
static const char *op_names[NOPS] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR",
                                     "LXOR", "BAND", "BOR", "BXOR", "MINLOC", "MAXLOC"};

static MPI_Op op_handle(enum op_id o)
{
    const MPI_Op ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR,
                              MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    return ops[o];
}

/* Ops each category takes (MPI-3.1 5.9.2: logical ops are defined on C
 * integers and MPI_C_BOOL only, not on the multi-language integers). */
static unsigned cat_ops(enum node_cat c)
{
#define B(o) (1u << (o))
    switch (c) {
    case NODE_CAT_INT:
        return B(O_SUM) | B(O_PROD) | B(O_MAX) | B(O_MIN) | B(O_LAND) | B(O_LOR) | B(O_LXOR) |
               B(O_BAND) | B(O_BOR) | B(O_BXOR);
    case NODE_CAT_MULTI:
        return B(O_SUM) | B(O_PROD) | B(O_MAX) | B(O_MIN) | B(O_BAND) | B(O_BOR) | B(O_BXOR);
    case NODE_CAT_FLOAT: return B(O_SUM) | B(O_PROD) | B(O_MAX) | B(O_MIN);
    case NODE_CAT_COMPLEX: return B(O_SUM) | B(O_PROD);
    case NODE_CAT_BOOL: return B(O_LAND) | B(O_LOR) | B(O_LXOR);
    case NODE_CAT_BYTE: return B(O_BAND) | B(O_BOR) | B(O_BXOR);
    case NODE_CAT_PAIR: return B(O_MINLOC) | B(O_MAXLOC);
    default: return 0;
    }
#undef B
}

/* How an element is stored (the C type behind the MPI datatype). */
enum vkind { VK_INT, VK_F32, VK_F64, VK_F80, VK_C32, VK_C64, VK_C80, VK_BOOL, VK_BYTE,
             VK_P_FLOAT, VK_P_DOUBLE, VK_P_LONG, VK_P_INT, VK_P_SHORT, VK_P_LDOUBLE };

struct rtype {
    const char *name;
    MPI_Datatype type;
    enum node_cat cat;
    enum vkind vk;
    int width;       /* integers: bytes */
    int is_signed;   /* integers */
    size_t csize;    /* sizeof the C type (must equal the MPI extent) */
    size_t extent, true_extent;
};

#define NTYPES_MAX 48
static struct rtype rtypes[NTYPES_MAX];
static int nrtypes;

static void add_type(const char *name, MPI_Datatype type, enum node_cat cat, enum vkind vk,
                     int width, int is_signed, size_t csize)
{
    struct rtype *t = &rtypes[nrtypes++];
    *t = (struct rtype){name, type, cat, vk, width, is_signed, csize, 0, 0};
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    CHECK(lb == 0 && true_lb == 0 && (size_t)extent == csize,
          "%s: extent %ld (lb %ld) differs from the C type's size %zu", name, (long)extent,
          (long)lb, csize);
    t->extent = (size_t)extent;
    t->true_extent = (size_t)true_extent;
}

static void init_types(void)
{
    if (nrtypes) return;
#define INT_T(name, T, cat, sgn) add_type(#name, name, cat, VK_INT, (int)sizeof(T), sgn, sizeof(T))
    INT_T(MPI_SIGNED_CHAR, signed char, NODE_CAT_INT, 1);
    INT_T(MPI_UNSIGNED_CHAR, unsigned char, NODE_CAT_INT, 0);
    INT_T(MPI_SHORT, short, NODE_CAT_INT, 1);
    INT_T(MPI_UNSIGNED_SHORT, unsigned short, NODE_CAT_INT, 0);
    INT_T(MPI_INT, int, NODE_CAT_INT, 1);
    INT_T(MPI_UNSIGNED, unsigned, NODE_CAT_INT, 0);
    INT_T(MPI_LONG, long, NODE_CAT_INT, 1);
    INT_T(MPI_UNSIGNED_LONG, unsigned long, NODE_CAT_INT, 0);
    INT_T(MPI_LONG_LONG, long long, NODE_CAT_INT, 1);
    INT_T(MPI_UNSIGNED_LONG_LONG, unsigned long long, NODE_CAT_INT, 0);
    INT_T(MPI_INT8_T, int8_t, NODE_CAT_INT, 1);
    INT_T(MPI_UINT8_T, uint8_t, NODE_CAT_INT, 0);
    INT_T(MPI_INT16_T, int16_t, NODE_CAT_INT, 1);
    INT_T(MPI_UINT16_T, uint16_t, NODE_CAT_INT, 0);
    INT_T(MPI_INT32_T, int32_t, NODE_CAT_INT, 1);
    INT_T(MPI_UINT32_T, uint32_t, NODE_CAT_INT, 0);
    INT_T(MPI_INT64_T, int64_t, NODE_CAT_INT, 1);
    INT_T(MPI_UINT64_T, uint64_t, NODE_CAT_INT, 0);
    INT_T(MPI_AINT, MPI_Aint, NODE_CAT_MULTI, 1);
    INT_T(MPI_OFFSET, MPI_Offset, NODE_CAT_MULTI, 1);
    INT_T(MPI_COUNT, MPI_Count, NODE_CAT_MULTI, 1);
#undef INT_T
    add_type("MPI_FLOAT", MPI_FLOAT, NODE_CAT_FLOAT, VK_F32, 0, 1, sizeof(float));
    add_type("MPI_DOUBLE", MPI_DOUBLE, NODE_CAT_FLOAT, VK_F64, 0, 1, sizeof(double));
    add_type("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, NODE_CAT_FLOAT, VK_F80, 0, 1,
             sizeof(long double));
    add_type("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, NODE_CAT_COMPLEX, VK_C32, 0, 1,
             sizeof(float _Complex));
    add_type("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, NODE_CAT_COMPLEX, VK_C64, 0, 1,
             sizeof(double _Complex));
    add_type("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, NODE_CAT_COMPLEX, VK_C80,
             0, 1, sizeof(long double _Complex));
    add_type("MPI_C_BOOL", MPI_C_BOOL, NODE_CAT_BOOL, VK_BOOL, 0, 0, sizeof(bool));
    add_type("MPI_BYTE", MPI_BYTE, NODE_CAT_BYTE, VK_BYTE, 0, 0, 1);
    add_type("MPI_FLOAT_INT", MPI_FLOAT_INT, NODE_CAT_PAIR, VK_P_FLOAT, 0, 1,
             sizeof(struct p_float));
    add_type("MPI_DOUBLE_INT", MPI_DOUBLE_INT, NODE_CAT_PAIR, VK_P_DOUBLE, 0, 1,
             sizeof(struct p_double));
    add_type("MPI_LONG_INT", MPI_LONG_INT, NODE_CAT_PAIR, VK_P_LONG, 0, 1,
             sizeof(struct p_long));
    add_type("MPI_2INT", MPI_2INT, NODE_CAT_PAIR, VK_P_INT, 0, 1, sizeof(struct p_int));
    add_type("MPI_SHORT_INT", MPI_SHORT_INT, NODE_CAT_PAIR, VK_P_SHORT, 0, 1,
             sizeof(struct p_short));
    add_type("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, NODE_CAT_PAIR, VK_P_LDOUBLE, 0, 1,
             sizeof(struct p_ldouble));
}

static const struct rtype *type_named(const char *name)
{
    init_types();
    for (int i = 0; i < nrtypes; i++)
        if (!strcmp(rtypes[i].name, name)) return &rtypes[i];
    CHECK(0, "no type %s in the table", name);
    return NULL;
}

/* ---- Host MPI bugs (shared/MACHINE-NOTES.md): skip the PMPI_ comparison. */

static int host_known_bad(const struct rtype *t, enum op_id op)
{
#if defined(MPICH_VERSION)
    /* MPICH 4.0.2: MIN/MAX on unsigned types compare as signed. */
    if (t->vk == VK_INT && !t->is_signed && (op == O_MAX || op == O_MIN)) return 1;
#elif defined(OPEN_MPI)
    /* Open MPI 4.1.4 (op/avx): SUM on 8- and 16-bit integers, signed or not,
     * saturates instead of wrapping once the vector loop runs (ompi#8045
     * names the 8-bit unsigned case; 16-bit and signed ones fail here too).
     * MIN/MAX on MPI_UNSIGNED_LONG are wrong, and on MPI_OFFSET they compare
     * as unsigned (measured with --host-survey). */
    if (t->vk == VK_INT && t->width <= 2 && op == O_SUM) return 1;
    if ((t->type == MPI_UNSIGNED_LONG || t->type == MPI_OFFSET) && (op == O_MAX || op == O_MIN))
        return 1;
#endif
    (void)t;
    (void)op;
    return 0;
}

/* MPICH 4.0.2: MPI_Reduce with MPI_IN_PLACE at a root other than 0
 * segfaults (pmodels/mpich#6540); here from 2049 bytes on (MACHINE-NOTES
 * says 4 KiB: 513 MPI_INTs or 257 MPI_DOUBLEs already crash at 2 ranks). */
static int host_inplace_crash(int allreduce, int in_place, int root, size_t bytes)
{
#if defined(MPICH_VERSION)
    return !allreduce && in_place && root != 0 && bytes > 2048;
#else
    (void)allreduce;
    (void)in_place;
    (void)root;
    (void)bytes;
    return 0;
#endif
}

/* ---- Inputs ------------------------------------------------------------ */

static uint64_t int_mask(int width)
{
    return width >= 8 ? ~0ull : (1ull << (8 * width)) - 1;
}

static int64_t sign_extend(uint64_t v, int width)
{
    if (width >= 8) return (int64_t)v;
    int shift = 64 - 8 * width;
    return (int64_t)(v << shift) >> shift;
}

/* Logical inputs: elements with index % 6 == 0 are nonzero on every rank,
 * == 1 zero on every rank, the others random, so LAND, LOR and LXOR all
 * produce both answers. */
static int logical_zero(size_t i, uint64_t h2)
{
    size_t cls = i % 6;
    return cls == 1 || (cls > 1 && (h2 & 1));
}

/* Element i of `rank`'s input for (type, op) and salt, written at dst.  With
 * `random_fp`, floating values are arbitrary (their sum rounds). */
static void gen_elem(const struct rtype *t, enum op_id op, int rank, size_t i, uint64_t salt,
                     int random_fp, void *dst)
{
    uint64_t h = node_word(rank, i, salt), h2 = node_mix(h);
    long double f = 0; /* floating value, for the floating kinds */
    switch (t->vk) {
    case VK_INT: {
        uint64_t v = h;
        if (op == O_PROD) v = (h2 & 3) ? (v | 1) : (v & ~1ull); /* mostly odd: products wrap */
        if (op == O_LAND || op == O_LOR || op == O_LXOR)
            v = logical_zero(i, h2) ? 0
                : (h2 & 2)          ? 1ull << (8 * t->width - 1) /* low bytes all zero */
                                    : (h | 1);
        v &= int_mask(t->width);
        memcpy(dst, &v, (size_t)t->width); /* little-endian */
        return;
    }
    case VK_BOOL: {
        bool b = !logical_zero(i, h2);
        memcpy(dst, &b, sizeof b);
        return;
    }
    case VK_BYTE: {
        unsigned char b = (unsigned char)h;
        memcpy(dst, &b, 1);
        return;
    }
    default: break;
    }
    int single = t->vk == VK_F32 || t->vk == VK_C32;
    if (random_fp) {
        /* Arbitrary values: sums round, so the order shows in the bits. */
        f = ldexpl((long double)(int64_t)(h >> 11) / (long double)(1ull << 52),
                   (int)(h2 % 9) - 4);
        if (op == O_PROD) f = 0.5L + (long double)(h >> 11) / (long double)(1ull << 53) * 1.5L;
    } else if (op == O_SUM) {
        /* Integers: every partial sum is exact, in any order. */
        long range = single ? 4096 : 1L << 20;
        f = (long double)((long)(h % (uint64_t)(2 * range + 1)) - range);
    } else if (op == O_PROD) {
        static const long double factors[8] = {1, -1, 2, -2, 0.5, -0.5, 3, -3};
        f = factors[h % 8];
    } else {
        f = ldexpl((long double)(int32_t)h, (int)(h2 % 41) - 20);
    }
    switch (t->vk) {
    case VK_F32: *(float *)dst = (float)f; return;
    case VK_F64: *(double *)dst = (double)f; return;
    case VK_F80: memset(dst, 0, t->csize); *(long double *)dst = f; return;
    case VK_C32:
    case VK_C64:
    case VK_C80: {
        long double re = f, im;
        if (random_fp) {
            im = ldexpl((long double)(int64_t)(h2 >> 11) / (long double)(1ull << 52), -2);
        } else if (op == O_SUM) {
            long range = single ? 4096 : 1L << 20;
            im = (long double)((long)(h2 % (uint64_t)(2 * range + 1)) - range);
        } else {
            /* Gaussian integers with parts in {-2,-1,1,2}: every partial
             * product of up to 8 of them has integer parts below 2^13. */
            static const long double parts[4] = {-2, -1, 1, 2};
            re = parts[h % 4];
            im = parts[(h >> 2) % 4];
        }
        if (t->vk == VK_C32) *(float _Complex *)dst = CMPLXF((float)re, (float)im);
        else if (t->vk == VK_C64) *(double _Complex *)dst = CMPLX((double)re, (double)im);
        else {
            memset(dst, 0, t->csize);
            *(long double _Complex *)dst = CMPLXL(re, im);
        }
        return;
    }
    default: break;
    }
    /* Pairs: three values, so equal values with different indices are
     * common; indices positive and negative. */
    int k = (int)(h % 3), idx = (int)(h2 % 2001) - 1000;
    memset(dst, 0, t->csize);
    switch (t->vk) {
    case VK_P_FLOAT: {
        static const float v[3] = {-0.5f, 1.25f, 7.0f};
        *(struct p_float *)dst = (struct p_float){v[k], idx};
        return;
    }
    case VK_P_DOUBLE: {
        static const double v[3] = {-1e300, 0.125, 3.5};
        *(struct p_double *)dst = (struct p_double){v[k], idx};
        return;
    }
    case VK_P_LONG: {
        static const long v[3] = {-(1L << 62), 5, (1L << 50) + 1};
        *(struct p_long *)dst = (struct p_long){v[k], idx};
        return;
    }
    case VK_P_INT: {
        static const int v[3] = {INT_MIN, 0, INT_MAX};
        *(struct p_int *)dst = (struct p_int){v[k], idx};
        return;
    }
    case VK_P_SHORT: {
        static const short v[3] = {-32768, 2, 32767};
        *(struct p_short *)dst = (struct p_short){v[k], idx};
        return;
    }
    case VK_P_LDOUBLE: {
        static const long double v[3] = {-1e4000L, 0.1L, 2.5L};
        struct p_ldouble p;
        memset(&p, 0, sizeof p);
        p.v = v[k];
        p.i = idx;
        memcpy(dst, &p, sizeof p);
        return;
    }
    default: CHECK(0, "no generator for %s", t->name);
    }
}

/* ---- The reference combination (written independently of src/coll/ops.c) */

#define PAIR_COMBINE(S)                                                             \
    do {                                                                            \
        S *a = acc;                                                                 \
        const S *b = in;                                                            \
        int take = op == O_MINLOC ? (b->v < a->v) : (b->v > a->v);                  \
        if (take || (b->v == a->v && b->i < a->i)) {                                \
            a->v = b->v;                                                            \
            a->i = b->i;                                                            \
        }                                                                           \
    } while (0)

#define FLOAT_COMBINE(T)                                                            \
    do {                                                                            \
        T x = *(T *)acc, y = *(const T *)in;                                        \
        *(T *)acc = op == O_SUM ? x + y : op == O_PROD ? x * y                      \
                  : op == O_MAX ? (x > y ? x : y) : (x < y ? x : y);                \
    } while (0)

#define COMPLEX_COMBINE(T)                                                          \
    do {                                                                            \
        T x = *(T *)acc, y = *(const T *)in;                                        \
        *(T *)acc = op == O_SUM ? x + y : x * y;                                    \
    } while (0)

/* acc = acc op in, for one element. */
static void combine_elem(const struct rtype *t, enum op_id op, void *acc, const void *in)
{
    switch (t->vk) {
    case VK_INT: {
        uint64_t a = 0, b = 0, r;
        memcpy(&a, acc, (size_t)t->width);
        memcpy(&b, in, (size_t)t->width);
        int less = t->is_signed ? sign_extend(a, t->width) < sign_extend(b, t->width) : a < b;
        switch (op) {
        case O_SUM: r = a + b; break;
        case O_PROD: r = a * b; break;
        case O_MAX: r = less ? b : a; break;
        case O_MIN: r = less ? a : b; break;
        case O_LAND: r = a && b; break;
        case O_LOR: r = a || b; break;
        case O_LXOR: r = (a != 0) != (b != 0); break;
        case O_BAND: r = a & b; break;
        case O_BOR: r = a | b; break;
        case O_BXOR: r = a ^ b; break;
        default: r = 0; CHECK(0, "op %s on %s", op_names[op], t->name);
        }
        r &= int_mask(t->width);
        memcpy(acc, &r, (size_t)t->width);
        return;
    }
    case VK_BOOL: {
        bool a, b;
        memcpy(&a, acc, 1);
        memcpy(&b, in, 1);
        bool r = op == O_LAND ? (a && b) : op == O_LOR ? (a || b) : (a != b);
        memcpy(acc, &r, 1);
        return;
    }
    case VK_BYTE: {
        unsigned char a = *(unsigned char *)acc, b = *(const unsigned char *)in;
        *(unsigned char *)acc = op == O_BAND ? (a & b) : op == O_BOR ? (a | b) : (a ^ b);
        return;
    }
    case VK_F32: FLOAT_COMBINE(float); return;
    case VK_F64: FLOAT_COMBINE(double); return;
    case VK_F80: FLOAT_COMBINE(long double); return;
    case VK_C32: COMPLEX_COMBINE(float _Complex); return;
    case VK_C64: COMPLEX_COMBINE(double _Complex); return;
    case VK_C80: COMPLEX_COMBINE(long double _Complex); return;
    case VK_P_FLOAT: PAIR_COMBINE(struct p_float); return;
    case VK_P_DOUBLE: PAIR_COMBINE(struct p_double); return;
    case VK_P_LONG: PAIR_COMBINE(struct p_long); return;
    case VK_P_INT: PAIR_COMBINE(struct p_int); return;
    case VK_P_SHORT: PAIR_COMBINE(struct p_short); return;
    case VK_P_LDOUBLE: PAIR_COMBINE(struct p_ldouble); return;
    }
}

/* Equal by value: padding (long double, pairs) is ignored; `bits` asks for
 * identical bits of the value (floating results that must not differ in
 * rounding), still ignoring padding. */
static int equal_elem(const struct rtype *t, const void *a, const void *b, int bits)
{
    switch (t->vk) {
    case VK_INT: return !memcmp(a, b, (size_t)t->width);
    case VK_BOOL:
    case VK_BYTE: return *(const unsigned char *)a == *(const unsigned char *)b;
    case VK_F32: return bits ? !memcmp(a, b, 4) : *(const float *)a == *(const float *)b;
    case VK_F64: return bits ? !memcmp(a, b, 8) : *(const double *)a == *(const double *)b;
    case VK_F80: return bits ? !memcmp(a, b, 10)
                             : *(const long double *)a == *(const long double *)b;
    case VK_C32: return bits ? !memcmp(a, b, 8)
                             : *(const float _Complex *)a == *(const float _Complex *)b;
    case VK_C64: return bits ? !memcmp(a, b, 16)
                             : *(const double _Complex *)a == *(const double _Complex *)b;
    case VK_C80: {
        const long double *x = a, *y = b; /* real part, then imaginary part */
        return bits ? !memcmp(x, y, 10) && !memcmp(x + 1, y + 1, 10)
                    : x[0] == y[0] && x[1] == y[1];
    }
#define PAIR_EQ(S) \
    return ((const S *)a)->v == ((const S *)b)->v && ((const S *)a)->i == ((const S *)b)->i
    case VK_P_FLOAT: PAIR_EQ(struct p_float);
    case VK_P_DOUBLE: PAIR_EQ(struct p_double);
    case VK_P_LONG: PAIR_EQ(struct p_long);
    case VK_P_INT: PAIR_EQ(struct p_int);
    case VK_P_SHORT: PAIR_EQ(struct p_short);
    case VK_P_LDOUBLE: PAIR_EQ(struct p_ldouble);
#undef PAIR_EQ
    }
    return 0;
}

/* A readable element, for failure messages. */
static const char *show_elem(const struct rtype *t, const void *p, char *out, size_t len)
{
    switch (t->vk) {
    case VK_INT: {
        uint64_t v = 0;
        memcpy(&v, p, (size_t)t->width);
        if (t->is_signed) snprintf(out, len, "%lld", (long long)sign_extend(v, t->width));
        else snprintf(out, len, "%llu (0x%llx)", (unsigned long long)v, (unsigned long long)v);
        break;
    }
    case VK_BOOL:
    case VK_BYTE: snprintf(out, len, "0x%02x", *(const unsigned char *)p); break;
    case VK_F32: snprintf(out, len, "%.9g", *(const float *)p); break;
    case VK_F64: snprintf(out, len, "%.17g", *(const double *)p); break;
    case VK_F80: snprintf(out, len, "%.21Lg", *(const long double *)p); break;
    case VK_C32: snprintf(out, len, "(%.9g, %.9g)", crealf(*(const float _Complex *)p),
                          cimagf(*(const float _Complex *)p)); break;
    case VK_C64: snprintf(out, len, "(%.17g, %.17g)", creal(*(const double _Complex *)p),
                          cimag(*(const double _Complex *)p)); break;
    case VK_C80: snprintf(out, len, "(%.21Lg, %.21Lg)", creall(*(const long double _Complex *)p),
                          cimagl(*(const long double _Complex *)p)); break;
    case VK_P_FLOAT: snprintf(out, len, "{%g, %d}", ((const struct p_float *)p)->v,
                              ((const struct p_float *)p)->i); break;
    case VK_P_DOUBLE: snprintf(out, len, "{%g, %d}", ((const struct p_double *)p)->v,
                               ((const struct p_double *)p)->i); break;
    case VK_P_LONG: snprintf(out, len, "{%ld, %d}", ((const struct p_long *)p)->v,
                             ((const struct p_long *)p)->i); break;
    case VK_P_INT: snprintf(out, len, "{%d, %d}", ((const struct p_int *)p)->v,
                            ((const struct p_int *)p)->i); break;
    case VK_P_SHORT: snprintf(out, len, "{%d, %d}", ((const struct p_short *)p)->v,
                              ((const struct p_short *)p)->i); break;
    case VK_P_LDOUBLE: snprintf(out, len, "{%Lg, %d}", ((const struct p_ldouble *)p)->v,
                                ((const struct p_ldouble *)p)->i); break;
    }
    return out;
}

/* ---- Buffers ----------------------------------------------------------- */

/* A receive buffer exactly as long as count elements need (the last one up
 * to its true extent: the padding of MPI_DOUBLE_INT & co. may be missing in
 * a user's buffer), between two guards that must stay untouched. */
struct rbuf {
    unsigned char *mem, *data;
    size_t span;
};

static void rbuf_alloc(struct rbuf *b, const struct rtype *t, size_t count)
{
    b->span = count ? (count - 1) * t->extent + t->true_extent : 0;
    b->mem = malloc(b->span + 2 * GUARD);
    CHECK(b->mem != NULL, "out of memory for %zu bytes", b->span);
    memset(b->mem, SENTINEL, b->span + 2 * GUARD);
    b->data = b->mem + GUARD;
}

static void rbuf_check_guards(const struct rbuf *b, const char *what)
{
    for (size_t k = 0; k < GUARD; k++) {
        CHECK(b->mem[k] == SENTINEL, "%s: byte %zu before the buffer overwritten", what,
              GUARD - k);
        CHECK(b->mem[GUARD + b->span + k] == SENTINEL,
              "%s: byte %zu after the buffer's last element overwritten", what, k);
    }
}

/* rank's whole input vector, generated into dst (count * extent bytes). */
static void gen_vector(const struct rtype *t, enum op_id op, int rank, size_t count,
                       uint64_t salt, int random_fp, unsigned char *dst)
{
    for (size_t i = 0; i < count; i++)
        gen_elem(t, op, rank, i, salt, random_fp, dst + i * t->extent);
}

/* The expected result, combining the ranks' inputs in rank order. */
static unsigned char *expected_vector(const struct rtype *t, enum op_id op, int size,
                                      size_t count, uint64_t salt)
{
    unsigned char *exp = malloc(count * t->extent + 1), tmp[64];
    CHECK(exp != NULL && t->extent <= sizeof tmp, "out of memory");
    for (size_t i = 0; i < count; i++) {
        unsigned char *e = exp + i * t->extent;
        gen_elem(t, op, 0, i, salt, 0, e);
        for (int r = 1; r < size; r++) {
            gen_elem(t, op, r, i, salt, 0, tmp);
            combine_elem(t, op, e, tmp);
        }
    }
    return exp;
}

/* The first element where got and exp differ by value, or -1. */
static long first_mismatch(const struct rtype *t, const unsigned char *got,
                           const unsigned char *exp, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!equal_elem(t, got + i * t->extent, exp + i * t->extent, 0)) return (long)i;
    return -1;
}

static void check_vector(const struct rtype *t, const unsigned char *got,
                         const unsigned char *exp, size_t count, const char *what)
{
    long i = first_mismatch(t, got, exp, count);
    char g[96], e[96];
    CHECK(i < 0, "%s: element %ld of %zu is %s, expected %s", what, i, count,
          show_elem(t, got + (size_t)i * t->extent, g, sizeof g),
          show_elem(t, exp + (size_t)i * t->extent, e, sizeof e));
}

/* ---- One checked reduction --------------------------------------------- */

/* Runs MPI_Reduce at `root` (or MPI_Allreduce if root < 0) of count elements
 * of t with op, optionally in place, and checks the result, the guards, the
 * untouched send buffer and (where the host MPI is right) PMPI_'s answer. */
static void run_reduce(MPI_Comm comm, const char *cname, const struct rtype *t, enum op_id op,
                       size_t count, int root, int in_place, uint64_t salt)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int allreduce = root < 0, receives = allreduce || rank == root;
    /* Where the host MPI serves MPI_ itself (the fallback tests), its known
     * wrong answers are not strata's to check, and its known crash is
     * avoided. */
    if ((node_opt.expect_host || size == 1) &&
        (host_known_bad(t, op) || host_inplace_crash(allreduce, in_place, root, count * t->extent)))
        return;
    char what[256];
    snprintf(what, sizeof what, "%s: %s%s %s on %s, count %zu", cname,
             allreduce ? "Allreduce" : "Reduce", in_place ? " in place" : "", op_names[op],
             t->name, count);
    if (!allreduce) snprintf(what + strlen(what), sizeof what - strlen(what), ", root %d", root);

    size_t bytes = count * t->extent;
    unsigned char *send = malloc(bytes + 1), *send_copy = malloc(bytes + 1);
    CHECK(send && send_copy, "out of memory");
    gen_vector(t, op, rank, count, salt, 0, send);
    memcpy(send_copy, send, bytes);

    struct rbuf recv = {0};
    if (receives) rbuf_alloc(&recv, t, count);
    int my_in_place = in_place && receives;
    if (my_in_place && count) memcpy(recv.data, send, recv.span);

    const void *sbuf = my_in_place ? MPI_IN_PLACE : send;
    /* Non-roots pass NULL: recvbuf is not significant there. */
    void *rb = receives ? recv.data : NULL;
    int rc = allreduce ? MPI_Allreduce(sbuf, rb, (int)count, t->type, op_handle(op), comm)
                       : MPI_Reduce(sbuf, rb, (int)count, t->type, op_handle(op), root, comm);
    CHECK(rc == MPI_SUCCESS, "%s: returned %d", what, rc);
    CHECK(!memcmp(send, send_copy, bytes), "%s: the send buffer changed", what);

    unsigned char *exp = NULL;
    if (receives) {
        rbuf_check_guards(&recv, what);
        exp = expected_vector(t, op, size, count, salt);
        check_vector(t, recv.data, exp, count, what);
    }

    if (node_opt.host_check && (node_opt.host_survey || !host_known_bad(t, op))) {
        /* The host MPI, never in place (MPICH's in-place Reduce at a root
         * other than 0 crashes), into a full-extent buffer. */
        unsigned char *host = receives ? malloc(bytes + 1) : NULL;
        CHECK(!receives || host, "out of memory");
        rc = allreduce ? PMPI_Allreduce(send, host, (int)count, t->type, op_handle(op), comm)
                       : PMPI_Reduce(send, host, (int)count, t->type, op_handle(op), root, comm);
        CHECK(rc == MPI_SUCCESS, "%s: PMPI_ returned %d", what, rc);
        long bad = receives ? first_mismatch(t, host, exp, count) : -1;
        if (bad >= 0) {
            char g[96], e[96];
            show_elem(t, host + (size_t)bad * t->extent, g, sizeof g);
            show_elem(t, exp + (size_t)bad * t->extent, e, sizeof e);
            /* --host-survey lists the host's wrong answers (to keep
             * host_known_bad() up to date) instead of failing. */
            CHECK(node_opt.host_survey,
                  "%s: the host MPI (PMPI_) gives %s at element %ld, expected %s: a host bug "
                  "not listed in host_known_bad()?", what, g, bad, e);
            printf("HOST-WRONG%s %s %s: %s (count %zu, element %ld: %s, expected %s)\n",
                   host_known_bad(t, op) ? " (known)" : "", op_names[op], t->name,
                   allreduce ? "Allreduce" : "Reduce", count, bad, g, e);
        }
        free(host);
    }
    free(exp);
    free(recv.mem);
    free(send);
    free(send_copy);
}

void node_int_sum_check(MPI_Comm comm, const char *cname, int count, int root, uint64_t salt)
{
    init_types();
    run_reduce(comm, cname, type_named("MPI_INT"), O_SUM, (size_t)count, root, 0, salt);
}

/* ---- The suites ---------------------------------------------------------- */

static const size_t small_counts[] = {0, 1, 5, 1000, 4097};

/* strata must have a kernel for every standard (op, type) pair: a missing one
 * would silently hand the call to the host MPI. */
static void check_kernels_exist(void)
{
    for (int ti = 0; ti < nrtypes; ti++)
        for (int o = 0; o < NOPS; o++)
            if (cat_ops(rtypes[ti].cat) & (1u << o))
                CHECK(strata_reduce_kernel(op_handle((enum op_id)o), rtypes[ti].type) != NULL,
                      "strata has no kernel for %s on %s", op_names[o], rtypes[ti].name);
}

void node_reduce_suite(MPI_Comm comm, const char *cname, int allreduce, int in_place)
{
    init_types();
    check_kernels_exist();
    int size;
    MPI_Comm_size(comm, &size);
    for (int ti = 0; ti < nrtypes; ti++) {
        const struct rtype *t = &rtypes[ti];
        if (!(node_opt.types & (1u << t->cat))) continue;
        for (int o = 0; o < NOPS; o++) {
            if (!(cat_ops(t->cat) & (1u << o))) continue;
            for (size_t c = 0; c < sizeof small_counts / sizeof small_counts[0]; c++) {
                if (allreduce) {
                    run_reduce(comm, cname, t, (enum op_id)o, small_counts[c], -1, in_place,
                               node_salt(20 + in_place, (uint64_t)ti, (uint64_t)o, c));
                    continue;
                }
                for (int root = 0; root < size; root++)
                    run_reduce(comm, cname, t, (enum op_id)o, small_counts[c], root, in_place,
                               node_salt(30 + in_place, (uint64_t)ti, (uint64_t)o,
                                         c * 4096 + (uint64_t)root));
            }
        }
    }
}

/* Large vectors: several pipeline chunks, counts that are not a multiple of
 * the chunk, padded pair types over the single-copy path. */
void node_reduce_large_suite(MPI_Comm comm, const char *cname)
{
    init_types();
    const struct {
        const char *type;
        enum op_id op;
        size_t count;
    } cases[] = {
        {"MPI_DOUBLE", O_SUM, 100000},
        {"MPI_DOUBLE", O_SUM, (1u << 17) + 5},    /* 1 MiB + 40 bytes */
        {"MPI_DOUBLE", O_MAX, 100000},
        {"MPI_INT", O_SUM, 100003},
        {"MPI_UNSIGNED_CHAR", O_SUM, (1u << 20) + 3},
        {"MPI_UINT64_T", O_MIN, 70001},
        {"MPI_DOUBLE_INT", O_MINLOC, 100000},
        {"MPI_LONG_DOUBLE_INT", O_MAXLOC, 40001},
        {"MPI_SHORT_INT", O_MINLOC, 100001},
        {"MPI_C_DOUBLE_COMPLEX", O_PROD, 65537},
        {"MPI_LONG_DOUBLE", O_SUM, 70000},
        {"MPI_C_BOOL", O_LXOR, 300001},
        {"MPI_LONG", O_BXOR, 99999},
    };
    int size;
    MPI_Comm_size(comm, &size);
    int *roots = malloc(sizeof(int) * (size_t)size);
    CHECK(roots != NULL, "out of memory");
    int nroots = node_roots(size, roots);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct rtype *t = type_named(cases[k].type);
        if (node_opt.lean_large) {
            /* Cases alternate between Allreduce and Reduce at a root taken
             * in turn, in place every other pair: each case once. */
            const int in_place = (int)(k / 2 % 2), root = k % 2 ? roots[k / 2 % (size_t)nroots] : -1;
            run_reduce(comm, cname, t, cases[k].op, cases[k].count, root, in_place,
                       node_salt(46 + in_place, k, (uint64_t)(root + 1), 0));
            continue;
        }
        for (int in_place = 0; in_place < 2; in_place++) {
            run_reduce(comm, cname, t, cases[k].op, cases[k].count, -1, in_place,
                       node_salt(40 + in_place, k, 0, 0));
            for (int i = 0; i < nroots; i++)
                run_reduce(comm, cname, t, cases[k].op, cases[k].count, roots[i], in_place,
                           node_salt(42 + in_place, k, (uint64_t)roots[i], 0));
        }
    }
    /* 4 MiB of doubles once, Allreduce. */
    run_reduce(comm, cname, type_named("MPI_DOUBLE"), O_SUM, (1u << 19) + 3, -1, 0,
               node_salt(44, 0, 0, 0));
    free(roots);
}

/* ---- Floating-point order -------------------------------------------------- */

/* The result strata documents (docs/DESIGN.md, "Floating-point order"): at
 * each level, a group combines its operands left to right in the order of
 * the groups they stand for, ascending by lowest rank.  Computed from the
 * hierarchy's partition alone (group_of), not from strata's member lists. */
static void documented_order(const struct strata_hier *h, const struct rtype *t, enum op_id op,
                             size_t count, uint64_t salt, int size, unsigned char *out)
{
    size_t e = t->extent;
    unsigned char *val = malloc((size_t)size * e), *next = malloc((size_t)size * e),
                  *x = malloc(e);
    int *lowest = malloc(sizeof(int) * (size_t)size), *seen = malloc(sizeof(int) * (size_t)size);
    CHECK(val && next && x && lowest && seen, "out of memory");
    for (size_t i = 0; i < count; i++) {
        /* Level 0: ranks in ascending order within their group. */
        const struct strata_hier_level *L = &h->level[0];
        for (int g = 0; g < L->ngroups; g++) seen[g] = 0;
        for (int r = 0; r < size; r++) {
            int g = L->group_of[r];
            gen_elem(t, op, r, i, salt, 1, x);
            if (!seen[g]) {
                memcpy(val + (size_t)g * e, x, e);
                seen[g] = 1;
                lowest[g] = r;
            } else {
                combine_elem(t, op, val + (size_t)g * e, x);
            }
        }
        int ngroups = L->ngroups;
        for (int l = 1; l < h->nlevels; l++) {
            const struct strata_hier_level *U = &h->level[l];
            int *lowest_up = malloc(sizeof(int) * (size_t)U->ngroups);
            CHECK(lowest_up != NULL, "out of memory");
            for (int g = 0; g < U->ngroups; g++) seen[g] = 0;
            /* Lower groups by ascending lowest rank: scan ranks in order and
             * take each lower group at its lowest rank. */
            for (int r = 0; r < size; r++) {
                int lower = -1;
                for (int g = 0; g < ngroups; g++)
                    if (lowest[g] == r) lower = g;
                if (lower < 0) continue;
                int up = U->group_of[r];
                if (!seen[up]) {
                    memcpy(next + (size_t)up * e, val + (size_t)lower * e, e);
                    seen[up] = 1;
                    lowest_up[up] = r;
                } else {
                    combine_elem(t, op, next + (size_t)up * e, val + (size_t)lower * e);
                }
            }
            ngroups = U->ngroups;
            memcpy(val, next, (size_t)ngroups * e);
            memcpy(lowest, lowest_up, sizeof(int) * (size_t)ngroups);
            free(lowest_up);
        }
        CHECK(ngroups == 1, "the top level of the hierarchy has %d groups", ngroups);
        memcpy(out + i * e, val, e);
    }
    free(val);
    free(next);
    free(x);
    free(lowest);
    free(seen);
}

static void check_bits(const struct rtype *t, const unsigned char *got, const unsigned char *exp,
                       size_t count, const char *what)
{
    char g[96], e[96];
    for (size_t i = 0; i < count; i++)
        CHECK(equal_elem(t, got + i * t->extent, exp + i * t->extent, 1),
              "%s: element %zu is %s, expected the bits of %s", what, i,
              show_elem(t, got + i * t->extent, g, sizeof g),
              show_elem(t, exp + i * t->extent, e, sizeof e));
}

/* Random floating values: the result must be bit-identical on every rank,
 * from one call to the next, in place or not, for every root of Reduce, and
 * equal to a fold in the documented order.  Only where strata serves. */
void node_fp_suite(MPI_Comm comm, const char *cname)
{
    init_types();
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const struct {
        const char *type;
        enum op_id op;
    } cases[] = {{"MPI_DOUBLE", O_SUM}, {"MPI_FLOAT", O_SUM}, {"MPI_DOUBLE", O_PROD},
                 {"MPI_LONG_DOUBLE", O_SUM}, {"MPI_C_DOUBLE_COMPLEX", O_SUM}};
    size_t counts[] = {1, 7, 1000, 4097, 100000, (1u << 17) + 5};
    size_t ncounts = node_opt.large ? 6 : 4;

    MPI_Barrier(comm); /* the context exists: the lookup below is local */
    struct strata_ctx *ctx = strata_ctx_get(comm);
    /* These are strata's promises (docs/DESIGN.md), not the host MPI's. */
    if (!ctx || strata_route_refusal(ctx, STRATA_COLL_ALLREDUCE) != NULL) return;

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct rtype *t = type_named(cases[k].type);
        enum op_id op = cases[k].op;
        for (size_t c = 0; c < ncounts; c++) {
            size_t count = counts[c], bytes = count * t->extent;
            uint64_t salt = node_salt(50, k, c, 0);
            char what[200];
            snprintf(what, sizeof what, "%s: random %s %s, count %zu", cname, t->name,
                     op_names[op], count);
            unsigned char *send = malloc(bytes), *r1 = calloc(1, bytes), *r2 = calloc(1, bytes),
                          *ref = calloc(1, bytes);
            CHECK(send && r1 && r2 && ref, "out of memory");
            gen_vector(t, op, rank, count, salt, 1, send);

            MPI_Allreduce(send, r1, (int)count, t->type, op_handle(op), comm);
            MPI_Allreduce(send, r2, (int)count, t->type, op_handle(op), comm);
            check_bits(t, r2, r1, count, what); /* call to call */

            /* Rank to rank: everyone against rank 0's result. */
            memcpy(ref, r1, bytes);
            PMPI_Bcast(ref, (int)bytes, MPI_BYTE, 0, comm);
            check_bits(t, r1, ref, count, what);

            memcpy(r2, send, bytes);
            MPI_Allreduce(MPI_IN_PLACE, r2, (int)count, t->type, op_handle(op), comm);
            check_bits(t, r2, r1, count, what);

            for (int root = 0; root < size; root++) {
                memset(r2, 0, bytes);
                MPI_Reduce(send, rank == root ? r2 : NULL, (int)count, t->type, op_handle(op),
                           root, comm);
                if (rank == root) check_bits(t, r2, r1, count, what);
            }

            documented_order(&ctx->hier, t, op, count, salt, size, ref);
            char w2[260];
            snprintf(w2, sizeof w2, "%s (against the documented order)", what);
            check_bits(t, r1, ref, count, w2);
            free(send);
            free(r1);
            free(r2);
            free(ref);
        }
    }
}

/* ---- User-defined ops (the host MPI's business) ---------------------------- */

static unsigned gcd_u(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Commutative: greatest common divisor, on a predefined type. */
static void gcd_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = gcd_u(a[i], b[i]);
    (void)type;
}

/* Not commutative: 2x2 matrix product modulo 2^32, inout = in * inout
 * (in holds the lower ranks' product). */
static void matmul(const unsigned *a, const unsigned *b, unsigned *out)
{
    unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(out, r, sizeof r);
}

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++) matmul(a + 4 * i, b + 4 * i, b + 4 * i);
    (void)type;
}

static unsigned gcd_input(int rank, size_t i, uint64_t salt)
{
    /* Products of small primes, so common divisors are frequent. */
    static const unsigned primes[6] = {2, 3, 5, 7, 11, 13};
    uint64_t h = node_word(rank, i, salt);
    unsigned v = 1;
    for (int p = 0; p < 6; p++, h >>= 2) v *= (h & 3) == 0 ? 1 : primes[p];
    return v;
}

void node_userop_suite(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op gcd_op, mat_op;
    MPI_Op_create(gcd_fn, 1, &gcd_op);
    MPI_Op_create(matmul_fn, 0, &mat_op);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    /* strata has no kernel for these: they must reach the host MPI. */
    CHECK(strata_reduce_kernel(gcd_op, MPI_UNSIGNED) == NULL &&
              strata_reduce_kernel(mat_op, mat) == NULL &&
              strata_reduce_kernel(MPI_SUM, mat) == NULL,
          "strata claims a kernel for a user-defined op or a derived datatype");

    const size_t counts[] = {1, 5, 4097};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t n = counts[c];
        uint64_t salt = node_salt(60, c, 0, 0);
        unsigned *in = malloc(n * 16), *out = malloc(n * 16), *exp = malloc(n * 16);
        CHECK(in && out && exp, "out of memory");

        /* gcd on MPI_UNSIGNED. */
        for (size_t i = 0; i < n; i++) {
            in[i] = gcd_input(rank, i, salt);
            exp[i] = gcd_input(0, i, salt);
            for (int r = 1; r < size; r++) exp[i] = gcd_u(exp[i], gcd_input(r, i, salt));
        }
        for (int root = -1; root < size; root++) {
            memset(out, 0, n * 4);
            if (root < 0) MPI_Allreduce(in, out, (int)n, MPI_UNSIGNED, gcd_op, comm);
            else MPI_Reduce(in, out, (int)n, MPI_UNSIGNED, gcd_op, root, comm);
            if (root < 0 || rank == root)
                for (size_t i = 0; i < n; i++)
                    CHECK(out[i] == exp[i], "%s: user op gcd, count %zu, root %d: [%zu] = %u, "
                          "expected %u", cname, n, root, i, out[i], exp[i]);
        }
        memcpy(out, in, n * 4);
        MPI_Allreduce(MPI_IN_PLACE, out, (int)n, MPI_UNSIGNED, gcd_op, comm);
        for (size_t i = 0; i < n; i++)
            CHECK(out[i] == exp[i], "%s: user op gcd in place, count %zu: [%zu] = %u", cname, n,
                  i, out[i]);

        /* Matrix product in rank order, on a derived datatype. */
        for (size_t i = 0; i < n; i++) {
            for (int r = 0; r < size; r++) {
                unsigned m[4];
                for (int k = 0; k < 4; k++)
                    m[k] = (unsigned)node_word(r, 4 * i + (size_t)k, salt ^ 7);
                if (r == rank) memcpy(in + 4 * i, m, sizeof m);
                if (r == 0) memcpy(exp + 4 * i, m, sizeof m);
                else matmul(exp + 4 * i, m, exp + 4 * i);
            }
        }
        for (int root = -1; root < size; root++) {
            memset(out, 0, n * 16);
            if (root < 0) MPI_Allreduce(in, out, (int)n, mat, mat_op, comm);
            else MPI_Reduce(in, out, (int)n, mat, mat_op, root, comm);
            if (root < 0 || rank == root)
                CHECK(!memcmp(out, exp, n * 16),
                      "%s: non-commutative user op (matrix product), count %zu, root %d: "
                      "wrong product", cname, n, root);
        }
        free(in);
        free(out);
        free(exp);
    }
    MPI_Type_free(&mat);
    MPI_Op_free(&gcd_op);
    MPI_Op_free(&mat_op);
}
