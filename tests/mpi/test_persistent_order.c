/* Persistent collectives (issue 29, items 3 and 4), results computed here
 * from the ranks' known inputs (no collective of the host or strata
 * computes what is checked):
 *   --order: requests matched by _init order while the ranks start them in
 *     different orders (odd ranks start them in reverse): Bcast + Barrier,
 *     Bcast + Allreduce, two Bcasts with different roots, and four requests
 *     on two communicators; each with MPI_Start one at a time (the even
 *     ranks wait on each before starting the next, the odd ones start all,
 *     then wait in their start order) and with MPI_Startall + MPI_Waitall;
 *     several rounds, new contents each;
 *   --split: starts that one order of the communicator cannot hold
 *     (batches split differently across ranks; starts before a blocking
 *     or nonblocking Bcast on some ranks, after it on others): each
 *     request on a plane of its own;
 *   --owned-args: Gatherv, Scatterv, Allgatherv, Alltoallv and
 *     Reduce_scatter initialised from heap arrays of counts and
 *     displacements (and a derived datatype) that are filled with garbage
 *     and freed before the first MPI_Start; several starts; on MPI-4 hosts
 *     with the large-count forms, the same for their _init_c forms.
 * Without the fix the first hangs (the test's timeout) and the second reads
 * freed arrays. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(name) MPI_##name##_init
#endif

#include "testutil.h"

#define ROUNDS 5

static int rank, size;

#ifdef INIT

/* One persistent request of a test and the buffers it works on. */
enum kind { K_BCAST, K_BARRIER, K_ALLREDUCE };
struct preq {
    enum kind kind;
    int root, count;
    MPI_Comm comm;
    int send[4], recv[4];
    MPI_Request req;
};

static void init_one(struct preq *p)
{
    int rc = MPI_SUCCESS;
    switch (p->kind) {
    case K_BCAST: rc = INIT(Bcast)(p->recv, p->count, MPI_INT, p->root, p->comm, MPI_INFO_NULL, &p->req); break;
    case K_BARRIER: rc = INIT(Barrier)(p->comm, MPI_INFO_NULL, &p->req); break;
    case K_ALLREDUCE:
        rc = INIT(Allreduce)(p->send, p->recv, p->count, MPI_INT, MPI_SUM, p->comm, MPI_INFO_NULL,
                             &p->req);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "_init of kind %d: error %d", p->kind, rc);
}

/* The contents of round `round` of request `i`, and what it must give. */
static int value(int round, int i, int r, int k) { return 1000 * round + 100 * i + 10 * r + k; }

static void fill_round(struct preq *p, int i, int round)
{
    int r;
    MPI_Comm_rank(p->comm, &r);
    for (int k = 0; k < p->count; k++) {
        p->send[k] = value(round, i, r, k);
        p->recv[k] = p->kind == K_BCAST && r == p->root ? value(round, i, r, k) : -1;
    }
}

static void check_round(const struct preq *p, int i, int round, const char *how)
{
    int n;
    MPI_Comm_size(p->comm, &n);
    for (int k = 0; k < p->count; k++) {
        int want = 0;
        if (p->kind == K_BCAST) want = value(round, i, p->root, k);
        if (p->kind == K_ALLREDUCE)
            for (int r = 0; r < n; r++) want += value(round, i, r, k);
        CHECK(p->recv[k] == want, "%s: request %d (kind %d root %d) round %d: element %d is %d, "
              "want %d", how, i, p->kind, p->root, round, k, p->recv[k], want);
    }
}

/* Starts the n requests in this rank's order and completes them: even ranks
 * in _init order, odd ranks in reverse.  startall: one MPI_Startall, one
 * MPI_Waitall; else MPI_Start one at a time (even ranks wait on each before
 * starting the next; odd ranks start all, then wait in their start order). */
