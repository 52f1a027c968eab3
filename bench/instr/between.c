/* One collective, called the way strata-bench times it: each strata call
 * (MPI_X, counted) follows a rewrite of the buffer, a PMPI_Barrier and a
 * host call of the same collective (PMPI_X, not counted), so the caches
 * hold what the host MPI's code left there, not only strata's own.  For
 * scripts/icache-count.sh (callgrind with its cache simulation): a small
 * call's cost on a quiet machine is mostly the code lines it has to fetch
 * again, which instruction counts alone do not show (issue 14).
 *   between COLL BYTES CALLS     COLL: one of colls.h's names
 * Roots turn (root = call % size), as strata-bench --root-shift. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) int counted(int coll, double *in, double *out, int count, int root)
{
    return instr_call_strata(coll, in, out, count, root);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: %s " INSTR_USAGE " BYTES CALLS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int coll = instr_coll_parse(argv[1]);
    if (coll < 0) {
        fprintf(stderr, "%s: unknown collective %s (" INSTR_USAGE ")\n", argv[0], argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = atoi(argv[2]) / (int)sizeof(double);
    long calls = atol(argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (size_t)size * (size_t)count + 1; /* a block per rank (Scatter, Alltoall) */
    double *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    if (!in || !out) MPI_Abort(MPI_COMM_WORLD, 1);
    /* 100 warm-up calls (strata's context, the plane, first touches) are
     * counted too: divide by CALLS + 100. */
    for (long i = -100; i < calls; i++) {
        int root = (int)((i + 100) % size);
        for (int k = 0; k < count; k++) in[k] = rank + k + (double)i;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (counted(coll, in, out, count, root) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int k = 0; k < count; k++) in[k] = rank + k + (double)i;
        PMPI_Barrier(MPI_COMM_WORLD);
        if (instr_call_host(coll, in, out, count, root) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
