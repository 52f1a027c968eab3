/* The MPI-4 large-count nonblocking and persistent collectives
 * (MPI_Ibcast_c, ..., MPI_Bcast_init_c, ...) through strata, where the
 * host MPI defines them: every result compared with the host MPI's own
 * blocking _c form (PMPI_..._c) on the same input, every call served by
 * strata (one node; across virtual nodes: counted, whatever route the
 * blocking form takes there) and counted under its C name (STRATA_STATS:
 * MPI_Ibcast, MPI_Bcast_init).  All fifteen collectives with a count:
 * counts 0 to 100003 elements, the first and last root, uneven
 * v-collective layouts with one rank's block empty; persistent requests
 * started three times with new contents each time; ranks mixing the _c
 * and the int forms in one operation; bad arguments answered with the
 * host's error class.  Exits 77 (skipped) where the host has no _c forms.
 *
 *   test_count_c_nb */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

#if defined(STRATA_HAVE_LARGE_COUNT) && defined(STRATA_HAVE_PERSISTENT_COLL)

static int rank, size, across_nodes;

enum { BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, RSB, RS, SCAN, EXSCAN,
       GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, NCOLL };
static const enum strata_coll coll_id[NCOLL] = {
    STRATA_COLL_BCAST,      STRATA_COLL_REDUCE,    STRATA_COLL_ALLREDUCE,
    STRATA_COLL_GATHER,     STRATA_COLL_SCATTER,   STRATA_COLL_ALLGATHER,
    STRATA_COLL_ALLTOALL,   STRATA_COLL_REDUCE_SCATTER_BLOCK, STRATA_COLL_REDUCE_SCATTER,
    STRATA_COLL_SCAN,       STRATA_COLL_EXSCAN,    STRATA_COLL_GATHERV,
    STRATA_COLL_SCATTERV,   STRATA_COLL_ALLGATHERV, STRATA_COLL_ALLTOALLV};
static const int rooted_coll[NCOLL] = {[BCAST] = 1, [REDUCE] = 1, [GATHER] = 1, [SCATTER] = 1,
                                       [GATHERV] = 1, [SCATTERV] = 1};

/* One call's arguments: n elements per block (v-collectives: around n). */
struct args {
    int c, root;
    MPI_Count n, scount, rcount;
    MPI_Count *scounts, *rcounts; /* [size] */
    MPI_Aint *sdispls, *rdispls;
    int *send, *recv, *want;
    size_t cap; /* elements of send, recv and want */
    MPI_Op op;
};

/* Rank q's block in the rooted and gathered v-collectives: uneven, rank
 * 1 % size's empty; Alltoallv: what q sends to j. */
static MPI_Count vcount(MPI_Count n, int q) { return q == 1 % size ? 0 : n + 3 * q; }
static MPI_Count acount(MPI_Count n, int q, int j) { return (q + 2 * j) % 3 == 1 ? 0 : n + q + 2 * j; }

/* Displacements in reverse rank order with a gap of 2 after each block. */
static void layout(const MPI_Count *count, MPI_Aint *displ)
{
    MPI_Aint at = 0;
    for (int q = size - 1; q >= 0; q--) {
        displ[q] = at;
        at += (MPI_Aint)count[q] + 2;
    }
}

static void *xcalloc(size_t n, size_t each)
{
    void *p = calloc(n ? n : 1, each);
    CHECK(p, "cannot allocate %zu elements", n);
    return p;
}

