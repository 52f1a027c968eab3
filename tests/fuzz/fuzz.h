/* strata-fuzz: a seeded differential fuzzer of strata's collectives.
 *
 * Every rank draws the same sequence of random collective calls from the
 * seed alone (fuzz_draw.c), runs each one through the host MPI (PMPI_*) and
 * through strata (MPI_*) on identical copies of the same inputs, and
 * compares every byte of every buffer the call may write (fuzz_check.c).
 * Communicators come from random MPI_Comm_split and MPI_Comm_dup calls
 * (fuzz_comms.c); datatypes and user ops are in fuzz_types.c, inputs and
 * what of an output counts in fuzz_values.c.
 * A call is identified by (seed, index): replaying one needs no other. */
#ifndef STRATA_FUZZ_H
#define STRATA_FUZZ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "blockdata.h"
#include "pair_types.h"
#include "route/route.h" /* enum strata_coll, strata_coll_name, strata_coll_parse */

#define FUZZ_MAX_WORLD 1024

/* ---- Random numbers: pure functions of their inputs ------------------------ */

/* SplitMix64's finaliser (tests/mpi/blockdata.c). */
static inline uint64_t fuzz_mix(uint64_t x) { return test_mix(x); }

static inline uint64_t fuzz_hash(uint64_t a, uint64_t b) { return fuzz_mix(fuzz_mix(a) ^ b); }

/* A stream of draws; seeded from a hash, so any call's draws can be redone
 * alone. */
struct fuzz_rng {
    uint64_t state;
};

