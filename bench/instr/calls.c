/* A fixed number of one collective, for counting instructions per call
 * (issue 14): scripts/instr-count.sh runs it under callgrind, collecting
 * only inside run_calls (--toggle-collect), so MPI_Init, the set-up and
 * the first calls are not counted.  Instruction counts do not depend on
 * the machine's load the way times do; only spin-waiting does, which the
 * script reports separately.
 *   calls COLL BYTES CALLS     COLL: one of colls.h's names (reduce,
 *                              allreduce, bcast, allgather, gather, scatter,
 *                              alltoall, barrier); reduce, allreduce and bcast
 *                              also with a prefix: i (MPI_I<coll> + MPI_Wait)
 *                              or p (one MPI_Start + MPI_Wait of
 *                              MPI_<coll>_init's request, MPIX_ on Open MPI
 *                              4.1; issue 17)
 * Plain MPI: linked with the host MPI only, strata preloaded or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colls.h"
#if MPI_VERSION >= 4
#define PINIT(name) MPI_##name##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#define PINIT(name) MPIX_##name##_init
#endif

/* The persistent request of a p... run (made before the counted calls). */
static MPI_Request preq = MPI_REQUEST_NULL;

static void one_call(int coll, int form, double *in, double *out, int count)
{
    MPI_Request r;
    if (form == 'p') {
        MPI_Start(&preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
    } else if (form == 'i') {
        if (coll == 0) MPI_Ireduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r);
        else if (coll == 1) MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
        else MPI_Ibcast(in, count, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        instr_call_strata(coll, in, out, count, 0);
    }
}

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) void run_calls(int coll, int form, double *in, double *out, int count,
                                         long calls)
{
    for (long i = 0; i < calls; i++) one_call(coll, form, in, out, count);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: %s [i|p]" INSTR_USAGE " BYTES CALLS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* No name of colls.h starts with i or p. */
    int form = argv[1][0] == 'i' || argv[1][0] == 'p' ? argv[1][0] : 'b';
    if (form != 'b') argv[1]++;
    int coll = instr_coll_parse(argv[1]);
    if (coll < 0 || (form != 'b' && coll > 2)) {
        fprintf(stderr, "%s: unknown collective %s (" INSTR_USAGE "; i/p: reduce, allreduce, "
                "bcast)\n", argv[0], argv[1]);
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
    if (form == 'p') {
#ifdef PINIT
        if (coll == 0)
            PINIT(Reduce)(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
        else if (coll == 1)
            PINIT(Allreduce)(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
        else
            PINIT(Bcast)(in, count, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
#else
        fprintf(stderr, "no persistent collectives in this MPI\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
#endif
    }
    /* Warm-up outside the count: strata's context, the plane, first touches. */
    run_calls(coll, form, in, out, count, 0);
    for (int i = 0; i < 100; i++) one_call(coll, form, in, out, count);
    MPI_Barrier(MPI_COMM_WORLD);
    run_calls(coll, form, in, out, count, calls);
    MPI_Barrier(MPI_COMM_WORLD);
    if (preq != MPI_REQUEST_NULL) MPI_Request_free(&preq);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
