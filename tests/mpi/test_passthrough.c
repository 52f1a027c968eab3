/* Every collective called through strata (MPI_X) gives exactly what the host
 * MPI gives (PMPI_X) on copies of the same inputs: receive buffers compared
 * byte for byte, gaps of derived types and padding of pair types included
 * (both start from the same filler, so neither may write there; one
 * exception, see run_reduce), and send buffers checked unchanged.  Results
 * are also checked against values computed here from the inputs, so the
 * comparison is never of garbage with garbage.  What strata serves itself
 * (see STRATA_VERBOSE=2) is thereby checked against the host MPI; the rest
 * checks that strata hands calls over unchanged.
 *
 * Inputs are a function of (rank, index, seed), so every rank can compute
 * every other rank's input and the expected result locally.
 *
 * Inputs stay clear of the host MPIs' wrong-result bugs (MACHINE-NOTES.md),
 * so that where strata serves a call it can be held to both the host and
 * the reference: unsigned char sums never exceed 255 (Open MPI saturates),
 * unsigned MIN/MAX use values below 128 (MPICH compares them as signed), no
 * MPI_UNSIGNED_LONG MIN/MAX (Open MPI).  And the cases that crash a host are
 * not run there: MPICH's in-place Reduce at a non-zero root from 4 KiB, and
 * its Gather/Scatter/in-place Alltoall of MPI_DOUBLE_INT.
 *
 *   test_passthrough [--quick]    --quick: fewer sizes, types, ops and roots
 *                                 (for oversubscribed MPICH, ~8 ms a call) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#if defined(MPICH)
#define HOST_IS_MPICH 1
#else
#define HOST_IS_MPICH 0
#endif

/* ---- Deterministic data ------------------------------------------------ */

static uint64_t mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + (a + 1) * 0xBF58476D1CE4E5B9ull +
                 (b + 1) * 0x94D049BB133111EBull + c * 0xD6E8FEB86659FD93ull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* The bytes of the block that rank src sends to rank dst (dst 0 when it
 * goes to everyone), gaps included. */
static void fill_block(unsigned char *buf, size_t nbytes, uint64_t seed, int src, int dst)
{
    for (size_t w = 0; w * 8 < nbytes; w++) {
        uint64_t v = mix(seed, (uint64_t)src, (uint64_t)dst, w);
        size_t n = nbytes - w * 8 < 8 ? nbytes - w * 8 : 8;
        memcpy(buf + w * 8, &v, n);
    }
}

