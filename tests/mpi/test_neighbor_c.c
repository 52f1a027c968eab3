/* The large-count forms of MPI_Alltoallw and the five neighbourhood
 * collectives (MPI_Neighbor_allgather_c, ..., their MPI_I..._c and
 * _init_c forms) through strata, where the host MPI defines them: every
 * result compared byte for byte with the host MPI's own (PMPI_..._c on the
 * same input), every call served by strata under its C name (STRATA_STATS).
 * Topologies: a periodic 2-D grid of the ranks (at 2 ranks each rank's
 * neighbours are the other rank twice and itself twice), and a distributed
 * graph with a doubled edge; blocks of 1 int to past the copy-in/copy-out
 * limit (16 KiB), counts per pair and byte displacements in reverse order
 * with gaps; a persistent request started twice with new data; ranks mixing
 * the _c and the int form of one call.
 *
 *   test_neighbor_c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

#ifdef STRATA_HAVE_LARGE_COUNT

enum { FILL = 0x5A, NCOLLS = 6 };
enum form { HOST, BLOCKING, NB, INIT };

static int rank, size;

#ifdef STRATA_HAVE_PERSISTENT_COLL
#define INIT_C(name, ...) MPI_##name##_init_c(__VA_ARGS__)
#else
#define INIT_C(name, ...) MPI_ERR_OTHER
#endif

static const enum strata_coll colls[NCOLLS] = {
    STRATA_COLL_ALLTOALLW,         STRATA_COLL_NEIGHBOR_ALLGATHER,
    STRATA_COLL_NEIGHBOR_ALLGATHERV, STRATA_COLL_NEIGHBOR_ALLTOALL,
    STRATA_COLL_NEIGHBOR_ALLTOALLV, STRATA_COLL_NEIGHBOR_ALLTOALLW};

static void *xcalloc(size_t n, size_t each)
{
    void *p = calloc(n ? n : 1, each ? each : 1);
    CHECK(p, "out of memory");
    return p;
}

/* One side: n blocks with peers[i] (MPI_PROC_NULL: none). */
struct side {
    int n;
    const int *peers;
    MPI_Count count, *counts;
    MPI_Aint *displs, *bdispls; /* elements (v forms), bytes (w forms) */
    MPI_Datatype *types;
    int *buf;
    size_t ints;
};

struct call {
    enum strata_coll coll;
    MPI_Comm comm;
    struct side s, r;
    int *want; /* the host's result */
};

/* Ints of a block from s to d: per pair, so that duplicate edges match
 * whatever order the host pairs them in. */
static MPI_Count pair_ints(int s, int d, MPI_Count base) { return base + (s + 2 * d) % 3; }

/* Fills side x (recv: the receive side) for coll with blocks of about base ints. */
static void side_open(struct side *x, enum strata_coll coll, int recv, MPI_Count base)
{
    x->counts = xcalloc((size_t)x->n, sizeof(MPI_Count));
    x->displs = xcalloc((size_t)x->n, sizeof(MPI_Aint));
    x->bdispls = xcalloc((size_t)x->n, sizeof(MPI_Aint));
    x->types = xcalloc((size_t)x->n, sizeof(MPI_Datatype));
    int gather = coll == STRATA_COLL_NEIGHBOR_ALLGATHER || coll == STRATA_COLL_NEIGHBOR_ALLGATHERV;
    int vgather = coll == STRATA_COLL_NEIGHBOR_ALLGATHERV; /* a count per sender */
    size_t pos = 0;
    for (int i = x->n - 1; i >= 0; i--) { /* reverse order, a gap of i % 3 ints after each */
        int p = x->peers[i] < 0 ? rank : x->peers[i];
        int s = recv ? p : rank, d = recv ? rank : p;
        x->counts[i] = vgather ? base + s % 3 : pair_ints(s, d, base);
        x->types[i] = MPI_INT;
        x->displs[i] = (MPI_Aint)pos;
        x->bdispls[i] = (MPI_Aint)(pos * sizeof(int));
        pos += (size_t)x->counts[i] + (size_t)(i % 3);
    }
    x->count = vgather ? base + rank % 3 : base;
    int runs = coll == STRATA_COLL_NEIGHBOR_ALLTOALL || (recv && coll == STRATA_COLL_NEIGHBOR_ALLGATHER);
    if (runs) pos = (size_t)x->n * (size_t)x->count;
    if (gather && !recv) pos = (size_t)x->count;
    x->ints = pos;
    x->buf = xcalloc(pos + 1, sizeof(int));
}

static void side_close(struct side *x)
{
    free(x->counts);
    free(x->displs);
    free(x->bdispls);
    free(x->types);
    free(x->buf);
}

