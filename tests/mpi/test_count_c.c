/* The MPI-4 large-count collectives (MPI_Bcast_c, ...) through strata, where
 * the host MPI defines them: every result compared with the host MPI's own
 * (PMPI_..._c on the same input), every call served by strata and counted
 * under its C name (STRATA_STATS), counts 0 to 100003 elements, every root,
 * MPI_IN_PLACE, two ops; ranks mixing the _c and the int form in one call;
 * and bad arguments answered with the host's error class.
 *
 *   test_count_c */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/colls.h"
#include "testutil.h"
#include "util/stats.h"

static int rank, size;

#define SERVED(coll, what, call)                                                           \
    do {                                                                                   \
        unsigned long long before_ = strata_stats_local_calls((coll), 1);                  \
        int rc_ = (call);                                                                  \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", (what), rc_);                          \
        CHECK(strata_stats_local_calls((coll), 1) == before_ + 1,                          \
              "%s was not served by strata (or not counted under its C name)", (what));    \
    } while (0)

/* Alltoall across nodes is the host's by design: counted, not served. */
#define COUNTED(coll, what, call)                                                          \
    do {                                                                                   \
        unsigned long long before_ = strata_stats_local_calls((coll), 0) +                 \
                                     strata_stats_local_calls((coll), 1);                  \
        int rc_ = (call);                                                                  \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", (what), rc_);                          \
        CHECK(strata_stats_local_calls((coll), 0) + strata_stats_local_calls((coll), 1) == \
                  before_ + 1, "%s was not counted under its C name", (what));             \
    } while (0)

static int across_nodes;

static void *xcalloc(size_t n, size_t each)
{
    void *p = calloc(n ? n : 1, each);
    CHECK(p, "cannot allocate %zu elements", n);
    return p;
}

static void fill(int *v, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) v[i] = (int)((i * 2654435761u) >> 7) % 1000 - 500 + seed;
}

static void same(const int *got, const int *want, size_t n, const char *what, long long count,
                 int root)
{
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s, count %lld, root %d: element %zu is %d, the host gives %d",
              what, count, root, i, got[i], want[i]);
}

#ifdef STRATA_HAVE_LARGE_COUNT

static void rooted(MPI_Count count, int root)
{
    size_t n = (size_t)count, all = n * (size_t)size;
    int *a = xcalloc(all, sizeof(int)), *b = xcalloc(all, sizeof(int));
    int *in = xcalloc(all, sizeof(int));
    fill(in, all, rank);

    memcpy(a, in, n * sizeof(int));
    memcpy(b, in, n * sizeof(int));
    SERVED(STRATA_COLL_BCAST, "MPI_Bcast_c", MPI_Bcast_c(a, count, MPI_INT, root, MPI_COMM_WORLD));
    PMPI_Bcast_c(b, count, MPI_INT, root, MPI_COMM_WORLD);
    same(a, b, n, "MPI_Bcast_c", count, root);

    MPI_Op ops[2] = {MPI_SUM, MPI_MAX};
    for (int o = 0; o < 2; o++) {
        memset(a, 0, n * sizeof(int));
        memset(b, 0, n * sizeof(int));
        SERVED(STRATA_COLL_REDUCE, "MPI_Reduce_c",
               MPI_Reduce_c(in, a, count, MPI_INT, ops[o], root, MPI_COMM_WORLD));
        PMPI_Reduce_c(in, b, count, MPI_INT, ops[o], root, MPI_COMM_WORLD);
        if (rank == root) same(a, b, n, "MPI_Reduce_c", count, root);
        /* in place at the root */
        memcpy(a, in, n * sizeof(int));
        SERVED(STRATA_COLL_REDUCE, "MPI_Reduce_c in place",
               MPI_Reduce_c(rank == root ? MPI_IN_PLACE : in, rank == root ? a : NULL, count,
                            MPI_INT, ops[o], root, MPI_COMM_WORLD));
        if (rank == root) same(a, b, n, "MPI_Reduce_c in place", count, root);
    }

    memset(a, 0, all * sizeof(int));
    memset(b, 0, all * sizeof(int));
    SERVED(STRATA_COLL_GATHER, "MPI_Gather_c",
           MPI_Gather_c(in, count, MPI_INT, a, count, MPI_INT, root, MPI_COMM_WORLD));
    PMPI_Gather_c(in, count, MPI_INT, b, count, MPI_INT, root, MPI_COMM_WORLD);
    if (rank == root) same(a, b, all, "MPI_Gather_c", count, root);

    memset(a, 0, all * sizeof(int));
    memset(b, 0, all * sizeof(int));
    SERVED(STRATA_COLL_SCATTER, "MPI_Scatter_c",
           MPI_Scatter_c(in, count, MPI_INT, a, count, MPI_INT, root, MPI_COMM_WORLD));
    PMPI_Scatter_c(in, count, MPI_INT, b, count, MPI_INT, root, MPI_COMM_WORLD);
    same(a, b, n, "MPI_Scatter_c", count, root);
    free(a);
    free(b);
    free(in);
}

