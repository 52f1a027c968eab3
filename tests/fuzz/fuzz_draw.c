/* Drawing a call: every choice is a function of (seed, call index), so all
 * ranks draw the same call and any call can be drawn again alone.
 *
 * Sizes lean towards the edges where strata changes its mind: 0 and 1
 * element, small primes, and one element either side of every size
 * strata's configuration names (flag-line payloads, copy-in/copy-out
 * regions, pipeline chunks, reduction slices, segments between nodes, CMA
 * call sizes, pages), those sizes doubled and tripled (several chunks), and
 * divided by the communicator's size (where a block collective's total
 * crosses them); the rest are log-uniform up to --max-bytes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/plane.h" /* STRATA_TINY_MAX */
#include "config/config.h"
#include "fuzz.h"
#include "testutil.h"

#define MAX_EDGES 32
static size_t edges[MAX_EDGES];
static int nedges;

static void add_edge(size_t bytes)
{
    if (bytes == 0 || nedges == MAX_EDGES) return;
    for (int i = 0; i < nedges; i++)
        if (edges[i] == bytes) return;
    edges[nedges++] = bytes;
}

static int intel_host; /* test_host_is_intel(), from fuzz_draw_init */

void fuzz_draw_init(void)
{
    intel_host = test_host_is_intel();
    const struct strata_config *cfg = strata_config();
    add_edge(4096);
    add_edge(STRATA_TINY_MAX);
    add_edge(65536);
    if (!cfg) {
        /* strata is off (STRATA_DISABLE=1): the documented defaults. */
        add_edge(16384);
        add_edge(262144);
        add_edge(131072);
        return;
    }
    add_edge(cfg->cico_max);
    for (int i = 0; i < cfg->nchunk && i < 8; i++) add_edge(cfg->chunk[i]);
    add_edge(cfg->reduce_chunk);
    add_edge(cfg->min_slice);
    add_edge(cfg->net_segment);
    if (cfg->cma_max_per_call < ((size_t)1 << 30)) add_edge(cfg->cma_max_per_call);
}

int fuzz_is_reduction(enum strata_coll coll)
{
    return coll == STRATA_COLL_REDUCE || coll == STRATA_COLL_ALLREDUCE ||
           coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN ||
           coll == STRATA_COLL_REDUCE_SCATTER_BLOCK || coll == STRATA_COLL_REDUCE_SCATTER;
}

int fuzz_is_rooted(enum strata_coll coll)
{
    return coll == STRATA_COLL_BCAST || coll == STRATA_COLL_REDUCE ||
           coll == STRATA_COLL_GATHER || coll == STRATA_COLL_SCATTER ||
           coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV;
}

int fuzz_is_alltoallv(enum strata_coll coll)
{
    return coll == STRATA_COLL_ALLTOALLV || coll == STRATA_COLL_ALLTOALLW;
}

int fuzz_is_v(enum strata_coll coll)
{
    return coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV ||
           coll == STRATA_COLL_ALLGATHERV || fuzz_is_alltoallv(coll);
}

static const char *vpattern_names[3] = {"uniform", "one empty rank", "power law"};

static int vpattern(const struct fuzz_call *c) { return (int)((c->root_draw >> 8) % 3); }

const char *fuzz_vpattern_name(const struct fuzz_call *c) { return vpattern_names[vpattern(c)]; }

size_t fuzz_vcount(const struct fuzz_call *c, size_t elems, int size, int j)
{
    switch (vpattern(c)) {
    case 1: return j == size / 2 ? 0 : elems;
    case 2: return elems / c->unit / (size_t)(j + 1) * c->unit;
    default: return elems;
    }
}

static int has_in_place(enum strata_coll coll)
{
    return coll != STRATA_COLL_BCAST && coll != STRATA_COLL_BARRIER &&
           !strata_coll_is_neighbor(coll);
}

void fuzz_neighbor_grid(const struct fuzz_call *c, int *ndims, int *periodic)
{
    *ndims = 1 + (int)((c->root_draw >> 16) & 1);
    *periodic = (int)((c->root_draw >> 17) & 1);
}