static void args_open(struct args *a, int c, MPI_Count n, int root)
{
    memset(a, 0, sizeof *a);
    a->c = c;
    a->n = n;
    a->root = root;
    a->op = c == SCAN || c == EXSCAN || c == ALLREDUCE ? MPI_SUM : c == REDUCE ? MPI_MAX : MPI_SUM;
    a->cap = (size_t)size * (size_t)(n + 4 * size + 4);
    a->send = xcalloc(a->cap, sizeof(int));
    a->recv = xcalloc(a->cap, sizeof(int));
    a->want = xcalloc(a->cap, sizeof(int));
    a->scounts = xcalloc((size_t)size, sizeof(MPI_Count));
    a->rcounts = xcalloc((size_t)size, sizeof(MPI_Count));
    a->sdispls = xcalloc((size_t)size, sizeof(MPI_Aint));
    a->rdispls = xcalloc((size_t)size, sizeof(MPI_Aint));
    a->scount = a->rcount = n;
    switch (c) {
    case RS:
        for (int q = 0; q < size; q++) a->rcounts[q] = vcount(n, q);
        break;
    case GATHERV:
    case ALLGATHERV:
        a->scount = vcount(n, rank);
        for (int q = 0; q < size; q++) a->rcounts[q] = vcount(n, q);
        layout(a->rcounts, a->rdispls);
        break;
    case SCATTERV:
        a->rcount = vcount(n, rank);
        for (int q = 0; q < size; q++) a->scounts[q] = vcount(n, q);
        layout(a->scounts, a->sdispls);
        break;
    case ALLTOALLV:
        for (int q = 0; q < size; q++) {
            a->scounts[q] = acount(n, rank, q);
            a->rcounts[q] = acount(n, q, rank);
        }
        layout(a->scounts, a->sdispls);
        layout(a->rcounts, a->rdispls);
        break;
    }
}

static void args_close(struct args *a)
{
    free(a->send);
    free(a->recv);
    free(a->want);
    free(a->scounts);
    free(a->rcounts);
    free(a->sdispls);
    free(a->rdispls);
}

/* New contents for one call: the send buffer from seed, the receive buffer
 * cleared (Bcast: the root's data in place). */
static void refill(struct args *a, int seed)
{
    for (size_t i = 0; i < a->cap; i++)
        a->send[i] = (int)((i * 2654435761u + (unsigned)seed * 40503u) >> 9) % 1000 - 500 + rank;
    memset(a->recv, 0, a->cap * sizeof(int));
    if (a->c == BCAST && rank == a->root) memcpy(a->recv, a->send, a->cap * sizeof(int));
}

enum form { REF, NB, INIT };

/* The call of a->c in one form: REF the host's blocking _c form into
 * want (the reference), NB the nonblocking _c form, INIT the persistent
 * _init_c form (both into recv, *req set). */
#define FORMS(ref, nb, init, ...)                                                            \
    (form == REF  ? ref(__VA_ARGS__)                                                       \
     : form == NB ? nb(__VA_ARGS__, req)                                                   \
                  : init(__VA_ARGS__, MPI_INFO_NULL, req))
static int issue(struct args *a, enum form form, MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int *s = a->send, *r = form == REF ? a->want : a->recv;
    switch (a->c) {
    case BCAST:
        if (form == REF) memcpy(a->want, a->recv, a->cap * sizeof(int));
        return FORMS(PMPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, r, a->n, MPI_INT, a->root, w);
    case REDUCE:
        return FORMS(PMPI_Reduce_c, MPI_Ireduce_c, MPI_Reduce_init_c, s, r, a->n, MPI_INT, a->op,
                     a->root, w);
    case ALLREDUCE:
        return FORMS(PMPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, s, r, a->n,
                     MPI_INT, a->op, w);
    case GATHER:
        return FORMS(PMPI_Gather_c, MPI_Igather_c, MPI_Gather_init_c, s, a->n, MPI_INT, r, a->n,
                     MPI_INT, a->root, w);
    case SCATTER:
        return FORMS(PMPI_Scatter_c, MPI_Iscatter_c, MPI_Scatter_init_c, s, a->n, MPI_INT, r,
                     a->n, MPI_INT, a->root, w);
    case ALLGATHER:
        return FORMS(PMPI_Allgather_c, MPI_Iallgather_c, MPI_Allgather_init_c, s, a->n, MPI_INT,
                     r, a->n, MPI_INT, w);
    case ALLTOALL:
        return FORMS(PMPI_Alltoall_c, MPI_Ialltoall_c, MPI_Alltoall_init_c, s, a->n, MPI_INT, r,
                     a->n, MPI_INT, w);
    case RSB:
        return FORMS(PMPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c,
                     MPI_Reduce_scatter_block_init_c, s, r, a->n, MPI_INT, a->op, w);
    case RS:
        return FORMS(PMPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c, s,
                     r, a->rcounts, MPI_INT, a->op, w);
    case SCAN:
        return FORMS(PMPI_Scan_c, MPI_Iscan_c, MPI_Scan_init_c, s, r, a->n, MPI_INT, a->op, w);
    case EXSCAN:
        return FORMS(PMPI_Exscan_c, MPI_Iexscan_c, MPI_Exscan_init_c, s, r, a->n, MPI_INT, a->op,
                     w);
    case GATHERV:
        return FORMS(PMPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c, s, a->scount, MPI_INT, r,
                     a->rcounts, a->rdispls, MPI_INT, a->root, w);
    case SCATTERV:
        return FORMS(PMPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c, s, a->scounts,
                     a->sdispls, MPI_INT, r, a->rcount, MPI_INT, a->root, w);
    case ALLGATHERV:
        return FORMS(PMPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c, s, a->scount,
                     MPI_INT, r, a->rcounts, a->rdispls, MPI_INT, w);
    case ALLTOALLV:
        return FORMS(PMPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, s, a->scounts,
                     a->sdispls, MPI_INT, r, a->rcounts, a->rdispls, MPI_INT, w);
    }
    return MPI_ERR_INTERN;
}