static void unrooted(MPI_Count count)
{
    size_t n = (size_t)count, all = n * (size_t)size;
    int *a = xcalloc(all, sizeof(int)), *b = xcalloc(all, sizeof(int));
    int *in = xcalloc(all, sizeof(int));
    fill(in, all, 3 * rank);

    SERVED(STRATA_COLL_ALLREDUCE, "MPI_Allreduce_c",
           MPI_Allreduce_c(in, a, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    PMPI_Allreduce_c(in, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    same(a, b, n, "MPI_Allreduce_c", count, -1);
    memcpy(a, in, n * sizeof(int));
    SERVED(STRATA_COLL_ALLREDUCE, "MPI_Allreduce_c in place",
           MPI_Allreduce_c(MPI_IN_PLACE, a, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    same(a, b, n, "MPI_Allreduce_c in place", count, -1);

    SERVED(STRATA_COLL_ALLGATHER, "MPI_Allgather_c",
           MPI_Allgather_c(in, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD));
    PMPI_Allgather_c(in, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
    same(a, b, all, "MPI_Allgather_c", count, -1);

    if (across_nodes)
        COUNTED(STRATA_COLL_ALLTOALL, "MPI_Alltoall_c",
                MPI_Alltoall_c(in, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD));
    else
        SERVED(STRATA_COLL_ALLTOALL, "MPI_Alltoall_c",
               MPI_Alltoall_c(in, count, MPI_INT, a, count, MPI_INT, MPI_COMM_WORLD));
    PMPI_Alltoall_c(in, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD);
    same(a, b, all, "MPI_Alltoall_c", count, -1);
    free(a);
    free(b);
    free(in);
}

/* Ranks may mix the forms in one call (and other datatypes of the same
 * signature): even ranks the _c form with MPI_INT, odd ranks the int form
 * with pairs of ints. */
static void mixed(void)
{
    enum { N = 30001 * 2 };
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int *v = xcalloc(N, sizeof(int)), *want = xcalloc(N, sizeof(int));
    for (int root = 0; root < size; root++) {
        fill(want, N, root);
        if (rank == root) memcpy(v, want, sizeof(int) * N);
        else memset(v, 0, sizeof(int) * N);
        if (rank % 2 == 0)
            SERVED(STRATA_COLL_BCAST, "MPI_Bcast_c beside MPI_Bcast",
                   MPI_Bcast_c(v, N, MPI_INT, root, MPI_COMM_WORLD));
        else
            SERVED(STRATA_COLL_BCAST, "MPI_Bcast beside MPI_Bcast_c",
                   MPI_Bcast(v, N / 2, pair, root, MPI_COMM_WORLD));
        same(v, want, N, "mixed Bcast", N, root);
    }
    MPI_Type_free(&pair);
    free(v);
    free(want);
}

/* Bad arguments reach the host MPI, which reports them as it would have
 * (MPI_ERRORS_RETURN on a duplicate of MPI_COMM_WORLD). */
static void bad_arguments(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int buf[4] = {0}, cls, host_cls;
    MPI_Error_class(MPI_Bcast_c(buf, -1, MPI_INT, 0, comm), &cls);
    MPI_Error_class(PMPI_Bcast_c(buf, -1, MPI_INT, 0, comm), &host_cls);
    CHECK(cls == host_cls && cls != MPI_SUCCESS, "MPI_Bcast_c count -1: class %d, the host's %d",
          cls, host_cls);
    MPI_Error_class(MPI_Allreduce_c(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, comm), &cls);
    MPI_Error_class(PMPI_Allreduce_c(buf, buf + 2, 2, MPI_INT, MPI_OP_NULL, comm), &host_cls);
    CHECK(cls == host_cls && cls != MPI_SUCCESS,
          "MPI_Allreduce_c with MPI_OP_NULL: class %d, the host's %d", cls, host_cls);
    MPI_Comm_free(&comm);
}

#endif

int main(int argc, char **argv)
{
    setenv("STRATA_STATS", "/dev/null", 0); /* to count the routes */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *vnodes = getenv("STRATA_VIRTUAL_NODES");
    across_nodes = vnodes && atoi(vnodes) > 1;
#ifdef STRATA_HAVE_LARGE_COUNT
    const MPI_Count counts[] = {0, 1, 7, 1000, 100003};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int root = 0; root < size; root++) rooted(counts[c], root);
        unrooted(counts[c]);
    }
    mixed();
    if (test_errors_return())
        bad_arguments();
    else
        test_skip_errors("bad arguments to the _c forms");
    test_pass("count_c");
#else
    if (rank == 0) printf("SKIP: the host MPI has no MPI-4 large-count functions\n");
#endif
    MPI_Finalize();
    return 0;
}
