/* The fuzzer's datatypes and user ops: every predefined C datatype, and
 * over each of them four derived shapes (contiguous, vector with gaps,
 * resized, a leading gap), made once at start; two user ops (a commutative
 * wrapping sum, and a non-commutative composition of affine maps) that work
 * on any of those made of integers. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "testutil.h"

#define MAX_BASES 40

int fuzz_nbases;
static struct fuzz_base bases[MAX_BASES];
static struct fuzz_layout layouts[MAX_BASES][FUZZ_NSHAPES];
static MPI_Op user_ops[2] = {MPI_OP_NULL, MPI_OP_NULL};

static void add(const char *name, MPI_Datatype type, enum fuzz_kind kind, int width,
                int is_signed, size_t align)
{
    CHECK(fuzz_nbases < MAX_BASES, "too many types");
    struct fuzz_base *b = &bases[fuzz_nbases++];
    MPI_Aint lb, extent;
    int size;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_size(type, &size);
    CHECK(lb == 0 && size > 0, "%s: lb %ld, size %d", name, (long)lb, size);
    *b = (struct fuzz_base){name, type, kind, width, is_signed, (size_t)size, (size_t)extent,
                            align, 1, {{0, (size_t)size}, {0, 0}}, 0, {{0, 0}, {0, 0}},
                            1, {{0, (size_t)size}, {0, 0}}};
    /* The bytes a reduction defines: an 80-bit long double leaves 6 bytes of
     * padding, pairs leave what lies between and after their two fields. */
    if (kind == FK_FLOAT || kind == FK_COMPLEX) {
        b->value[0].len = (size_t)width;
        if (kind == FK_COMPLEX) {
            b->nvalue = 2;
            b->value[1].off = (size_t)size / 2;
            b->value[1].len = (size_t)width;
        }
        for (int v = 0; v < b->nvalue && width == 10; v++, b->nunused++) {
            b->unused[v].off = b->value[v].off + 10;
            b->unused[v].len = sizeof(long double) - 10;
        }
    }
}

/* A pair: its value (vsize bytes in memory, vlen of them meaningful), then
 * an int at ioff. */
static void add_pair(const char *name, MPI_Datatype type, size_t vsize, size_t vlen,
                     size_t ioff, size_t align)
{
    add(name, type, FK_PAIR, 0, 1, align);
    struct fuzz_base *b = &bases[fuzz_nbases - 1];
    b->nvalue = 2;
    b->value[0].len = vlen;
    b->value[1].off = ioff;
    b->value[1].len = sizeof(int);
    if (vlen < vsize) {
        b->nunused = 1;
        b->unused[0].off = vlen;
        b->unused[0].len = vsize - vlen;
    }
    b->ntmap = 2;
    b->tmap[0].len = vsize;
    b->tmap[1].off = ioff;
    b->tmap[1].len = sizeof(int);
    CHECK(vsize + sizeof(int) == b->size, "%s: type map of %zu bytes, size %zu", name,
          vsize + sizeof(int), b->size);
}

static void make_layout(struct fuzz_layout *l, const struct fuzz_base *b, enum fuzz_shape sh)
{
    size_t e = b->extent;
    MPI_Datatype raw;
    *l = (struct fuzz_layout){b, sh, MPI_DATATYPE_NULL, 1, e, {0}, ""};
    switch (sh) {
    case SH_PLAIN:
        l->type = b->type;
        snprintf(l->name, sizeof l->name, "%s", b->name);
        return;
    case SH_CONTIG:
        MPI_Type_contiguous(3, b->type, &l->type);
        l->per = 3;
        l->extent = 3 * e;
        for (int j = 0; j < 3; j++) l->off[j] = (size_t)j * e;
        snprintf(l->name, sizeof l->name, "contiguous(3, %s)", b->name);
        break;
    case SH_VECTOR:
        MPI_Type_vector(2, 2, 3, b->type, &raw);
        MPI_Type_create_resized(raw, 0, (MPI_Aint)(6 * e), &l->type);
        MPI_Type_free(&raw);
        l->per = 4;
        l->extent = 6 * e;
        l->off[0] = 0, l->off[1] = e, l->off[2] = 3 * e, l->off[3] = 4 * e;
        snprintf(l->name, sizeof l->name, "vector(2 x 2 %s, stride 3) resized to 6", b->name);
        break;
    case SH_RESIZED:
        MPI_Type_create_resized(b->type, 0, (MPI_Aint)(2 * e), &l->type);
        l->extent = 2 * e;
        snprintf(l->name, sizeof l->name, "%s resized to 2", b->name);
        break;
    case SH_LEADGAP: {
        int one = 1;
        MPI_Aint disp = (MPI_Aint)e;
        MPI_Type_create_hindexed(1, &one, &disp, b->type, &raw);
        MPI_Type_create_resized(raw, 0, (MPI_Aint)(3 * e), &l->type);
        MPI_Type_free(&raw);
        l->extent = 3 * e;
        l->off[0] = e;
        snprintf(l->name, sizeof l->name, "%s at 1, resized to 3", b->name);
        break;
    }
    default: CHECK(0, "shape %d", (int)sh);
    }
    MPI_Type_commit(&l->type);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(l->type, &lb, &extent);
    CHECK(lb == 0 && (size_t)extent == l->extent, "%s: extent %ld", l->name, (long)extent);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type);
