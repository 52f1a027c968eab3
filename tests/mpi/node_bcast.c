/* Broadcast part of the node-collective matrix: every size class around the
 * copy-in/copy-out limit and the pipeline chunks, every root, contiguous and
 * non-contiguous datatypes, and datatypes that differ between root and the
 * other ranks but have the same type signature (strata must take the same
 * path on every rank, or the job deadlocks: ctest's timeout catches that). */
#include <stdlib.h>
#include <string.h>

#include "node_common.h"

enum { GUARD = 64 };        /* bytes checked untouched on both sides of a buffer */
#define SENTINEL 0xA5       /* what a receive buffer holds before the call */

/* Broadcast sizes in bytes: 0, tiny, around 4 KiB (a page), around the 16 KiB
 * copy-in/copy-out limit, around the 256 KiB pipeline chunk, and large ones
 * that are not a multiple of anything. */
static const size_t bcast_sizes[] = {0,     1,     3,     8,      63,     4095,
                                     4096,  16383, 16384, 16385,  65537,  262143,
                                     262145, (1u << 20) + 7, (4u << 20) + 3};
#define LARGE_BYTES 262143

/* Byte j of the stream broadcast from `root` with `salt`. */
static unsigned char stream_byte(int root, size_t j, uint64_t salt)
{
    return (unsigned char)(node_word(root, j / 8, salt) >> (8 * (j % 8)));
}

struct typed_buf {
    unsigned char *mem;  /* allocation: GUARD, the span, GUARD */
    unsigned char *buf;  /* what MPI is given (the span starts at buf + true_lb) */
    size_t span;         /* bytes from the first to the last byte the data touches */
};

static void typed_alloc(struct typed_buf *t, MPI_Datatype type, int count, int fill)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    t->span = count > 0 ? (size_t)(count - 1) * (size_t)extent + (size_t)true_extent : 0;
    t->mem = malloc(t->span + 2 * GUARD);
    CHECK(t->mem != NULL, "out of memory for %zu bytes", t->span);
    memset(t->mem, fill, t->span + 2 * GUARD);
    t->buf = t->mem + GUARD - true_lb;
}

/* The deterministic stream of `bytes` bytes from root with salt. */
static unsigned char *make_stream(int root, size_t bytes, uint64_t salt)
{
    unsigned char *s = malloc(bytes ? bytes : 1);
    CHECK(s != NULL, "out of memory for %zu bytes", bytes);
    size_t j = 0;
    for (; j + 8 <= bytes; j += 8) {
        uint64_t w = node_word(root, j / 8, salt);
        memcpy(s + j, &w, 8); /* little-endian: the same bytes as stream_byte */
    }
    for (; j < bytes; j++) s[j] = stream_byte(root, j, salt);
    return s;
}

/* Lays the stream out in a typed buffer as MPI_Unpack does (the type
 * signature order), over bytes already holding `fill`. */
static void unpack_into(const unsigned char *stream, size_t bytes, struct typed_buf *t,
                        MPI_Datatype type, int count)
{
    if (!bytes) return;
    int pos = 0;
    CHECK(MPI_Unpack(stream, (int)bytes, &pos, t->buf, count, type, MPI_COMM_SELF) ==
              MPI_SUCCESS && (size_t)pos == bytes,
          "MPI_Unpack of %zu bytes", bytes);
}

void node_bcast_check(MPI_Comm comm, const char *cname, MPI_Datatype root_type, int root_count,
                      MPI_Datatype type, int count, int root, uint64_t salt, const char *tname)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Datatype my_type = rank == root ? root_type : type;
    int my_count = rank == root ? root_count : count, tsize;
    MPI_Type_size(my_type, &tsize);
    size_t bytes = (size_t)tsize * (size_t)my_count;
    unsigned char *stream = make_stream(root, bytes, salt);

    /* expect: what the buffer must hold afterwards, guards and holes included.
     * The root's buffer holds the data from the start and must not change;
     * the others start from the sentinel, and holes must keep it. */
    struct typed_buf got, expect;
    int fill = rank == root ? 0x5A : SENTINEL;
    typed_alloc(&got, my_type, my_count, fill);
    typed_alloc(&expect, my_type, my_count, fill);
    unpack_into(stream, bytes, &expect, my_type, my_count);
    if (rank == root) unpack_into(stream, bytes, &got, my_type, my_count);

    CHECK(MPI_Bcast(got.buf, my_count, my_type, root, comm) == MPI_SUCCESS, "MPI_Bcast failed");

    size_t total = got.span + 2 * GUARD;
    if (memcmp(got.mem, expect.mem, total) != 0) {
        size_t k = 0;
        while (got.mem[k] == expect.mem[k]) k++;
        const char *where = k < GUARD ? "guard before the buffer"
                            : k >= GUARD + got.span ? "guard after the buffer"
                                                    : "buffer";
        CHECK(0,
              "%s: Bcast of %zu bytes (%s, count %d; root count %d) from root %d: byte %zu of "
              "the span (%s) is 0x%02x, expected 0x%02x",
              cname, bytes, tname, my_count, root_count, root, k - GUARD, where, got.mem[k],
              expect.mem[k]);
    }
    free(got.mem);
    free(expect.mem);
    free(stream);
}

