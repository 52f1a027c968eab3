/* The adaptive wait and the futex wake protocol (the why: wait.h). */
#include "shm/wait.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

/* ThreadSanitizer does not model fences (GCC warns); every word they order
 * here is atomic, so it still sees every data race. */
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wtsan"
#endif

int strata_wake_mode = STRATA_WAKE_FENCE;

static int adaptive = 1;
static unsigned long block_after_ns = STRATA_BLOCK_AFTER_DEFAULT * 1000UL;
static int node_oversubscribed;
static long online_cores; /* set with the policy (MPI_Init): read-only after */
static unsigned timeout_ms = STRATA_WAKE_TIMEOUT_MS;
static _Atomic int membarrier_failed;

void strata_wait_set_timeout_ms(unsigned ms) { timeout_ms = ms; }

/* Polls every wait spins before it looks at anything (the cost of a wait
 * that ends here is today's), and the period of the looks after that. */
#define QUICK_POLLS STRATA_WAIT_QUICK_POLLS
/* Yields before blocking when the machine is busy or the peer idle. */
#define BUSY_YIELDS 8UL
/* Under other jobs' load, a wait spins this many times STRATA_BLOCK_AFTER
 * before it blocks (strata_waiter_pause): long enough that the waits of a
 * loaded call (hundreds of µs to a few ms) never pay a wake-up, short
 * enough that a rank entering late costs a bounded spin. */
#define LOADED_BLOCK_FACTOR 16UL
/* Yields between liveness checks while yielding (a few milliseconds). */
#define LIVENESS_EVERY 4096UL

_Atomic(strata_wait_host_fn) strata_wait_host_hook;