static void run_round(struct preq *p, int n, int startall)
{
    int reverse = rank % 2;
    MPI_Request reqs[8];
    for (int j = 0; j < n; j++) reqs[j] = p[reverse ? n - 1 - j : j].req;
    if (startall) {
        CHECK(MPI_Startall(n, reqs) == MPI_SUCCESS, "MPI_Startall");
        MPI_Status st[8];
        CHECK(MPI_Waitall(n, reqs, st) == MPI_SUCCESS, "MPI_Waitall");
    } else if (!reverse) {
        for (int j = 0; j < n; j++) {
            CHECK(MPI_Start(&reqs[j]) == MPI_SUCCESS, "MPI_Start");
            CHECK(MPI_Wait(&reqs[j], MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
        }
    } else {
        for (int j = 0; j < n; j++) CHECK(MPI_Start(&reqs[j]) == MPI_SUCCESS, "MPI_Start");
        for (int j = 0; j < n; j++)
            CHECK(MPI_Wait(&reqs[j], MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
    }
}

static void order_case(struct preq *p, int n, const char *name)
{
    for (int i = 0; i < n; i++) init_one(&p[i]);
    for (int startall = 0; startall < 2; startall++) {
        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < n; i++) fill_round(&p[i], i, round);
            run_round(p, n, startall);
            for (int i = 0; i < n; i++) check_round(&p[i], i, round, name);
        }
    }
    for (int i = 0; i < n; i++) MPI_Request_free(&p[i].req);
    if (rank == 0) printf("order %s: passed\n", name);
}

static void order_tests(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm w = MPI_COMM_WORLD;
    struct preq bcast_barrier[2] = {{.kind = K_BCAST, .root = 0, .count = 1, .comm = w},
                                    {.kind = K_BARRIER, .comm = w}};
    order_case(bcast_barrier, 2, "bcast+barrier");
    struct preq bcast_allreduce[2] = {{.kind = K_BCAST, .root = 0, .count = 1, .comm = w},
                                      {.kind = K_ALLREDUCE, .count = 4, .comm = w}};
    order_case(bcast_allreduce, 2, "bcast+allreduce");
    struct preq two_bcasts[2] = {{.kind = K_BCAST, .root = 0, .count = 3, .comm = w},
                                 {.kind = K_BCAST, .root = size - 1, .count = 3, .comm = w}};
    order_case(two_bcasts, 2, "bcast+bcast");
    struct preq two_comms[4] = {{.kind = K_BCAST, .root = 0, .count = 2, .comm = w},
                                {.kind = K_ALLREDUCE, .count = 2, .comm = dup},
                                {.kind = K_ALLREDUCE, .count = 3, .comm = w},
                                {.kind = K_BCAST, .root = size - 1, .count = 1, .comm = dup}};
    order_case(two_comms, 4, "two-comms");
    /* A request inited between the others and never started holds nothing up. */
    struct preq skipped[3] = {{.kind = K_BCAST, .root = 0, .count = 1, .comm = w},
                              {.kind = K_BARRIER, .comm = w},
                              {.kind = K_ALLREDUCE, .count = 1, .comm = w}};
    init_one(&skipped[1]);
    struct preq started[2] = {skipped[0], skipped[2]};
    order_case(started, 2, "never-started");
    MPI_Request_free(&skipped[1].req);
    MPI_Comm_free(&dup);
}

/* --split: starts that no single order of the communicator can hold: batches split
 * differently (even ranks start B and wait on it alone, then A; odd ranks
 * start A and B together, A inited first), and starts placed on either side
 * of a blocking and of a nonblocking collective of the same communicator.
 * Each request runs on a plane of its own (context.h, strata_ctx_channel);
 * before, both hung. */
static void split_tests(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int even = rank % 2 == 0;
    struct preq ab[2] = {{.kind = K_ALLREDUCE, .count = 4, .comm = comm},
                         {.kind = K_BCAST, .root = size - 1, .count = 3, .comm = comm}};
    for (int i = 0; i < 2; i++) init_one(&ab[i]);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 2; i++) fill_round(&ab[i], i, round);
        MPI_Request *a = &ab[0].req, *b = &ab[1].req;
        if (even) {
            CHECK(MPI_Start(b) == MPI_SUCCESS && MPI_Wait(b, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "B alone");
            CHECK(MPI_Start(a) == MPI_SUCCESS && MPI_Wait(a, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "then A");
        } else {
            MPI_Request both[2] = {*a, *b};
            MPI_Status st[2];
            CHECK(MPI_Startall(2, both) == MPI_SUCCESS && MPI_Waitall(2, both, st) == MPI_SUCCESS,
                  "A and B together");
        }
        for (int i = 0; i < 2; i++) check_round(&ab[i], i, round, "split batches");
    }
    for (int i = 0; i < 2; i++) MPI_Request_free(&ab[i].req);
    if (rank == 0) printf("order split-batches: passed\n");

    struct preq p = {.kind = K_BCAST, .root = 0, .count = 2, .comm = comm};
    init_one(&p);
    for (int nonblocking = 0; nonblocking < 2; nonblocking++)
        for (int round = 0; round < ROUNDS; round++) {
            fill_round(&p, 0, round);
            int other = rank == size - 1 ? 7000 + round : -1;
            MPI_Request oreq = MPI_REQUEST_NULL;
            if (even) CHECK(MPI_Start(&p.req) == MPI_SUCCESS, "start before");
            if (nonblocking) MPI_Ibcast(&other, 1, MPI_INT, size - 1, comm, &oreq);
            else MPI_Bcast(&other, 1, MPI_INT, size - 1, comm);
            if (!even) CHECK(MPI_Start(&p.req) == MPI_SUCCESS, "start after");
            CHECK(MPI_Wait(&p.req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait");
            CHECK(MPI_Wait(&oreq, MPI_STATUS_IGNORE) == MPI_SUCCESS, "the other's wait");
            CHECK(other == 7000 + round, "the %s Bcast beside the start: %d, want %d",
                  nonblocking ? "nonblocking" : "blocking", other, 7000 + round);
            check_round(&p, 0, round, nonblocking ? "beside a nonblocking Bcast" : "beside a Bcast");
        }
    MPI_Request_free(&p.req);
    if (rank == 0) printf("order beside-collectives: passed\n");
    MPI_Comm_free(&comm);
}

/* ---- Arguments the application frees right after _init. */

enum vcoll { V_GATHERV, V_SCATTERV, V_ALLGATHERV, V_ALLTOALLV, V_RS, NV };
static const char *vname[NV] = {"Gatherv", "Scatterv", "Allgatherv", "Alltoallv",
                                "Reduce_scatter"};

/* Rank r's block: r + 1 elements, at displacement 2 * r * (r + 1) / 2 + r
 * (a gap of one element after each block). */
static int vcount(int r) { return r + 1; }
static int vdispl(int r) { return r * (r + 1) / 2 + r; }
static int vtotal(void) { return vdispl(size); }
static int vval(int round, int from, int to, int k) { return 100000 * round + 1000 * from + 10 * to + k; }

/* Counts and displacements on the heap, as mpi4py hands them. */
struct varrays {
    int *counts, *displs, *counts2, *displs2;
};

static struct varrays varrays_new(int alltoall)
{
    struct varrays a;
    size_t n = (size_t)size;
    a.counts = malloc(n * sizeof(int));
    a.displs = malloc(n * sizeof(int));
    a.counts2 = malloc(n * sizeof(int));
    a.displs2 = malloc(n * sizeof(int));
    for (int r = 0; r < size; r++) {
        /* Alltoallv: this rank sends vcount(rank) to each peer at r * size
         * and receives vcount(r) from peer r at vdispl(r). */
        a.counts[r] = alltoall ? vcount(rank) : vcount(r);
        a.displs[r] = alltoall ? r * (size + 1) : vdispl(r);
        a.counts2[r] = vcount(r);
        a.displs2[r] = vdispl(r);
    }
    return a;
}

/* What the application may do once _init returned: overwrite, then free. */
static void varrays_trash(struct varrays *a)
{
    size_t bytes = (size_t)size * sizeof(int);
    memset(a->counts, 0x7f, bytes);
    memset(a->displs, 0x7f, bytes);
    memset(a->counts2, 0x7f, bytes);
    memset(a->displs2, 0x7f, bytes);
    free(a->counts);
    free(a->displs);
    free(a->counts2);
    free(a->displs2);
}

struct vcase {
    enum vcoll coll;
    int send[512], recv[512];
    MPI_Request req;
};

static void vinit(struct vcase *c, MPI_Datatype blocktype)
{
    struct varrays a = varrays_new(c->coll == V_ALLTOALLV);
    int rc = MPI_ERR_INTERN, root = size - 1, mine = vcount(rank);
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c->coll) {
    case V_GATHERV:
        rc = INIT(Gatherv)(c->send, mine, MPI_INT, c->recv, a.counts, a.displs, MPI_INT, root, w,
                           MPI_INFO_NULL, &c->req);
        break;
    case V_SCATTERV:
        rc = INIT(Scatterv)(c->send, a.counts, a.displs, MPI_INT, c->recv, mine, MPI_INT, root, w,
                            MPI_INFO_NULL, &c->req);
        break;
    case V_ALLGATHERV:
        /* Counts of blocktype (one int): the type goes right after _init too. */
        rc = INIT(Allgatherv)(c->send, mine, MPI_INT, c->recv, a.counts, a.displs, blocktype, w,
                              MPI_INFO_NULL, &c->req);
        break;
    case V_ALLTOALLV:
        rc = INIT(Alltoallv)(c->send, a.counts, a.displs, MPI_INT, c->recv, a.counts2, a.displs2,
                             MPI_INT, w, MPI_INFO_NULL, &c->req);
        break;
    case V_RS:
        rc = INIT(Reduce_scatter)(c->send, c->recv, a.counts, MPI_INT, MPI_SUM, w, MPI_INFO_NULL,
                                  &c->req);
        break;
    default: break;
    }
    CHECK(rc == MPI_SUCCESS, "%s_init: error %d", vname[c->coll], rc);
    varrays_trash(&a);
}

/* The send buffer of a round (every element a known value), and the
 * receive buffer filled with a marker that gaps must keep. */
static void vfill(struct vcase *c, int round)
{
    for (int k = 0; k < 512; k++) c->recv[k] = -7;
    for (int k = 0; k < 512; k++) c->send[k] = -9;
    switch (c->coll) {
    case V_SCATTERV:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < vcount(r); k++) c->send[vdispl(r) + k] = vval(round, rank, r, k);
        break;
    case V_ALLTOALLV:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < vcount(rank); k++)
                c->send[r * (size + 1) + k] = vval(round, rank, r, k);
        break;
    case V_RS:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < vcount(r); k++)
                c->send[r * (r + 1) / 2 + k] = vval(round, rank, r, k);
        break;
    default:
        for (int k = 0; k < vcount(rank); k++) c->send[k] = vval(round, rank, 0, k);
        break;
    }
}

