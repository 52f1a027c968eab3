/* The waiting policy: how a rank waits for a flag of another rank (flags.h)
 * when that rank may have no core, and the wake-up protocol that lets a
 * waiter block in the kernel instead of polling.
 *
 * Why (docs/notes/performance-history.md, "Waiting when the cores are shared"): a waiter that
 * polls keeps its core; one that calls sched_yield hands its core to
 * whatever else is queued on *its* CPU (a competing job), never to the rank
 * it waits for, which sits queued on another CPU; the yielder then waits a
 * scheduler slice for its turn.  A waiter that blocks leaves its CPU idle,
 * which helps where the awaited rank is queued behind this one (the job's
 * own ranks outnumber the cores), but a woken waiter may wait a slice to
 * run again while a competitor holds the core.  Hence the policy of
 * strata_waiter_pause:
 *
 *   1. spin `quick` polls (STRATA_SPIN's first 256): a wait that ends here
 *      costs what it always did (small calls on an idle machine);
 *   2. every 256 polls from then on, look at the machine and the peer:
 *      the job is oversubscribed if the node runs more ranks than it has
 *      online cores; the peer is idle if it published that it is itself
 *      yielding or blocked; the machine is loaded (by other jobs) if
 *      /proc/loadavg's count of runnable tasks exceeds the cores (sampled
 *      at most once a millisecond per process);
 *   3. oversubscribed or peer idle: the awaited rank may need this core:
 *      yield a few times (a wake-up costs more than a yield when the data
 *      is close), then block at once;
 *   4. loaded by others only: spin, as the host MPIs do, and block only
 *      after 16 times STRATA_BLOCK_AFTER.  Giving the core up here hands it
 *      to the competitor: a yield for a slice, a block until the woken
 *      waiter is run again, which on this machine's kernel (EEVDF, 6.18)
 *      also took a slice (measured 2026-11-25: 3-4 ms per Bcast of 64 KiB
 *      with one busy loop beside 2 ranks, against 15-20 µs spinning);
 *   5. machine quiet and peer running: spin up to STRATA_SPIN polls, then
 *      yield, and block once the wait has lasted STRATA_BLOCK_AFTER.
 *   Blocking is a FUTEX_WAIT with a timeout (STRATA_WAKE_TIMEOUT_MS): each
 *   timeout checks that the awaited process lives (a rank killed
 *   mid-operation ends the job instead of hanging it).
 *   STRATA_WAIT=spin restores the old policy (spin, then yield forever).
 *
 * The wake protocol.  Each rank of a plane owns one struct strata_wake (on a
 * cache line of its own in its strata_rank_ctl): `sleepers` counts waiters
 * blocked on one of its flags, `bell` is the futex word they sleep on, and
 * `state` is what the rank itself is doing (its own waits), a hint to
 * others.
 *
 *   waiter (wants *flag >= v)              writer (owner of flag)
 *   W1 sleepers += 1       (seq_cst RMW)   P1 *flag = v          (release)
 *   W2 full barrier, see below             P2 barrier, see below
 *   W3 b = bell            (acquire)       P3 if sleepers != 0:
 *   W4 if *flag < v:                       P4    bell += 1       (release)
 *   W5    FUTEX_WAIT(&bell, b, timeout)    P5    FUTEX_WAKE(&bell, all)
 *   W6 sleepers -= 1
 *
 * W2/P2 make a Dekker pair: after them, either the writer's P3 sees the
 * waiter counted or the waiter's W4 sees v.  Two ways to get it:
 *   - symmetric: W2 and P2 are both seq_cst fences;
 *   - asymmetric (when every rank of the job registered for it at MPI_Init):
 *     W2 is membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED), which makes every
 *     CPU running a registered process execute a full barrier before it
 *     returns, and P2 is only a compiler barrier.  Wherever that barrier
 *     falls in the writer's P1..P3, the pair is ordered as if the writer had
 *     fenced there: before P1 (P3 comes after it, so sees W1), between P1 and
 *     P3 (a fence at P2), after P3 (P1 comes before it, so W4 sees v).  A
 *     writer off-CPU runs no code in between; the context switch is a full
 *     barrier.  This keeps the publish of every flag as cheap as before
 *     (a store and a load of a line only waiters about to block write); the
 *     rare waiter that blocks pays the system call.
 *
 * No lost wake-up: if W4 sees v, the waiter does not sleep.  Otherwise P3
 * sees the waiter counted and the writer rings: if W3 read the bell after P4,
 * acquire/release makes P1 visible to W4 (no sleep); if before, the kernel
 * compares the bell with b atomically with queuing the waiter, so FUTEX_WAIT
 * returns at once when P4 came before it, and P5 wakes it when P4 came
 * after.  A waiter woken for a flag it does not wait for (the bell rings for
 * every flag of its owner) polls again and may sleep again: spurious
 * wake-ups cost time, never correctness.  The bell only grows (wrapping at
 * 2^32, far beyond any wait). */