/* What a receive buffer holds before the call (same on both paths). */
static void prefill(unsigned char *buf, size_t nbytes, uint64_t seed, int rank)
{
    fill_block(buf, nbytes, seed ^ 0x5EEDF111ull, 1 << 20, rank);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    CHECK(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* ---- Types ------------------------------------------------------------- */

enum type_id {
    T_INT, T_DOUBLE, T_CHAR, T_UCHAR, T_LLONG, T_FLOAT, T_DOUBLE_INT, T_VECTOR,
    T_UNSIGNED, /* for the commutative user op */
    T_MAT2,     /* 2x2 matrices of unsigned, for the non-commutative user op */
    T_COUNT
};

struct double_int { double value; int index; };

struct type_desc {
    const char *name;
    MPI_Datatype type;
    size_t extent;
    int nblocks; /* the bytes of one element that hold data */
    struct { size_t off, len; } block[2];
};

static struct type_desc types[T_COUNT];

static void setup_types(void)
{
    MPI_Datatype vec, mat;
    /* Two blocks of 3 ints, stride 5, resized to 10 ints: gaps inside and
     * after each element. */
    MPI_Datatype raw;
    MPI_Type_vector(2, 3, 5, MPI_INT, &raw);
    MPI_Type_create_resized(raw, 0, 10 * sizeof(int), &vec);
    MPI_Type_free(&raw);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);

#define BASIC(id, nm, t, c) types[id] = (struct type_desc){nm, t, sizeof(c), 1, {{0, sizeof(c)}}}
    BASIC(T_INT, "MPI_INT", MPI_INT, int);
    BASIC(T_DOUBLE, "MPI_DOUBLE", MPI_DOUBLE, double);
    BASIC(T_CHAR, "MPI_CHAR", MPI_CHAR, char);
    BASIC(T_UCHAR, "MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, unsigned char);
    BASIC(T_LLONG, "MPI_LONG_LONG", MPI_LONG_LONG, long long);
    BASIC(T_FLOAT, "MPI_FLOAT", MPI_FLOAT, float);
    BASIC(T_UNSIGNED, "MPI_UNSIGNED", MPI_UNSIGNED, unsigned);
    BASIC(T_MAT2, "2x2 MPI_UNSIGNED", mat, unsigned[4]);
#undef BASIC
    types[T_DOUBLE_INT] = (struct type_desc){
        "MPI_DOUBLE_INT", MPI_DOUBLE_INT, sizeof(struct double_int), 2,
        {{offsetof(struct double_int, value), sizeof(double)},
         {offsetof(struct double_int, index), sizeof(int)}}};
    types[T_VECTOR] = (struct type_desc){
        "vector(2,3,5 ints)", vec, 10 * sizeof(int), 2,
        {{0, 3 * sizeof(int)}, {5 * sizeof(int), 3 * sizeof(int)}}};

    for (int t = 0; t < T_COUNT; t++) {
        MPI_Aint lb, extent;
        MPI_Type_get_extent(types[t].type, &lb, &extent);
        CHECK(lb == 0 && (size_t)extent == types[t].extent, "%s: extent %ld, expected %zu",
              types[t].name, (long)extent, types[t].extent);
    }
}

static void free_types(void)
{
    MPI_Type_free(&types[T_VECTOR].type);
    MPI_Type_free(&types[T_MAT2].type);
}

/* ---- Operations -------------------------------------------------------- */

enum op_id {
    O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR,
    O_MINLOC, O_MAXLOC, O_USER_COMMUTATIVE, O_USER_NONCOMMUTATIVE, O_COUNT
};

static const char *op_names[O_COUNT] = {
    "MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN", "MPI_BAND", "MPI_BOR", "MPI_BXOR",
    "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_MINLOC", "MPI_MAXLOC",
    "user commutative", "user non-commutative"};
static MPI_Op ops[O_COUNT];

/* a + b + 1: commutative and associative; the result shows that each
 * element was combined exactly size-1 times. */
static void user_commutative(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++) b[i] = a[i] + b[i] + 1u;
}

/* inout = in x inout for 2x2 matrices mod 2^32: associative, not
 * commutative, so the result shows that ranks were combined in order. */
static void user_noncommutative(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        unsigned c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

static void setup_ops(void)
{
    MPI_Op predefined[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR,
                           MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MINLOC, MPI_MAXLOC};
    for (int o = 0; o < O_USER_COMMUTATIVE; o++) ops[o] = predefined[o];
    MPI_Op_create(user_commutative, 1, &ops[O_USER_COMMUTATIVE]);
    MPI_Op_create(user_noncommutative, 0, &ops[O_USER_NONCOMMUTATIVE]);
}

/* One input element, whatever its type. */
struct value {
    long long i;      /* integer types */
    double d;         /* floating types and the value of MPI_DOUBLE_INT */
    int loc;          /* the index of MPI_DOUBLE_INT */
    unsigned m[4];    /* 2x2 matrix */
};

static int is_floating(int t) { return t == T_DOUBLE || t == T_FLOAT; }

/* Input element idx of rank `rank` (of `size`) for a reduction. */
static struct value input_value(int t, int op, int size, int rank, size_t idx, uint64_t seed)
{
    uint64_t h = mix(seed, (uint64_t)rank, 7, idx);
    struct value v = {0};
    if (t == T_MAT2) {
        for (int k = 0; k < 4; k++) v.m[k] = (unsigned)mix(seed, (uint64_t)rank, 8, idx * 4 + k);
        return v;
    }
    if (t == T_UNSIGNED) {
        v.i = (unsigned)h;
        return v;
    }
    if (t == T_DOUBLE_INT) {
        /* Few distinct values, so that ties (lowest index wins) are common. */
        v.d = (double)(h % 4);
        v.loc = (int)((h >> 20) % 100);
        return v;
    }
    /* Small factors on a few ranks only: no product overflows any type,
     * and products of +-1, 2 and 0.5 are exact in floating point. */
    int few = rank < 4;
    if (is_floating(t)) {
        static const double factors[] = {1, -1, 2, 0.5};
        switch (op) {
        case O_SUM: v.d = (double)(int)(h % 2001) - 1000; break;
        case O_PROD: v.d = factors[h % (few ? 4 : 2)]; break;
        default: v.d = (double)(int)(h % 2000001) - 1000000; break; /* MAX, MIN */
        }
        return v;
    }
    switch (op) {
    case O_SUM:
        if (t == T_UCHAR) v.i = (long long)(h % (uint64_t)(255 / size + 1));
        else v.i = (long long)(h % 201) - 100;
        break;
    case O_PROD:
        if (t == T_UCHAR) v.i = few ? 1 + (long long)(h % 2) : 1;
        else v.i = (h % 2 ? -1 : 1) * (few ? 1 + (long long)((h >> 8) % 2) : 1);
        break;
    case O_MAX: case O_MIN:
        if (t == T_UCHAR) v.i = (long long)(h % 128);
        else if (t == T_INT) v.i = (int32_t)h;
        else v.i = (int64_t)h;
        break;
    case O_LAND: case O_LOR: case O_LXOR:
        v.i = h % 4 == 0 ? 0 : (long long)((h >> 8) % 7) - 3;
        break;
    default: /* bitwise: every bit pattern of the type */
        if (t == T_UCHAR) v.i = (unsigned char)h;
        else if (t == T_INT) v.i = (int32_t)h;
        else v.i = (int64_t)h;
        break;
    }
    return v;
}

/* a op b, a from the lower rank. */
static struct value combine(int t, int op, struct value a, struct value b)
{
    struct value r = a;
    if (t == T_MAT2) {
        r.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];
        r.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];
        r.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];
        r.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];
        return r;
    }
    if (t == T_UNSIGNED) {
        r.i = (unsigned)((unsigned)a.i + (unsigned)b.i + 1u);
        return r;
    }
    if (t == T_DOUBLE_INT) {
        int a_wins = op == O_MINLOC ? a.d < b.d : a.d > b.d;
        if (a.d == b.d) r.loc = a.loc < b.loc ? a.loc : b.loc;
        else if (!a_wins) r = b;
        return r;
    }
    if (is_floating(t)) {
        switch (op) {
        case O_SUM: r.d = a.d + b.d; break;
        case O_PROD: r.d = a.d * b.d; break;
        case O_MAX: r.d = a.d > b.d ? a.d : b.d; break;
        default: r.d = a.d < b.d ? a.d : b.d; break;
        }
        return r;
    }
    switch (op) {
    case O_SUM: r.i = a.i + b.i; break;
    case O_PROD: r.i = a.i * b.i; break;
    case O_MAX: r.i = a.i > b.i ? a.i : b.i; break;
    case O_MIN: r.i = a.i < b.i ? a.i : b.i; break;
    case O_BAND: r.i = a.i & b.i; break;
    case O_BOR: r.i = a.i | b.i; break;
    case O_BXOR: r.i = a.i ^ b.i; break;
    case O_LAND: r.i = a.i && b.i; break;
    case O_LOR: r.i = a.i || b.i; break;
    default: r.i = !a.i != !b.i; break; /* LXOR */
    }
    return r;
}