static void vcheck_gathered(const struct vcase *c, int round)
{
    for (int r = 0; r < size; r++) {
        for (int k = 0; k < vcount(r); k++)
            CHECK(c->recv[vdispl(r) + k] == vval(round, r, 0, k), "%s round %d: from %d element "
                  "%d is %d", vname[c->coll], round, r, k, c->recv[vdispl(r) + k]);
        CHECK(c->recv[vdispl(r) + vcount(r)] == -7, "%s round %d: gap after %d written",
              vname[c->coll], round, r);
    }
}

static void vcheck(const struct vcase *c, int round)
{
    int root = size - 1;
    switch (c->coll) {
    case V_GATHERV:
        if (rank == root) vcheck_gathered(c, round);
        break;
    case V_ALLGATHERV: vcheck_gathered(c, round); break;
    case V_SCATTERV:
        for (int k = 0; k < vcount(rank); k++)
            CHECK(c->recv[k] == vval(round, root, rank, k), "Scatterv round %d: element %d is %d",
                  round, k, c->recv[k]);
        break;
    case V_ALLTOALLV:
        for (int r = 0; r < size; r++)
            for (int k = 0; k < vcount(r); k++)
                CHECK(c->recv[vdispl(r) + k] == vval(round, r, rank, k), "Alltoallv round %d: "
                      "from %d element %d is %d", round, r, k, c->recv[vdispl(r) + k]);
        break;
    case V_RS:
        for (int k = 0; k < vcount(rank); k++) {
            int want = 0;
            for (int r = 0; r < size; r++) want += vval(round, r, rank, k);
            CHECK(c->recv[k] == want, "Reduce_scatter round %d: element %d is %d, want %d",
                  round, k, c->recv[k], want);
        }
        break;
    default: break;
    }
}