#ifndef STRATA_WAIT_H
#define STRATA_WAIT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm/flags.h"

/* What a rank is doing (struct strata_wake.state); only it writes it. */
enum strata_run_state {
    STRATA_RUN_BUSY = 0,  /* working, or outside strata (the segment's zero) */
    STRATA_RUN_SPIN = 1,  /* in a wait that outlived the quick spin, polling */
    STRATA_RUN_YIELD = 2, /* in a wait, yielding its core between polls */
    STRATA_RUN_BLOCK = 3  /* in a wait, blocked in the kernel */
};

struct strata_wake {
    _Atomic uint32_t state;    /* enum strata_run_state of the owner (hint) */
    _Atomic uint32_t sleepers; /* waiters blocked on the owner's flags */
    _Atomic uint32_t bell;     /* futex word: the owner rings it to wake them */
};

/* How writers take part (set once at MPI_Init, before any collective, the
 * same on every rank: rank 0's STRATA_WAIT, and the asymmetric form only
 * if every rank registered for it). */
enum strata_wake_mode {
    STRATA_WAKE_OFF = 0,        /* STRATA_WAIT=spin: nobody blocks, nobody rings */
    STRATA_WAKE_ASYMMETRIC = 1, /* P2 a compiler barrier, W2 a membarrier */
    STRATA_WAKE_FENCE = 2       /* P2 and W2 seq_cst fences */
};
extern int strata_wake_mode;

/* Rings the bell of `mine` (P4-P5 above). */
void strata_wake_ring(struct strata_wake *mine);
/* P2 as a fence, then P3-P5 (the symmetric form, out of line). */
void strata_wake_check_fenced(struct strata_wake *mine);

/* Publishes *flag = value (strata_flag_publish), then wakes the waiters
 * blocked on the owner's flags: P1-P5 above.  `mine`: the flag owner's
 * strata_wake. */
static inline void strata_wake_publish(struct strata_wake *mine, strata_flag *flag,
                                       uint64_t value)
{
    strata_flag_publish(flag, value); /* P1 */
    if (strata_wake_mode == STRATA_WAKE_ASYMMETRIC) {
        /* P2: the compiler must keep P3 after P1; the CPU's order comes
         * from the waiter's membarrier. */
        atomic_signal_fence(memory_order_seq_cst);
        /* P3.  Relaxed: ordered as above. */
        if (atomic_load_explicit(&mine->sleepers, memory_order_relaxed)) strata_wake_ring(mine);
    } else if (strata_wake_mode == STRATA_WAKE_FENCE) {
        strata_wake_check_fenced(mine); /* P2 (a fence) and P3 */
    }
}

/* Registers this process for the asymmetric form (membarrier's global
 * expedited command): 1 if the kernel offers and accepted it, 0 if not
 * (then the job must use STRATA_WAKE_FENCE). */
int strata_wait_register_asymmetric(void);

/* What a wait waits for.  flag NULL: not a flag (a host MPI request): the
 * waiter never blocks, it spins then yields. */
struct strata_wait_target {
    strata_flag *flag;
    uint64_t value;
    struct strata_wake *owner; /* the flag owner's (NULL: never block) */
    struct strata_wake *self;  /* the waiter's own, where it publishes its state */
    pid_t pid;                 /* the owner's pid, for the liveness check (0: none) */
};

/* One wait in progress (private to the waiting thread). */
struct strata_waiter {
    unsigned long polls;      /* unsuccessful polls so far */
    unsigned long yields;     /* sched_yield calls */
    unsigned long blocks;     /* FUTEX_WAIT calls */
    unsigned long timeouts;   /* FUTEX_WAITs that ended by their timeout */
    uint64_t start_ns;        /* CLOCK_MONOTONIC at the first slow poll */
    int busy;                 /* the last look: the job oversubscribes the node or the peer idles */
    int loaded;               /* the last look: not busy, but other jobs load the machine */
    int long_wait;            /* the last look: the wait outlived its spin-and-yield time */
    int found_busy;           /* some look did (STRATA_STATS) */
    struct strata_wake *shown; /* where this wait published a state (NULL: none) */
};

static inline void strata_waiter_init(struct strata_waiter *w)
{
    w->polls = w->yields = w->blocks = w->timeouts = 0;
    w->start_ns = 0;
    w->busy = w->loaded = w->long_wait = w->found_busy = 0;
    w->shown = NULL;
}