static void store_value(void *buf, int t, size_t idx, struct value v)
{
    char *p = (char *)buf + idx * types[t].extent;
    switch (t) {
    case T_INT: { int x = (int)v.i; memcpy(p, &x, sizeof x); break; }
    case T_UCHAR: { unsigned char x = (unsigned char)v.i; memcpy(p, &x, 1); break; }
    case T_LLONG: { long long x = v.i; memcpy(p, &x, sizeof x); break; }
    case T_UNSIGNED: { unsigned x = (unsigned)v.i; memcpy(p, &x, sizeof x); break; }
    case T_DOUBLE: memcpy(p, &v.d, sizeof v.d); break;
    case T_FLOAT: { float x = (float)v.d; memcpy(p, &x, sizeof x); break; }
    case T_DOUBLE_INT: {
        memcpy(p + offsetof(struct double_int, value), &v.d, sizeof v.d);
        memcpy(p + offsetof(struct double_int, index), &v.loc, sizeof v.loc);
        break;
    }
    case T_MAT2: memcpy(p, v.m, sizeof v.m); break;
    default: CHECK(0, "no reduction values for %s", types[t].name);
    }
}

/* ---- Communicators ----------------------------------------------------- */

struct comm_desc {
    MPI_Comm comm;
    const char *name;
    int rank, size;
};

/* ---- Cases ------------------------------------------------------------- */

struct tcase {
    const char *coll;
    const struct comm_desc *c;
    int type, op;  /* op -1 for data movement */
    int root;      /* -1 for collectives without one */
    int in_place;
    size_t count;
    uint64_t seed;
};

static long cases_run;

static void describe(const struct tcase *k, char *out, size_t len)
{
    char root[32] = "";
    if (k->root >= 0) snprintf(root, sizeof root, ", root %d", k->root);
    snprintf(out, len, "%s on %s (size %d): %s%s%s, count %zu%s%s", k->coll, k->c->name,
             k->c->size, types[k->type].name, k->op >= 0 ? " " : "",
             k->op >= 0 ? op_names[k->op] : "", k->count, root,
             k->in_place ? ", MPI_IN_PLACE" : "");
}

/* Whole buffers: strata's and the host's, gaps and padding included. */
static void same_bytes(const struct tcase *k, const char *what, const void *strata,
                       const void *host, size_t nbytes)
{
    if (!memcmp(strata, host, nbytes)) return;
    size_t at = 0;
    while (((const unsigned char *)strata)[at] == ((const unsigned char *)host)[at]) at++;
    char d[256];
    describe(k, d, sizeof d);
    CHECK(0, "%s: %s differs from the host MPI's at byte %zu of %zu", d, what, at, nbytes);
}