static inline uint64_t fuzz_next(struct fuzz_rng *r)
{
    r->state += 0x9e3779b97f4a7c15ull;
    return fuzz_mix(r->state);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t fuzz_below(struct fuzz_rng *r, uint64_t n) { return fuzz_next(r) % n; }

/* ---- Options ----------------------------------------------------------------- */

/* The collectives the fuzzer draws: all of them.  The
 * v-collectives, MPI_Alltoallw and MPI_Reduce_scatter take their per-rank
 * counts from a count pattern the call draws (uniform, one empty rank, a
 * power law: fuzz_vcount), with the blocks packed in rank order; Alltoallw
 * is drawn as Alltoallv is and called with every block's datatype and byte
 * displacement.  The neighbourhood collectives run on a Cartesian grid made
 * over the slot's communicator for the call (fuzz_neighbor_grid: 1-D or 2-D,
 * periodic or not), valid calls only; their v and w forms with every block
 * the plain form's count, packed (the w form at byte displacements). */
#define FUZZ_COLLS                                                                          \
    (((1u << (STRATA_COLL_BARRIER + 1)) - 1) | (1u << STRATA_COLL_SCAN) |                     \
     (1u << STRATA_COLL_EXSCAN) | (1u << STRATA_COLL_REDUCE_SCATTER_BLOCK) |                  \
     (1u << STRATA_COLL_REDUCE_SCATTER) | (1u << STRATA_COLL_GATHERV) |                       \
     (1u << STRATA_COLL_SCATTERV) | (1u << STRATA_COLL_ALLGATHERV) |                          \
     (1u << STRATA_COLL_ALLTOALLV) | (1u << STRATA_COLL_ALLTOALLW) |                          \
     (1u << STRATA_COLL_NEIGHBOR_ALLGATHER) | (1u << STRATA_COLL_NEIGHBOR_ALLGATHERV) |           \
     (1u << STRATA_COLL_NEIGHBOR_ALLTOALL) | (1u << STRATA_COLL_NEIGHBOR_ALLTOALLV) |             \
     (1u << STRATA_COLL_NEIGHBOR_ALLTOALLW))

/* Blocks a neighbourhood call's buffers hold at most (a 2-D grid's). */
#define FUZZ_NEIGHBOR_BLOCKS 4

struct fuzz_opts {
    uint64_t seed;
    long calls;          /* calls to draw and run */
    size_t max_bytes;    /* largest buffer a call may allocate on a rank */
    unsigned colls;      /* bit per enum strata_coll that may be drawn */
    long only;           /* run this call alone (-1: all) */
    long elements;       /* with only: base elements per block instead of the drawn ones */
    int verbose;
    int errors;          /* also draw calls with an invalid argument */
    int shrink;
    int keep_going;      /* go on after a mismatch */
    int require_strata;  /* fail if strata served no communicator at all */
    int expect_all;      /* check every data mover's result against the expected bytes */
    int forms;           /* --forms: bit 0 blocking, 1 nonblocking, 2 persistent (default 1) */
    unsigned call_timeout; /* seconds a call may take before it counts as hung */
    size_t self_corrupt;  /* self-test: strata's output is damaged from this many elements */
    int self_hang;        /* self-test: world rank 1 skips strata's MPI_Barrier */
    int erroneous;        /* --erroneous: one rank's count differs, strata alone runs it */
    int self_erroneous;   /* self-test: 1 expects MPI_SUCCESS where MPI_ERR_TRUNCATE is due,
                             2 changes a guard byte after the erroneous call */
    int odd_first;        /* --odd-first: the others start the erroneous call once the odd
                             rank's has returned, or after half a second */
    int world_size, world_rank;
};
extern struct fuzz_opts fuzz_opt;

/* ---- Datatypes and ops (fuzz_types.c), inputs and outputs (fuzz_values.c) --- */

enum fuzz_kind {
    FK_INT,     /* C integer */
    FK_MULTI,   /* MPI_AINT, MPI_OFFSET, MPI_COUNT: no logical ops */
    FK_FLOAT,
    FK_COMPLEX,
    FK_BOOL,
    FK_BYTE,
    FK_PAIR,    /* MINLOC/MAXLOC pairs */
    FK_TEXT     /* MPI_CHAR, MPI_WCHAR: moved, never reduced */
};

enum fuzz_op {
    OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR,
    OP_MINLOC, OP_MAXLOC,
    OP_USER_SUM,    /* MPI_Op_create, commutative: a wrapping sum */
    OP_USER_AFFINE, /* MPI_Op_create, not commutative: composition of affine maps */
    FUZZ_NOPS
};

/* A predefined datatype: what a reduction defines of each element (value
 * runs: the rest is padding, which reductions may leave in any state). */
struct fuzz_base {
    const char *name;
    MPI_Datatype type;
    enum fuzz_kind kind;
    int width;          /* FK_INT/FK_MULTI: bytes; FK_FLOAT/FK_COMPLEX: bytes of one float */
    int is_signed;
    size_t size, extent, align;
    int nvalue;
    struct { size_t off, len; } value[2];
    /* Bytes an 80-bit long double leaves unused inside its 16: the host MPIs
     * may zero them when they pack (MPICH does), so nobody can rely on them. */
    int nunused;
    struct { size_t off, len; } unused[2];
    /* The type map: the bytes a send takes from each element, in order. */
    int ntmap;
    struct { size_t off, len; } tmap[2];
};


/* Shapes built over every predefined type. */
enum fuzz_shape {
    SH_PLAIN,   /* the type itself */
    SH_CONTIG,  /* contiguous(3, T) */
    SH_VECTOR,  /* vector(2 blocks of 2, stride 3), resized to 6 T: gaps inside and after */
    SH_RESIZED, /* T resized to twice its extent: a gap after each element */
    SH_LEADGAP, /* T at displacement extent(T), resized to 3 T: gaps before and after */
    FUZZ_NSHAPES
};

#define FUZZ_MAX_PER 4
struct fuzz_layout {
    const struct fuzz_base *base;
    enum fuzz_shape shape;
    MPI_Datatype type;
    int per;                     /* base elements per element */
    size_t extent;
    size_t off[FUZZ_MAX_PER];    /* where each base element lies in an element */
    char name[96];
};

extern int fuzz_nbases;
void fuzz_types_init(void);
void fuzz_types_free(void);
const struct fuzz_base *fuzz_base(int i);
const struct fuzz_layout *fuzz_layout(int base, enum fuzz_shape shape);
/* Bit per enum fuzz_op that applies to the base type (MPI-3.1 5.9.2). */
unsigned fuzz_ops_for(const struct fuzz_base *b);
MPI_Op fuzz_op_handle(enum fuzz_op op);
const char *fuzz_op_name(enum fuzz_op op);
int fuzz_op_parse(const char *name);

/* n bytes of the stream `seed`. */
void fuzz_fill_bytes(unsigned char *buf, size_t n, uint64_t seed);
/* count elements of layout l at buf: gaps from the byte stream, base
 * elements with values for op whose combination over comm_size ranks is
 * exact in any order (and avoids the host MPIs' known bugs). */
void fuzz_fill_values(unsigned char *buf, const struct fuzz_layout *l, size_t count,
                      enum fuzz_op op, int comm_size, uint64_t seed);
/* Whether byte `offset` of a buffer of elements of l holds no value: the
 * unused bytes of a long double, and in a reduction (`reduction`) every
 * byte of a base element outside its values (the holes of pair types). */
int fuzz_padding_byte(const struct fuzz_layout *l, size_t offset, int reduction);
/* Whether the floating base element holding byte `offset` of buffers a and
 * b has equal values in both (+0 and -0 are equal: the sign of an exact
 * zero result depends on the order of combination). */
int fuzz_same_float(const struct fuzz_layout *l, const unsigned char *a, const unsigned char *b,
                    size_t offset);
/* The base element at p, readable (for mismatch reports). */
void fuzz_show_base(const struct fuzz_base *b, const unsigned char *p, char *out, size_t len);

/* ---- Calls (fuzz_draw.c) ------------------------------------------------------- */

enum fuzz_error {
    FE_NONE,
    FE_COUNT,     /* a negative count, passed by every rank */
    FE_TYPE,      /* MPI_DATATYPE_NULL, passed by every rank */
    FE_ROOT,      /* root = size */
    FE_OP,        /* MPI_OP_NULL */
    FE_COMM,      /* MPI_COMM_NULL */
    FUZZ_NERRORS
};

enum { SIDE_SEND, SIDE_RECV };

struct fuzz_call {
    long index;
    enum strata_coll coll;
    int slot;                        /* communicator pool slot */
    int base;                        /* predefined type the layouts are made of */
    enum fuzz_shape shape[2][2];     /* [side][rank parity]; reductions: [0][0] everywhere */
    size_t elems;                    /* base elements per block (Bcast, reductions: in all) */
    size_t unit;                     /* elems is a multiple of this */
    enum fuzz_op op;
    uint32_t root_draw;              /* root = root_draw % size */
    int in_place;                    /* asked for; see fuzz_in_place() */
    int null_insignificant;          /* pass NULL for buffers the standard ignores */
    int misalign;                    /* bytes added to every buffer address */
    int late_rank_draw;              /* Barrier: this rank (mod size) enters late */
    enum fuzz_error error;
    int error_side;                  /* FE_COUNT, FE_TYPE: SIDE_SEND or SIDE_RECV */
    uint64_t data_seed;
    int form;                        /* strata's side: 0 blocking, 1 MPI_I<coll> + MPI_Wait,
                                        2 MPI_<coll>_init + MPI_Start + MPI_Wait (--forms) */
};

void fuzz_draw_init(void);
void fuzz_draw(long index, struct fuzz_call *c);
/* The call's root and in-place choice on a communicator of `size`. */
int fuzz_root(const struct fuzz_call *c, int size);
int fuzz_in_place(const struct fuzz_call *c, int size);
/* Whether the reduction collectives / the rooted ones / the v-collectives. */
/* strata-fuzz's exit status where the host cannot run what was asked
 * (ctest's SKIP_RETURN_CODE in tests/fuzz.cmake). */
#define FUZZ_SKIPPED 77

int fuzz_is_reduction(enum strata_coll coll);
int fuzz_is_rooted(enum strata_coll coll);
int fuzz_is_v(enum strata_coll coll);
/* Alltoallv, or Alltoallw drawn and built as it is. */
int fuzz_is_alltoallv(enum strata_coll coll);
/* A neighbourhood call's grid: dimensions (1 or 2) and whether periodic. */
void fuzz_neighbor_grid(const struct fuzz_call *c, int *ndims, int *periodic);
/* The v-collectives' and Reduce_scatter's base elements of block j of
 * `size` (Alltoallv: j = (sender + receiver) mod size, symmetric as its in
 * place form needs), from the call's count pattern; a multiple of c->unit. */
size_t fuzz_vcount(const struct fuzz_call *c, size_t elems, int size, int j);
const char *fuzz_vpattern_name(const struct fuzz_call *c);
/* One line naming everything about the call on a communicator of `size`. */
void fuzz_describe(const struct fuzz_call *c, size_t elems, int size, char *out, size_t len);

/* ---- Communicators (fuzz_comms.c) ------------------------------------------- */

#define FUZZ_SLOTS 6

struct fuzz_comm {
    MPI_Comm comm;        /* MPI_COMM_NULL: this rank is not in the slot's communicator */
    int rank, size;
    int ngroups;          /* disjoint communicators the split made */
    int members[FUZZ_MAX_WORLD]; /* world ranks of this rank's group, in rank order */
    char how[160];        /* how it was made */
};

/* Creates the pool as it is before call `at`: every slot (at = 0), or only
 * `slot` (replaying one call). */
void fuzz_comms_init(long at, int slot);
/* Replaces a slot's communicator if the seed says so before call `index`. */
void fuzz_comms_event(long index);
struct fuzz_comm *fuzz_comm_slot(int slot);
void fuzz_comms_free(void);

/* ---- Running and comparing (fuzz_check.c, fuzz_expect.c) ------------------ */

enum { ORIG, HOST, STRATA };

/* One buffer of a call on this rank, built three times. */
struct buf {
    const char *name;
    const struct fuzz_layout *l;
    size_t count;             /* elements of l per block */
    size_t bytes;             /* all blocks */
    int output;               /* compared with the host's; else must stay as built */
    int pass;                 /* 0: the buffer, 1: NULL, 2: MPI_IN_PLACE */
    int undefined;            /* its contents after the call are undefined (Exscan's at
                                 rank 0): not compared */
    unsigned char *mem[3];    /* ORIG, HOST, STRATA, each shifted by the call's misalign */
    size_t zone[2];           /* guard zones before (and the misalign) and after each copy
                                 (fuzz_guard_zones), filled with fuzz_guard_byte */
};

/* One call on this rank: its buffers and arguments. */
struct exec {
    int rank, size, root, in_place;
    struct buf send, recv;
    int scount, rcount;       /* the counts this rank passes */
    int *scounts, *sdispls, *rcounts, *rdispls; /* the v-collectives', Reduce_scatter's */
    MPI_Datatype stype, rtype;
    MPI_Op op;
    MPI_Comm comm;
    MPI_Comm grid;            /* a neighbourhood call's Cartesian grid (freed with the call),
                                 else MPI_COMM_NULL */
};

/* The seed of the inputs of world rank w in the call. */
uint64_t fuzz_input_seed(const struct fuzz_call *c, int world_rank);
/* The send and receive layouts of a communicator rank (by its parity). */
void fuzz_rank_layouts(const struct fuzz_call *c, int comm_rank, const struct fuzz_layout **ls,
                       const struct fuzz_layout **lr);
/* What this rank's receive buffer must hold after a call that moves data
 * (not a reduction), computed from every sender's regenerated input and the
 * datatypes' type maps alone: the arbiter when strata and the host differ.
 * Writes x->recv.bytes bytes to `expected`. */
void fuzz_expect_recv(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                      const struct exec *x, unsigned char *expected);

/* Guard zones around every buffer built from now on (0, 0: none). */
void fuzz_guard_zones(size_t before, size_t after);
/* Byte i of a guard zone (side 0 before the buffer, counted back from its
 * start; 1 after it): a position-dependent pattern. */
static inline unsigned char fuzz_guard_byte(size_t i, int side)
{
    return (unsigned char)(((i * 2654435761u) >> 13) ^ (side ? 0xA5 : 0x5A));
}
/* The pieces of fuzz_run, for fuzz_erroneous.c: this rank's buffers and
 * arguments for `elems` base elements per block, one run (strata: MPI_*,
 * else PMPI_*; returns the error class), and freeing them. */
void fuzz_build(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                struct exec *x);
int fuzz_invoke(const struct fuzz_call *c, const struct exec *x, int strata, int *early_exit);
void fuzz_release(const struct fuzz_call *c, struct exec *x);

/* What one call did on this rank. */
struct fuzz_outcome {
    int member;             /* this rank took part */
    int host_rc, strata_rc; /* error classes */
    int ran_strata;
    int served;             /* strata serves this collective on the communicator */
    int host_wrong;         /* the host's result differs from the expected one, strata's not */
    int mismatch;           /* buffers differ, or the error classes do */
    char report[1024];      /* the first difference, for this rank */
    char host_error[MPI_MAX_ERROR_STRING]; /* the host MPI's error, if it failed */
};

/* Runs the call with `elems` base elements per block on this rank's
 * communicator of the slot: the host MPI first, then strata (unless the host
 * rejected a valid call, or accepted an invalid one, on some rank), and
 * compares.  Collective over MPI_COMM_WORLD. */
void fuzz_run(const struct fuzz_call *c, size_t elems, struct fuzz_comm *fc,
              struct fuzz_outcome *out);

/* ---- Erroneous calls (--erroneous, fuzz_erroneous.c) ------------------------ */

/* The collectives whose counts strata checks across ranks (docs/DESIGN.md,
 * "Calls the ranks disagree on"): the v-collectives in their blocking form
 * only (--forms draws the others alone). */
#define FUZZ_ERRONEOUS_COLLS                                                                \
    (((1u << STRATA_COLL_BARRIER) - 1) | (1u << STRATA_COLL_GATHERV) |                      \
     (1u << STRATA_COLL_SCATTERV) | (1u << STRATA_COLL_ALLGATHERV) |                        \
     (1u << STRATA_COLL_ALLTOALLV))

/* The disagreement drawn for a call: communicator rank `odd` passes
 * odd_elems base elements per block (a multiple of the call's unit, never
 * the call's elems) where every other rank passes c->elems. */
struct fuzz_wrong {
    int odd;
    size_t odd_elems;
    char how[48];     /* "half", "double", "3 more", "0", ... */
};

/* Where strata's error class is not the documented one (fuzz_erroneous.c). */

void fuzz_draw_wrong(const struct fuzz_call *c, int size, struct fuzz_wrong *w);
/* Runs the call with w's counts through strata alone (MPI_ with
 * MPI_ERRORS_RETURN, a recording handler for the nonblocking and persistent
 * forms), every buffer between guard zones, and checks on this rank: the
 * zones and the send buffers unchanged, the error class (docs/TESTING.md,
 * "Bad arguments"), a bystander's data, that strata served it.
 * out->ran_strata: the call was erroneous and strata's (0 where the
 * communicator has one rank, strata leaves the collective or the op to the
 * host MPI, or this rank is not in it).  Not collective over the world. */
void fuzz_run_erroneous(const struct fuzz_call *c, const struct fuzz_wrong *w,
                        struct fuzz_comm *fc, struct fuzz_outcome *out);

/* ---- Watchdog and crash report (fuzz_watchdog.c) ---------------------------- */

/* The watchdog: a call that takes longer than fuzz_opt.call_timeout ends
 * the job (status 124) with a message naming the phase (`what`) and the
 * call (the last `context`); a fatal signal prints the same before the
 * handler that was there (the host MPI's backtrace) takes it. */
void fuzz_watchdog_install(void);
void fuzz_watchdog_context(const char *text);
void fuzz_watchdog_arm(const char *what);
void fuzz_watchdog_disarm(void);

#endif
