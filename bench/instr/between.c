/* One collective, called the way strata-bench times it: each strata call
 * (MPI_X, counted) follows a rewrite of the buffer, a PMPI_Barrier and a
 * host call of the same collective (PMPI_X, not counted), so the caches
 * hold what the host MPI's code left there, not only strata's own.  For
 * scripts/icache-count.sh (callgrind with its cache simulation): a small
 * call's cost on a quiet machine is mostly the code lines it has to fetch
 * again, which instruction counts alone do not show (issue 14).
 *   between COLL BYTES CALLS     COLL: reduce | allreduce | bcast
 * Roots turn (root = call % size), as strata-bench --root-shift. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) int counted(int coll, double *in, double *out, int count, int root)
{
    if (coll == 0) return MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    if (coll == 1) return MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return MPI_Bcast(in, count, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

static int host(int coll, double *in, double *out, int count, int root)
{
    if (coll == 0) return PMPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    if (coll == 1) return PMPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return PMPI_Bcast(in, count, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: %s reduce|allreduce|bcast BYTES CALLS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int coll = !strcmp(argv[1], "reduce") ? 0 : !strcmp(argv[1], "allreduce") ? 1 : 2;
    int count = atoi(argv[2]) / (int)sizeof(double);
    long calls = atol(argv[3]);
    double *in = calloc((size_t)count + 1, sizeof *in), *out = calloc((size_t)count + 1, sizeof *out);
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 1);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* 100 warm-up calls (strata's context, the plane, first touches) are
     * counted too: divide by CALLS + 100. */
    for (long i = -100; i < calls; i++) {
        int root = (int)((i + 100) % size);
        for (int k = 0; k < count; k++) in[k] = rank + k + (double)i;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (counted(coll, in, out, count, root) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int k = 0; k < count; k++) in[k] = rank + k + (double)i;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (host(coll, in, out, count, root) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
