/* Under MPI_THREAD_MULTIPLE, threads that each run collectives on their own
 * communicator must neither disturb each other's results nor deadlock.
 *
 * Worker threads run all eight collectives, round after round, at block
 * sizes that take every path (the flag lines, the segment's regions, CMA
 * copies), with the root moving from round to round.  Their communicators'
 * contexts are created concurrently (each one's first collective).  Every
 * value is a function of (thread, round, rank, block, position), so a block
 * that reached the wrong communicator or the wrong rank is caught, and every
 * result is checked whole against the value computed here.  Barrier: on some
 * rounds one rank enters late, and no rank may leave before the last one
 * entered (CLOCK_MONOTONIC, one machine).
 *
 * With --creators=N, N more threads make and free communicators all along
 * (MPI_Comm_dup and MPI_Comm_split of a parent of their own, since MPI orders
 * a communicator's creations only within one thread) and run collectives on
 * them, so contexts are created and destroyed while the workers' collectives
 * run.  At the end every context made was freed again (the registry lost
 * none), and the workers' communicators were served by strata (unless
 * --no-expect-served: configurations where the host MPI serves).
 *
 *   --threads=N    worker threads (default 3)
 *   --rounds=N     rounds per worker (default 60)
 *   --creators=N   communicator-making threads (default 0)
 *   --cycles=N     communicators each creator makes (default 16)
 *   --nonblocking  the workers' Bcast and Allreduces as MPI_Ibcast/MPI_Iallreduce +
 *                  MPI_Wait: strata's nonblocking queue runs while creators free
 *                  communicators (a Comm_free's callback meets the queue's lock)
 *   --no-expect-served */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context/context.h"
#include "route/route.h"
#include "testutil.h"

#define MAX_THREADS 8

/* Elements (int64) per block: 8 B (flag lines), 40 B, 4.7 KiB (segment
 * regions), 70 KiB and 312 KiB (CMA), then again with the next root. */
static const int counts[] = {1, 5, 600, 9000, 40000};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))
#define MAX_COUNT 40000

static struct {
    int threads, rounds, creators, cycles, expect_served, nonblocking;
} opt = {3, 60, 0, 16, 1, 0};

/* What a block collective moves: block j of rank `rank`, position i. */
static int64_t block_value(int t, int round, int rank, int j, int i)
{
    return ((int64_t)t << 56) + ((int64_t)round << 40) + ((int64_t)rank << 28) +
           ((int64_t)j << 20) + i;
}

/* A reduction's input: small enough that sums over many ranks never wrap. */
static int64_t reduce_value(int t, int round, int rank, int i)
{
    return (int64_t)t * 1000003 + (int64_t)round * 7919 + (int64_t)rank * 104729 + i;
}

static double max_input(int t, int round, int rank, int i)
{
    return (double)((rank * 7 + round + t + i) % 97) - 40.0;
}

struct worker {
    MPI_Comm comm;
    int id, rank, size;
    int64_t *send, *recv; /* [size * MAX_COUNT] */
    double *dsend, *drecv;
};

#define EXPECT_EQ(w, what, round, n, root, i, got, want)                                    \
    CHECK((got) == (want), "thread %d %s round %d count %d root %d: element %ld is %lld, " \
          "expected %lld", (w)->id, what, round, n, root, (long)(i), (long long)(got),     \
          (long long)(want))

