/* Inputs, and what of an output counts.
 *
 * Reduction inputs make every result exact in any combining order, because
 * strata combines in another order than the host MPI (docs/DESIGN.md,
 * "Floating-point order"): integers wrap, floating sums add integers,
 * products multiply powers of two (Gaussian integers for complex ones),
 * MIN/MAX/MINLOC/MAXLOC are order-free.  Where a host MPI is known to be
 * wrong (shared/MACHINE-NOTES.md) the values stay out of the range it gets
 * wrong, so that the host can stay the reference.  Everything else is bytes
 * of a stream: the collectives that move data must move them unchanged. */
#include <complex.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "testutil.h"

void fuzz_fill_bytes(unsigned char *buf, size_t n, uint64_t seed)
{
    test_fill_words(buf, n, fuzz_mix(seed));
}

/* Host MPI bugs the inputs keep clear of (shared/MACHINE-NOTES.md):
 * Open MPI 4.1.4's op/avx saturates 8- and 16-bit sums, and its MIN/MAX on
 * MPI_UNSIGNED_LONG and MPI_OFFSET is wrong for values with the top bit
 * set; MPICH 4.0.2 compares unsigned types as signed in MIN/MAX. */
static int host_sum_saturates(const struct fuzz_base *b)
{
#if defined(OPEN_MPI)
    return b->kind == FK_INT && b->width <= 2;
#else
    (void)b;
    return 0;
#endif
}

static int host_minmax_top_bit(const struct fuzz_base *b)
{
#if defined(OPEN_MPI)
    return b->type == MPI_UNSIGNED_LONG || b->type == MPI_OFFSET;
#elif defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
    return (b->kind == FK_INT || b->kind == FK_MULTI) && !b->is_signed;
#else
    (void)b;
    return 0;
#endif
}

static void gen_int(const struct fuzz_base *b, enum fuzz_op op, int nranks, uint64_t h,
                    unsigned char *dst)
{
    int bits = 8 * b->width;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1, v = h, h2 = fuzz_mix(h);
    switch (op) {
    case OP_PROD: v = (h2 & 3) ? (v | 1) : (v & ~1ull); break; /* mostly odd: products wrap */
    case OP_LAND:
    case OP_LOR:
    case OP_LXOR:
        /* Zero, the top bit alone (low bytes zero), or anything odd. */
        v = (h2 % 3 == 0) ? 0 : (h2 % 3 == 1) ? 1ull << (bits - 1) : (h | 1);
        break;
    case OP_SUM:
        if (host_sum_saturates(b)) {
            uint64_t limit = (b->is_signed ? (mask >> 1) : mask) / (uint64_t)nranks;
            int64_t s = (int64_t)(h % (limit + 1));
            if (b->is_signed && (h2 & 1)) s = -s;
            v = (uint64_t)s;
        }
        break;
    case OP_MAX:
    case OP_MIN:
        if (host_minmax_top_bit(b)) v &= mask >> 1;
        break;
    default: break;
    }
    v &= mask;
    memcpy(dst, &v, (size_t)b->width); /* little-endian */
}

/* A floating value for op: integers for sums, signed powers of two for
 * products, anything finite (never -0) for MIN/MAX. */
static long double gen_real(enum fuzz_op op, int single, uint64_t h)
{
    static const long double factors[6] = {1, -1, 2, -2, 0.5, -0.5};
    if (op == OP_SUM) {
        long range = single ? 4096 : 1L << 20;
        return (long double)((long)(h % (uint64_t)(2 * range + 1)) - range);
    }
    if (op == OP_PROD) return factors[h % 6];
    return ldexpl((long double)(int32_t)h, (int)((h >> 40) % 41) - 20);
}

static void gen_pair(const struct fuzz_base *b, uint64_t h, unsigned char *dst)
{
    /* Three values, so that equal values with different indices are common. */
    int k = (int)(h % 3), idx = (int)((h >> 8) % 2001) - 1000;
#define PUT(S, VT, a, b, c)                                             \
    do {                                                                \
        const VT vals[3] = {a, b, c};                                   \
        S p;                                                            \
        memcpy(&p, dst, sizeof p); /* keeps the padding bytes */        \
        p.v = vals[k];                                                  \
        p.i = idx;                                                      \
        memcpy(dst, &p, sizeof p);                                      \
    } while (0)
    if (b->type == MPI_FLOAT_INT) PUT(struct p_float, float, -0.5f, 1.25f, 7.0f);
    else if (b->type == MPI_DOUBLE_INT) PUT(struct p_double, double, -1e300, 0.125, 3.5);
    else if (b->type == MPI_LONG_INT) PUT(struct p_long, long, -(1L << 62), 5, (1L << 50) + 1);
    else if (b->type == MPI_2INT) PUT(struct p_int, int, INT_MIN, 0, INT_MAX);
    else if (b->type == MPI_SHORT_INT) PUT(struct p_short, short, -32768, 2, 32767);
    else PUT(struct p_ldouble, long double, -1e4000L, 0.1L, 2.5L);
#undef PUT
}