/* The datatypes of the plain matrix. */
struct btype {
    const char *name;
    MPI_Datatype type;
};

static int make_types(struct btype *t)
{
    int n = 0;
    t[n++] = (struct btype){"MPI_BYTE", MPI_BYTE};
    t[n++] = (struct btype){"MPI_INT", MPI_INT};
    t[n++] = (struct btype){"MPI_DOUBLE", MPI_DOUBLE};
    /* Two blocks of 3 ints, 5 ints apart: 24 bytes of data in a 32-byte
     * extent, holes inside each element. */
    MPI_Datatype vec;
    MPI_Type_vector(2, 3, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    t[n++] = (struct btype){"vector(2,3,5,int)", vec};
    /* { char; double; int[2]; } with holes after the char and at the end:
     * 17 bytes of data in a 32-byte extent. */
    int blocks[3] = {1, 1, 2};
    MPI_Aint displs[3] = {0, 8, 16};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, st, holes;
    MPI_Type_create_struct(3, blocks, displs, types, &st);
    MPI_Type_create_resized(st, 0, 32, &holes);
    MPI_Type_free(&st);
    MPI_Type_commit(&holes);
    t[n++] = (struct btype){"struct{char;double;int[2]} with holes", holes};
    return n;
}

static void free_types(struct btype *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i].type != MPI_BYTE && t[i].type != MPI_INT && t[i].type != MPI_DOUBLE)
            MPI_Type_free(&t[i].type);
}

void node_bcast_suite(MPI_Comm comm, const char *cname)
{
    int size;
    MPI_Comm_size(comm, &size);
    struct btype types[8];
    int ntypes = make_types(types);
    int *all = malloc(sizeof(int) * (size_t)size), *some = malloc(sizeof(int) * (size_t)size);
    CHECK(all && some, "out of memory");
    for (int r = 0; r < size; r++) all[r] = r;
    int nsome = node_roots(size, some);

    for (size_t s = 0; s < sizeof bcast_sizes / sizeof bcast_sizes[0]; s++) {
        size_t want = bcast_sizes[s];
        int large = want >= LARGE_BYTES;
        if (large && !node_opt.large) continue;
        for (int t = 0; t < ntypes; t++) {
            int tsize;
            MPI_Type_size(types[t].type, &tsize);
            int count = (int)((want + (size_t)tsize - 1) / (size_t)tsize);
            /* Every root for every small size and for MPI_BYTE; the large
             * sizes of the other types at a few roots (or all with
             * --roots=all). */
            int use_all = !large || t == 0 || node_opt.all_roots;
            int nroots = use_all ? size : nsome;
            for (int i = 0; i < nroots; i++) {
                int root = use_all ? all[i] : some[i];
                node_bcast_check(comm, cname, types[t].type, count, types[t].type, count, root,
                                 node_salt(1, s, (uint64_t)t, (uint64_t)root), types[t].name);
            }
        }
    }

    /* 16 MiB, the largest size, a few times. */
    for (int k = 0; k < node_opt.huge; k++) {
        int root = (k * 3 + 1) % size;
        node_bcast_check(comm, cname, MPI_BYTE, 16 << 20, MPI_BYTE, 16 << 20, root,
                         node_salt(2, (uint64_t)k, 0, 0), "MPI_BYTE (16 MiB)");
    }

    /* A burst of small broadcasts from rotating roots with nothing between
     * them: a rank may run one operation ahead of the others, so the
     * double-buffered copy-in/copy-out regions are reused back to back. */
    for (int k = 0; k < 300; k++) {
        int count = 1 + (k * 37) % 256;
        node_bcast_check(comm, cname, MPI_BYTE, count, MPI_BYTE, count, k % size,
                         node_salt(3, (uint64_t)k, 0, 0), "MPI_BYTE (burst)");
    }
    /* Alternating paths: copy-in/copy-out, then single copy, and back. */
    for (int k = 0; k < 40; k++) {
        int count = k % 2 ? 40000 + k : 100 + k;
        node_bcast_check(comm, cname, MPI_BYTE, count, MPI_BYTE, count, (k / 2) % size,
                         node_salt(4, (uint64_t)k, 0, 0), "MPI_BYTE (alternating sizes)");
    }
    free_types(types, ntypes);
    free(all);
    free(some);
}