/* recv against want (Exscan: rank 0's result is undefined). */
static void compare(const struct args *a, const char *what, int start)
{
    if (a->c == EXSCAN && rank == 0) return;
    for (size_t i = 0; i < a->cap; i++)
        CHECK(a->recv[i] == a->want[i],
              "%s, count %lld, root %d, start %d: element %zu is %d, the host gives %d", what,
              (long long)a->n, a->root, start, i, a->recv[i], a->want[i]);
}

/* Calls strata counted under id since `before` (served only, on one node). */
static unsigned long long counted(int id)
{
    return strata_stats_local_calls(id, 1) + (across_nodes ? strata_stats_local_calls(id, 0) : 0);
}

static void one(int c, MPI_Count n, int root)
{
    struct args a;
    args_open(&a, c, n, root);
    int nb_id = strata_call_id(coll_id[c], STRATA_FORM_NONBLOCKING);
    int p_id = strata_call_id(coll_id[c], STRATA_FORM_PERSISTENT);
    const char *nb_name = strata_call_name(nb_id), *p_name = strata_call_name(p_id);
    MPI_Request req;

    /* Nonblocking. */
    refill(&a, 1);
    CHECK(issue(&a, REF, NULL) == MPI_SUCCESS, "host's %s", nb_name);
    unsigned long long before = counted(nb_id);
    CHECK(issue(&a, NB, &req) == MPI_SUCCESS, "%s_c", nb_name);
    CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s_c: MPI_Wait", nb_name);
    CHECK(req == MPI_REQUEST_NULL, "%s_c: the request is not freed by MPI_Wait", nb_name);
    CHECK(counted(nb_id) == before + 1,
          "%s_c was not %s by strata under its C name (%llu calls before, %llu after)", nb_name,
          across_nodes ? "counted" : "served", before, counted(nb_id));
    compare(&a, nb_name, 0);

    /* Persistent: decided and counted at _init, started three times with
     * new contents each time. */
    before = counted(p_id);
    CHECK(issue(&a, INIT, &req) == MPI_SUCCESS, "%s_c", p_name);
    for (int start = 0; start < 3; start++) {
        refill(&a, 10 + start);
        CHECK(issue(&a, REF, NULL) == MPI_SUCCESS, "host's %s", p_name);
        CHECK(MPI_Start(&req) == MPI_SUCCESS, "%s_c: MPI_Start", p_name);
        CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s_c: MPI_Wait", p_name);
        CHECK(req != MPI_REQUEST_NULL, "%s_c: MPI_Wait freed a persistent request", p_name);
        compare(&a, p_name, start);
    }
    CHECK(counted(p_id) == before + 1,
          "%s_c was not %s by strata under its C name, once (%llu calls before, %llu after)",
          p_name, across_nodes ? "counted" : "served", before, counted(p_id));
    CHECK(MPI_Request_free(&req) == MPI_SUCCESS, "%s_c: MPI_Request_free", p_name);
    args_close(&a);
}

/* Ranks may mix the forms in one operation: even ranks the _c form with
 * MPI_INT, odd ranks the int form with pairs of ints (same signature). */
