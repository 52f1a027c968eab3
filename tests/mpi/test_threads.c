/* Under MPI_THREAD_MULTIPLE, threads that each run collectives on their own
 * communicator must neither disturb each other's results nor deadlock.
 * Contexts are created concurrently too (each thread's first collective).
 * Every result is checked against a value computed here. */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define THREADS 3
#define ROUNDS 150

struct worker {
    MPI_Comm comm;
    int id;
};

static int rank, size;

/* Sizes that take each path: flag line, segment regions, CMA. */
static const int counts[] = {1, 700, 70000};

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    double *buf = malloc(sizeof(double) * 70000), *out = malloc(sizeof(double) * 70000);
    CHECK(buf && out, "out of memory");
    for (int round = 0; round < ROUNDS; round++) {
        int n = counts[round % 3], root = round % size;
        for (int i = 0; i < n; i++) buf[i] = rank == root ? w->id * 1000.0 + i + round : -1.0;
        MPI_Bcast(buf, n, MPI_DOUBLE, root, w->comm);
        for (int i = 0; i < n; i += 97)
            CHECK(buf[i] == w->id * 1000.0 + i + round, "thread %d bcast round %d", w->id, round);
        for (int i = 0; i < n; i++) buf[i] = rank + w->id + i % 7;
        MPI_Allreduce(buf, out, n, MPI_DOUBLE, MPI_SUM, w->comm);
        double expect_base = size * (size - 1) / 2.0 + size * w->id;
        for (int i = 0; i < n; i += 89)
            CHECK(out[i] == expect_base + size * (i % 7), "thread %d allreduce round %d", w->id,
                  round);
        MPI_Reduce(buf, out, n, MPI_DOUBLE, MPI_MAX, root, w->comm);
        if (rank == root)
            for (int i = 0; i < n; i += 83)
                CHECK(out[i] == size - 1 + w->id + i % 7, "thread %d reduce round %d", w->id, round);
        MPI_Barrier(w->comm);
    }
    free(buf);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("SKIP: the host MPI does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    struct worker w[THREADS];
    pthread_t tid[THREADS];
    /* Communicators are made in one order on every rank (MPI requires it);
     * their first collectives then run concurrently. */
    for (int t = 0; t < THREADS; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
        w[t].id = t;
    }
    for (int t = 0; t < THREADS; t++) CHECK(!pthread_create(&tid[t], NULL, run_worker, &w[t]), "pthread_create");
    for (int t = 0; t < THREADS; t++) pthread_join(tid[t], NULL);
    for (int t = 0; t < THREADS; t++) MPI_Comm_free(&w[t].comm);
    test_pass("threads");
    MPI_Finalize();
    return 0;
}
