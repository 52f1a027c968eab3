/* The futex wake protocol of src/shm/wait.h, with threads (no MPI launch):
 *   1. a writer publishes 1..ROUNDS with a payload, pausing at random, and
 *      WAITERS threads wait for every value with a policy that blocks at
 *      once: each must see every payload whole (release/acquire), the
 *      waiters must really have blocked, and no wait may end by its
 *      timeout (set to 10 s, far longer than any pause of the writer: a
 *      lost wake-up would show as a timeout);
 *   2. a waiter whose writer stays silent times out into its liveness check
 *      (at least one timeout, then the value arrives and it returns);
 *   3. a waiter whose owner process is dead ends the process (abort) at its
 *      first timeout instead of waiting forever.
 * Run under ThreadSanitizer too (threads.wait-protocol). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/flags.h"
#include "shm/wait.h"
#include "util/stats.h"

#define ROUNDS 300
#define WAITERS 3
#define WORDS 8
#define LAST (2 * ROUNDS) /* the flag's value after both protocol runs */

static int failures;
static uint64_t base; /* the flag's value before a protocol run (set before its threads) */

#define CHECK(cond, ...)                                                                     \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* One "rank" of a plane: its flag, the payload the flag vouches for, and
 * its wake line. */
static struct {
    _Alignas(64) strata_flag flag;
    _Atomic uint64_t payload[WORDS]; /* written relaxed before the release */
    _Alignas(64) struct strata_wake wake;
    _Alignas(64) struct strata_wake waiter_wake[WAITERS + 1];
} shared;

static void pause_us(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

static void *writer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (uint64_t v = base + 1; v <= base + ROUNDS; v++) {
        for (int i = 0; i < WORDS; i++)
            atomic_store_explicit(&shared.payload[i], v * 1000 + (uint64_t)i,
                                  memory_order_relaxed);
        strata_wake_publish(&shared.wake, &shared.flag, v);
        /* Mostly short gaps (waiters still spinning or yielding), sometimes
         * long ones (they block). */
        unsigned r = (unsigned)rand_r(&seed) % 100;
        if (r < 40) pause_us(r < 10 ? 1 : 300 + r * 10);
    }
    return NULL;
}

struct waiter_result {
    int index;
    unsigned long blocks, timeouts, bad;
};

static void *waiter(void *arg)
{
    struct waiter_result *res = arg;
    struct strata_wait_target t = {&shared.flag, 0, &shared.wake,
                                   &shared.waiter_wake[res->index], 0};
    for (uint64_t v = base + 1; v <= base + ROUNDS; v++) {
        struct strata_waiter w;
        strata_waiter_init(&w);
        t.value = v;
        while (strata_flag_read(&shared.flag) < v) strata_waiter_pause(&w, &t);
        res->blocks += w.blocks;
        res->timeouts += w.timeouts;
        strata_waiter_done(&w);
        /* The writer may be further on (a later payload is fine); one
         * older than the flag is not. */
        uint64_t first = atomic_load_explicit(&shared.payload[0], memory_order_relaxed) / 1000;
        if (first < v) res->bad++;
    }
    return NULL;
}