/* Collectives whose buffers hold one block per rank. */
static int per_rank_blocks(enum strata_coll coll)
{
    return coll == STRATA_COLL_GATHER || coll == STRATA_COLL_SCATTER ||
           coll == STRATA_COLL_ALLGATHER || coll == STRATA_COLL_ALLTOALL || fuzz_is_v(coll) ||
           coll == STRATA_COLL_REDUCE_SCATTER_BLOCK || coll == STRATA_COLL_REDUCE_SCATTER ||
           strata_coll_is_neighbor(coll);
}

int fuzz_root(const struct fuzz_call *c, int size)
{
    if (!fuzz_is_rooted(c->coll)) return -1;
    if (c->error == FE_ROOT) return size;
    return (int)(c->root_draw % (uint32_t)size);
}

int fuzz_in_place(const struct fuzz_call *c, int size)
{
    if (!c->in_place) return 0;
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
    /* MPICH 4.0.2: an in-place MPI_Reduce at a root other than 0 crashes
     * from about 2 KiB (pmodels/mpich#6540, shared/MACHINE-NOTES.md). */
    const struct fuzz_layout *l = fuzz_layout(c->base, c->shape[0][0]);
    if (c->coll == STRATA_COLL_REDUCE && fuzz_root(c, size) != 0 &&
        c->elems / (size_t)l->per * l->extent > 2048)
        return 0;
#else
    (void)size;
#endif
    return 1;
}

/* MPICH 4.0.2 reports "Message truncated" for Gather, Scatter and in-place
 * Alltoall of the padded pair types (shared/MACHINE-NOTES.md names
 * MPI_DOUBLE_INT and MPI_LONG_INT; this fuzzer found MPI_SHORT_INT and
 * MPI_LONG_DOUBLE_INT too). */
static int host_rejects_type(const struct fuzz_call *c)
{
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
    MPI_Datatype t = fuzz_base(c->base)->type;
    int padded = t == MPI_DOUBLE_INT || t == MPI_LONG_INT || t == MPI_SHORT_INT ||
                 t == MPI_LONG_DOUBLE_INT;
    return padded && (c->coll == STRATA_COLL_GATHER || c->coll == STRATA_COLL_SCATTER ||
                      c->coll == STRATA_COLL_GATHERV || c->coll == STRATA_COLL_SCATTERV ||
                      ((c->coll == STRATA_COLL_ALLTOALL || fuzz_is_alltoallv(c->coll)) &&
                       c->in_place));
#else
    (void)c;
    return 0;
#endif
}

/* Derived datatypes of MPI_C_LONG_DOUBLE_COMPLEX break both hosts (found
 * by this fuzzer): Open MPI 4.1.4 overflows a buffer (glibc's fortify check
 * aborts) when it unpacks a rendezvous message into one with gaps
 * (MPI_Scatter, 4 ranks, 176 elements received as vector(2 x 2, stride 3));
 * MPICH 4.0.2 reports "Message truncated" (MPI_Scatter, 3 ranks, 516
 * elements sent as contiguous(3), received resized). */
