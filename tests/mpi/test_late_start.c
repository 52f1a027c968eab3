/* Set-up without MPI_Init (issue 18): the program initialises with
 * PMPI_Init (or PMPI_Init_thread), as Open MPI's Fortran bindings and
 * MPICH's mpi_f08 do, so strata's MPI_Init never runs.  Checked:
 *   - nothing is set up before a collective; a collective on a part of the
 *     world goes to the host MPI and sets nothing up (not every rank is in
 *     it, and set-up is an agreement over the world);
 *   - the first collective over all ranks sets strata up and is served,
 *     with the right result, and so are the calls after it;
 *   - "threads": MPI_THREAD_MULTIPLE, two threads per rank whose first
 *     collectives (each on its own duplicate of the world) race to set
 *     strata up: once, and both served.
 * Needs STRATA_STATS (the route counters count only then). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "context/runtime.h"
#include "route_check.h"
#include "testutil.h"

static int size;

static void *worker(void *arg)
{
    MPI_Comm c = *(MPI_Comm *)arg;
    for (int i = 0; i < 50; i++) {
        long mine = i + 1, sum = 0;
        int rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c);
        CHECK(rc == MPI_SUCCESS && sum == (long)size * (i + 1), "thread Allreduce %d: %ld", i, sum);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 && !strcmp(argv[1], "threads"), provided, rank;
    if (threads) {
        PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        CHECK(provided == MPI_THREAD_MULTIPLE, "the host grants thread level %d", provided);
    } else {
        PMPI_Init(&argc, &argv);
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    CHECK(strata_runtime() == NULL && !strata_runtime_state()->ready, "set up before any call");

    /* A part of the world first: the host's, and no set-up. */
    MPI_Comm half;
    PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int v = rank == 0 || rank == 1 ? 1000 + rank : -1;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, half) == MPI_SUCCESS && v == 1000 + rank % 2,
          "Bcast on half of the world: %d", v);
    CHECK(!strata_runtime_state()->ready, "set up by a collective on part of the world");

    if (threads) {
        MPI_Comm dup[2];
        PMPI_Comm_dup(MPI_COMM_WORLD, &dup[0]);
        PMPI_Comm_dup(MPI_COMM_WORLD, &dup[1]);
        pthread_t t[2];
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &dup[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        CHECK(strata_runtime() != NULL, "not set up: %s", strata_runtime_state()->why_disabled);
        CHECK(route_calls(STRATA_COLL_ALLREDUCE, 1) == 100 &&
                  route_calls(STRATA_COLL_ALLREDUCE, 0) == 0,
              "Allreduce calls served %llu, handed to the host %llu (expected 100, 0)",
              route_calls(STRATA_COLL_ALLREDUCE, 1), route_calls(STRATA_COLL_ALLREDUCE, 0));
        PMPI_Comm_free(&dup[0]);
        PMPI_Comm_free(&dup[1]);
    } else {
        double mine[3] = {rank, 1.0, -rank}, sum[3];
        CHECK(MPI_Allreduce(mine, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
                  sum[0] == size * (size - 1) / 2.0 && sum[1] == size,
              "first Allreduce over the world: %g %g", sum[0], sum[1]);
        CHECK(strata_runtime() != NULL, "not set up: %s", strata_runtime_state()->why_disabled);
        CHECK(route_calls(STRATA_COLL_ALLREDUCE, 1) == 1, "the first world call was not served");
        int b = rank == size - 1 ? 77 : 0;
        CHECK(MPI_Bcast(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD) == MPI_SUCCESS && b == 77,
              "Bcast after set-up: %d", b);
        CHECK(route_calls(STRATA_COLL_BCAST, 1) == 1, "Bcast after set-up not served");
    }
    /* The half communicator is strata's now too. */
    v = rank < 2 ? 2000 + rank : -1;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, 0, half) == MPI_SUCCESS && v == 2000 + rank % 2,
          "Bcast on half after set-up: %d", v);
    PMPI_Comm_free(&half);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("PASS late start%s\n", threads ? " (threads)" : "");
    PMPI_Finalize();
    return 0;
}
