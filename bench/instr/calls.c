/* A fixed number of one collective, for counting instructions per call
 * (issue 14): scripts/instr-count.sh runs it under callgrind, collecting
 * only inside run_calls (--toggle-collect), so MPI_Init, the set-up and
 * the first calls are not counted.  Instruction counts do not depend on
 * the machine's load the way times do; only spin-waiting does, which the
 * script reports separately.
 *   calls COLL BYTES CALLS     COLL: reduce | allreduce | bcast
 * Plain MPI: linked with the host MPI only, strata preloaded or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) void run_calls(int coll, double *in, double *out, int count, long calls)
{
    for (long i = 0; i < calls; i++) {
        if (coll == 0) MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (coll == 1) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else MPI_Bcast(in, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
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
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < count; i++) in[i] = rank + i;
    /* Warm-up outside the count: strata's context, the plane, first touches. */
    run_calls(coll, in, out, count, 0);
    for (int i = 0; i < 100; i++) {
        if (coll == 0) MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (coll == 1) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else MPI_Bcast(in, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_calls(coll, in, out, count, calls);
    MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
