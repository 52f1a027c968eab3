/* STRATA_SHM_MAX caps a machine, not a process: with room for MPI_COMM_WORLD's
 * segment and one two-rank segment, splitting 4 ranks into {0,1} and {2,3}
 * (whose segments different processes create) gives one served pair and one
 * that the host MPI serves.  A per-process cap would serve both.
 *
 * Run with 4 ranks; the test sets the cap itself from the segment sizes on a
 * flat fake machine (one hierarchy level), before MPI_Init reads it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "context/context.h"
#include "testutil.h"

int main(int argc, char **argv)
{
    size_t world_bytes = strata_plane_segment_bytes(4, 1, 16 << 10);
    size_t pair_bytes = strata_plane_segment_bytes(2, 1, 16 << 10);
    char cap[64];
    snprintf(cap, sizeof cap, "%zu", world_bytes + pair_bytes + pair_bytes / 2);
    setenv("STRATA_SHM_MAX", cap, 1);
    setenv("STRATA_TOPOLOGY", "core:4 pu:1", 1);
    setenv("STRATA_CICO_MAX", "16K", 1);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4, "run with 4 ranks");
    MPI_Barrier(MPI_COMM_WORLD);
    struct strata_ctx *world = strata_ctx_get(MPI_COMM_WORLD);
    CHECK(world && world->plane, "MPI_COMM_WORLD must be served: %s",
          world ? world->plane_why : "no context");

    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    int value = rank, sum = 0;
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, pair);
    CHECK(sum == (rank / 2) * 4 + 1, "pair sum %d", sum);
    struct strata_ctx *ctx = strata_ctx_get(pair);
    int served = ctx->plane != NULL, served_pairs = 0;
    if (!served) CHECK(strstr(ctx->plane_why, "STRATA_SHM_MAX"), "reason: %s", ctx->plane_why);
    /* Count served pairs once per pair (from each pair's rank 0). */
    int mine = served && rank % 2 == 0;
    MPI_Allreduce(&mine, &served_pairs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(served_pairs == 1, "%d pairs got a segment; the machine's cap leaves room for one",
          served_pairs);
    MPI_Comm_free(&pair);
    test_pass("shm-cap");
    MPI_Finalize();
    return 0;
}