/* Which elements of a reduction result are checked against the reference:
 * all up to 65536, beyond that a spread sample and the tail, because every
 * rank computing every rank's input for a million elements costs more than
 * the collective (strata against the host is still compared whole). */
static int sampled(size_t i, size_t count)
{
    return count <= 65536 || i % 61 == 0 || i + 64 >= count;
}

/* Only the data bytes of `count` elements (of the sampled ones if `sample`):
 * received against expected. */
static void same_data(const struct tcase *k, const char *what, const void *got,
                      const void *expected, size_t count, int sample)
{
    const struct type_desc *td = &types[k->type];
    for (size_t e = 0; e < count; e++) {
        if (sample && !sampled(e, count)) continue;
        for (int b = 0; b < td->nblocks; b++) {
            size_t off = e * td->extent + td->block[b].off;
            if (memcmp((const char *)got + off, (const char *)expected + off, td->block[b].len)) {
                char d[256];
                describe(k, d, sizeof d);
                CHECK(0, "%s: %s: element %zu is not what was sent or computed", d, what, e);
            }
        }
    }
}

/* Only the data bytes of `count` elements: strata's against the host's. */
static void same_values(const struct tcase *k, const char *what, const void *strata,
                        const void *host, size_t count)
{
    const struct type_desc *td = &types[k->type];
    for (size_t e = 0; e < count; e++) {
        for (int b = 0; b < td->nblocks; b++) {
            size_t off = e * td->extent + td->block[b].off;
            if (memcmp((const char *)strata + off, (const char *)host + off, td->block[b].len)) {
                char d[256];
                describe(k, d, sizeof d);
                CHECK(0, "%s: %s: element %zu differs from the host MPI's", d, what, e);
            }
        }
    }
}

/* The buffers of one case, twice: [0] for the call through strata, [1] for
 * the host MPI's.  Built identically (pair_copy), compared after the calls. */
struct pair {
    unsigned char *send[2], *recv[2]; /* [0] strata, [1] host */
    size_t send_bytes, recv_bytes;
};

static void pair_alloc(struct pair *p, size_t send_bytes, size_t recv_bytes)
{
    p->send_bytes = send_bytes;
    p->recv_bytes = recv_bytes;
    for (int i = 0; i < 2; i++) {
        p->send[i] = xmalloc(send_bytes);
        p->recv[i] = xmalloc(recv_bytes);
    }
}

/* Makes the host's copy identical to strata's. */
static void pair_copy(struct pair *p)
{
    memcpy(p->send[1], p->send[0], p->send_bytes);
    memcpy(p->recv[1], p->recv[0], p->recv_bytes);
}

static void pair_compare(const struct tcase *k, struct pair *p)
{
    same_bytes(k, "send buffer", p->send[0], p->send[1], p->send_bytes);
    same_bytes(k, "receive buffer", p->recv[0], p->recv[1], p->recv_bytes);
}

static void pair_free(struct pair *p)
{
    for (int i = 0; i < 2; i++) {
        free(p->send[i]);
        free(p->recv[i]);
    }
}

static void run_bcast(const struct tcase *k)
{
    const struct comm_desc *c = k->c;
    size_t bytes = k->count * types[k->type].extent;
    struct pair p;
    pair_alloc(&p, 0, bytes);
    if (c->rank == k->root) fill_block(p.recv[0], bytes, k->seed, k->root, 0);
    else prefill(p.recv[0], bytes, k->seed, c->rank);
    pair_copy(&p);
    MPI_Bcast(p.recv[0], (int)k->count, types[k->type].type, k->root, c->comm);
    PMPI_Bcast(p.recv[1], (int)k->count, types[k->type].type, k->root, c->comm);
    pair_compare(k, &p);
    unsigned char *expected = xmalloc(bytes);
    fill_block(expected, bytes, k->seed, k->root, 0);
    same_data(k, "Bcast result", p.recv[0], expected, k->count, 0);
    free(expected);
    pair_free(&p);
}