/* New send data, both receive buffers cleared to FILL. */
static void refill(struct call *c, int seed)
{
    for (size_t i = 0; i < c->s.ints; i++) c->s.buf[i] = (int)(rank * 100003 + seed * 7919 + (int)i);
    memset(c->r.buf, FILL, c->r.ints * sizeof(int));
    memset(c->want, FILL, c->r.ints * sizeof(int));
}

/* The call in one form (HOST: PMPI_..._c into want; int_form: the int
 * function, for the mixed case, with every count within int). */
static int issue(struct call *c, enum form form, int int_form, MPI_Request *req)
{
    struct side *s = &c->s, *r = &c->r;
    void *rb = form == HOST ? c->want : r->buf;
    int ic[64], id[64], rc2[64], rd2[64];
#define FORMS(name, lower, ...)                                                              \
    (form == HOST       ? PMPI_##name##_c(__VA_ARGS__, c->comm)                            \
     : form == BLOCKING ? MPI_##name##_c(__VA_ARGS__, c->comm)                             \
     : form == NB       ? MPI_I##lower##_c(__VA_ARGS__, c->comm, req)                      \
                        : INIT_C(name, __VA_ARGS__, c->comm, MPI_INFO_NULL, req))
    if (int_form) {
        CHECK(s->n <= 64 && r->n <= 64, "too many neighbours for the int form");
        for (int i = 0; i < s->n; i++) ic[i] = (int)s->counts[i], id[i] = (int)s->displs[i];
        for (int i = 0; i < r->n; i++) rc2[i] = (int)r->counts[i], rd2[i] = (int)r->displs[i];
    }
    switch (c->coll) {
    case STRATA_COLL_ALLTOALLW:
        return FORMS(Alltoallw, alltoallw, s->buf, s->counts, s->bdispls, s->types, rb, r->counts, r->bdispls,
                     r->types);
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
        if (int_form)
            return MPI_Neighbor_allgather(s->buf, (int)s->count, MPI_INT, rb, (int)r->count,
                                          MPI_INT, c->comm);
        return FORMS(Neighbor_allgather, neighbor_allgather, s->buf, s->count, MPI_INT, rb, r->count, MPI_INT);
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
        if (int_form)
            return MPI_Neighbor_allgatherv(s->buf, (int)s->count, MPI_INT, rb, rc2, rd2, MPI_INT,
                                           c->comm);
        return FORMS(Neighbor_allgatherv, neighbor_allgatherv, s->buf, s->count, MPI_INT, rb, r->counts, r->displs,
                     MPI_INT);
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
        return FORMS(Neighbor_alltoall, neighbor_alltoall, s->buf, s->count, MPI_INT, rb, r->count, MPI_INT);
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
        if (int_form)
            return MPI_Neighbor_alltoallv(s->buf, ic, id, MPI_INT, rb, rc2, rd2, MPI_INT, c->comm);
        return FORMS(Neighbor_alltoallv, neighbor_alltoallv, s->buf, s->counts, s->displs, MPI_INT, rb, r->counts,
                     r->displs, MPI_INT);
    case STRATA_COLL_NEIGHBOR_ALLTOALLW:
        return FORMS(Neighbor_alltoallw, neighbor_alltoallw, s->buf, s->counts, s->bdispls, s->types, rb, r->counts,
                     r->bdispls, r->types);
    default: return MPI_ERR_INTERN;
    }
#undef FORMS
}

static void compare(const struct call *c, const char *what, MPI_Count base, int start)
{
    for (size_t i = 0; i < c->r.ints; i++)
        CHECK(c->r.buf[i] == c->want[i],
              "%s, %lld ints, start %d: int %zu is %d, the host's %d", what, (long long)base,
              start, i, c->r.buf[i], c->want[i]);
}

/* Calls of coll in `form` strata served under their C name. */
static unsigned long long served(enum strata_coll coll, enum strata_coll_form form)
{
    return strata_stats_local_calls(strata_call_id(coll, form), 1);
}

