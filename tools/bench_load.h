/* Busy processes beside a job (issue 15): strata-bench --load N, the node
 * matrix under load (tests/scripts/strata-load.c) and test_noise --load=N
 * all start their competitors here, so every measurement and test of "a
 * machine whose cores are taken" means the same load.
 *
 * Two kinds:
 *   spin   a pure busy loop: a job that never gives its core back;
 *   noise  each process busy-waits U(0, 5) ms, then sleeps U(0, 5) ms, again
 *          and again (its own random stream): a daemon or I/O thread waking
 *          at random, half a core on average.
 * A competitor dies with the process that started it (PR_SET_PDEATHSIG, and
 * it checks its parent every few milliseconds besides, in case the parent
 * died before the signal was set): a job killed by MPI_Abort, a signal or a
 * timeout leaves nothing running.  It does no MPI call, holds no file of the
 * job (stdin/out/err on /dev/null, every other descriptor closed) and ends
 * by SIGKILL (no atexit handler of the job runs in it).  No MPI here. */
#ifndef STRATA_TOOLS_BENCH_LOAD_H
#define STRATA_TOOLS_BENCH_LOAD_H

#include <stdint.h>
#include <sys/types.h>

#define BENCH_LOAD_MAX 64
#define BENCH_LOAD_NOISE_MAX_MS 5.0

enum bench_load_kind { BENCH_LOAD_SPIN, BENCH_LOAD_NOISE };

struct bench_load {
    int n;                        /* processes running */
    enum bench_load_kind kind;
    pid_t pid[BENCH_LOAD_MAX];
};

/* "spin" or "noise" -> *kind: 0, or -1 for anything else. */
int bench_load_parse_kind(const char *text, enum bench_load_kind *kind);
const char *bench_load_kind_name(enum bench_load_kind kind);

/* Starts n (0..BENCH_LOAD_MAX) competitors of `kind`; with `pin`, competitor i
 * is bound to online CPU i mod CPUs.  `seed` keys the noise kind's streams.
 * 0, or -1 with errno set (those already started are stopped). */
int bench_load_start(struct bench_load *l, int n, enum bench_load_kind kind, int pin,
                     uint64_t seed);

/* Kills (SIGKILL) and reaps every competitor; l->n becomes 0.  Safe to call
 * twice.  0, or -1 if one could not be reaped. */
int bench_load_stop(struct bench_load *l);

#endif
