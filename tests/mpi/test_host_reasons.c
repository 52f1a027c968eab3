/* STRATA_STATS groups the calls handed to the host MPI by reason, and each
 * reason names the argument and its value.  Calls that strata must leave
 * to the host MPI, each a known number of times: an op strata did not see
 * created (PMPI_Op_create), a root outside the communicator and a negative
 * count (MPI_ERRORS_RETURN: the host reports them), an intercommunicator;
 * across virtual nodes a non-commutative user-defined op and MPI_Alltoall;
 * on a fake machine of several levels, a non-commutative op on a
 * communicator whose groups are out of rank order.  Each rank checks its own
 * counters for the exact reason; then rank 0 reads back the JSON file
 * STRATA_STATS names (written at MPI_Finalize) and finds every reason with
 * its count summed over the ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "context/runtime.h"
#include "coll/user_op.h"
#include "route/route.h"
#include "testutil.h"
#include "util/mpi_names.h"
#include "util/stats.h"

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void first_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] = ((int *)in)[i];
}

/* Reasons every rank counted the same number of times, for the JSON. */
#define MAX_EXPECT 8
static struct { int coll; char reason[400]; int per_rank; } expect[MAX_EXPECT];
static int nexpect;

/* Counts of coll/reason must have grown by n on this rank since `before`. */
static void check_reason(int coll, const char *reason, unsigned long long before, int n,
                         int same_on_every_rank)
{
    unsigned long long now = strata_stats_local_host_reason(coll, reason);
    CHECK(now == before + (unsigned long long)n, "%s: %llu calls counted for \"%s\", expected %d",
          strata_coll_name(coll), now - before, reason, n);
    if (same_on_every_rank && nexpect < MAX_EXPECT) {
        expect[nexpect].coll = coll;
        snprintf(expect[nexpect].reason, sizeof expect[0].reason, "%s", reason);
        expect[nexpect++].per_rank = n;
    }
}

/* The reason expected for coll on comm: the communicator's own, if strata
 * leaves it to the host MPI as a whole (every node holds one rank), else
 * `reason`. */
static const char *route_or(MPI_Comm comm, int coll, const char *reason)
{
    const char *route = strata_route_refusal(strata_ctx_get(comm), coll);
    return route ? route : reason;
}