static void run_gather(const struct tcase *k)
{
    const struct comm_desc *c = k->c;
    MPI_Datatype t = types[k->type].type;
    size_t block = k->count * types[k->type].extent;
    int at_root = c->rank == k->root;
    struct pair p;
    pair_alloc(&p, block, at_root ? block * (size_t)c->size : 0);
    fill_block(p.send[0], block, k->seed, c->rank, 0);
    if (at_root) {
        prefill(p.recv[0], p.recv_bytes, k->seed, c->rank);
        if (k->in_place) memcpy(p.recv[0] + block * (size_t)c->rank, p.send[0], block);
    }
    pair_copy(&p);
    for (int path = 0; path < 2; path++) {
        const void *send = at_root && k->in_place ? MPI_IN_PLACE : p.send[path];
        void *recv = at_root ? p.recv[path] : NULL; /* significant at the root only */
        if (path == 0) MPI_Gather(send, (int)k->count, t, recv, (int)k->count, t, k->root, c->comm);
        else PMPI_Gather(send, (int)k->count, t, recv, (int)k->count, t, k->root, c->comm);
    }
    pair_compare(k, &p);
    if (at_root) {
        unsigned char *expected = xmalloc(block);
        for (int s = 0; s < c->size; s++) {
            fill_block(expected, block, k->seed, s, 0);
            same_data(k, "Gather result", p.recv[0] + block * (size_t)s, expected, k->count, 0);
        }
        free(expected);
    }
    pair_free(&p);
}

static void run_scatter(const struct tcase *k)
{
    const struct comm_desc *c = k->c;
    MPI_Datatype t = types[k->type].type;
    size_t block = k->count * types[k->type].extent;
    int at_root = c->rank == k->root;
    struct pair p;
    pair_alloc(&p, at_root ? block * (size_t)c->size : 0, block);
    if (at_root)
        for (int d = 0; d < c->size; d++)
            fill_block(p.send[0] + block * (size_t)d, block, k->seed, k->root, d);
    prefill(p.recv[0], block, k->seed, c->rank);
    pair_copy(&p);
    for (int path = 0; path < 2; path++) {
        const void *send = at_root ? p.send[path] : NULL; /* significant at the root only */
        void *recv = at_root && k->in_place ? MPI_IN_PLACE : p.recv[path];
        int n = (int)k->count;
        if (path == 0) MPI_Scatter(send, n, t, recv, n, t, k->root, c->comm);
        else PMPI_Scatter(send, n, t, recv, n, t, k->root, c->comm);
    }
    pair_compare(k, &p);
    if (!(at_root && k->in_place)) {
        unsigned char *expected = xmalloc(block);
        fill_block(expected, block, k->seed, k->root, c->rank);
        same_data(k, "Scatter result", p.recv[0], expected, k->count, 0);
        free(expected);
    }
    pair_free(&p);
}

static void run_allgather(const struct tcase *k)
{
    const struct comm_desc *c = k->c;
    MPI_Datatype t = types[k->type].type;
    size_t block = k->count * types[k->type].extent;
    struct pair p;
    pair_alloc(&p, block, block * (size_t)c->size);
    fill_block(p.send[0], block, k->seed, c->rank, 0);
    prefill(p.recv[0], p.recv_bytes, k->seed, c->rank);
    if (k->in_place) memcpy(p.recv[0] + block * (size_t)c->rank, p.send[0], block);
    pair_copy(&p);
    for (int path = 0; path < 2; path++) {
        const void *send = k->in_place ? MPI_IN_PLACE : p.send[path];
        if (path == 0) MPI_Allgather(send, (int)k->count, t, p.recv[0], (int)k->count, t, c->comm);
        else PMPI_Allgather(send, (int)k->count, t, p.recv[1], (int)k->count, t, c->comm);
    }
    pair_compare(k, &p);
    unsigned char *expected = xmalloc(block);
    for (int s = 0; s < c->size; s++) {
        fill_block(expected, block, k->seed, s, 0);
        same_data(k, "Allgather result", p.recv[0] + block * (size_t)s, expected, k->count, 0);
    }
    free(expected);
    pair_free(&p);
}

static void run_alltoall(const struct tcase *k)
{
    const struct comm_desc *c = k->c;
    MPI_Datatype t = types[k->type].type;
    size_t block = k->count * types[k->type].extent, total = block * (size_t)c->size;
    struct pair p;
    pair_alloc(&p, total, total);
    for (int d = 0; d < c->size; d++)
        fill_block(p.send[0] + block * (size_t)d, block, k->seed, c->rank, d);
    if (k->in_place) memcpy(p.recv[0], p.send[0], total);
    else prefill(p.recv[0], total, k->seed, c->rank);
    pair_copy(&p);
    for (int path = 0; path < 2; path++) {
        const void *send = k->in_place ? MPI_IN_PLACE : p.send[path];
        if (path == 0) MPI_Alltoall(send, (int)k->count, t, p.recv[0], (int)k->count, t, c->comm);
        else PMPI_Alltoall(send, (int)k->count, t, p.recv[1], (int)k->count, t, c->comm);
    }
    pair_compare(k, &p);
    unsigned char *expected = xmalloc(block);
    for (int s = 0; s < c->size; s++) {
        fill_block(expected, block, k->seed, s, c->rank);
        same_data(k, "Alltoall result", p.recv[0] + block * (size_t)s, expected, k->count, 0);
    }
    free(expected);
    pair_free(&p);
}