static int host_rejects_shapes(const struct fuzz_call *c)
{
    return fuzz_base(c->base)->type == MPI_C_LONG_DOUBLE_COMPLEX;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static enum fuzz_shape draw_shape(struct fuzz_rng *r, int plain_percent)
{
    if ((int)fuzz_below(r, 100) < plain_percent) return SH_PLAIN;
    return (enum fuzz_shape)(1 + fuzz_below(r, FUZZ_NSHAPES - 1));
}

static void draw_type_and_op(struct fuzz_rng *r, struct fuzz_call *c)
{
    if (!fuzz_is_reduction(c->coll)) {
        c->base = (int)fuzz_below(r, (uint64_t)fuzz_nbases);
        return;
    }
    /* A reducible type; a user op on one in ten integer calls. */
    unsigned ops;
    do {
        c->base = (int)fuzz_below(r, (uint64_t)fuzz_nbases);
        ops = fuzz_ops_for(fuzz_base(c->base));
    } while (!ops);
    unsigned user = ops & ((1u << OP_USER_SUM) | (1u << OP_USER_AFFINE));
    if (user && fuzz_below(r, 10) == 0) ops = user;
    else ops &= ~user;
    int n = __builtin_popcount(ops), k = (int)fuzz_below(r, (uint64_t)n);
    for (int o = 0; o < FUZZ_NOPS; o++)
        if ((ops >> o) & 1 && k-- == 0) c->op = (enum fuzz_op)o;
}

/* Base elements per block, a multiple of c->unit, within --max-bytes. */
static size_t draw_elems(struct fuzz_rng *r, const struct fuzz_call *c)
{
    const struct fuzz_base *b = fuzz_base(c->base);
    size_t mem_per_elem = 0; /* largest memory per base element over the layouts in use */
    for (int side = 0; side < 2; side++)
        for (int par = 0; par < 2; par++) {
            const struct fuzz_layout *l = fuzz_layout(c->base, c->shape[side][par]);
            size_t m = (l->extent + (size_t)l->per - 1) / (size_t)l->per;
            if (m > mem_per_elem) mem_per_elem = m;
        }
    size_t nblocks = per_rank_blocks(c->coll) ? (size_t)fuzz_opt.world_size : 1;
    if (strata_coll_is_neighbor(c->coll) && nblocks < FUZZ_NEIGHBOR_BLOCKS)
        nblocks = FUZZ_NEIGHBOR_BLOCKS;
    size_t cap_units = fuzz_opt.max_bytes / (nblocks * mem_per_elem * c->unit);
    size_t sig_unit = b->size * c->unit, units;
    uint64_t kind = fuzz_below(r, 100);
    if (kind < 20) {
        static const size_t small[] = {0, 1, 1, 2, 3, 5, 7, 11, 13};
        units = small[fuzz_below(r, sizeof small / sizeof small[0])];
    } else if (kind < 60 && nedges) {
        size_t bytes = edges[fuzz_below(r, (uint64_t)nedges)];
        uint64_t scale = fuzz_below(r, 6);
        if (scale == 3) bytes *= 2;
        else if (scale == 4) bytes *= 3;
        else if (scale == 5 && nblocks > 1) bytes /= nblocks;
        long u = (long)((bytes + sig_unit / 2) / sig_unit) + (long)fuzz_below(r, 3) - 1;
        units = u < 0 ? 0 : (size_t)u;
    } else {
        double top = log((double)cap_units + 1.0);
        units = (size_t)exp(top * (double)(fuzz_next(r) >> 11) / 9007199254740992.0);
    }
    if (units > cap_units) units = cap_units;
    return units * c->unit;
}

static enum fuzz_error draw_error(struct fuzz_rng *r, enum strata_coll coll)
{
    enum fuzz_error ok[FUZZ_NERRORS];
    int n = 0;
    /* Open MPI 4.1.4's MPI_Allgather dereferences MPI_COMM_NULL before it
     * checks it (a segmentation fault, found by this fuzzer). */
#if defined(OPEN_MPI)
    if (coll != STRATA_COLL_ALLGATHER)
#endif
        ok[n++] = FE_COMM;
    /* MPICH 4.0.2 does not check the count of MPI_Reduce and MPI_Allreduce:
     * a negative one fails an assertion or crashes (found by this fuzzer). */
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
    if (coll != STRATA_COLL_BARRIER && !fuzz_is_reduction(coll) && !fuzz_is_alltoallv(coll))
#else
    /* Alltoallv's counts are arrays that differ per rank: no negative
     * count every rank passes alike. */
    if (coll != STRATA_COLL_BARRIER && !fuzz_is_alltoallv(coll))
#endif
        ok[n++] = FE_COUNT;
    /* MPICH 5.0 does not check MPI_DATATYPE_NULL in the reduce-scatters and
     * scans: it fails an assertion (dt_ptr, mpir_datatype.h; Reduce_scatter_block
     * found by this fuzzer, Scan and Exscan by test_rs_scan); nor under the
     * standard ABI, whose runtime may be MPICH 5's. */
#if (defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 50000000) || defined(MPI_ABI_VERSION)
    if (coll != STRATA_COLL_BARRIER && !fuzz_is_reduction(coll))
#else
    if (coll != STRATA_COLL_BARRIER)
#endif
        ok[n++] = FE_TYPE;
    if (fuzz_is_rooted(coll)) ok[n++] = FE_ROOT;
    if (fuzz_is_reduction(coll)) ok[n++] = FE_OP;
    return ok[fuzz_below(r, (uint64_t)n)];
}

void fuzz_draw(long index, struct fuzz_call *c)
{
    struct fuzz_rng r = {fuzz_hash(fuzz_opt.seed, (uint64_t)index * 2 + 1)};
    memset(c, 0, sizeof *c);
    c->index = index;
    int n = __builtin_popcount(fuzz_opt.colls), k = (int)fuzz_below(&r, (uint64_t)n);
    for (int coll = 0; coll < STRATA_NCOLLS; coll++)
        if ((fuzz_opt.colls >> coll) & 1 && k-- == 0) c->coll = (enum strata_coll)coll;
    /* MPI_COMM_WORLD or its duplicate four times in ten: on few ranks most
     * splits are small, and single-rank ones strata leaves to the host. */
    c->slot = fuzz_below(&r, 10) < 4 ? (int)fuzz_below(&r, 2)
                                      : 2 + (int)fuzz_below(&r, FUZZ_SLOTS - 2);
    c->error = fuzz_opt.errors && !strata_coll_is_neighbor(c->coll) && fuzz_below(&r, 40) == 0
                   ? draw_error(&r, c->coll)
                   : FE_NONE;
    /* The argument every rank passes and checks: Gather's send side, Scatter's
     * receive side (the other sides count at the root only); Bcast and the
     * reductions have one count and one datatype, called "send" here. */
    c->error_side = c->coll == STRATA_COLL_SCATTER || c->coll == STRATA_COLL_SCATTERV
                      ? SIDE_RECV
                  : c->coll == STRATA_COLL_ALLGATHER || c->coll == STRATA_COLL_ALLTOALL ||
                          fuzz_is_alltoallv(c->coll)
                      ? (int)fuzz_below(&r, 2)
                      : SIDE_SEND;
    c->in_place = has_in_place(c->coll) && !c->error && fuzz_below(&r, 4) == 0;
    do {
        draw_type_and_op(&r, c);
    } while (host_rejects_type(c));
    if (fuzz_is_reduction(c->coll)) {
        /* One datatype on every rank, as the standard requires of reductions.
         * Both host MPIs reject predefined ops on derived datatypes
         * (MPI_ERR_OP): derived ones go with user ops only. */
        enum fuzz_shape s = c->op < OP_USER_SUM ? SH_PLAIN : draw_shape(&r, 50);
#if defined(OPEN_MPI)
        /* Open MPI 4.1.4's ring MPI_Allreduce corrupts the heap on a
         * datatype whose data starts after a gap (true_lb > 0; found by
         * this fuzzer: 2 ranks, 77211 elements, any user op). */
        if (s == SH_LEADGAP) s = SH_RESIZED;
#endif
        /* Intel MPI 2021.19: MPI_Allreduce with a user op on such a type
         * leaves the receive buffer unwritten (test_user_ops found it;
         * this fuzzer too, on its standard-ABI library: 2 ranks, 1
         * MPI_INT16_T at displacement 1, user-sum). */
        if (intel_host && s == SH_LEADGAP) s = SH_RESIZED;
#if defined(MPICH_VERSION) || defined(MPI_ABI_VERSION)
        /* MPICH 4.0.2's MPI_Reduce_scatter_block and MPI_Reduce_scatter with
         * a non-commutative op on a power-of-two communicator (its butterfly
         * algorithm) size a temporary buffer by the datatype's true extent
         * and fill it at its extent: a type with a gap before or after its
         * data overruns MPICH's heap (a crash in PMPI_; found by this fuzzer:
         * 2 ranks, 13864 MPI_UNSIGNED_LONG as vector(2 x 2, stride 3) resized
         * to 6, op user-affine; reproducer in docs/TESTING.md).  Contiguous(3)
         * has no gap and keeps a derived type in the call. */
        if ((c->coll == STRATA_COLL_REDUCE_SCATTER_BLOCK ||
             c->coll == STRATA_COLL_REDUCE_SCATTER) &&
            c->op == OP_USER_AFFINE && s != SH_PLAIN)
            s = SH_CONTIG;
#endif
        c->shape[0][0] = c->shape[0][1] = c->shape[1][0] = c->shape[1][1] = s;
    } else {
        for (int side = 0; side < 2; side++)
            for (int par = 0; par < 2; par++) c->shape[side][par] = draw_shape(&r, 50);
        if (host_rejects_shapes(c))
            for (int side = 0; side < 2; side++)
                for (int par = 0; par < 2; par++) c->shape[side][par] = SH_PLAIN;
        /* The v-collectives: one layout per side on every rank.  Open MPI
         * 4.1.4's MPI_Allgatherv hangs (PMPI_, without strata) when ranks'
         * types differ with equal signatures (found by this fuzzer: 3 ranks,
         * MPI_INT8_T against a vector of 4 of them, power-law counts). */
        if (fuzz_is_v(c->coll))
            for (int side = 0; side < 2; side++) c->shape[side][1] = c->shape[side][0];
        /* Intel MPI 2021.19's MPI_Allgather with receive datatypes other
         * than the send ones (same signature) leaves blocks unwritten, and
         * writes outside its buffers here (glibc's munmap_chunk() aborts;
         * docs/TESTING.md): one datatype for the whole call there. */
        if (intel_host && c->coll == STRATA_COLL_ALLGATHER)
            for (int side = 0; side < 2; side++)
                for (int par = 0; par < 2; par++) c->shape[side][par] = c->shape[0][0];
    }
    c->unit = 1;
    for (int side = 0; side < 2; side++)
        for (int par = 0; par < 2; par++) {
            size_t per = (size_t)fuzz_layout(c->base, c->shape[side][par])->per;
            c->unit = c->unit / gcd(c->unit, per) * per;
        }
    c->elems = c->coll == STRATA_COLL_BARRIER ? 0 : draw_elems(&r, c);
    c->root_draw = (uint32_t)fuzz_next(&r);
    c->null_insignificant = (int)fuzz_below(&r, 2);
    c->misalign = fuzz_base(c->base)->align == 1 ? (int)fuzz_below(&r, 8) : 0;
    c->late_rank_draw = (int)fuzz_below(&r, FUZZ_MAX_WORLD);
    c->data_seed = fuzz_hash(fuzz_opt.seed ^ 0xda7a, (uint64_t)index);
    /* The form strata's side is called in (--forms), from a hash of its own
     * so that the other draws of a seed stay what they were.  The first
     * eight collectives, valid calls only: the host's blocking form is the
     * reference, and its error class may differ from its nonblocking one. */
    int nforms = __builtin_popcount(fuzz_opt.forms);
    if (nforms > 1 && !c->error && c->coll <= STRATA_COLL_BARRIER) {
        int k = (int)(fuzz_hash(fuzz_opt.seed ^ 0xf0f0, (uint64_t)index) % (uint64_t)nforms);
        for (int f = 0; f < 3; f++)
            if ((fuzz_opt.forms >> f) & 1 && k-- == 0) c->form = f;
    } else if (nforms == 1 && !c->error && c->coll <= STRATA_COLL_BARRIER) {
        c->form = __builtin_ctz((unsigned)fuzz_opt.forms);
    }
}

static const char *error_names[FUZZ_NERRORS] = {
    "", "a negative count", "MPI_DATATYPE_NULL", "root = size", "MPI_OP_NULL", "MPI_COMM_NULL"};

void fuzz_describe(const struct fuzz_call *c, size_t elems, int size, char *out, size_t len)
{
    int n = snprintf(out, len, "%s", strata_coll_name(c->coll));
    if (c->coll != STRATA_COLL_BARRIER) {
        const struct fuzz_base *b = fuzz_base(c->base);
        n += snprintf(out + n, len - (size_t)n, ", %zu x %s per %s (%zu bytes)", elems, b->name,
                      per_rank_blocks(c->coll) ? "block" : "buffer", elems * b->size);
        for (int side = 0; side < 2; side++) {
            if (fuzz_is_reduction(c->coll) || c->coll == STRATA_COLL_BCAST) {
                if (side) break;
                if (c->shape[0][0] == c->shape[0][1] || c->coll != STRATA_COLL_BCAST) {
                    const struct fuzz_layout *l = fuzz_layout(c->base, c->shape[0][0]);
                    n += snprintf(out + n, len - (size_t)n, ", type %zu x %s",
                                  elems / (size_t)l->per, l->name);
                    continue;
                }
            }
            const struct fuzz_layout *e = fuzz_layout(c->base, c->shape[side][0]);
            const struct fuzz_layout *o = fuzz_layout(c->base, c->shape[side][1]);
            const char *what = c->coll == STRATA_COLL_BCAST ? "type" : side ? "recv" : "send";
            if (e == o)
                n += snprintf(out + n, len - (size_t)n, ", %s %zu x %s", what,
                              elems / (size_t)e->per, e->name);
            else
                n += snprintf(out + n, len - (size_t)n, ", %s %zu x %s on even ranks, %zu x %s "
                              "on odd ones", what, elems / (size_t)e->per, e->name,
                              elems / (size_t)o->per, o->name);
        }
        if (fuzz_is_reduction(c->coll))
            n += snprintf(out + n, len - (size_t)n, ", op %s", fuzz_op_name(c->op));
    }
    if (fuzz_is_v(c->coll) || c->coll == STRATA_COLL_REDUCE_SCATTER)
        n += snprintf(out + n, len - (size_t)n, ", counts %s (blocks packed in rank order)",
                      fuzz_vpattern_name(c));
    if (fuzz_is_rooted(c->coll) && size > 0)
        n += snprintf(out + n, len - (size_t)n, ", root %d", fuzz_root(c, size));
    if (strata_coll_is_neighbor(c->coll)) {
        int nd, periodic;
        fuzz_neighbor_grid(c, &nd, &periodic);
        n += snprintf(out + n, len - (size_t)n, ", on a %s %d-D Cartesian grid",
                      periodic ? "periodic" : "non-periodic", nd);
    }
    if (size > 0 && fuzz_in_place(c, size))
        n += snprintf(out + n, len - (size_t)n, ", MPI_IN_PLACE");
    if (c->null_insignificant && fuzz_is_rooted(c->coll))
        n += snprintf(out + n, len - (size_t)n, ", NULL where insignificant");
    if (c->misalign) n += snprintf(out + n, len - (size_t)n, ", buffers at +%d", c->misalign);
    if (c->form)
        n += snprintf(out + n, len - (size_t)n, ", strata's %s form",
                      c->form == 1 ? "nonblocking" : "persistent");
    if (c->error == FE_COUNT || c->error == FE_TYPE)
        snprintf(out + n, len - (size_t)n, ", invalid: %s as the %s", error_names[c->error],
                 c->coll == STRATA_COLL_BCAST || fuzz_is_reduction(c->coll) ? "argument"
                 : c->error_side == SIDE_SEND ? "send argument" : "receive argument");
    else if (c->error)
        snprintf(out + n, len - (size_t)n, ", invalid: %s", error_names[c->error]);
}