void strata_wait_configure(int adaptive_on, int asymmetric, unsigned block_after_us,
                           int oversubscribed)
{
    adaptive = adaptive_on;
    strata_wake_mode = !adaptive_on ? STRATA_WAKE_OFF
                       : asymmetric ? STRATA_WAKE_ASYMMETRIC
                                    : STRATA_WAKE_FENCE;
    block_after_ns = (unsigned long)block_after_us * 1000UL;
    node_oversubscribed = oversubscribed;
    online_cores = sysconf(_SC_NPROCESSORS_ONLN);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    /* Not FUTEX_PRIVATE_FLAG: the word lives in a segment several
     * processes map. */
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

int strata_wait_register_asymmetric(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ||
        !(cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED))
        return 0;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

void strata_wake_check_fenced(struct strata_wake *mine)
{
    atomic_thread_fence(memory_order_seq_cst); /* P2: pairs with W2 (wait.h) */
    /* P3 */
    if (atomic_load_explicit(&mine->sleepers, memory_order_relaxed)) strata_wake_ring(mine);
}

void strata_wake_ring(struct strata_wake *mine)
{
    /* P4: release, so a waiter that reads the new bell (acquire, W3) also
     * sees the flag. */
    atomic_fetch_add_explicit(&mine->bell, 1, memory_order_release);
    futex(&mine->bell, FUTEX_WAKE, INT_MAX, NULL);
    if (strata_stats_enabled()) strata_stats_wait(STRATA_WAIT_WAKES, 1);
}

/* ---- Is the machine busy?  /proc/loadavg's fourth field is "runnable /
 * total" tasks right now (the reader counts itself).  Sampled at most once
 * a millisecond per process: reading it costs a few microseconds. */

static _Atomic uint64_t sampled_at; /* now_ns of the last sample (0: never) */
static _Atomic int sampled_busy;

static int load_exceeds_cores(void)
{
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0; /* no /proc: judge by the rank count alone */
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    double l1, l5, l15;
    long running, total;
    if (sscanf(buf, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total) != 5) return 0;
    return online_cores > 0 && running > online_cores;
}

int strata_machine_busy(void)
{
    if (node_oversubscribed) return 1;
    uint64_t now = now_ns();
    /* Relaxed: a stale or duplicated sample between threads is harmless
     * (it is a hint, resampled within a millisecond). */
    uint64_t at = atomic_load_explicit(&sampled_at, memory_order_relaxed);
    if (at == 0 || now - at > 1000000) {
        atomic_store_explicit(&sampled_busy, load_exceeds_cores(), memory_order_relaxed);
        atomic_store_explicit(&sampled_at, now, memory_order_relaxed);
    }
    return atomic_load_explicit(&sampled_busy, memory_order_relaxed);
}

/* ---- The waiter. */

static void show(struct strata_waiter *w, const struct strata_wait_target *t, uint32_t state)
{
    if (!t->self) return;
    /* Relaxed: a hint that others read to choose a policy, never to decide
     * whether data is there. */
    atomic_store_explicit(&t->self->state, state, memory_order_relaxed);
    w->shown = t->self;
}

/* Blocks on the owner's bell until it rings or the timeout: W1-W6. */
static void block(struct strata_waiter *w, const struct strata_wait_target *t)
{
    strata_wait_poke_host(); /* before this waiter counts as a sleeper: it may take a while */
    show(w, t, STRATA_RUN_BLOCK);
    struct strata_wake *o = t->owner;
    atomic_fetch_add_explicit(&o->sleepers, 1, memory_order_seq_cst); /* W1 */
    /* W2: pairs with P2 (wait.h).  The fence orders this waiter's own W1
     * before W3/W4; in the asymmetric form the membarrier also puts a full
     * barrier into every writer that is running. */
    struct timespec ts = {(time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L};
    if (strata_wake_mode == STRATA_WAKE_ASYMMETRIC &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
        /* Cannot happen once registered; if it does, writers may miss this
         * waiter: sleep 1 ms at most, and say so once. */
        ts = (struct timespec){0, 1000000L};
        if (!atomic_exchange_explicit(&membarrier_failed, 1, memory_order_relaxed))
            strata_warn("membarrier failed (%s): blocked waits poll every millisecond",
                        strerror(errno));
    }
    atomic_thread_fence(memory_order_seq_cst);
    uint32_t bell = atomic_load_explicit(&o->bell, memory_order_acquire); /* W3: pairs with P4 */
    if (strata_flag_read(t->flag) < t->value) { /* W4 */
        w->blocks++;
        if (futex(&o->bell, FUTEX_WAIT, bell, &ts) != 0 && errno == ETIMEDOUT) {
            w->timeouts++;
            strata_peer_check_alive(t->pid);
        }
    }
    /* W6.  Relaxed: a writer that still sees the count only rings once too
     * often. */
    atomic_fetch_sub_explicit(&o->sleepers, 1, memory_order_relaxed);
}

static void yield(struct strata_waiter *w, const struct strata_wait_target *t)
{
    show(w, t, STRATA_RUN_YIELD);
    /* Each yield may take a scheduler slice: the host's progress by yields,
     * not by polls only (STRATA_WAIT=spin yields forever). */
    if (strata_wait_host_due(w->yields, 1)) strata_wait_poke_host();
    sched_yield();
    if (++w->yields % LIVENESS_EVERY == 0) strata_peer_check_alive(t->pid);
}

STRATA_HOT void strata_waiter_pause(struct strata_waiter *w, const struct strata_wait_target *t)
{
    unsigned long n = w->polls++;
    unsigned long spin = strata_flag_spin();
    unsigned long quick = spin < QUICK_POLLS ? spin : QUICK_POLLS;
    if (n < quick) {
        strata_cpu_relax();
        return;
    }
    if (strata_wait_host_due(n, 0)) strata_wait_poke_host();
    int can_block = adaptive && t->flag && t->owner;
    if (!can_block) {
        /* Not a flag, or STRATA_WAIT=spin: spin STRATA_SPIN polls, then yield. */
        if (n < spin) strata_cpu_relax();
        else yield(w, t);
        return;
    }
    /* Look at the machine and the peer every QUICK_POLLS polls (and at every
     * poll once yielding: each is a system call anyway). */
    if (n == quick || n % QUICK_POLLS == 0 || (n >= spin && !w->loaded) || w->busy) {
        uint64_t now = now_ns();
        if (w->start_ns == 0) {
            w->start_ns = now;
            show(w, t, STRATA_RUN_SPIN);
        }
        uint32_t peer = atomic_load_explicit(&t->owner->state, memory_order_relaxed);
        /* The awaited rank needs a core this one holds only where the job
         * itself has more ranks than cores or the peer said it gave its own
         * away; other jobs' load is no reason to give ours up (below). */
        w->busy = peer >= STRATA_RUN_YIELD || node_oversubscribed;
        w->loaded = !w->busy && strata_machine_busy();
        w->found_busy |= w->busy | w->loaded;
        w->long_wait = now - w->start_ns >= (w->loaded ? block_after_ns * LOADED_BLOCK_FACTOR
                                                       : block_after_ns);
    }
    if (w->busy) {
        if (w->yields < BUSY_YIELDS) yield(w, t);
        else block(w, t);
        return;
    }
    if (w->loaded) {
        /* Other jobs compete for the cores: spin as the host MPIs do.  A
         * yield would hand this core to the competitor queued on it for a
         * whole slice, and a blocked waiter waits about as long to be run
         * again once woken (measured, docs/notes/performance-history.md "Waiting when the
         * cores are shared": 3-4 ms per call from 64 KiB with one busy loop
         * beside 2 ranks, against 15-20 µs spinning).  Block only when the
         * wait is long enough that a late rank, not the load, is the cause. */
        if (w->long_wait) block(w, t);
        else strata_cpu_relax();
        return;
    }
    if (n < spin) {
        strata_cpu_relax();
        return;
    }
    if (!w->long_wait) yield(w, t);
    else block(w, t);
}

STRATA_HOT void strata_waiter_done(struct strata_waiter *w)
{
    if (w->shown) {
        atomic_store_explicit(&w->shown->state, STRATA_RUN_BUSY, memory_order_relaxed);
        w->shown = NULL;
    }
    if (w->polls && strata_stats_enabled()) {
        strata_stats_wait(STRATA_WAIT_WAITS, 1);
        strata_stats_wait(STRATA_WAIT_POLLS, w->polls);
        strata_stats_wait(STRATA_WAIT_YIELDS, w->yields);
        strata_stats_wait(STRATA_WAIT_BLOCKS, w->blocks);
        strata_stats_wait(STRATA_WAIT_TIMEOUTS, w->timeouts);
        strata_stats_wait(STRATA_WAIT_BUSY, (unsigned long)w->found_busy);
    }
    strata_waiter_init(w);
}