static void owned_args_tests(void)
{
    CHECK(vtotal() + size < 512 && size * (size + 1) + size < 512, "too many ranks");
    static struct vcase cases[NV];
    MPI_Datatype blocktype;
    MPI_Type_contiguous(1, MPI_INT, &blocktype);
    MPI_Type_commit(&blocktype);
    for (int v = 0; v < NV; v++) {
        cases[v].coll = (enum vcoll)v;
        vinit(&cases[v], blocktype);
    }
    MPI_Type_free(&blocktype);
    for (int round = 0; round < ROUNDS; round++) {
        for (int v = 0; v < NV; v++) {
            vfill(&cases[v], round);
            CHECK(MPI_Start(&cases[v].req) == MPI_SUCCESS, "MPI_Start %s", vname[v]);
            CHECK(MPI_Wait(&cases[v].req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
            vcheck(&cases[v], round);
        }
    }
    for (int v = 0; v < NV; v++) MPI_Request_free(&cases[v].req);
    if (rank == 0) printf("owned arguments: passed\n");
}

#if defined(STRATA_HAVE_LARGE_COUNT) && defined(STRATA_HAVE_PERSISTENT_COLL)
/* The large-count forms: Allgatherv_init_c and Reduce_scatter_init_c from
 * heap MPI_Count / MPI_Aint arrays freed after _init. */
static void owned_args_large(void)
{
    static struct vcase ag = {.coll = V_ALLGATHERV}, rs = {.coll = V_RS};
    MPI_Count *counts = malloc((size_t)size * sizeof *counts);
    MPI_Aint *displs = malloc((size_t)size * sizeof *displs);
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(r);
        displs[r] = vdispl(r);
    }
    CHECK(MPI_Allgatherv_init_c(ag.send, vcount(rank), MPI_INT, ag.recv, counts, displs, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &ag.req) == MPI_SUCCESS,
          "Allgatherv_init_c");
    CHECK(MPI_Reduce_scatter_init_c(rs.send, rs.recv, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &rs.req) == MPI_SUCCESS,
          "Reduce_scatter_init_c");
    memset(counts, 0x7f, (size_t)size * sizeof *counts);
    memset(displs, 0x7f, (size_t)size * sizeof *displs);
    free(counts);
    free(displs);
    for (int round = 0; round < ROUNDS; round++) {
        vfill(&ag, round);
        vfill(&rs, round);
        MPI_Request both[2] = {ag.req, rs.req};
        CHECK(MPI_Startall(2, both) == MPI_SUCCESS, "MPI_Startall");
        MPI_Status st[2];
        CHECK(MPI_Waitall(2, both, st) == MPI_SUCCESS, "MPI_Waitall");
        vcheck(&ag, round);
        vcheck(&rs, round);
    }
    MPI_Request_free(&ag.req);
    MPI_Request_free(&rs.req);
    if (rank == 0) printf("owned arguments (large count): passed\n");
}
#endif
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
#ifdef INIT
    if (!strcmp(mode, "--order")) {
        order_tests();
    } else if (!strcmp(mode, "--split")) {
        split_tests();
    } else if (!strcmp(mode, "--owned-args")) {
        owned_args_tests();
#if defined(STRATA_HAVE_LARGE_COUNT) && defined(STRATA_HAVE_PERSISTENT_COLL)
        owned_args_large();
#endif
    } else {
        CHECK(0, "usage: test_persistent_order --order | --split | --owned-args (got '%s')", mode);
    }
#else
    (void)mode;
    if (rank == 0) printf("no persistent collectives in this MPI\n");
#endif
    test_pass("persistent_order");
    MPI_Finalize();
    return 0;
}