static void user_affine(void *in, void *inout, int *len, MPI_Datatype *type);

void fuzz_types_init(void)
{
#define INT_T(name, T, kind, sgn) add(#name, name, kind, (int)sizeof(T), sgn, _Alignof(T))
    INT_T(MPI_SIGNED_CHAR, signed char, FK_INT, 1);
    INT_T(MPI_UNSIGNED_CHAR, unsigned char, FK_INT, 0);
    INT_T(MPI_SHORT, short, FK_INT, 1);
    INT_T(MPI_UNSIGNED_SHORT, unsigned short, FK_INT, 0);
    INT_T(MPI_INT, int, FK_INT, 1);
    INT_T(MPI_UNSIGNED, unsigned, FK_INT, 0);
    INT_T(MPI_LONG, long, FK_INT, 1);
    INT_T(MPI_UNSIGNED_LONG, unsigned long, FK_INT, 0);
    INT_T(MPI_LONG_LONG, long long, FK_INT, 1);
    INT_T(MPI_UNSIGNED_LONG_LONG, unsigned long long, FK_INT, 0);
    INT_T(MPI_INT8_T, int8_t, FK_INT, 1);
    INT_T(MPI_UINT8_T, uint8_t, FK_INT, 0);
    INT_T(MPI_INT16_T, int16_t, FK_INT, 1);
    INT_T(MPI_UINT16_T, uint16_t, FK_INT, 0);
    INT_T(MPI_INT32_T, int32_t, FK_INT, 1);
    INT_T(MPI_UINT32_T, uint32_t, FK_INT, 0);
    INT_T(MPI_INT64_T, int64_t, FK_INT, 1);
    INT_T(MPI_UINT64_T, uint64_t, FK_INT, 0);
    INT_T(MPI_AINT, MPI_Aint, FK_MULTI, 1);
    INT_T(MPI_OFFSET, MPI_Offset, FK_MULTI, 1);
    INT_T(MPI_COUNT, MPI_Count, FK_MULTI, 1);
#undef INT_T
    add("MPI_FLOAT", MPI_FLOAT, FK_FLOAT, 4, 1, _Alignof(float));
    add("MPI_DOUBLE", MPI_DOUBLE, FK_FLOAT, 8, 1, _Alignof(double));
    add("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, FK_FLOAT, 10, 1, _Alignof(long double));
    add("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, FK_COMPLEX, 4, 1, _Alignof(float));
    add("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, FK_COMPLEX, 8, 1, _Alignof(double));
    add("MPI_C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, FK_COMPLEX, 10, 1,
        _Alignof(long double));
    add("MPI_C_BOOL", MPI_C_BOOL, FK_BOOL, 1, 0, 1);
    add("MPI_BYTE", MPI_BYTE, FK_BYTE, 1, 0, 1);
    add("MPI_CHAR", MPI_CHAR, FK_TEXT, 1, 1, 1);
    add("MPI_WCHAR", MPI_WCHAR, FK_TEXT, (int)sizeof(wchar_t), 1, _Alignof(wchar_t));
#define PAIR(name, S, vlen) \
    add_pair(#name, name, sizeof(((S *)0)->v), vlen, offsetof(S, i), _Alignof(S))
    PAIR(MPI_FLOAT_INT, struct p_float, 4);
    PAIR(MPI_DOUBLE_INT, struct p_double, 8);
    PAIR(MPI_LONG_INT, struct p_long, 8);
    PAIR(MPI_2INT, struct p_int, 4);
    PAIR(MPI_SHORT_INT, struct p_short, 2);
    PAIR(MPI_LONG_DOUBLE_INT, struct p_ldouble, 10);
#undef PAIR
    for (int i = 0; i < fuzz_nbases; i++)
        for (int s = 0; s < FUZZ_NSHAPES; s++) make_layout(&layouts[i][s], &bases[i], s);
    MPI_Op_create(user_sum, 1, &user_ops[0]);
    MPI_Op_create(user_affine, 0, &user_ops[1]);
}

void fuzz_types_free(void)
{
    for (int i = 0; i < fuzz_nbases; i++)
        for (int s = SH_PLAIN + 1; s < FUZZ_NSHAPES; s++) MPI_Type_free(&layouts[i][s].type);
    for (int i = 0; i < 2; i++) MPI_Op_free(&user_ops[i]);
}

const struct fuzz_base *fuzz_base(int i) { return &bases[i]; }

const struct fuzz_layout *fuzz_layout(int base, enum fuzz_shape shape)
{
    return &layouts[base][shape];
}

/* ---- Ops -------------------------------------------------------------------- */

static const char *op_names[FUZZ_NOPS] = {"MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN",
                                          "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_BAND",
                                          "MPI_BOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC",
                                          "user-sum", "user-affine"};

const char *fuzz_op_name(enum fuzz_op op) { return op_names[op]; }

int fuzz_op_parse(const char *name)
{
    for (int o = 0; o < FUZZ_NOPS; o++)
        if (!strcasecmp(name, op_names[o]) || !strcasecmp(name, op_names[o] + 4)) return o;
    return -1;
}

MPI_Op fuzz_op_handle(enum fuzz_op op)
{
    switch (op) {
    case OP_SUM: return MPI_SUM;
    case OP_PROD: return MPI_PROD;
    case OP_MAX: return MPI_MAX;
    case OP_MIN: return MPI_MIN;
    case OP_LAND: return MPI_LAND;
    case OP_LOR: return MPI_LOR;
    case OP_LXOR: return MPI_LXOR;
    case OP_BAND: return MPI_BAND;
    case OP_BOR: return MPI_BOR;
    case OP_BXOR: return MPI_BXOR;
    case OP_MINLOC: return MPI_MINLOC;
    case OP_MAXLOC: return MPI_MAXLOC;
    case OP_USER_SUM: return user_ops[0];
    case OP_USER_AFFINE: return user_ops[1];
    default: return MPI_OP_NULL;
    }
}

unsigned fuzz_ops_for(const struct fuzz_base *b)
{
#define B(o) (1u << (o))
    const unsigned arith = B(OP_SUM) | B(OP_PROD), order = B(OP_MAX) | B(OP_MIN);
    const unsigned logical = B(OP_LAND) | B(OP_LOR) | B(OP_LXOR);
    const unsigned bits = B(OP_BAND) | B(OP_BOR) | B(OP_BXOR);
    const unsigned user = B(OP_USER_SUM) | B(OP_USER_AFFINE);
    switch (b->kind) {
    case FK_INT: return arith | order | logical | bits | user;
    case FK_MULTI: return arith | order | bits | user;
    case FK_FLOAT: return arith | order;
    case FK_COMPLEX: return arith;
    case FK_BOOL: return logical;
    case FK_BYTE: return bits;
    case FK_PAIR: return B(OP_MINLOC) | B(OP_MAXLOC);
    default: return 0;
    }
#undef B
}

/* The layout a user op was handed, from the datatype handle. */
static const struct fuzz_layout *layout_of(MPI_Datatype type)
{
    for (int i = 0; i < fuzz_nbases; i++)
        for (int s = 0; s < FUZZ_NSHAPES; s++)
            if (layouts[i][s].type == type) return &layouts[i][s];
    CHECK(0, "a user op got a datatype the fuzzer did not make");
    return NULL;
}

/* Applies f(in, inout) to every integer base element of len elements. */
static void each_int(void *in, void *inout, int len, MPI_Datatype type,
                     uint64_t (*f)(uint64_t x, uint64_t y, int width))
{
    const struct fuzz_layout *l = layout_of(type);
    int w = l->base->width;
    uint64_t mask = w >= 8 ? ~0ull : (1ull << (8 * w)) - 1;
    for (int i = 0; i < len; i++)
        for (int j = 0; j < l->per; j++) {
            size_t at = (size_t)i * l->extent + l->off[j];
            uint64_t x = 0, y = 0;
            memcpy(&x, (unsigned char *)in + at, (size_t)w);
            memcpy(&y, (unsigned char *)inout + at, (size_t)w);
            uint64_t r = f(x, y, w) & mask;
            memcpy((unsigned char *)inout + at, &r, (size_t)w);
        }
}

static uint64_t sum_fn(uint64_t x, uint64_t y, int w)
{
    (void)w;
    return x + y;
}

/* An element is the affine map t -> a*t + b modulo 2^(4w), a in its low
 * half, b in its high half; the op composes in (from lower ranks) after
 * inout.  Composition is associative, not commutative: any order but the
 * standard's shows. */
static uint64_t affine_fn(uint64_t x, uint64_t y, int w)
{
    int hb = 4 * w;
    uint64_t m = (1ull << hb) - 1;
    uint64_t xa = x & m, xb = (x >> hb) & m, ya = y & m, yb = (y >> hb) & m;
    return ((xa * ya) & m) | (((xa * yb + xb) & m) << hb);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    each_int(in, inout, *len, *type, sum_fn);
}

static void user_affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    each_int(in, inout, *len, *type, affine_fn);
}
