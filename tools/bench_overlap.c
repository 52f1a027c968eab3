/* strata-bench --overlap: the nonblocking collectives (MPI_Ibcast, ...),
 * strata's against the host MPI's, as OSU's nonblocking benchmarks measure
 * them.  Per collective and size, for each implementation, alternately:
 *
 *   pure      post, then wait at once: the nonblocking form's latency
 *   overlap   post, compute for `pure` microseconds (a loop that calls no
 *             MPI), then wait
 *
 * overlap% = 100 * (pure + compute - overlap) / pure, clamped to [0, 100]:
 * the share of the operation hidden behind the computation (OSU's figure).
 * Without STRATA_PROGRESS=thread strata progresses its operations inside
 * MPI calls only, so an operation that needs several steps of a rank shows
 * little overlap here; one that completes at posting shows all.  With it
 * (strata-bench then asks for MPI_THREAD_MULTIPLE), the progress thread
 * moves them during the computation; the header says which.  Beside them,
 * each implementation's blocking form timed the same way ("blk us") and
 * nb/blk, strata's post + wait over its blocking call.  A figure is the
 * slowest rank's mean over the iterations.  `strata-bench --nonblocking`
 * is this table; with --noise it is ADAPT's noise experiment on the
 * nonblocking forms (bench_call_nonblocking). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct nb_api {
    int (*ibcast)(void *, int, MPI_Datatype, int, MPI_Comm, MPI_Request *);
    int (*ireduce)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm, MPI_Request *);
    int (*iallreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
    int (*iallgather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                      MPI_Request *);
    int (*igather)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm,
                   MPI_Request *);
    int (*iscatter)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm,
                    MPI_Request *);
    int (*ialltoall)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                     MPI_Request *);
    int (*ibarrier)(MPI_Comm, MPI_Request *);
    int (*wait)(MPI_Request *, MPI_Status *);
    /* The newer collectives (issue 16), laid out as bench_timing.c runs
     * their blocking forms. */
    int (*ireduce_scatter_block)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm,
                                 MPI_Request *);
    int (*ireduce_scatter)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm,
                           MPI_Request *);
    int (*iscan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
    int (*iexscan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
    int (*igatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                    MPI_Datatype, int, MPI_Comm, MPI_Request *);
    int (*iscatterv)(const void *, const int *, const int *, MPI_Datatype, void *, int,
                     MPI_Datatype, int, MPI_Comm, MPI_Request *);
    int (*iallgatherv)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                       MPI_Datatype, MPI_Comm, MPI_Request *);
    int (*ialltoallv)(const void *, const int *, const int *, MPI_Datatype, void *, const int *,
                      const int *, MPI_Datatype, MPI_Comm, MPI_Request *);
};

static const struct nb_api host_api = {PMPI_Ibcast, PMPI_Ireduce, PMPI_Iallreduce,
                                       PMPI_Iallgather, PMPI_Igather, PMPI_Iscatter,
                                       PMPI_Ialltoall, PMPI_Ibarrier, PMPI_Wait,
                                       PMPI_Ireduce_scatter_block, PMPI_Ireduce_scatter,
                                       PMPI_Iscan, PMPI_Iexscan, PMPI_Igatherv, PMPI_Iscatterv,
                                       PMPI_Iallgatherv, PMPI_Ialltoallv};
static const struct nb_api strata_nb_api = {MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce,
                                            MPI_Iallgather, MPI_Igather, MPI_Iscatter,
                                            MPI_Ialltoall, MPI_Ibarrier, MPI_Wait,
                                            MPI_Ireduce_scatter_block, MPI_Ireduce_scatter,
                                            MPI_Iscan, MPI_Iexscan, MPI_Igatherv, MPI_Iscatterv,
                                            MPI_Iallgatherv, MPI_Ialltoallv};

int bench_nonblocking_supported(int coll) { return coll >= 0 && coll <= STRATA_COLL_ALLTOALLV; }

static void post(const struct nb_api *api, struct bench *b, const struct bench_row *r,
                 MPI_Request *q)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = r->count, root = b->root;
    MPI_Datatype t = r->type;
    switch (r->coll) {
    case STRATA_COLL_BCAST: api->ibcast(b->send, n, t, root, w, q); break;
    case STRATA_COLL_REDUCE: api->ireduce(b->send, b->recv, n, t, MPI_SUM, root, w, q); break;
    case STRATA_COLL_ALLREDUCE: api->iallreduce(b->send, b->recv, n, t, MPI_SUM, w, q); break;
    case STRATA_COLL_ALLGATHER: api->iallgather(b->send, n, t, b->recv, n, t, w, q); break;
    case STRATA_COLL_GATHER: api->igather(b->send, n, t, b->recv, n, t, root, w, q); break;
    case STRATA_COLL_SCATTER: api->iscatter(b->send, n, t, b->recv, n, t, root, w, q); break;
    case STRATA_COLL_ALLTOALL: api->ialltoall(b->send, n, t, b->recv, n, t, w, q); break;
    case STRATA_COLL_BARRIER: api->ibarrier(w, q); break;
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        api->ireduce_scatter_block(b->send, b->recv, n, t, MPI_SUM, w, q);
        break;
    case STRATA_COLL_REDUCE_SCATTER: {
        /* Every rank's block the same, as bench_timing.c's. */
        static int *counts, ncounts;
        if (ncounts < b->size) {
            free(counts);
            counts = malloc(sizeof *counts * (size_t)b->size);
            ncounts = counts ? b->size : 0;
        }
        if (!counts) {
            *q = MPI_REQUEST_NULL;
            break;
        }
        for (int j = 0; j < b->size; j++) counts[j] = n;
        api->ireduce_scatter(b->send, b->recv, counts, t, MPI_SUM, w, q);
        break;
    }
    case STRATA_COLL_SCAN: api->iscan(b->send, b->recv, n, t, MPI_SUM, w, q); break;
    case STRATA_COLL_EXSCAN: api->iexscan(b->send, b->recv, n, t, MPI_SUM, w, q); break;
    case STRATA_COLL_GATHERV:
        api->igatherv(b->send, b->vcounts[b->rank], t, b->recv, b->vcounts, b->vdispls, t, root,
                      w, q);
        break;
    case STRATA_COLL_SCATTERV:
        api->iscatterv(b->send, b->vcounts, b->vdispls, t, b->recv, b->vcounts[b->rank], t, root,
                       w, q);
        break;
    case STRATA_COLL_ALLGATHERV:
        api->iallgatherv(b->send, b->vcounts[b->rank], t, b->recv, b->vcounts, b->vdispls, t, w,
                         q);
        break;
    case STRATA_COLL_ALLTOALLV:
        api->ialltoallv(b->send, b->vcounts, b->vdispls, t, b->recv, b->vcounts, b->vdispls, t,
                        w, q);
        break;
    default: /* refused by the options (bench_nonblocking_supported) */
        fprintf(stderr, "strata-bench: no nonblocking form of collective %d here\n", r->coll);
        MPI_Abort(w, 2);
    }
}