/* Root and the others use different datatypes with one type signature.
 * `permuted` selects the pair whose layout has no holes but lists its
 * elements out of memory order (its own suite, so that a failure there does
 * not hide the others). */
void node_bcast_mixed_suite(MPI_Comm comm, const char *cname, int permuted)
{
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Datatype contig4, vec, permuted_t, holes, packed, st;
    MPI_Type_contiguous(4, MPI_INT, &contig4);
    MPI_Type_vector(2, 3, 5, MPI_INT, &vec);
    /* Two ints, the second one first: no holes, a contiguous footprint,
     * but the type signature reads the buffer out of order. */
    int ones[2] = {1, 1}, rev[2] = {1, 0};
    MPI_Type_indexed(2, ones, rev, MPI_INT, &permuted_t);
    int blocks[3] = {1, 1, 2};
    MPI_Aint with_holes[3] = {0, 8, 16}, no_holes[3] = {0, 1, 9};
    MPI_Datatype members[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, blocks, with_holes, members, &st);
    MPI_Type_create_resized(st, 0, 32, &holes);
    MPI_Type_free(&st);
    /* The same signature packed without holes (unaligned, 17 bytes). */
    MPI_Type_create_struct(3, blocks, no_holes, members, &packed);
    MPI_Datatype all_types[] = {contig4, vec, permuted_t, holes, packed};
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; i++)
        MPI_Type_commit(&all_types[i]);

    /* Pairs (A, k): one element of A has the signature of k elements of B. */
    const struct {
        const char *name;
        MPI_Datatype a, b;
        int per_a;
        int permuted;
    } pairs[] = {
        {"contiguous(4,int) vs int", contig4, MPI_INT, 4, 0},
        {"vector(2,3,5,int) vs int", vec, MPI_INT, 6, 0},
        {"struct with holes vs packed struct", holes, packed, 1, 0},
        {"indexed{int[1], int[0]} (permuted, no holes) vs int", permuted_t, MPI_INT, 2, 1},
    };
    /* Signature sizes around the copy-in/copy-out limit and above a chunk. */
    const size_t targets[] = {0, 4, 96, 16368, 16384, 16392, 16420, 65544, (1u << 20) + 24};

    int *some = malloc(sizeof(int) * (size_t)size);
    CHECK(some != NULL, "out of memory");
    int nsome = node_roots(size, some);
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        if (pairs[p].permuted != permuted) continue;
        int asize;
        MPI_Type_size(pairs[p].a, &asize);
        for (size_t s = 0; s < sizeof targets / sizeof targets[0]; s++) {
            int large = targets[s] >= LARGE_BYTES;
            if (large && !node_opt.large) continue;
            int n = (int)((targets[s] + (size_t)asize - 1) / (size_t)asize);
            int nroots = large && !node_opt.all_roots ? nsome : size;
            for (int i = 0; i < nroots; i++) {
                int root = nroots == size ? i : some[i];
                char what[128];
                /* Root with A, the others with B; then the other way round. */
                snprintf(what, sizeof what, "%s (root uses the first)", pairs[p].name);
                node_bcast_check(comm, cname, pairs[p].a, n, pairs[p].b, n * pairs[p].per_a,
                                 root, node_salt(5, p, s, (uint64_t)root), what);
                snprintf(what, sizeof what, "%s (root uses the second)", pairs[p].name);
                node_bcast_check(comm, cname, pairs[p].b, n * pairs[p].per_a, pairs[p].a, n,
                                 root, node_salt(6, p, s, (uint64_t)root), what);
            }
        }
    }
    free(some);
    for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; i++)
        MPI_Type_free(&all_types[i]);
}
