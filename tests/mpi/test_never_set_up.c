/* A program that initialises MPI through PMPI_Init and whose collectives
 * never span MPI_COMM_WORLD (each rank alone in a split): strata is loaded
 * (linked) but never set up, so every collective goes to the host MPI.  With STRATA_VERBOSE or
 * STRATA_STATS set, strata must say so once at exit (tests/never_silent.cmake
 * matches the message); without them, nothing. */
#include <mpi.h>
#include <stdio.h>

#include "context/runtime.h"
#include "route/route.h"
#include "testutil.h"
#include "util/stats.h"

int main(int argc, char **argv)
{
    PMPI_Init(&argc, &argv);
    CHECK(!strata_runtime_attempted() && strata_runtime() == NULL, "strata was set up");
    int rank, size, sum = 0, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, alone);
    CHECK(sum == 1, "Allreduce gave %d", sum);
    MPI_Barrier(alone);
    MPI_Comm_free(&alone);
    PMPI_Barrier(MPI_COMM_WORLD);
    CHECK(!strata_runtime_attempted(), "strata was set up");
    if (rank == 0) printf("PASS never_set_up (the message, if any, comes at exit)\n");
    fflush(stdout);
    PMPI_Finalize();
    return 0;
}
