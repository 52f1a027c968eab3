/* A fixed number of one collective, for counting instructions per call
 * (issue 14): scripts/instr-count.sh runs it under callgrind, collecting
 * only inside run_calls (--toggle-collect), so MPI_Init, the set-up and
 * the first calls are not counted.  Instruction counts do not depend on
 * the machine's load the way times do; only spin-waiting does, which the
 * script reports separately.
 *   calls COLL BYTES CALLS
 * COLL: reduce | allreduce | bcast | gather | gatherv | scatter | scatterv |
 * allgather | allgatherv | alltoall | alltoallv | scan | exscan.  BYTES is
 * a rank's block (the v-forms: uniform counts, displacements in rank order).
 * Plain MPI: linked with the host MPI only, strata preloaded or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"reduce",     "allreduce", "bcast",     "gather",   "gatherv",
                                    "scatter",    "scatterv",  "allgather", "allgatherv",
                                    "alltoall",   "alltoallv", "scan",      "exscan"};
enum { NCOLLS = sizeof names / sizeof names[0] };

struct bufs {
    double *in, *out;
    int count, *counts, *displs;
};

static void one_call(int coll, const struct bufs *b)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = b->count;
    switch (coll) {
    case 0: MPI_Reduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, 0, w); break;
    case 1: MPI_Allreduce(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w); break;
    case 2: MPI_Bcast(b->in, n, MPI_DOUBLE, 0, w); break;
    case 3: MPI_Gather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w); break;
    case 4: MPI_Gatherv(b->in, n, MPI_DOUBLE, b->out, b->counts, b->displs, MPI_DOUBLE, 0, w); break;
    case 5: MPI_Scatter(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w); break;
    case 6: MPI_Scatterv(b->in, b->counts, b->displs, MPI_DOUBLE, b->out, n, MPI_DOUBLE, 0, w); break;
    case 7: MPI_Allgather(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w); break;
    case 8: MPI_Allgatherv(b->in, n, MPI_DOUBLE, b->out, b->counts, b->displs, MPI_DOUBLE, w); break;
    case 9: MPI_Alltoall(b->in, n, MPI_DOUBLE, b->out, n, MPI_DOUBLE, w); break;
    case 10:
        MPI_Alltoallv(b->in, b->counts, b->displs, MPI_DOUBLE, b->out, b->counts, b->displs,
                      MPI_DOUBLE, w);
        break;
    case 11: MPI_Scan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w); break;
    default: MPI_Exscan(b->in, b->out, n, MPI_DOUBLE, MPI_SUM, w); break;
    }
}

/* Not inlined: callgrind's --toggle-collect names it. */
__attribute__((noinline)) void run_calls(int coll, const struct bufs *b, long calls)
{
    for (long i = 0; i < calls; i++) one_call(coll, b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int coll = NCOLLS;
    for (int c = 0; argc == 4 && c < NCOLLS; c++)
        if (!strcmp(argv[1], names[c])) coll = c;
    if (coll == NCOLLS) {
        fprintf(stderr, "usage: %s COLL BYTES CALLS (COLL: reduce, allreduce, bcast, gather, "
                "gatherv, scatter, scatterv, allgather, allgatherv, alltoall, alltoallv, scan, "
                "exscan)\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct bufs b;
    b.count = atoi(argv[2]) / (int)sizeof(double);
    long calls = atol(argv[3]);
    /* Room for size blocks on both sides, whatever the collective. */
    size_t elems = (size_t)size * (size_t)b.count + 1;
    b.in = calloc(elems, sizeof *b.in);
    b.out = calloc(elems, sizeof *b.out);
    b.counts = calloc((size_t)size, sizeof *b.counts);
    b.displs = calloc((size_t)size, sizeof *b.displs);
    if (!b.in || !b.out || !b.counts || !b.displs) MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < elems; i++) b.in[i] = rank + (double)i;
    for (int r = 0; r < size; r++) b.counts[r] = b.count, b.displs[r] = r * b.count;
    /* Warm-up outside the count: strata's context, the plane, first touches. */
    run_calls(coll, &b, 0);
    for (int i = 0; i < 100; i++) one_call(coll, &b);
    MPI_Barrier(MPI_COMM_WORLD);
    run_calls(coll, &b, calls);
    MPI_Barrier(MPI_COMM_WORLD);
    free(b.in);
    free(b.out);
    free(b.counts);
    free(b.displs);
    MPI_Finalize();
    return 0;
}