/* This rank's input for a reduction, typed, over a filler for the gaps. */
static void fill_inputs(unsigned char *buf, const struct tcase *k, int rank)
{
    fill_block(buf, k->count * types[k->type].extent, k->seed ^ 0xF1ull, rank, 0);
    for (size_t i = 0; i < k->count; i++)
        store_value(buf, k->type, i, input_value(k->type, k->op, k->c->size, rank, i, k->seed));
}

/* The reduction of every rank's input, in rank order (sampled elements). */
static void reference_reduce(unsigned char *out, const struct tcase *k)
{
    for (size_t i = 0; i < k->count; i++) {
        if (!sampled(i, k->count)) continue;
        struct value acc = input_value(k->type, k->op, k->c->size, 0, i, k->seed);
        for (int r = 1; r < k->c->size; r++)
            acc = combine(k->type, k->op, acc,
                          input_value(k->type, k->op, k->c->size, r, i, k->seed));
        store_value(out, k->type, i, acc);
    }
}

/* Reduce (all == 0) and Allreduce (all == 1). */
static void run_reduce(const struct tcase *k, int all)
{
    const struct comm_desc *c = k->c;
    MPI_Datatype t = types[k->type].type;
    size_t bytes = k->count * types[k->type].extent;
    int gets_result = all || c->rank == k->root;
    int in_place_here = k->in_place && gets_result;
    struct pair p;
    pair_alloc(&p, in_place_here ? 0 : bytes, gets_result ? bytes : 0);
    if (in_place_here) {
        fill_inputs(p.recv[0], k, c->rank);
    } else {
        fill_inputs(p.send[0], k, c->rank);
        if (gets_result) prefill(p.recv[0], bytes, k->seed, c->rank);
    }
    pair_copy(&p);
    for (int path = 0; path < 2; path++) {
        const void *send = in_place_here ? MPI_IN_PLACE : p.send[path];
        void *recv = gets_result ? p.recv[path] : NULL; /* significant at the root only */
        int n = (int)k->count;
        if (all) {
            if (path == 0) MPI_Allreduce(send, recv, n, t, ops[k->op], c->comm);
            else PMPI_Allreduce(send, recv, n, t, ops[k->op], c->comm);
        } else {
            if (path == 0) MPI_Reduce(send, recv, n, t, ops[k->op], k->root, c->comm);
            else PMPI_Reduce(send, recv, n, t, ops[k->op], k->root, c->comm);
        }
    }
    if (types[k->type].nblocks > 1 && gets_result) {
        /* strata's reductions move whole extents for every element but the
         * last, so the padding inside MPI_DOUBLE_INT (bytes 12-15 of each
         * 16) may come back holding an operand's padding where the host MPI
         * leaves it alone.  That padding is the C struct's own, which no
         * program can rely on: the values are compared with the host's, and
         * the last element whole, past which nothing may be written. */
        same_bytes(k, "send buffer", p.send[0], p.send[1], p.send_bytes);
        same_values(k, "receive buffer", p.recv[0], p.recv[1], k->count);
        size_t last = bytes - types[k->type].extent;
        if (k->count)
            same_bytes(k, "receive buffer's last element", p.recv[0] + last, p.recv[1] + last,
                       types[k->type].extent);
    } else {
        pair_compare(k, &p);
    }
    if (gets_result) {
        unsigned char *expected = xmalloc(bytes);
        reference_reduce(expected, k);
        same_data(k, "reduction result", p.recv[0], expected, k->count, 1);
        free(expected);
    }
    pair_free(&p);
}

/* ---- What to run ------------------------------------------------------- */

static int quick;

static const size_t small_counts[] = {0, 1, 7, 8, 1000};
static const size_t large_counts[] = {4096 + 3, 65536, 1024 * 1024 + 5};
static const size_t quick_counts[] = {0, 1, 7, 1000, 4096 + 3};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The counts a (collective, type/op) pair runs with: the small ones always,
 * then the first `nlarge` large ones.  Large messages cost memory bandwidth
 * on every rank, so only a few pairs get them. */
static size_t counts_for(int nlarge, size_t *out)
{
    size_t n = 0;
    if (quick) {
        for (size_t i = 0; i < NELEM(quick_counts); i++) out[n++] = quick_counts[i];
        return n;
    }
    for (size_t i = 0; i < NELEM(small_counts); i++) out[n++] = small_counts[i];
    for (int i = 0; i < nlarge; i++) out[n++] = large_counts[i];
    return n;
}