/* Every form of c against the host's blocking _c form. */
static void forms(struct call *c, MPI_Count base)
{
    static const enum strata_coll_form ids[] = {0, STRATA_FORM_BLOCKING, STRATA_FORM_NONBLOCKING,
                                                STRATA_FORM_PERSISTENT};
#ifdef STRATA_HAVE_PERSISTENT_COLL
    const int last = INIT;
#else
    const int last = NB; /* no _init_c without MPI-4's persistent collectives */
#endif
    for (int f = BLOCKING; f <= last; f++) {
        const char *name = strata_call_name(strata_call_id(c->coll, ids[f]));
        unsigned long long before = served(c->coll, ids[f]);
        MPI_Request req = MPI_REQUEST_NULL;
        int starts = f == INIT ? 2 : 1;
        if (f == INIT) CHECK(issue(c, INIT, 0, &req) == MPI_SUCCESS, "%s_c", name);
        for (int start = 0; start < starts; start++) {
            refill(c, 3 * f + start);
            CHECK(issue(c, HOST, 0, NULL) == MPI_SUCCESS, "the host's %s_c", name);
            if (f == BLOCKING) CHECK(issue(c, BLOCKING, 0, NULL) == MPI_SUCCESS, "%s_c", name);
            if (f == NB) CHECK(issue(c, NB, 0, &req) == MPI_SUCCESS, "%s_c", name);
            if (f == INIT) CHECK(MPI_Start(&req) == MPI_SUCCESS, "%s_c: MPI_Start", name);
            if (f != BLOCKING)
                CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s_c: MPI_Wait", name);
            compare(c, name, base, start);
        }
        if (f == INIT) CHECK(MPI_Request_free(&req) == MPI_SUCCESS, "%s_c: free", name);
        CHECK(served(c->coll, ids[f]) == before + 1,
              "%s_c was not served by strata under its C name (%llu before, %llu after)", name,
              before, served(c->coll, ids[f]));
    }
    /* Even ranks the _c form, odd ranks the int one: the same call. */
    if (c->coll == STRATA_COLL_ALLTOALLW || c->coll == STRATA_COLL_NEIGHBOR_ALLTOALL ||
        c->coll == STRATA_COLL_NEIGHBOR_ALLTOALLW)
        return; /* their int forms are exercised by test_neighbor */
    refill(c, 99);
    CHECK(issue(c, HOST, 0, NULL) == MPI_SUCCESS, "the host's mixed call");
    CHECK(issue(c, BLOCKING, rank % 2, NULL) == MPI_SUCCESS, "mixed _c and int forms");
    compare(c, "mixed _c and int forms", base, 0);
}

/* The in- and out-neighbours of comm (Alltoallw: every rank). */
static void neighbours(MPI_Comm comm, enum strata_coll coll, int **in, int *nin, int **out,
                       int *nout)
{
    if (coll == STRATA_COLL_ALLTOALLW) {
        *nin = *nout = size;
        *in = xcalloc((size_t)size, sizeof(int));
        *out = xcalloc((size_t)size, sizeof(int));
        for (int r = 0; r < size; r++) (*in)[r] = (*out)[r] = r;
        return;
    }
    int status, weighted, ndims = 0;
    MPI_Topo_test(comm, &status);
    if (status == MPI_CART) {
        MPI_Cartdim_get(comm, &ndims);
        *nin = *nout = 2 * ndims;
    } else {
        MPI_Dist_graph_neighbors_count(comm, nin, nout, &weighted);
    }
    *in = xcalloc((size_t)*nin, sizeof(int));
    *out = xcalloc((size_t)*nout, sizeof(int));
    /* A Cartesian rank's neighbours: -1 then +1 in each dimension, both sides. */
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(comm, d, 1, &(*in)[2 * d], &(*in)[2 * d + 1]);
        (*out)[2 * d] = (*in)[2 * d];
        (*out)[2 * d + 1] = (*in)[2 * d + 1];
    }
    if (status != MPI_CART)
        MPI_Dist_graph_neighbors(comm, *nin, *in, MPI_UNWEIGHTED, *nout, *out, MPI_UNWEIGHTED);
}

static void topology(MPI_Comm comm)
{
    const MPI_Count bases[] = {1, 1000, 5000};
    for (int k = 0; k < NCOLLS; k++) {
        int *in, *out, nin, nout;
        MPI_Comm on = colls[k] == STRATA_COLL_ALLTOALLW ? MPI_COMM_WORLD : comm;
        neighbours(on, colls[k], &in, &nin, &out, &nout);
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
            struct call c = {colls[k], on, {.n = nout, .peers = out}, {.n = nin, .peers = in},
                             NULL};
            side_open(&c.s, c.coll, 0, bases[b]);
            side_open(&c.r, c.coll, 1, bases[b]);
            c.want = xcalloc(c.r.ints + 1, sizeof(int));
            forms(&c, bases[b]);
            side_close(&c.s);
            side_close(&c.r);
            free(c.want);
        }
        free(in);
        free(out);
    }
}

int main(int argc, char **argv)
{
    setenv("STRATA_STATS", "/dev/null", 0); /* to count the routes */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* A periodic 2-D grid: duplicate edges and self-loops where a dimension
     * has one or two ranks. */
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm grid, graph;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    topology(grid);
    /* A distributed graph: rank + 1 twice, rank - 1 once. */
    int dests[3] = {(rank + 1) % size, (rank + 1) % size, (rank + size - 1) % size};
    int sources[3] = {(rank + size - 1) % size, (rank + size - 1) % size, (rank + 1) % size};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, sources, MPI_UNWEIGHTED, 3, dests,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    topology(graph);
    MPI_Comm_free(&grid);
    MPI_Comm_free(&graph);
    test_pass("neighbor_c");
    MPI_Finalize();
    return 0;
}

#else

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("SKIP: the host MPI has no MPI-4 large-count functions\n");
    return 77;
}

#endif