static void gen_value(const struct fuzz_base *b, enum fuzz_op op, int nranks, uint64_t h,
                      unsigned char *dst)
{
    uint64_t h2 = fuzz_mix(h ^ 0x5bd1e995u);
    switch (b->kind) {
    case FK_INT:
    case FK_MULTI: gen_int(b, op, nranks, h, dst); return;
    case FK_BOOL: {
        bool v = (h % 3) != 0;
        memcpy(dst, &v, 1);
        return;
    }
    case FK_BYTE:
    case FK_TEXT: memcpy(dst, &h, b->size < 8 ? b->size : 8); return;
    case FK_PAIR: gen_pair(b, h, dst); return;
    case FK_FLOAT: {
        long double f = gen_real(op, b->width == 4, h);
        if (b->width == 4) {
            float x = (float)f;
            memcpy(dst, &x, sizeof x);
        } else if (b->width == 8) {
            double x = (double)f;
            memcpy(dst, &x, sizeof x);
        } else {
            memcpy(dst, &f, 10); /* the padding keeps its random bytes */
        }
        return;
    }
    case FK_COMPLEX: {
        long double re, im;
        if (op == OP_PROD) {
            /* Gaussian integers with parts in {-2, -1, 1, 2}: exact products. */
            static const long double parts[4] = {-2, -1, 1, 2};
            re = parts[h % 4];
            im = parts[(h >> 2) % 4];
        } else {
            re = gen_real(op, b->width == 4, h);
            im = gen_real(op, b->width == 4, h2);
        }
        if (b->width == 4) {
            float _Complex z = CMPLXF((float)re, (float)im);
            memcpy(dst, &z, sizeof z);
        } else if (b->width == 8) {
            double _Complex z = CMPLX((double)re, (double)im);
            memcpy(dst, &z, sizeof z);
        } else {
            memcpy(dst, &re, 10);
            memcpy(dst + sizeof(long double), &im, 10);
        }
        return;
    }
    }
}

void fuzz_fill_values(unsigned char *buf, const struct fuzz_layout *l, size_t count,
                      enum fuzz_op op, int comm_size, uint64_t seed)
{
    fuzz_fill_bytes(buf, count * l->extent, seed);
    uint64_t base = fuzz_mix(seed ^ 0x76616c7565ull);
    for (size_t i = 0; i < count; i++)
        for (int j = 0; j < l->per; j++) {
            uint64_t h = fuzz_mix(base + i * (size_t)l->per + (size_t)j);
            gen_value(l->base, op, comm_size, h, buf + i * l->extent + l->off[j]);
        }
}

int fuzz_padding_byte(const struct fuzz_layout *l, size_t offset, int reduction)
{
    const struct fuzz_base *b = l->base;
    size_t within = offset % l->extent;
    for (int j = 0; j < l->per; j++) {
        if (within < l->off[j] || within >= l->off[j] + b->extent) continue;
        size_t inner = within - l->off[j];
        for (int u = 0; u < b->nunused; u++)
            if (inner >= b->unused[u].off && inner < b->unused[u].off + b->unused[u].len)
                return 1;
        if (!reduction) return 0; /* typemap bytes are copied, holes left alone */
        for (int v = 0; v < b->nvalue; v++)
            if (inner >= b->value[v].off && inner < b->value[v].off + b->value[v].len) return 0;
        return 1;
    }
    return 0; /* a gap of the layout: nobody may write it */
}

static long double load_real(const unsigned char *p, int width)
{
    if (width == 4) {
        float x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    if (width == 8) {
        double x;
        memcpy(&x, p, sizeof x);
        return x;
    }
    long double x = 0;
    memcpy(&x, p, 10);
    return x;
}

int fuzz_same_float(const struct fuzz_layout *l, const unsigned char *a, const unsigned char *b,
                    size_t offset)
{
    const struct fuzz_base *base = l->base;
    if (base->kind != FK_FLOAT && base->kind != FK_COMPLEX) return 0;
    size_t within = offset % l->extent, elem = offset - within;
    for (int j = 0; j < l->per; j++) {
        if (within < l->off[j] || within >= l->off[j] + base->extent) continue;
        size_t at = elem + l->off[j];
        for (int v = 0; v < base->nvalue; v++) {
            size_t o = at + base->value[v].off;
            if (load_real(a + o, base->width) != load_real(b + o, base->width)) return 0;
        }
        return 1;
    }
    return 0;
}

void fuzz_show_base(const struct fuzz_base *b, const unsigned char *p, char *out, size_t len)
{
    switch (b->kind) {
    case FK_INT:
    case FK_MULTI: {
        uint64_t v = 0;
        memcpy(&v, p, (size_t)b->width);
        int shift = 64 - 8 * b->width;
        if (b->is_signed && shift) snprintf(out, len, "%lld", (long long)((int64_t)(v << shift) >> shift));
        else if (b->is_signed) snprintf(out, len, "%lld", (long long)v);
        else snprintf(out, len, "%llu", (unsigned long long)v);
        return;
    }
    case FK_FLOAT: {
        long double f;
        if (b->width == 4) { float x; memcpy(&x, p, 4); f = x; }
        else if (b->width == 8) { double x; memcpy(&x, p, 8); f = x; }
        else memcpy(&f, p, sizeof f);
        snprintf(out, len, "%.21Lg", f);
        return;
    }
    case FK_PAIR: {
        int idx;
        memcpy(&idx, p + b->value[1].off, sizeof idx);
        snprintf(out, len, "index %d", idx);
        return;
    }
    default: {
        size_t n = 0;
        for (size_t i = 0; i < b->size && i < 16 && n + 3 < len; i++)
            n += (size_t)snprintf(out + n, len - n, "%02x", p[i]);
        return;
    }
    }
}