void bench_call_nonblocking(struct bench *b, const struct bench_row *r, int strata)
{
    const struct nb_api *api = strata ? &strata_nb_api : &host_api;
    MPI_Request q;
    post(api, b, r, &q);
    api->wait(&q, MPI_STATUS_IGNORE);
}

/* Computes for `us` microseconds without calling MPI (MPI_Wtime is a clock
 * read, local in both MPIs). */
static volatile double sink;
static void compute(double us)
{
    double end = MPI_Wtime() + us * 1e-6, x = 1.0;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 64; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* One timed call: of `api` (post, compute `us`, wait), or with api NULL the
 * blocking form of implementation `strata`; seconds on this rank. */
static double one(const struct nb_api *api, int strata, struct bench *b,
                  const struct bench_row *r, double us)
{
    MPI_Request q;
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (!api) {
        bench_call_blocking(b, r, strata);
        return MPI_Wtime() - t0;
    }
    post(api, b, r, &q);
    if (us > 0) compute(us);
    api->wait(&q, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
}

/* The slowest rank's mean of `iters` calls, in microseconds. */
static double mean_us(const struct nb_api *api, int strata, struct bench *b,
                      const struct bench_row *r, double us, int iters)
{
    double sum = 0, mine, slowest;
    for (int i = 0; i < iters; i++) sum += one(api, strata, b, r, us);
    mine = sum / iters * 1e6;
    PMPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static double overlap_pct(double pure, double comp, double total)
{
    double o = pure > 0 ? 100.0 * (pure + comp - total) / pure : 0;
    return o < 0 ? 0 : o > 100 ? 100 : o;
}

void bench_run_overlap(struct bench *b, const struct bench_row *rows, int nrows)
{
    int iters = b->opt.iters ? b->opt.iters : 50;
    if (b->rank == 0) {
        const char *p = getenv("STRATA_PROGRESS");
        int level = MPI_THREAD_SINGLE;
        MPI_Query_thread(&level);
        printf("progress: %s (thread level %s)\n",
               p && !strcmp(p, "thread") ? "STRATA_PROGRESS=thread" : "inside MPI calls only",
               level == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "below MULTIPLE");
    }
    if (b->rank == 0)
        printf("%-21s %8s | %9s %9s %6s %9s %8s | %9s %9s %9s %8s\n", "collective", "bytes",
               "blk us", "strata us", "nb/blk", "+compute", "overlap%", "blk us", "host us",
               "+compute", "overlap%");
    for (int i = 0; i < nrows; i++) {
        const struct bench_row *r = &rows[i];
        /* [k]: 0 strata, 1 host; blk: the blocking form timed the same way
         * in the same minutes, the reference of issue 17's "within 10% of
         * the blocking form". */
        double pure[2], total[2], blk[2];
        const struct nb_api *api[2] = {&strata_nb_api, &host_api};
        if (strata_coll_is_v(r->coll)) bench_v_layout(b, r);
        for (int k = 0; k < 2; k++) { /* warm-up: contexts, buffers, queues */
            mean_us(api[k], !k, b, r, 0, 3);
            mean_us(NULL, !k, b, r, 0, 3);
        }
        for (int k = 0; k < 2; k++) {
            blk[k] = mean_us(NULL, !k, b, r, 0, iters);
            pure[k] = mean_us(api[k], !k, b, r, 0, iters);
        }
        /* The same computation for both: the longer pure time, so that each
         * has enough to hide behind. */
        double comp = pure[0] > pure[1] ? pure[0] : pure[1];
        for (int k = 0; k < 2; k++) total[k] = mean_us(api[k], !k, b, r, comp, iters);
        if (b->rank == 0) {
            char size[32];
            bench_format_size(r->bytes, size, sizeof size);
            printf("%-21s %8s | %9.2f %9.2f %6.2f %9.2f %8.1f | %9.2f %9.2f %9.2f %8.1f%s\n",
                   strata_call_name(strata_call_id(r->coll, STRATA_FORM_NONBLOCKING)) + 4, size,
                   blk[0], pure[0], blk[0] > 0 ? pure[0] / blk[0] : 0, total[0],
                   overlap_pct(pure[0], comp, total[0]), blk[1], pure[1], total[1],
                   overlap_pct(pure[1], comp, total[1]), r->refusal ? "  (strata: host MPI)" : "");
        }
    }
}
