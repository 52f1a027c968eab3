/* A fixed number of one collective, for counting instructions per call
 * (issue 14): scripts/instr-count.sh runs it under callgrind, collecting
 * only inside run_calls (--toggle-collect), so MPI_Init, the set-up and
 * the first calls are not counted.  Instruction counts do not depend on
 * the machine's load the way times do; only spin-waiting does, which the
 * script reports separately.
 *   calls COLL BYTES CALLS     COLL: one of colls.h's names (reduce,
 *                              allreduce, bcast, allgather, gather, scatter,
 *                              alltoall, barrier)
 * Plain MPI: linked with the host MPI only, strata preloaded or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) void run_calls(int coll, double *in, double *out, int count, long calls)
{
    for (long i = 0; i < calls; i++) instr_call_strata(coll, in, out, count, 0);
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
    for (int i = 0; i < count; i++) in[i] = rank + i;
    /* Warm-up outside the count: strata's context, the plane, first touches. */
    run_calls(coll, in, out, count, 0);
    for (int i = 0; i < 100; i++) instr_call_strata(coll, in, out, count, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    run_calls(coll, in, out, count, calls);
    MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
