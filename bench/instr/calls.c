/* A fixed number of one collective, for counting instructions per call
 * (issue 14): scripts/instr-count.sh runs it under callgrind, collecting
 * only inside run_calls (--toggle-collect), so MPI_Init, the set-up and
 * the first calls are not counted.  Instruction counts do not depend on
 * the machine's load the way times do; only spin-waiting does, which the
 * script reports separately.
 *   calls COLL BYTES CALLS     COLL: reduce | allreduce | bcast, or with a
 *                              prefix: i (MPI_I<coll> + MPI_Wait) or p (one
 *                              MPI_Start + MPI_Wait of MPI_<coll>_init's
 *                              request, MPIX_ on Open MPI 4.1; issue 17);
 *                              blocking only: gather, gatherv, scatter,
 *                              scatterv, allgather, allgatherv, alltoall,
 *                              alltoallv, scan, exscan (BYTES: a rank's
 *                              block; the v-forms with uniform counts)
 * Plain MPI: linked with the host MPI only, strata preloaded or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if MPI_VERSION >= 4
#define PINIT(name) MPI_##name##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#define PINIT(name) MPIX_##name##_init
#endif

/* The persistent request of a p... run (made before the counted calls). */
static MPI_Request preq = MPI_REQUEST_NULL;

static const char *const names[] = {"reduce",    "allreduce", "bcast",      "gather",
                                    "gatherv",   "scatter",   "scatterv",   "allgather",
                                    "allgatherv", "alltoall", "alltoallv",  "scan",
                                    "exscan"};
enum { NCOLLS = sizeof names / sizeof names[0] };
static int *vcounts, *vdispls; /* the v-forms' uniform counts and displacements */

/* The blocking collectives past Bcast (coll >= 3). */
static void more_call(int coll, double *in, double *out, int n)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Datatype d = MPI_DOUBLE;
    switch (coll) {
    case 3: MPI_Gather(in, n, d, out, n, d, 0, w); break;
    case 4: MPI_Gatherv(in, n, d, out, vcounts, vdispls, d, 0, w); break;
    case 5: MPI_Scatter(in, n, d, out, n, d, 0, w); break;
    case 6: MPI_Scatterv(in, vcounts, vdispls, d, out, n, d, 0, w); break;
    case 7: MPI_Allgather(in, n, d, out, n, d, w); break;
    case 8: MPI_Allgatherv(in, n, d, out, vcounts, vdispls, d, w); break;
    case 9: MPI_Alltoall(in, n, d, out, n, d, w); break;
    case 10: MPI_Alltoallv(in, vcounts, vdispls, d, out, vcounts, vdispls, d, w); break;
    case 11: MPI_Scan(in, out, n, d, MPI_SUM, w); break;
    default: MPI_Exscan(in, out, n, d, MPI_SUM, w); break;
    }
}

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
    } else if (coll >= 3) {
        more_call(coll, in, out, count);
    } else if (coll == 0) {
        MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (coll == 1) {
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Bcast(in, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
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
        fprintf(stderr, "usage: %s [i|p]reduce|allreduce|bcast BYTES CALLS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int form = argv[1][0] == 'i' || argv[1][0] == 'p' ? argv[1][0] : 'b';
    if (form != 'b') argv[1]++;
    int coll = NCOLLS;
    for (int c = 0; c < NCOLLS; c++)
        if (!strcmp(argv[1], names[c])) coll = c;
    if (coll == NCOLLS || (form != 'b' && coll > 2)) {
        fprintf(stderr, "%s: unknown collective or form %s\n", argv[0], argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = atoi(argv[2]) / (int)sizeof(double);
    long calls = atol(argv[3]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Room for a block per rank on both sides, whatever the collective. */
    size_t elems = (size_t)size * (size_t)count + 1;
    double *in = calloc(elems, sizeof *in), *out = calloc(elems, sizeof *out);
    vcounts = calloc((size_t)size, sizeof *vcounts);
    vdispls = calloc((size_t)size, sizeof *vdispls);
    if (!in || !out || !vcounts || !vdispls) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < elems; i++) in[i] = rank + (double)i;
    for (int r = 0; r < size; r++) vcounts[r] = count, vdispls[r] = r * count;
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
    free(vcounts);
    free(vdispls);
    MPI_Finalize();
    return 0;
}