/* Every root up to 64 KiB; the first and last for larger messages (and in
 * quick mode), which is where off-by-one root handling would show. */
static int root_wanted(int root, int size, size_t bytes)
{
    if (!quick && bytes <= 65536) return 1;
    return root == 0 || root == size - 1;
}

/* Host MPI cases that crash or fail: never run them (MACHINE-NOTES.md). */
static int host_cannot(const char *coll, int type, int in_place, int root, size_t bytes)
{
    if (!HOST_IS_MPICH) return 0;
    /* pmodels/mpich#6540: segfault from 4 KiB; stay well below. */
    if (!strcmp(coll, "MPI_Reduce") && in_place && root != 0 && bytes >= 2048) return 1;
    /* "Message truncated" with the padded pair types. */
    if (type == T_DOUBLE_INT &&
        (!strcmp(coll, "MPI_Gather") || !strcmp(coll, "MPI_Scatter") ||
         (!strcmp(coll, "MPI_Alltoall") && in_place)))
        return 1;
    return 0;
}

enum coll_id { C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_GATHER, C_SCATTER, C_ALLTOALL };
static const char *coll_names[] = {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
                                   "MPI_Allgather", "MPI_Gather", "MPI_Scatter", "MPI_Alltoall"};
static const int has_root[] = {1, 1, 0, 0, 1, 1, 0};
static const int has_in_place[] = {0, 1, 1, 1, 1, 1, 1};

static uint64_t case_seed;

/* Runs one (collective, type, op) over its counts, roots and in-place. */
static void run_all(const struct comm_desc *c, int coll, int type, int op, int nlarge)
{
    size_t counts[8];
    size_t ncounts = counts_for(nlarge, counts);
    for (size_t ci = 0; ci < ncounts; ci++) {
        size_t bytes = counts[ci] * types[type].extent;
        int nroots = has_root[coll] ? c->size : 1;
        for (int root = 0; root < nroots; root++) {
            if (has_root[coll] && !root_wanted(root, c->size, bytes)) continue;
            /* The largest count only out of place: in place is covered by
             * the large counts, and every case costs memory bandwidth. */
            int last_in_place = counts[ci] > 65536 ? 0 : has_in_place[coll];
            for (int in_place = 0; in_place <= last_in_place; in_place++) {
                if (host_cannot(coll_names[coll], type, in_place, root, bytes)) continue;
                struct tcase k = {coll_names[coll], c, type, op, has_root[coll] ? root : -1,
                                  in_place, counts[ci], ++case_seed};
                switch (coll) {
                case C_BCAST: run_bcast(&k); break;
                case C_REDUCE: run_reduce(&k, 0); break;
                case C_ALLREDUCE: run_reduce(&k, 1); break;
                case C_ALLGATHER: run_allgather(&k); break;
                case C_GATHER: run_gather(&k); break;
                case C_SCATTER: run_scatter(&k); break;
                case C_ALLTOALL: run_alltoall(&k); break;
                }
                cases_run++;
            }
        }
    }
}

/* Reductions: every valid (type, op) pair; `nlarge` large counts (see
 * counts_for) for a few. */
struct reduction { int type, op, nlarge; };

static const struct reduction reductions[] = {
    {T_INT, O_SUM, 3}, {T_INT, O_PROD, 0}, {T_INT, O_MAX, 0}, {T_INT, O_MIN, 0},
    {T_INT, O_BAND, 0}, {T_INT, O_BOR, 0}, {T_INT, O_BXOR, 0}, {T_INT, O_LAND, 0},
    {T_INT, O_LOR, 0}, {T_INT, O_LXOR, 1},
    {T_UCHAR, O_SUM, 1}, {T_UCHAR, O_PROD, 0}, {T_UCHAR, O_MAX, 0}, {T_UCHAR, O_MIN, 0},
    {T_UCHAR, O_BAND, 0}, {T_UCHAR, O_BOR, 0}, {T_UCHAR, O_BXOR, 2}, {T_UCHAR, O_LAND, 0},
    {T_UCHAR, O_LOR, 0}, {T_UCHAR, O_LXOR, 0},
    {T_LLONG, O_SUM, 0}, {T_LLONG, O_PROD, 0}, {T_LLONG, O_MAX, 0}, {T_LLONG, O_MIN, 0},
    {T_LLONG, O_BAND, 1}, {T_LLONG, O_BOR, 0}, {T_LLONG, O_BXOR, 0}, {T_LLONG, O_LAND, 0},
    {T_LLONG, O_LOR, 0}, {T_LLONG, O_LXOR, 0},
    {T_DOUBLE, O_SUM, 2}, {T_DOUBLE, O_PROD, 0}, {T_DOUBLE, O_MAX, 1}, {T_DOUBLE, O_MIN, 0},
    {T_FLOAT, O_SUM, 0}, {T_FLOAT, O_PROD, 0}, {T_FLOAT, O_MAX, 0}, {T_FLOAT, O_MIN, 1},
    {T_DOUBLE_INT, O_MINLOC, 1}, {T_DOUBLE_INT, O_MAXLOC, 0},
    {T_UNSIGNED, O_USER_COMMUTATIVE, 1}, {T_MAT2, O_USER_NONCOMMUTATIVE, 1},
};
/* The pairs --quick keeps: one of each kind of element and op. */
static int quick_reduction(const struct reduction *r)
{
    return (r->type == T_INT && r->op == O_SUM) || (r->type == T_UCHAR && r->op == O_BXOR) ||
           (r->type == T_DOUBLE && r->op == O_MAX) || r->type == T_DOUBLE_INT ||
           r->type == T_MAT2;
}

