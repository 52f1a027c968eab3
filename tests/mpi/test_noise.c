/* Waiting for a rank that has no core (issue 15): one rank enters each
 * collective DELAY_MS late (it sleeps, as a descheduled or noisy rank
 * would), and the others, which cannot finish without its data, must block
 * in the kernel rather than spin:
 *   - each waiting rank's CPU time during the call (getrusage of its thread:
 *     CPU time, not wall time, so a loaded machine does not change the
 *     verdict) stays under a quarter of the delay, and
 *   - its STRATA_STATS wait counters show at least one block (FUTEX_WAIT);
 * and every result is right (values computed here).
 *   test_noise [--expect=adaptive|spin] [--load=N]
 * --expect=spin: run under STRATA_WAIT=spin; then no wait may block (the
 *   counter's negative control; CPU time is not judged).
 * --load=N: rank 0 starts N busy processes for the run; with N at least the
 *   online cores, every waiting rank must also have found the machine busy.
 * Needs STRATA_STATS set (the counters count only then). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_load.h"
#include "testutil.h"
#include "util/stats.h"

#define DELAY_MS 250
#define BIG (1 << 20)

enum { C_BCAST_SMALL, C_BCAST_BIG, C_ALLREDUCE, C_ALLGATHER, C_ALLTOALL, C_BARRIER, NCASES };
static const char *names[NCASES] = {"Bcast 8 B", "Bcast 1 MiB", "Allreduce 1 MiB",
                                    "Allgather 256 KiB", "Alltoall 128 KiB", "Barrier"};

static double thread_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double value(int rank, size_t i) { return (double)((rank + 1) * 7 + (int)(i % 1000)); }

/* Runs case c with `late` entering late; checks the result. */
static void run(int c, int late, int rank, int size, double *buf, double *out)
{
    size_t n = c == C_BCAST_SMALL ? 1 : c == C_ALLGATHER ? BIG / 4 / sizeof(double)
                                    : c == C_ALLTOALL ? BIG / 8 / sizeof(double)
                                                      : BIG / sizeof(double);
    for (size_t i = 0; i < n; i++) buf[i] = c == C_BCAST_SMALL || c == C_BCAST_BIG
                                                ? (rank == late ? value(late, i) : -1.0)
                                                : value(rank, i);
    /* Alltoall: block j of rank r holds value(r * size + j, i) (size <= 8). */
    if (c == C_ALLTOALL)
        for (int j = 0; j < size; j++)
            for (size_t i = 0; i < n; i++) buf[(size_t)j * n + i] = value(rank * size + j, i);
    switch (c) {
    case C_BCAST_SMALL:
    case C_BCAST_BIG:
        CHECK(MPI_Bcast(buf, (int)n, MPI_DOUBLE, late, MPI_COMM_WORLD) == MPI_SUCCESS, "Bcast");
        for (size_t i = 0; i < n; i++)
            CHECK(buf[i] == value(late, i), "%s: element %zu is %g", names[c], i, buf[i]);
        break;
    case C_ALLREDUCE:
        CHECK(MPI_Allreduce(buf, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) ==
                  MPI_SUCCESS, "Allreduce");
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < size; r++) want += value(r, i);
            CHECK(out[i] == want, "%s: element %zu is %g, not %g", names[c], i, out[i], want);
        }
        break;
    case C_ALLGATHER:
        CHECK(MPI_Allgather(buf, (int)n, MPI_DOUBLE, out, (int)n, MPI_DOUBLE, MPI_COMM_WORLD) ==
                  MPI_SUCCESS, "Allgather");
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < n; i++)
                CHECK(out[(size_t)r * n + i] == value(r, i), "%s: rank %d's element %zu",
                      names[c], r, i);
        break;
    case C_ALLTOALL:
        /* With a late rank, pairwise reads the others' blocks ahead of turn. */
        CHECK(MPI_Alltoall(buf, (int)n, MPI_DOUBLE, out, (int)n, MPI_DOUBLE, MPI_COMM_WORLD) ==
                  MPI_SUCCESS, "Alltoall");
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < n; i++)
                CHECK(out[(size_t)r * n + i] == value(r * size + rank, i),
                      "%s: rank %d's element %zu", names[c], r, i);
        break;
    case C_BARRIER:
        CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "Barrier");
        break;
    }
}

int main(int argc, char **argv)
{
    int spin = 0, load = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect=spin")) spin = 1;
        else if (!strcmp(argv[i], "--expect=adaptive")) spin = 0;
        else if (!strncmp(argv[i], "--load=", 7)) load = atoi(argv[i] + 7);
        else {
            fprintf(stderr, "test_noise: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(strata_stats_enabled(), "run me with STRATA_STATS set (the counters are off)");
    CHECK(size <= 8, "at most 8 ranks (the Alltoall blocks fill the buffer)");
    /* The competitors of strata-bench --load (they die with this rank). */
    struct bench_load busy = {0};
    if (rank == 0)
        CHECK(bench_load_start(&busy, load, BENCH_LOAD_SPIN, 0, 1) == 0, "cannot start the load");
    double *buf = malloc(BIG), *out = malloc((size_t)size * BIG);
    CHECK(buf && out, "out of memory");
    /* Once without delay: the first call of a communicator sets strata up
     * through the host MPI, which would do the waiting. */
    for (int c = 0; c < NCASES; c++) run(c, (c + 1) % size, rank, size, buf, out);
    unsigned long long busy_before = strata_stats_local_wait(STRATA_WAIT_BUSY);
    int waited = 0;
    for (int c = 0; c < NCASES; c++) {
        int late = (c + 1) % size;
        PMPI_Barrier(MPI_COMM_WORLD);
        unsigned long long blocks = strata_stats_local_wait(STRATA_WAIT_BLOCKS);
        double cpu = thread_cpu_ms();
        if (rank == late) {
            struct timespec ts = {0, DELAY_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
        run(c, late, rank, size, buf, out);
        if (rank == late) continue;
        waited = 1;
        double used = thread_cpu_ms() - cpu;
        blocks = strata_stats_local_wait(STRATA_WAIT_BLOCKS) - blocks;
        if (spin) {
            CHECK(blocks == 0, "%s under STRATA_WAIT=spin blocked %llu times", names[c], blocks);
        } else {
            CHECK(blocks >= 1, "%s: waiting %d ms for rank %d never blocked", names[c],
                  DELAY_MS, late);
            CHECK(used < DELAY_MS / 4.0, "%s: waiting %d ms for rank %d took %.1f ms of CPU",
                  names[c], DELAY_MS, late, used);
        }
        if (rank == 0 || c == 0)
            printf("rank %d %-18s: %.2f ms CPU while waiting %d ms, %llu blocks\n", rank,
                   names[c], used, DELAY_MS, blocks);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!spin && waited && load >= cores)
        CHECK(strata_stats_local_wait(STRATA_WAIT_BUSY) > busy_before,
              "%d busy processes on %ld cores, and no wait found the machine busy", load, cores);
    CHECK(bench_load_stop(&busy) == 0, "a load process was not reaped");
    free(buf);
    free(out);
    test_pass(spin ? "noise (spin)" : load ? "noise (loaded)" : "noise");
    MPI_Finalize();
    return 0;
}