static void mixed(void)
{
    enum { N = 30001 * 2 };
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int *v = xcalloc(N, sizeof(int)), *want = xcalloc(N, sizeof(int));
    int *sum = xcalloc(N, sizeof(int));
    MPI_Request req;
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++) want[i] = i * 7 + root;
        memcpy(v, rank == root ? want : sum, sizeof(int) * N); /* sum is zero still */
        int rc = rank % 2 == 0 ? MPI_Ibcast_c(v, N, MPI_INT, root, MPI_COMM_WORLD, &req)
                               : MPI_Ibcast(v, N / 2, pair, root, MPI_COMM_WORLD, &req);
        CHECK(rc == MPI_SUCCESS && MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "mixed MPI_Ibcast_c / MPI_Ibcast");
        CHECK(!memcmp(v, want, sizeof(int) * N), "mixed MPI_Ibcast_c / MPI_Ibcast, root %d", root);
    }
    /* Persistent Allreduce, _init_c beside _init. */
    for (int i = 0; i < N; i++) v[i] = i + rank;
    int rc = rank % 2 == 0
                 ? MPI_Allreduce_init_c(v, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                        &req)
                 : MPI_Allreduce_init(v, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                      &req);
    CHECK(rc == MPI_SUCCESS, "mixed MPI_Allreduce_init_c / MPI_Allreduce_init");
    for (int start = 0; start < 2; start++) {
        for (int i = 0; i < N; i++) v[i] = i + rank + start;
        CHECK(MPI_Start(&req) == MPI_SUCCESS && MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "mixed persistent Allreduce start");
        for (int i = 0; i < N; i++)
            CHECK(sum[i] == size * (i + start) + size * (size - 1) / 2,
                  "mixed persistent Allreduce, start %d: element %d is %d", start, i, sum[i]);
    }
    MPI_Request_free(&req);
    MPI_Type_free(&pair);
    free(v);
    free(want);
    free(sum);
}

/* Bad arguments reach the host MPI, which reports them as it would have
 * (MPI_ERRORS_RETURN on a duplicate of MPI_COMM_WORLD). */
static void bad_arguments(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int buf[4] = {0}, cls, host_cls;
    MPI_Request req = MPI_REQUEST_NULL, hreq = MPI_REQUEST_NULL;
    MPI_Error_class(MPI_Ibcast_c(buf, -1, MPI_INT, 0, comm, &req), &cls);
    MPI_Error_class(PMPI_Ibcast_c(buf, -1, MPI_INT, 0, comm, &hreq), &host_cls);
    CHECK(cls == host_cls && cls != MPI_SUCCESS, "MPI_Ibcast_c count -1: class %d, the host's %d",
          cls, host_cls);
    /* strata's _init leaves an error in the arguments to the start (as its
     * int form does: persistent.c), the host's _init reports it at once. */
    int rc = MPI_Allreduce_init_c(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, comm, MPI_INFO_NULL,
                                  &req);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
    MPI_Error_class(rc, &cls);
    MPI_Error_class(PMPI_Allreduce_init_c(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, comm,
                                          MPI_INFO_NULL, &hreq), &host_cls);
    CHECK(cls == host_cls && cls != MPI_SUCCESS,
          "MPI_Allreduce_init_c with MPI_OP_NULL (_init or start): class %d, the host's %d", cls,
          host_cls);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    setenv("STRATA_STATS", "/dev/null", 0); /* to count the routes */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *vnodes = getenv("STRATA_VIRTUAL_NODES");
    across_nodes = vnodes && atoi(vnodes) > 1;
    CHECK(!strcmp(strata_call_name(strata_call_id(STRATA_COLL_BCAST, STRATA_FORM_NONBLOCKING)),
                  "MPI_Ibcast") &&
              !strcmp(strata_call_name(strata_call_id(STRATA_COLL_ALLTOALLV,
                                                      STRATA_FORM_PERSISTENT)),
                      "MPI_Alltoallv_init"),
          "STRATA_STATS names of the nonblocking and persistent forms");
    const MPI_Count counts[] = {0, 7, 1000, 100003};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        for (int c = 0; c < NCOLL; c++) {
            one(c, counts[k], 0);
            if (rooted_coll[c] && size > 1) one(c, counts[k], size - 1);
        }
    mixed();
    if (test_errors_return())
        bad_arguments();
    else
        test_skip_errors("bad arguments to the nonblocking _c forms");
    test_pass("count_c_nb");
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    printf("SKIP: the host MPI has no MPI-4 large-count nonblocking and persistent "
           "collectives\n");
    return 77;
}

#endif