/* One unsuccessful poll of target: pauses, yields or blocks as the policy
 * says, and checks the owner's liveness now and then.  Returns when it is
 * time to poll again (possibly early: spurious wake-ups). */
void strata_waiter_pause(struct strata_waiter *w, const struct strata_wait_target *t);

/* Polls every wait spins before it looks at anything (step 1 above; fewer
 * if STRATA_SPIN is smaller). */
#define STRATA_WAIT_QUICK_POLLS 256UL

static inline void strata_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Step 1 of the policy, inline on the awaited flag itself: polls *flag
 * (acquire, as strata_flag_read) with a pause between polls until it
 * reaches value (returns 1) or the wait has used its quick polls
 * (returns 0; strata_waiter_pause goes on from there).  The same polls
 * strata_waiter_pause would make, counted alike, without going back
 * through the operation's progress step and the policy's function at each
 * one: a short wait, the usual one of a small call, stays in this loop and
 * sees the flag within a pause of its arrival (issue 14). */
static inline int strata_waiter_spin_quick(struct strata_waiter *w, strata_flag *flag,
                                           uint64_t value)
{
    unsigned long spin = strata_flag_spin();
    unsigned long quick = spin < STRATA_WAIT_QUICK_POLLS ? spin : STRATA_WAIT_QUICK_POLLS;
    while (w->polls < quick) {
        w->polls++;
        strata_cpu_relax();
        if (strata_flag_read(flag) >= value) return 1;
    }
    return 0;
}

/* The wait is over (its flag is set): restores the published state and
 * adds the wait's counts to STRATA_STATS. */
void strata_waiter_done(struct strata_waiter *w);

/* Milliseconds a blocked waiter sleeps before it checks the owner lives
 * (the default; tests change it with strata_wait_set_timeout_ms). */
#define STRATA_WAKE_TIMEOUT_MS 20
void strata_wait_set_timeout_ms(unsigned ms);

/* Defaults of STRATA_BLOCK_AFTER (microseconds). */
#define STRATA_BLOCK_AFTER_DEFAULT 1000

/* Policy settings (MPI_Init, one thread): adaptive (1, STRATA_WAIT=adaptive)
 * or spin-then-yield (0); whether every rank registered for the asymmetric
 * barrier; microseconds of waiting before blocking on a quiet machine;
 * whether the node runs more ranks than online cores. */
void strata_wait_configure(int adaptive, int asymmetric, unsigned block_after_us,
                           int oversubscribed);

/* The host MPI's progress while a wait lasts.  MPI's progress rule lets a
 * program post a receive, enter a collective and count on a peer's matching
 * send (a synchronous one, say) completing meanwhile: the host MPIs' own
 * collectives drive their progress engine as they wait, strata's waits do
 * not by themselves.  A long wait therefore calls this hook (set by the
 * runtime at MPI_Init to a probe that drives the host's progress, cleared
 * before MPI_Finalize goes on): every STRATA_WAIT_HOST_EVERY polls, every
 * STRATA_WAIT_HOST_YIELDS yields and before every block.  Not at each yield: Open MPI's progress
 * yields by itself when the job oversubscribes the node.  Waits that end within the quick spin never
 * call it, so small calls pay nothing.  Only threads that may call the host
 * MPI wait here (the application's in an MPI call, or the progress thread,
 * which needs MPI_THREAD_MULTIPLE). */
typedef void (*strata_wait_host_fn)(void);
extern _Atomic(strata_wait_host_fn) strata_wait_host_hook;
#define STRATA_WAIT_HOST_EVERY 4096UL
#define STRATA_WAIT_HOST_YIELDS 64UL

/* Whether a wait's poll (its count so far while spinning, or its yields so
 * far once yielding) is one that drives the host: the cadence above, stated
 * once for strata_waiter_pause and the nonblocking queue's idle loop.  Never
 * the first poll or yield: a short wait must not pay a probe. */
static inline int strata_wait_host_due(unsigned long count, int yielding)
{
    unsigned long every = yielding ? STRATA_WAIT_HOST_YIELDS : STRATA_WAIT_HOST_EVERY;
    return count % every == every - 1;
}

/* One turn of the host's progress engine, if the hook is set.  Relaxed: the
 * hook is a function set at MPI_Init; nothing it uses is published through
 * the pointer. */
static inline void strata_wait_poke_host(void)
{
    strata_wait_host_fn poke = atomic_load_explicit(&strata_wait_host_hook, memory_order_relaxed);
    if (poke) poke();
}

/* Whether the machine currently has more runnable tasks than online cores
 * (or the node more ranks than cores): the sample described above. */
int strata_machine_busy(void);

#endif