static void protocol(const char *form)
{
    base = strata_flag_read(&shared.flag); /* values only grow: this run's are above */
    pthread_t wt[WAITERS], writer_thread;
    struct waiter_result res[WAITERS];
    memset(res, 0, sizeof res);
    unsigned long long blocks_before = strata_stats_local_wait(STRATA_WAIT_BLOCKS);
    unsigned long long wakes_before = strata_stats_local_wait(STRATA_WAIT_WAKES);
    for (int i = 0; i < WAITERS; i++) {
        res[i].index = i;
        if (pthread_create(&wt[i], NULL, waiter, &res[i])) abort();
    }
    if (pthread_create(&writer_thread, NULL, writer, (void *)(uintptr_t)12345)) abort();
    pthread_join(writer_thread, NULL);
    unsigned long blocks = 0;
    for (int i = 0; i < WAITERS; i++) {
        pthread_join(wt[i], NULL);
        CHECK(res[i].bad == 0, "waiter %d saw %lu payloads older than their flag", i, res[i].bad);
        CHECK(res[i].timeouts == 0, "waiter %d: %lu waits ended by the 10 s timeout (a lost "
              "wake-up)", i, res[i].timeouts);
        blocks += res[i].blocks;
    }
    CHECK(blocks > 0, "no waiter ever blocked: the test did not exercise the futex path");
    CHECK(strata_stats_local_wait(STRATA_WAIT_BLOCKS) - blocks_before >= blocks,
          "STRATA_STATS counted %llu blocks, the waiters %lu",
          strata_stats_local_wait(STRATA_WAIT_BLOCKS) - blocks_before, blocks);
    CHECK(strata_stats_local_wait(STRATA_WAIT_WAKES) > wakes_before, "the writer never rang");
    CHECK(atomic_load(&shared.wake.sleepers) == 0, "%u sleepers left counted",
          atomic_load(&shared.wake.sleepers));
    printf("protocol (%s): %d waiters x %d values, %lu blocks\n", form, WAITERS, ROUNDS,
           blocks);
}

/* ---- 2: a silent writer; the waiter times out, then the value comes. */

static _Atomic int timed_out_once;

static void *late_writer(void *arg)
{
    (void)arg;
    while (!atomic_load(&timed_out_once)) pause_us(1000);
    strata_wake_publish(&shared.wake, &shared.flag, LAST + 1);
    return NULL;
}

static void timeout_then_value(void)
{
    strata_wait_set_timeout_ms(30);
    pthread_t t;
    if (pthread_create(&t, NULL, late_writer, NULL)) abort();
    struct strata_wait_target tg = {&shared.flag, LAST + 1, &shared.wake,
                                    &shared.waiter_wake[WAITERS], getpid()};
    struct strata_waiter w;
    strata_waiter_init(&w);
    while (strata_flag_read(&shared.flag) < LAST + 1) {
        strata_waiter_pause(&w, &tg);
        if (w.timeouts) atomic_store(&timed_out_once, 1);
    }
    CHECK(w.timeouts >= 1, "the waiter never timed out");
    strata_waiter_done(&w);
    pthread_join(t, NULL);
    printf("timeout: the waiter timed out, checked its (live) owner and got the value\n");
}

/* ---- 3: the owner is dead: the first timeout ends the waiter. */

static void dead_owner(void)
{
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0); /* reaped: kill(dead, 0) now fails with ESRCH */
    pid_t child = fork();
    if (child == 0) {
        strata_wait_set_timeout_ms(20);
        struct strata_wait_target tg = {&shared.flag, LAST + 100, &shared.wake,
                                        &shared.waiter_wake[WAITERS], dead};
        struct strata_waiter w;
        strata_waiter_init(&w);
        for (int i = 0; i < 100000 && strata_flag_read(&shared.flag) < LAST + 100; i++)
            strata_waiter_pause(&w, &tg);
        _exit(3); /* the waiter gave up without noticing the death */
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
          "a waiter on a dead owner ended with status 0x%x, not by abort", status);
    printf("dead owner: the waiter aborted at its liveness check\n");
}

int main(void)
{
    strata_stats_set_enabled(1);
    strata_flag_set_spin(64);
    /* Block as soon as the quick spin and a few yields are over. */
    strata_wait_set_timeout_ms(10000);
    /* Both forms of the barrier pair: writers fencing, then (where the
     * kernel offers it) the asymmetric one. */
    strata_wait_configure(1, 0, 0, 0);
    protocol("fence");
    if (strata_wait_register_asymmetric()) {
        strata_wait_configure(1, 1, 0, 0);
        protocol("membarrier");
    } else {
        printf("membarrier's global expedited barrier unavailable: asymmetric form not run\n");
    }
    timeout_then_value();
    dead_owner();
    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