/* Data movement: every type; large counts for some, the largest for bytes. */
struct movement { int type, nlarge; };

static const struct movement movements[] = {
    {T_INT, 2}, {T_DOUBLE, 1}, {T_CHAR, 3}, {T_UCHAR, 0},
    {T_LLONG, 0}, {T_FLOAT, 0}, {T_DOUBLE_INT, 1}, {T_VECTOR, 1},
};
static int quick_movement(const struct movement *m)
{
    return m->type == T_INT || m->type == T_DOUBLE_INT || m->type == T_VECTOR;
}

static void test_comm(const struct comm_desc *c)
{
    case_seed = 0; /* same sequence on every member, whoever else runs what */
    for (size_t i = 0; i < NELEM(movements); i++) {
        const struct movement *m = &movements[i];
        if (quick && !quick_movement(m)) continue;
        for (int coll = C_BCAST; coll <= C_ALLTOALL; coll++) {
            if (coll == C_REDUCE || coll == C_ALLREDUCE) continue;
            run_all(c, coll, m->type, -1, m->nlarge);
        }
    }
    for (size_t i = 0; i < NELEM(reductions); i++) {
        const struct reduction *r = &reductions[i];
        if (quick && !quick_reduction(r)) continue;
        run_all(c, C_REDUCE, r->type, r->op, r->nlarge);
        run_all(c, C_ALLREDUCE, r->type, r->op, r->nlarge);
    }
    /* Nothing to compare but that both return, on every member. */
    CHECK(MPI_Barrier(c->comm) == MPI_SUCCESS, "MPI_Barrier on %s failed", c->name);
    CHECK(PMPI_Barrier(c->comm) == MPI_SUCCESS, "PMPI_Barrier on %s failed", c->name);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--quick")) quick = 1;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setup_types();
    setup_ops();

    /* Irregular communicators: reversed order, interleaved, and a subset of
     * three in scrambled order (last, first, middle). */
    struct comm_desc comms[4];
    int ncomms = 0;
    comms[ncomms++] = (struct comm_desc){MPI_COMM_WORLD, "MPI_COMM_WORLD", 0, 0};
    MPI_Comm reversed, interleaved, subset = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &reversed);
    comms[ncomms++] = (struct comm_desc){reversed, "reversed split", 0, 0};
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &interleaved);
    if (!quick) comms[ncomms++] = (struct comm_desc){interleaved, "even/odd split", 0, 0};
    if (size >= 3) {
        int members[3] = {size - 1, 0, (size - 1) / 2};
        MPI_Group world_group, group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_incl(world_group, 3, members, &group);
        MPI_Comm_create(MPI_COMM_WORLD, group, &subset);
        MPI_Group_free(&group);
        MPI_Group_free(&world_group);
        if (subset != MPI_COMM_NULL)
            comms[ncomms++] = (struct comm_desc){subset, "3-rank subset", 0, 0};
    }
    for (int i = 0; i < ncomms; i++) {
        MPI_Comm_rank(comms[i].comm, &comms[i].rank);
        MPI_Comm_size(comms[i].comm, &comms[i].size);
        test_comm(&comms[i]);
    }

    long total = 0;
    MPI_Reduce(&cases_run, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK(cases_run > 100, "only %ld cases ran here", cases_run);
    if (rank == 0) printf("%ld cases compared over %d ranks\n", total, size);

    MPI_Comm_free(&reversed);
    MPI_Comm_free(&interleaved);
    if (subset != MPI_COMM_NULL) MPI_Comm_free(&subset);
    MPI_Op_free(&ops[O_USER_COMMUTATIVE]);
    MPI_Op_free(&ops[O_USER_NONCOMMUTATIVE]);
    free_types();
    test_pass(quick ? "passthrough (quick)" : "passthrough");
    MPI_Finalize();
    return 0;
}