static void use_route(MPI_Comm comm, int coll, char *reason, size_t len)
{
    const char *route = strata_route_refusal(strata_ctx_get(comm), coll);
    if (route) snprintf(reason, len, "%s", route);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *file = getenv("STRATA_STATS");
    CHECK(strata_stats_enabled() && file && strcmp(file, "stderr"),
          "set STRATA_STATS to a file: the test reads it back");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size % 2 == 0, "an even number of ranks, 2 or more");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int in[4] = {rank, 1, 2, 3}, out[4 * 64];
    char reason[400], name[64];

    /* An op created behind strata's back. */
    MPI_Op hidden;
    PMPI_Op_create(sum_fn, 1, &hidden);
    snprintf(reason, sizeof reason, "op %s is user-defined and strata did not see it created "
             "(created through PMPI_Op_create: a library linked to the host's PMPI_ symbols)", strata_op_name(hidden, name, sizeof name));
    int routed_away = strata_route_refusal(strata_ctx_get(comm), STRATA_COLL_ALLREDUCE) != NULL;
    use_route(comm, STRATA_COLL_ALLREDUCE, reason, sizeof reason);
    unsigned long long before = strata_stats_local_host_reason(STRATA_COLL_ALLREDUCE, reason);
    for (int i = 0; i < 3; i++) {
        MPI_Allreduce(in, out, 4, MPI_INT, hidden, comm);
        CHECK(out[0] == size * (size - 1) / 2 && out[1] == size, "Allreduce with the hidden op");
    }
    /* The handle's text differs between Open MPI's ranks: not in the JSON check. */
    check_reason(STRATA_COLL_ALLREDUCE, reason, before, 3,
                 routed_away || !strcmp(STRATA_HOST_MPI, "mpich"));
    PMPI_Op_free(&hidden);

    /* A root outside the communicator, twice; a negative count. */
    if (test_errors_return()) {
        snprintf(reason, sizeof reason, "root %d is not a rank of the communicator (size %d)",
                 size, size);
        use_route(comm, STRATA_COLL_BCAST, reason, sizeof reason);
        before = strata_stats_local_host_reason(STRATA_COLL_BCAST, reason);
        for (int i = 0; i < 2; i++)
            CHECK(MPI_Bcast(in, 4, MPI_INT, size, comm) != MPI_SUCCESS,
                  "Bcast to a root outside");
        check_reason(STRATA_COLL_BCAST, reason, before, 2, 1);
        const char *negative = route_or(comm, STRATA_COLL_ALLGATHER, "sendcount -1 is negative");
        before = strata_stats_local_host_reason(STRATA_COLL_ALLGATHER, negative);
        CHECK(MPI_Allgather(in, -1, MPI_INT, out, 1, MPI_INT, comm) != MPI_SUCCESS,
              "Allgather with a negative count");
        check_reason(STRATA_COLL_ALLGATHER, negative, before, 1, 1);
    } else {
        test_skip_errors("a root outside the communicator and a negative count");
    }

    /* An intercommunicator between the two halves. */
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
    const char *intercomm =
        "the communicator is an intercommunicator (strata serves intracommunicators)";
    before = strata_stats_local_host_reason(STRATA_COLL_BARRIER, intercomm);
    MPI_Barrier(inter);
    check_reason(STRATA_COLL_BARRIER, intercomm, before, 1, 1);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);

    /* A non-commutative op: across nodes, or on groups out of rank order. */
    MPI_Op first;
    MPI_Op_create(first_fn, 0, &first);
    MPI_Comm evenodd;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank % 2) * size + rank, &evenodd);
    struct strata_ctx *ctx = strata_ctx_get(evenodd);
    CHECK(ctx && ctx->served, "no strata context");
    int nodes = strata_runtime()->nnodes;
    int ordered = strata_user_op_rank_ordered(&ctx->hier);
    reason[0] = '\0';
    if (nodes > 1)
        snprintf(reason, sizeof reason, "op #1 (the 1st MPI_Op_create of this process) is "
                 "user-defined and non-commutative, and across nodes strata combines the nodes' "
                 "results in tree order, not rank order");
    else if (!ordered)
        snprintf(reason, sizeof reason, "op #1 (the 1st MPI_Op_create of this process) is "
                 "user-defined and non-commutative, and the communicator's groups of ranks "
                 "sharing a cache or socket are not runs of consecutive ranks, so strata cannot "
                 "combine in rank order");
    if (reason[0]) {
        use_route(evenodd, STRATA_COLL_REDUCE, reason, sizeof reason);
        before = strata_stats_local_host_reason(STRATA_COLL_REDUCE, reason);
        MPI_Reduce(in, out, 1, MPI_INT, first, 0, evenodd);
        CHECK(rank != 0 || out[0] == 0, "the first operand is rank 0's");
        check_reason(STRATA_COLL_REDUCE, reason, before, 1, 1);
    }
    if (nodes > 1) {
        snprintf(reason, sizeof reason, "communicator spans %d nodes, and MPI_Alltoall's blocks "
                 "between nodes all cross the network: a node level would add a copy", nodes);
        use_route(MPI_COMM_WORLD, STRATA_COLL_ALLTOALL, reason, sizeof reason);
        before = strata_stats_local_host_reason(STRATA_COLL_ALLTOALL, reason);
        MPI_Alltoall(out, 1, MPI_INT, out + 64, 1, MPI_INT, MPI_COMM_WORLD);
        check_reason(STRATA_COLL_ALLTOALL, reason, before, 1, 1);
    }
    MPI_Comm_free(&evenodd);
    MPI_Op_free(&first);
    MPI_Comm_free(&comm);
    if (rank == 0) printf("%d reasons checked on every rank\n", nexpect);
    test_pass("host_reasons");
    MPI_Finalize();

    /* The report: every reason, with its count over the ranks. */
    if (rank != 0) return 0;
    FILE *f = fopen(file, "r");
    CHECK(f, "cannot read %s", file);
    static char json[1 << 20];
    size_t len = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[len] = '\0';
    for (int i = 0; i < nexpect; i++) {
        char entry[600];
        snprintf(entry, sizeof entry, "\"%s\": %d", expect[i].reason, expect[i].per_rank * size);
        const char *coll = strstr(json, strata_coll_name(expect[i].coll));
        const char *at = coll ? strstr(coll, "\"host_reasons\": {") : NULL;
        const char *hit = at ? strstr(at, entry) : NULL;
        const char *next = coll ? strstr(coll + 1, "\"MPI_") : NULL;
        if (!hit || (next && hit > next)) {
            fprintf(stderr, "FAIL rank 0: %s's host_reasons in %s lack %s\n%s",
                    strata_coll_name(expect[i].coll), file, entry, json);
            return 1;
        }
    }
    printf("PASS host_reasons JSON (%d reasons)\n", nexpect);
    return 0;
}