static void run_bcast(struct worker *w, int round, int n, int root)
{
    for (int i = 0; i < n; i++)
        w->recv[i] = w->rank == root ? block_value(w->id, round, root, 0, i) : -1;
    if (opt.nonblocking) {
        MPI_Request r;
        MPI_Ibcast(w->recv, n, MPI_INT64_T, root, w->comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Bcast(w->recv, n, MPI_INT64_T, root, w->comm);
    }
    for (int i = 0; i < n; i++)
        EXPECT_EQ(w, "bcast", round, n, root, i, w->recv[i], block_value(w->id, round, root, 0, i));
}

static void run_reduce(struct worker *w, int round, int n, int root, int all)
{
    for (int i = 0; i < n; i++) {
        w->send[i] = reduce_value(w->id, round, w->rank, i);
        w->recv[i] = -1;
    }
    /* Allreduce in place on odd rounds. */
    int in_place = all && round % 2;
    if (in_place) memcpy(w->recv, w->send, sizeof(int64_t) * (size_t)n);
    const void *src = in_place ? MPI_IN_PLACE : w->send;
    if (all && opt.nonblocking) {
        MPI_Request r;
        MPI_Iallreduce(src, w->recv, n, MPI_INT64_T, MPI_SUM, w->comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (all) {
        MPI_Allreduce(src, w->recv, n, MPI_INT64_T, MPI_SUM, w->comm);
    } else {
        MPI_Reduce(src, w->recv, n, MPI_INT64_T, MPI_SUM, root, w->comm);
    }
    if (!all && w->rank != root) return;
    for (int i = 0; i < n; i++) {
        int64_t want = 0;
        for (int r = 0; r < w->size; r++) want += reduce_value(w->id, round, r, i);
        EXPECT_EQ(w, all ? "allreduce" : "reduce", round, n, root, i, w->recv[i], want);
    }
}

static void run_allreduce_max(struct worker *w, int round, int n)
{
    for (int i = 0; i < n; i++) w->dsend[i] = max_input(w->id, round, w->rank, i);
    MPI_Allreduce(w->dsend, w->drecv, n, MPI_DOUBLE, MPI_MAX, w->comm);
    for (int i = 0; i < n; i++) {
        double want = max_input(w->id, round, 0, i);
        for (int r = 1; r < w->size; r++)
            if (max_input(w->id, round, r, i) > want) want = max_input(w->id, round, r, i);
        CHECK(w->drecv[i] == want, "thread %d allreduce max round %d count %d: element %d is "
              "%g, expected %g", w->id, round, n, i, w->drecv[i], want);
    }
}

static void fill_recv(struct worker *w, size_t elements)
{
    for (size_t i = 0; i < elements; i++) w->recv[i] = -1;
}

/* Gather (root only, or everyone for Allgather): block r from rank r. */
static void run_gather(struct worker *w, int round, int n, int root, int all)
{
    for (int i = 0; i < n; i++) w->send[i] = block_value(w->id, round, w->rank, 0, i);
    fill_recv(w, (size_t)w->size * (size_t)n);
    if (all) MPI_Allgather(w->send, n, MPI_INT64_T, w->recv, n, MPI_INT64_T, w->comm);
    else MPI_Gather(w->send, n, MPI_INT64_T, w->recv, n, MPI_INT64_T, root, w->comm);
    if (!all && w->rank != root) return;
    for (int r = 0; r < w->size; r++)
        for (int i = 0; i < n; i++)
            EXPECT_EQ(w, all ? "allgather" : "gather", round, n, root, (long)r * n + i,
                      w->recv[(size_t)r * n + i], block_value(w->id, round, r, 0, i));
}

/* Scatter: rank r gets block r of the root's buffer. */
static void run_scatter(struct worker *w, int round, int n, int root)
{
    if (w->rank == root)
        for (int r = 0; r < w->size; r++)
            for (int i = 0; i < n; i++)
                w->send[(size_t)r * n + i] = block_value(w->id, round, root, r, i);
    fill_recv(w, (size_t)n);
    MPI_Scatter(w->send, n, MPI_INT64_T, w->recv, n, MPI_INT64_T, root, w->comm);
    for (int i = 0; i < n; i++)
        EXPECT_EQ(w, "scatter", round, n, root, i, w->recv[i],
                  block_value(w->id, round, root, w->rank, i));
}

/* Alltoall: rank r's block j goes to rank j, as block r. */
static void run_alltoall(struct worker *w, int round, int n)
{
    for (int j = 0; j < w->size; j++)
        for (int i = 0; i < n; i++)
            w->send[(size_t)j * n + i] = block_value(w->id, round, w->rank, j, i);
    fill_recv(w, (size_t)w->size * (size_t)n);
    MPI_Alltoall(w->send, n, MPI_INT64_T, w->recv, n, MPI_INT64_T, w->comm);
    for (int r = 0; r < w->size; r++)
        for (int i = 0; i < n; i++)
            EXPECT_EQ(w, "alltoall", round, n, -1, (long)r * n + i, w->recv[(size_t)r * n + i],
                      block_value(w->id, round, r, w->rank, i));
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One rank (`late`) enters 2 ms after the others: nobody may leave before. */
static void run_barrier(struct worker *w, int round, int late)
{
    if (w->rank == late) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    double times[2] = {now_us(), 0};
    MPI_Barrier(w->comm);
    times[1] = now_us();
    double *all = malloc(sizeof times * (size_t)w->size);
    CHECK(all != NULL, "out of memory");
    PMPI_Allgather(times, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, w->comm);
    for (int r = 0; r < w->size; r++)
        CHECK(times[1] >= all[2 * r], "thread %d barrier round %d: left at %.1f us before rank "
              "%d entered at %.1f us", w->id, round, times[1], r, all[2 * r]);
    free(all);
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    size_t cap = (size_t)w->size * MAX_COUNT;
    w->send = malloc(sizeof(int64_t) * cap);
    w->recv = malloc(sizeof(int64_t) * cap);
    w->dsend = malloc(sizeof(double) * MAX_COUNT);
    w->drecv = malloc(sizeof(double) * MAX_COUNT);
    CHECK(w->send && w->recv && w->dsend && w->drecv, "out of memory");
    for (int round = 0; round < opt.rounds; round++) {
        /* Each thread starts at another size, so large and small calls of
         * different threads overlap. */
        int n = counts[(round + w->id) % NCOUNTS], root = (round / NCOUNTS + w->id) % w->size;
        run_bcast(w, round, n, root);
        run_reduce(w, round, n, root, 0);
        run_reduce(w, round, n, root, 1);
        run_allreduce_max(w, round, n);
        run_gather(w, round, n, root, 0);
        run_gather(w, round, n, root, 1);
        run_scatter(w, round, n, root);
        run_alltoall(w, round, n);
        if (round % 4 == 0) run_barrier(w, round, root);
        else MPI_Barrier(w->comm);
    }
    free(w->send);
    free(w->recv);
    free(w->dsend);
    free(w->drecv);
    return NULL;
}

/* ---- Communicators made and freed while the workers run ---- */

struct creator {
    MPI_Comm parent;
    int id; /* thread number, after the workers' */
};

static void *run_creator(void *arg)
{
    struct creator *c = arg;
    int64_t *buf = malloc(sizeof(int64_t) * 9000);
    CHECK(buf != NULL, "out of memory");
    for (int cycle = 0; cycle < opt.cycles; cycle++) {
        MPI_Comm dup, half;
        MPI_Comm_dup(c->parent, &dup);
        int rank, size;
        MPI_Comm_rank(dup, &rank);
        MPI_Comm_size(dup, &size);
        /* The dup's first collective creates its context. */
        int64_t mine = reduce_value(c->id, cycle, rank, 0), sum = 0, want = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, dup);
        for (int r = 0; r < size; r++) want += reduce_value(c->id, cycle, r, 0);
        CHECK(sum == want, "creator %d cycle %d: allreduce gave %lld, expected %lld", c->id,
              cycle, (long long)sum, (long long)want);
        /* Halves by parity, ranks reversed: another hierarchy, another root. */
        MPI_Comm_split(dup, rank % 2, size - rank, &half);
        int hrank, hsize;
        MPI_Comm_rank(half, &hrank);
        MPI_Comm_size(half, &hsize);
        int n = cycle % 2 ? 9000 : 3, root = cycle % hsize;
        for (int i = 0; i < n; i++) buf[i] = hrank == root ? block_value(c->id, cycle, 0, 1, i) : -1;
        MPI_Bcast(buf, n, MPI_INT64_T, root, half);
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == block_value(c->id, cycle, 0, 1, i),
                  "creator %d cycle %d: bcast element %d is %lld", c->id, cycle, i,
                  (long long)buf[i]);
        MPI_Barrier(dup);
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
    }
    free(buf);
    return NULL;
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--threads=", 10)) opt.threads = atoi(a + 10);
        else if (!strncmp(a, "--rounds=", 9)) opt.rounds = atoi(a + 9);
        else if (!strncmp(a, "--creators=", 11)) opt.creators = atoi(a + 11);
        else if (!strncmp(a, "--cycles=", 9)) opt.cycles = atoi(a + 9);
        else if (!strcmp(a, "--no-expect-served")) opt.expect_served = 0;
        else if (!strcmp(a, "--nonblocking")) opt.nonblocking = 1;
        else {
            fprintf(stderr, "test_threads: unknown option %s (see the file's header)\n", a);
            exit(2);
        }
    }
    if (opt.threads < 1 || opt.creators < 0 || opt.threads + opt.creators > MAX_THREADS ||
        opt.rounds < 1 || opt.cycles < 1) {
        fprintf(stderr, "test_threads: 1 to %d threads in all, rounds and cycles >= 1\n",
                MAX_THREADS);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    parse_options(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("SKIP: the host MPI does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    int contexts_before = strata_ctx_live_count();
    struct worker w[MAX_THREADS];
    struct creator c[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    /* Communicators are made in one order on every rank (MPI requires it);
     * their first collectives then run concurrently.  Every third worker
     * has the ranks reversed. */
    for (int t = 0; t < opt.threads; t++) {
        w[t] = (struct worker){.id = t};
        if (t % 3 == 1) MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &w[t].comm);
        else MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
        MPI_Comm_rank(w[t].comm, &w[t].rank);
        MPI_Comm_size(w[t].comm, &w[t].size);
    }
    for (int t = 0; t < opt.creators; t++) {
        c[t] = (struct creator){.id = opt.threads + t};
        MPI_Comm_dup(MPI_COMM_WORLD, &c[t].parent);
    }
    for (int t = 0; t < opt.threads; t++)
        CHECK(!pthread_create(&tid[t], NULL, run_worker, &w[t]), "pthread_create");
    for (int t = 0; t < opt.creators; t++)
        CHECK(!pthread_create(&tid[opt.threads + t], NULL, run_creator, &c[t]), "pthread_create");
    for (int t = 0; t < opt.threads + opt.creators; t++) pthread_join(tid[t], NULL);

    /* The test means something only if strata served the calls. */
    for (int t = 0; t < opt.threads && opt.expect_served; t++) {
        const char *why = strata_route_refusal(strata_ctx_get(w[t].comm), STRATA_COLL_BCAST);
        CHECK(why == NULL, "thread %d: strata did not serve its communicator: %s", t, why);
    }
    for (int t = 0; t < opt.threads; t++) MPI_Comm_free(&w[t].comm);
    for (int t = 0; t < opt.creators; t++) MPI_Comm_free(&c[t].parent);
    int contexts_after = strata_ctx_live_count();
    CHECK(contexts_after == contexts_before, "%d contexts live after every communicator was "
          "freed, %d before", contexts_after, contexts_before);
    test_pass("threads");
    MPI_Finalize();
    return 0;
}
