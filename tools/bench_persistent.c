/* strata-bench --persistent: the cost of one start of a persistent
 * collective (MPI_<coll>_init once, then MPI_Start + MPI_Wait per call),
 * strata's against the host MPI's, beside strata's blocking form of the same
 * call.  strata's persistent operation is decided at _init (algorithm,
 * route, buffer runs; docs/DESIGN.md, "Persistent"), so a start should cost
 * less than a blocking call.  Per row, alternately: strata blocking, strata
 * start+wait, host start+wait; a figure is the slowest rank's mean over the
 * iterations, in microseconds.  Open MPI 4.1 has the persistent forms as
 * MPIX_<coll>_init (mpi-ext.h); without any, the option is refused. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(pre, name) pre##X_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(pre, name) pre##_##name##_init
#endif

int bench_persistent_available(void)
{
#ifdef INIT
    return 1;
#else
    return 0;
#endif
}

#ifdef INIT
/* The request of row r: strata's (MPI_) or the host's (PMPI_). */
#define MAKE(pre)                                                                                  \
    switch (r->coll) {                                                                             \
    case STRATA_COLL_BCAST: return INIT(pre, Bcast)(b->send, n, t, root, w, i, q);                 \
    case STRATA_COLL_REDUCE: return INIT(pre, Reduce)(b->send, b->recv, n, t, MPI_SUM, root, w, i, q); \
    case STRATA_COLL_ALLREDUCE: return INIT(pre, Allreduce)(b->send, b->recv, n, t, MPI_SUM, w, i, q); \
    case STRATA_COLL_ALLGATHER: return INIT(pre, Allgather)(b->send, n, t, b->recv, n, t, w, i, q); \
    case STRATA_COLL_GATHER: return INIT(pre, Gather)(b->send, n, t, b->recv, n, t, root, w, i, q); \
    case STRATA_COLL_SCATTER: return INIT(pre, Scatter)(b->send, n, t, b->recv, n, t, root, w, i, q); \
    case STRATA_COLL_ALLTOALL: return INIT(pre, Alltoall)(b->send, n, t, b->recv, n, t, w, i, q); \
    default: return INIT(pre, Barrier)(w, i, q);                                                   \
    }

static int make(struct bench *b, const struct bench_row *r, int strata, MPI_Request *q)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info i = MPI_INFO_NULL;
    MPI_Datatype t = r->type;
    int n = r->count, root = b->root;
    if (strata) {
        MAKE(MPI)
    } else {
        MAKE(PMPI)
    }
}

/* The slowest rank's mean of `iters` calls, in microseconds: kind 0 strata
 * blocking, 1 strata start + wait on *q, 2 the host's start + wait on *q. */
static double mean_us(struct bench *b, const struct bench_row *r, int kind, MPI_Request *q,
                      int iters)
{
    double sum = 0, mine, slowest;
    for (int it = 0; it < iters; it++) {
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (kind == 0) {
            bench_call_blocking(b, r, 1);
        } else if (kind == 1) {
            MPI_Start(q);
            MPI_Wait(q, MPI_STATUS_IGNORE);
        } else {
            PMPI_Start(q);
            PMPI_Wait(q, MPI_STATUS_IGNORE);
        }
        sum += MPI_Wtime() - t0;
    }
    mine = sum / iters * 1e6;
    PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}
#endif

void bench_run_persistent(struct bench *b, const struct bench_row *rows, int nrows)
{
#ifdef INIT
    int iters = b->opt.iters ? b->opt.iters : 200;
    if (b->rank == 0)
        printf("%-15s %8s | %12s %14s %12s | %9s %9s\n", "collective", "bytes", "blocking us",
               "start+wait us", "host us", "start/blk", "strt/host");
    for (int i = 0; i < nrows; i++) {
        const struct bench_row *r = &rows[i];
        MPI_Request q[2];
        make(b, r, 1, &q[0]);
        make(b, r, 0, &q[1]);
        double us[3];
        for (int k = 0; k < 3; k++) mean_us(b, r, k, &q[k ? k - 1 : 0], 5); /* warm-up */
        for (int k = 0; k < 3; k++) us[k] = mean_us(b, r, k, &q[k ? k - 1 : 0], iters);
        MPI_Request_free(&q[0]);
        PMPI_Request_free(&q[1]);
        if (b->rank == 0) {
            char size[32];
            bench_format_size(r->bytes, size, sizeof size);
            printf("%-15s %8s | %12.2f %14.2f %12.2f | %9.2f %9.2f%s\n",
                   strata_call_name(strata_call_id(r->coll, STRATA_FORM_PERSISTENT)) + 4, size,
                   us[0], us[1], us[2], us[0] > 0 ? us[1] / us[0] : 0, us[2] > 0 ? us[1] / us[2] : 0,
                   r->refusal ? "  (strata: host MPI)" : "");
        }
    }
#else
    (void)b;
    (void)rows;
    (void)nrows;
#endif
}
