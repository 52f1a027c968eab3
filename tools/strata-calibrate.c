/* strata-calibrate: measures the cost model of the contention-aware paper
 * (section II, Table III) on this machine and writes the model file strata
 * reads (format: src/coll/model.c, docs/USAGE.md).
 *
 *   strata-calibrate [--output FILE] [--print] [--quiet]
 *
 * A standalone program: it links libstrata for the model file but never
 * calls MPI.  The parent process owns the source buffers, like the root of a
 * collective; worker processes forked from it read them with
 * process_vm_readv, as ranks read a root.  The parent sleeps in read() while
 * workers measure, so it takes no CPU from them.
 *
 * Sources are cold: each read or copy takes the next slot of a pool twice
 * the size of the last-level cache, evicted since its last use.
 * Destinations are reused (warm), as a collective's receive buffer in a loop
 * is.  The pool has 4 KiB pages (no transparent huge pages), as user buffers
 * do unless asked otherwise.  Every figure is a median of many repetitions.
 *
 *  flag    two workers ping-pong one cache line each: half a round trip.
 *  alpha   Table III: T1 = a call with nothing to copy, T2 = one byte
 *          (system call, access check, one page); alpha = T2.
 *  lock    Table III's T3 (liovcnt = 0 pins without copying) does not work
 *          on recent kernels: the call returns before pinning anything.  So
 *          one call reads N iovecs of 8 bytes either inside one page each (N
 *          pages) or across a page boundary each (2N pages): the same bytes
 *          and iovecs, N more pages; l = the difference / N.
 *  beta    the slope of read time over 16 KiB .. 1 MiB, less l per page.
 *  warm    the same reads from a source in the caches (one slot read again
 *          and again: data, page tables and page structures hot, as a
 *          buffer its owner has just written is), 16 KiB .. 16 MiB (at
 *          most half the last-level cache): its
 *          slope over 16 KiB .. 1 MiB, page pinning included, and the
 *          largest size up to which every warm read took at most
 *          WARM_SHARE of the cold price (past it the source no longer
 *          stays in the caches, and the cold price holds).  The reader
 *          re-reading keeps the source in its own caches: the figure of a
 *          reader that shares the owner's last-level cache.
 *  memcpy  the slope of a private memcpy of the same sizes, from the same
 *          kind of cold source, alternated with the reads.
 *  gamma   c workers read 512 KiB each, distinct parts of the parent, at the
 *          same moment (a barrier before each read), c = 1 .. the CPUs this
 *          program may use.  All extra time over one reader is taken as lock
 *          contention, as the paper does: gamma_c = 1 + (t_c - t_1) / (l N).
 *          More readers than CPUs never run at once, so they are not
 *          measured: past the CPU count the model uses the least-squares fit
 *          gamma_c = a c^2 + b c (a, b >= 0), an extrapolation.
 *  shm     a worker copies 32 KiB rounds from its cold pool into a shared
 *          mapping and raises a flag; another copies them out into its own
 *          cold pool and answers:
 *          shm = (round - 2 flag) / (2 * 32 KiB), the copy-in/copy-out cost.
 *  pipe    the same pair through two regions: the writer fills round k+1
 *          while the reader empties round k (it waits only for round k-1
 *          to be read), as the segment-pipeline Bcast does; the steady
 *          state per byte is shm_pipe (two copies at once, flags included).
 *  map     a worker copies 8 bytes from a cold slot of the parent's memfd
 *          (mapped by the worker, as transport map maps a peer's arena),
 *          after the transport's lookup of a pid table and a range check:
 *          map_alpha, the start-up of a copy through a mapping (its per
 *          byte cost is memcpy's).  The mapping is faulted in beforehand,
 *          as the transport keeps its mappings for the process's life.
 *          map_lookup: the same lookup of an address outside the table's
 *          ranges (a buffer outside every arena, copied by CMA then), in a
 *          batch of 1000: what the fallback pays on top of CMA.
 * All measurements run in one process tree, in one go, because the host
 * moves its vCPUs between near and far placements every few seconds. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coll/model.h"

#define MAX_WORKERS STRATA_MODEL_MAX_GAMMA
#define MAX_SAMPLES 4096
#define MAX_COPY ((size_t)1 << 20)       /* largest timed cold read */
#define MAX_WARM ((size_t)16 << 20)      /* largest timed warm read */
#define NWARM 8                          /* warm sizes: 16 KiB .. 16 MiB, x2 past 1 MiB */
#define WARM_SHARE 0.8                   /* a read this much under the cold price is warm */
#define GAMMA_BYTES ((size_t)512 << 10)  /* per reader, contention runs */
#define STRADDLE_IOVS 64
#define SHM_ROUND ((size_t)32 << 10)
#define TIME_LIMIT_S 60
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

enum op { OP_QUIT, OP_NULL_CALL, OP_ONE_BYTE, OP_PAGES, OP_COPY, OP_WARM, OP_CONCURRENT,
          OP_PING, OP_PONG, OP_SHM_WRITE, OP_SHM_READ, OP_MAPPED, OP_PIPE_WRITE, OP_PIPE_READ };

struct command {
    enum op op;
    int reps;
    size_t bytes;
    int readers;    /* OP_CONCURRENT: how many read at once */
    uint64_t base;  /* flag and barrier values continue from here */
    double deadline; /* pairs: the leader stops at this now_us() */
};

struct status {
    int worker;
    int err; /* errno of a failed call, 0 */
};

/* Shared by the parent and the workers; each flag on its own cache line.
 * ping and pong have one writer each; arrived is a counter every reader of
 * a contention run adds to (this is a measuring tool, not strata's flag
 * protocol). */
struct shared {
    _Alignas(64) _Atomic uint64_t ping;
    _Alignas(64) _Atomic uint64_t pong;
    _Alignas(64) _Atomic uint64_t arrived; /* barrier of concurrent readers */
    _Alignas(64) _Atomic uint64_t last;    /* a pair's leader's last value */
    int reps_done;                         /* by the leader of a pair */
    _Alignas(64) unsigned char region[SHM_ROUND];
    _Alignas(64) unsigned char halves[2][SHM_ROUND]; /* the pipelined pair's */
    double samples[MAX_WORKERS][2][MAX_SAMPLES]; /* [worker][series][rep] */
    /* The worker lost its CPU during that rep: the sample is not the
     * machine's, but the other load's. */
    unsigned char disturbed[MAX_WORKERS][MAX_SAMPLES];
};

static struct shared *sh;
static unsigned char *src_pool; /* the parent's; workers read it with CMA */
static unsigned char *map_src;  /* the parent's memfd, mapped shared (NULL: none) */
static size_t pool_bytes, page;
static pid_t parent;
static int cmd_fd[MAX_WORKERS], done_fd, nworkers;

/* Context switches of the calling thread so far; one between the start and
 * the end of a sample means it was descheduled (preempted, or it yielded
 * to another process while its partner was). */
static long switches(void)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* Spin (both sides have a CPU), then yield if the other side was
 * descheduled: after spin_us, which for the readers of a contention run
 * is longer than their reads can differ, so that one early at the barrier
 * does not give its CPU away (and its next sample with it) on a busy machine. */
static void wait_ge(_Atomic uint64_t *flag, uint64_t value, double spin_us)
{
    if (atomic_load_explicit(flag, memory_order_acquire) >= value) return;
    double yield_after = now_us() + spin_us;
    for (unsigned spins = 0; atomic_load_explicit(flag, memory_order_acquire) < value;)
        if (++spins % 256 == 0 && now_us() > yield_after) sched_yield();
}

/* Slot i of a pool for `bytes`-sized sources: slots follow each other with
 * a page between them, and the whole pool is walked through (evicting it
 * from the caches) before a slot comes back. */
static size_t slot(size_t i, size_t bytes)
{
    size_t stride = (bytes + page - 1) / page * page + page;
    return i * stride % (pool_bytes - bytes - page) / page * page;
}

static void *map_pool(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, bytes, MADV_NOHUGEPAGE); /* 4 KiB pages, like most user buffers */
    return p;
}

static int cma_read(void *local, const void *remote, size_t len)
{
    struct iovec l = {local, len}, r = {(void *)remote, len};
    return process_vm_readv(parent, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* ---- Workers: each runs one command at a time, samples into sh. */

struct worker_state {
    int w;
    unsigned char *dest;     /* MAX_WARM + a page, warm */
    unsigned char *own_pool; /* private cold sources, made on first need */
};

static int need_own_pool(struct worker_state *ws)
{
    if (ws->own_pool) return 0;
    ws->own_pool = map_pool(pool_bytes);
    if (!ws->own_pool) return -1;
    memset(ws->own_pool, 1, pool_bytes);
    return 0;
}

static int run_pages(struct worker_state *ws, const struct command *c)
{
    struct iovec riov[STRADDLE_IOVS], liov = {ws->dest, 8 * STRADDLE_IOVS};
    size_t span = 2 * STRADDLE_IOVS * page;
    for (int r = 0; r < c->reps; r++) {
        sh->disturbed[ws->w][r] = 0;
        for (int straddle = 0; straddle < 2; straddle++) {
            unsigned char *at = src_pool + slot(2 * (size_t)r + straddle, span);
            for (int i = 0; i < STRADDLE_IOVS; i++)
                riov[i] = (struct iovec){at + 2 * i * page + (straddle ? page - 4 : 0), 8};
            long before = switches();
            double t0 = now_us();
            ssize_t got = process_vm_readv(parent, &liov, 1, riov, STRADDLE_IOVS, 0);
            sh->samples[ws->w][straddle][r] = now_us() - t0;
            sh->disturbed[ws->w][r] |= switches() != before;
            if (got != 8 * STRADDLE_IOVS) return -1;
        }
    }
    return 0;
}

static int run_copy(struct worker_state *ws, const struct command *c)
{
    if (need_own_pool(ws)) return -1;
    for (int r = 0; r < c->reps; r++) {
        size_t at = slot((size_t)r, c->bytes);
        long before = switches();
        double t0 = now_us();
        if (cma_read(ws->dest, src_pool + at, c->bytes)) return -1;
        double t1 = now_us();
        memcpy(ws->dest, ws->own_pool + at, c->bytes);
        double t2 = now_us();
        sh->samples[ws->w][0][r] = t1 - t0;
        sh->samples[ws->w][1][r] = t2 - t1;
        sh->disturbed[ws->w][r] = switches() != before;
    }
    return 0;
}

/* The same source every time, at the pool's start: after the first read
 * (which the median drops) it is in the caches. */
static int run_warm(struct worker_state *ws, const struct command *c)
{
    for (int r = 0; r < c->reps; r++) {
        long before = switches();
        double t0 = now_us();
        if (cma_read(ws->dest, src_pool, c->bytes)) return -1;
        sh->samples[ws->w][0][r] = now_us() - t0;
        sh->disturbed[ws->w][r] = switches() != before;
    }
    return 0;
}

static int run_concurrent(struct worker_state *ws, const struct command *c)
{
    for (int r = 0; r < c->reps; r++) {
        /* Counted from before the barrier: a reader descheduled between the
         * barrier and its read would read alone, after the others. */
        long before = switches();
        atomic_fetch_add_explicit(&sh->arrived, 1, memory_order_acq_rel); /* at the barrier */
        wait_ge(&sh->arrived, c->base + (uint64_t)(r + 1) * c->readers, 1000);
        size_t at = slot((size_t)r * c->readers + ws->w, c->bytes);
        double t0 = now_us();
        if (cma_read(ws->dest, src_pool + at, c->bytes)) return -1;
        sh->samples[ws->w][0][r] = now_us() - t0;
        sh->disturbed[ws->w][r] = switches() != before;
    }
    return 0;
}

/* Batches of round trips: one timer read costs about as much as a hand-off. */
/* Ping-pong and the shm rounds: a leader (pinger, writer) and a follower.
 * The leader stops at the command's deadline (a busy machine makes every
 * hand-off a scheduling delay) and then says which value was its last; the
 * follower answers until that one. */
#define PING_BATCH 100
#define PAIR_SPIN_US 20

static void leader_done(int reps_done, uint64_t last)
{
    sh->reps_done = reps_done;
    atomic_store_explicit(&sh->last, last, memory_order_release); /* nothing after it */
}

/* 1 once *flag reaches value, 0 if the leader stopped before sending it. */
static int follow(_Atomic uint64_t *flag, uint64_t value)
{
    double yield_after = now_us() + PAIR_SPIN_US;
    for (unsigned spins = 0;; spins++) {
        if (atomic_load_explicit(flag, memory_order_acquire) >= value) return 1;
        if (atomic_load_explicit(&sh->last, memory_order_acquire) < value)
            return atomic_load_explicit(flag, memory_order_acquire) >= value;
        if (spins % 256 == 255 && now_us() > yield_after) sched_yield();
    }
}

static void run_ping(struct worker_state *ws, const struct command *c)
{
    uint64_t v = c->base;
    int r = 0;
    for (; r < c->reps && now_us() < c->deadline; r++) {
        long before = switches();
        double t0 = now_us();
        for (int i = 0; i < PING_BATCH; i++) {
            atomic_store_explicit(&sh->ping, ++v, memory_order_release); /* hand over */
            wait_ge(&sh->pong, v, PAIR_SPIN_US);
        }
        sh->samples[ws->w][0][r] = (now_us() - t0) / (2 * PING_BATCH);
        sh->disturbed[ws->w][r] = switches() != before;
    }
    leader_done(r, v);
}

/* The follower notes its switches per batch too: a batch it lost its CPU
 * in is as slow for the pinger. */
static void run_pong(struct worker_state *ws, const struct command *c)
{
    uint64_t v = c->base;
    for (int r = 0;; r++) {
        long before = switches();
        for (int i = 0; i < PING_BATCH; i++) {
            if (!follow(&sh->ping, ++v)) return;
            atomic_store_explicit(&sh->pong, v, memory_order_release); /* hand back */
        }
        if (r < MAX_SAMPLES) sh->disturbed[ws->w][r] = switches() != before;
    }
}

static int run_shm_write(struct worker_state *ws, const struct command *c)
{
    if (need_own_pool(ws)) return -1;
    uint64_t v = c->base;
    int r = 0;
    for (; r < c->reps && now_us() < c->deadline; r++) {
        long before = switches();
        double t0 = now_us();
        memcpy(sh->region, ws->own_pool + slot((size_t)r, SHM_ROUND), SHM_ROUND);
        atomic_store_explicit(&sh->ping, ++v, memory_order_release); /* the round's bytes go with it */
        wait_ge(&sh->pong, v, PAIR_SPIN_US);
        sh->samples[ws->w][0][r] = now_us() - t0;
        sh->disturbed[ws->w][r] = switches() != before;
    }
    leader_done(r, v);
    return 0;
}

/* Its switch count is read while the writer fills the next round, off the
 * timed path. */
static void run_shm_read(struct worker_state *ws, const struct command *c)
{
    /* Copy-out lands in a user's receive buffer, cold in a real program:
     * rounds go to successive slots of this worker's own pool.  (Into one
     * warm buffer, the rounds measured 4.9 us; strata-bench then found
     * copy-in/copy-out 20-30% slower than so predicted.) */
    unsigned char *to = need_own_pool(ws) ? NULL : ws->own_pool;
    long before = switches();
    for (int r = 0; follow(&sh->ping, c->base + (uint64_t)r + 1); r++) {
        memcpy(to ? to + slot((size_t)r, SHM_ROUND) : ws->dest, sh->region, SHM_ROUND);
        atomic_store_explicit(&sh->pong, c->base + (uint64_t)r + 1,
                              memory_order_release); /* region free again */
        long after = switches();
        if (r < MAX_SAMPLES) sh->disturbed[ws->w][r] = after != before;
        before = after;
    }
}

/* The pipelined pair: round r goes through halves[r % 2]; the writer waits
 * only until round r - 1 was read (the half it fills next is then free). */
static int run_pipe_write(struct worker_state *ws, const struct command *c)
{
    if (need_own_pool(ws)) return -1;
    uint64_t v = c->base;
    int r = 0;
    for (; r < c->reps && now_us() < c->deadline; r++) {
        long before = switches();
        double t0 = now_us();
        if (r > 0) wait_ge(&sh->pong, v - 1, PAIR_SPIN_US); /* halves[r % 2] read */
        memcpy(sh->halves[r % 2], ws->own_pool + slot((size_t)r, SHM_ROUND), SHM_ROUND);
        atomic_store_explicit(&sh->ping, ++v, memory_order_release); /* the bytes go with it */
        sh->samples[ws->w][0][r] = now_us() - t0;
        sh->disturbed[ws->w][r] = switches() != before;
    }
    wait_ge(&sh->pong, v, PAIR_SPIN_US); /* the last round read: the pair is idle */
    leader_done(r, v);
    return 0;
}

static void run_pipe_read(struct worker_state *ws, const struct command *c)
{
    unsigned char *to = need_own_pool(ws) ? NULL : ws->own_pool;
    long before = switches();
    for (int r = 0; follow(&sh->ping, c->base + (uint64_t)r + 1); r++) {
        memcpy(to ? to + slot((size_t)r, SHM_ROUND) : ws->dest, sh->halves[r % 2], SHM_ROUND);
        atomic_store_explicit(&sh->pong, c->base + (uint64_t)r + 1,
                              memory_order_release); /* that half free again */
        long after = switches();
        if (r < MAX_SAMPLES) sh->disturbed[ws->w][r] |= after != before;
        before = after;
    }
}

/* What transport/mapped.c does before each copy: find the owner by pid in
 * a small open-addressed table, check the range, translate. */
struct map_peer {
    pid_t pid;
    uintptr_t base;
    size_t len;
    unsigned char *local;
};

static unsigned char *translate(const struct map_peer *t, size_t cap, pid_t pid,
                                const void *remote, size_t len)
{
    for (size_t i = (size_t)pid % cap, n = 0; n < cap; n++, i = (i + 1) % cap) {
        if (t[i].pid == pid) {
            uintptr_t r = (uintptr_t)remote;
            if (r < t[i].base || r - t[i].base > t[i].len || len > t[i].len - (r - t[i].base))
                return NULL;
            return t[i].local + (r - t[i].base);
        }
        if (!t[i].pid) return NULL;
    }
    return NULL;
}

static int run_mapped(struct worker_state *ws, const struct command *c)
{
    /* The parent's mapping is inherited at the same address: "remote" and
     * local addresses coincide, the translation still runs in full. */
    static struct map_peer table[16];
    table[parent % 16] = (struct map_peer){parent, (uintptr_t)map_src, pool_bytes, map_src};
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < pool_bytes; i += page) sink += map_src[i]; /* fault in, once */
    (void)sink;
    for (int r = 0; r < c->reps; r++) {
        const unsigned char *remote = map_src + slot((size_t)r, 8);
        long before = switches();
        double t0 = now_us();
        unsigned char *at = translate(table, 16, parent, remote, 8);
        if (at) memcpy(ws->dest, at, 8);
        sh->samples[ws->w][0][r] = now_us() - t0;
        sh->disturbed[ws->w][r] = switches() != before;
        if (!at) return -1;
    }
    /* Series 1: batches of 1000 lookups that miss (the range is past the
     * table's), per lookup. */
    for (int r = 0; r < c->reps; r++) {
        long before = switches();
        double t0 = now_us();
        uintptr_t misses = 0;
        for (int i = 0; i < 1000; i++) {
            /* The address varies so the compiler cannot hoist the lookup. */
            const void *outside = (const void *)((uintptr_t)ws->dest + (uintptr_t)i * 64);
            misses += translate(table, 16, parent, outside, 8) == NULL;
        }
        sh->samples[ws->w][1][r] = (now_us() - t0) / 1000;
        sh->disturbed[ws->w][r] |= switches() != before;
        if (misses != 1000) return -1;
    }
    return 0;
}

static int run(struct worker_state *ws, const struct command *c)
{
    switch (c->op) {
    case OP_NULL_CALL:
    case OP_ONE_BYTE:
        for (int r = 0; r < c->reps; r++) {
            long before = switches();
            double t0 = now_us();
            int bad = c->op == OP_NULL_CALL ? process_vm_readv(parent, NULL, 0, NULL, 0, 0) != 0
                                            : cma_read(ws->dest, src_pool, 1);
            sh->samples[ws->w][0][r] = now_us() - t0;
            sh->disturbed[ws->w][r] = switches() != before;
            if (bad) return -1;
        }
        return 0;
    case OP_PAGES: return run_pages(ws, c);
    case OP_COPY: return run_copy(ws, c);
    case OP_WARM: return run_warm(ws, c);
    case OP_CONCURRENT: return run_concurrent(ws, c);
    case OP_PING: run_ping(ws, c); return 0;
    case OP_PONG: run_pong(ws, c); return 0;
    case OP_SHM_WRITE: return run_shm_write(ws, c);
    case OP_SHM_READ: run_shm_read(ws, c); return 0;
    case OP_MAPPED: return map_src ? run_mapped(ws, c) : -1;
    case OP_PIPE_WRITE: return run_pipe_write(ws, c);
    case OP_PIPE_READ: run_pipe_read(ws, c); return 0;
    case OP_QUIT: break;
    }
    return 0;
}

static void worker_main(int w, int in)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a parent that died */
    if (getppid() != parent) _exit(1);
    struct worker_state ws = {w, map_pool(MAX_WARM + page), NULL};
    if (!ws.dest) _exit(1);
    memset(ws.dest, 0, MAX_WARM + page);
    struct command c;
    while (read(in, &c, sizeof c) == (ssize_t)sizeof c && c.op != OP_QUIT) {
        errno = 0;
        struct status s = {w, run(&ws, &c) ? (errno ? errno : EIO) : 0};
        if (write(done_fd, &s, sizeof s) != (ssize_t)sizeof s) _exit(1);
    }
    _exit(0);
}

/* ---- The parent: hands out commands, then reduces the samples. */

/* Runs c on workers [0, count) (each gets its own copy, `ops` per worker if
 * given) and waits for all; the first error, or 0. */
static int dispatch(const struct command *c, int count, const enum op *ops)
{
    for (int w = 0; w < count; w++) {
        struct command mine = *c;
        if (ops) mine.op = ops[w];
        if (write(cmd_fd[w], &mine, sizeof mine) != (ssize_t)sizeof mine) return EIO;
    }
    int first = 0;
    for (int i = 0; i < count; i++) {
        struct status s;
        if (read(done_fd, &s, sizeof s) != (ssize_t)sizeof s) return EIO;
        if (s.err && !first) first = s.err;
    }
    return first;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Samples kept and dropped, and measurements left with too few clean ones. */
static int kept, dropped, too_busy;

/* Rep r ran without any of the `workers` taking part losing its CPU. */
static int clean(int r, int workers)
{
    for (int w = 0; w < workers; w++)
        if (sh->disturbed[w][r]) return 0;
    return 1;
}

/* The samples of one figure, gathered over one or more commands: the clean
 * ones, and all of them. */
struct pile {
    int ngood, nall;
    double good[MAX_SAMPLES], all[MAX_SAMPLES];
};

static void pile_add(struct pile *p, int w, int series, int reps, int workers)
{
    for (int r = 0; r < reps && p->nall < MAX_SAMPLES; r++) {
        double v = sh->samples[w][series][r];
        p->all[p->nall++] = v;
        if (clean(r, workers)) p->good[p->ngood++] = v;
    }
}

/* Too few clean samples: the figure would be the other load's. */
static int pile_busy(const struct pile *p) { return p->ngood < 5 || p->ngood < p->nall / 10; }

/* The median of the clean samples; of all of them if too few are clean. */
static double pile_median(struct pile *p)
{
    kept += p->ngood;
    dropped += p->nall - p->ngood;
    return pile_busy(p) ? median(p->all, p->nall) : median(p->good, p->ngood);
}

/* One worker's figure from one command; too few clean samples are counted
 * in too_busy, and said at the end. */
static double median_of(int w, int series, int reps, int workers)
{
    static struct pile p;
    p.ngood = p.nall = 0;
    pile_add(&p, w, series, reps, workers);
    too_busy += pile_busy(&p);
    return pile_median(&p);
}

/* Least-squares slope of y over x. */
static double slope(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    for (int i = 0; i < n; i++) mx += x[i] / n, my += y[i] / n;
    for (int i = 0; i < n; i++) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
    return sxy / sxx;
}

/* gamma_c = a c^2 + b c, least squares over the measured c, a and b >= 0. */
static void fit_gamma(const double *g, int n, double *a, double *b)
{
    double s2 = 0, s3 = 0, s4 = 0, t1 = 0, t2 = 0;
    for (int c = 1; c <= n; c++) {
        s2 += (double)c * c, s3 += (double)c * c * c, s4 += (double)c * c * c * c;
        t1 += c * g[c - 1], t2 += (double)c * c * g[c - 1];
    }
    double det = s4 * s2 - s3 * s3;
    *a = det > 0 ? (t2 * s2 - t1 * s3) / det : -1;
    *b = det > 0 ? (s4 * t1 - s3 * t2) / det : -1;
    if (*a < 0 || *b < 0) { /* the better of the one-term fits */
        double b_only = t1 / s2, a_only = t2 / s4, eb = 0, ea = 0;
        for (int c = 1; c <= n; c++) {
            eb += pow(b_only * c - g[c - 1], 2);
            ea += pow(a_only * c * c - g[c - 1], 2);
        }
        *a = eb <= ea ? 0 : a_only;
        *b = eb <= ea ? b_only : 0;
    }
}

static int usable_cpus(void)
{
    cpu_set_t all;
    CPU_ZERO(&all);
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    for (long i = 0; i < conf && i < CPU_SETSIZE; i++) CPU_SET(i, &all);
    /* Started by a bound MPI rank, this program inherits its one core:
     * widen to every CPU the cgroup allows. */
    sched_setaffinity(0, sizeof all, &all);
    if (sched_getaffinity(0, sizeof all, &all)) return (int)sysconf(_SC_NPROCESSORS_ONLN);
    return CPU_COUNT(&all);
}

/* The largest cache CPU 0 sees, from sysfs (in a virtual machine, glibc's
 * cpuid-based figure can be the host's, summed over all its chips). */
static size_t last_level_cache(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], text[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(text, sizeof text, f)) {
            char *unit;
            size_t v = strtoul(text, &unit, 10);
            v <<= *unit == 'K' ? 10 : *unit == 'M' ? 20 : 0;
            if (v > best) best = v;
        }
        fclose(f);
    }
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return best ? best : l3 > 0 ? (size_t)l3 : (size_t)32 << 20;
}

static void on_alarm(int sig)
{
    static const char msg[] = "strata-calibrate: gave up after " STRINGIFY(TIME_LIMIT_S)
                              " s (machine too busy?)\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

struct results {
    int cma_ok, cpus;
    int flag_busy, shm_busy; /* never had both CPUs: those figures stay the defaults */
    int gamma_busy;          /* some contention levels never ran at once */
    double flag, t1, t2, lock, pages_aligned, pages_straddled;
    int nsizes;
    double size[4], read_us[4], memcpy_us[4];
    int nwarm;
    double warm_size[NWARM], warm_us[NWARM];
    int ngamma;
    double t_c[MAX_WORKERS], gamma[MAX_WORKERS];
    double shm_round;
    int map_ok;     /* a memfd could be made and mapped */
    double map_us;  /* one 8-byte copy through the mapping, lookup included */
    double map_lookup_us; /* one lookup that misses */
    int pipe_busy;
    double pipe_round; /* one round of the pipelined pair, steady state */
};

/* Two workers that each need a CPU at the same moment: on a busy machine
 * many reps are disturbed, so run again (for up to a second) until 50 are
 * clean.  The pair's flags continue from *value.  *busy: too few were. */
static int pair_median(const enum op ops[2], int reps, size_t bytes, uint64_t *value,
                       uint64_t flags_per_rep, double *out, int *busy)
{
    static struct pile p;
    p.ngood = p.nall = 0;
    double give_up = now_us() + 1e6;
    while (p.ngood < 50 && now_us() < give_up) {
        struct command c = {.op = ops[0], .reps = reps, .bytes = bytes, .base = *value,
                            .deadline = give_up};
        atomic_store_explicit(&sh->last, UINT64_MAX, memory_order_relaxed); /* workers idle */
        if ((errno = dispatch(&c, 2, ops))) return -1;
        *value += (uint64_t)sh->reps_done * flags_per_rep;
        pile_add(&p, 0, 0, sh->reps_done, 2);
    }
    *busy = pile_busy(&p);
    *out = p.nall ? pile_median(&p) : 0;
    if (!p.nall) *busy = 1;
    return 0;
}

/* Every measurement, in one go.  -1 if a worker failed (errno set). */
static int measure(struct results *R)
{
    static const enum op pingpong[2] = {OP_PING, OP_PONG}, shm_pair[2] = {OP_SHM_WRITE, OP_SHM_READ};
    uint64_t flag_value = 0; /* ping and pong only grow, across commands */
    if (pair_median(pingpong, 50, 0, &flag_value, PING_BATCH, &R->flag, &R->flag_busy)) return -1;
    struct command c;

    if (R->cma_ok) {
        c = (struct command){.op = OP_NULL_CALL, .reps = 2000};
        if ((errno = dispatch(&c, 1, NULL))) return -1;
        R->t1 = median_of(0, 0, c.reps, 1);
        c.op = OP_ONE_BYTE;
        if ((errno = dispatch(&c, 1, NULL))) return -1;
        R->t2 = median_of(0, 0, c.reps, 1);
        c = (struct command){.op = OP_PAGES, .reps = 600};
        if ((errno = dispatch(&c, 1, NULL))) return -1;
        R->pages_aligned = median_of(0, 0, c.reps, 1);
        R->pages_straddled = median_of(0, 1, c.reps, 1);
        R->lock = (R->pages_straddled - R->pages_aligned) / STRADDLE_IOVS;

        static const int reps[4] = {800, 400, 200, 120};
        R->nsizes = 4;
        for (int i = 0; i < R->nsizes; i++) {
            c = (struct command){.op = OP_COPY, .reps = reps[i], .bytes = (size_t)16384 << (2 * i)};
            if ((errno = dispatch(&c, 1, NULL))) return -1;
            R->size[i] = (double)c.bytes;
            R->read_us[i] = median_of(0, 0, c.reps, 1);
            R->memcpy_us[i] = median_of(0, 1, c.reps, 1);
        }
        /* Up to half the last-level cache (a quarter of the pool): the
         * destination needs room too. */
        static const int warm_reps[NWARM] = {800, 400, 200, 120, 60, 40, 30, 20};
        R->nwarm = 0;
        for (int i = 0; i < NWARM; i++) {
            size_t bytes = i < 4 ? (size_t)16384 << (2 * i) : MAX_COPY << (i - 3);
            if (bytes > pool_bytes / 4) break;
            R->nwarm = i + 1;
            c = (struct command){.op = OP_WARM, .reps = warm_reps[i], .bytes = bytes};
            if ((errno = dispatch(&c, 1, NULL))) return -1;
            R->warm_size[i] = (double)bytes;
            R->warm_us[i] = median_of(0, 0, c.reps, 1);
        }

        /* Concurrency levels interleaved, round after round, so a placement
         * change of the host hits them all alike; more rounds (for up to two
         * seconds) while some level has fewer than 32 clean reads. */
        int levels = R->cpus < MAX_WORKERS ? R->cpus : MAX_WORKERS, per = 8;
        static struct pile piles[MAX_WORKERS];
        double give_up = now_us() + 2e6;
        for (int round = 0, short_of_clean = 1; short_of_clean && round < 40; round++) {
            short_of_clean = round < 4;
            for (int k = 1; k <= levels; k++) {
                c = (struct command){.op = OP_CONCURRENT, .reps = per, .bytes = GAMMA_BYTES,
                                     .readers = k, .base = atomic_load(&sh->arrived)};
                if ((errno = dispatch(&c, k, NULL))) return -1;
                for (int w = 0; w < k; w++) pile_add(&piles[k - 1], w, 0, per, k);
                short_of_clean |= piles[k - 1].ngood < 32;
            }
            if (now_us() > give_up) break;
        }
        /* A level whose readers never ran at once measured nothing: the
         * list stops below it, and the fit covers the rest. */
        double pages = (double)GAMMA_BYTES / (double)page;
        double l = R->lock > 0.005 ? R->lock : 0.005; /* a lock too small to divide by */
        R->ngamma = 0;
        for (int k = 1; k <= levels && !(k > 1 && pile_busy(&piles[k - 1])); k++) {
            R->t_c[k - 1] = pile_median(&piles[k - 1]);
            double g = 1 + (R->t_c[k - 1] - R->t_c[0]) / (l * pages);
            R->gamma[k - 1] = g > 1 ? g : 1;
            R->ngamma = k;
        }
        R->gamma_busy = R->ngamma < levels;
    }

    if (R->map_ok) {
        c = (struct command){.op = OP_MAPPED, .reps = 2000};
        if ((errno = dispatch(&c, 1, NULL))) return -1;
        R->map_us = median_of(0, 0, c.reps, 1);
        R->map_lookup_us = median_of(0, 1, c.reps, 1);
    }
    if (pair_median(shm_pair, 100, SHM_ROUND, &flag_value, 1, &R->shm_round, &R->shm_busy))
        return -1;
    static const enum op pipe_pair[2] = {OP_PIPE_WRITE, OP_PIPE_READ};
    return pair_median(pipe_pair, 100, SHM_ROUND, &flag_value, 1, &R->pipe_round, &R->pipe_busy);
}

/* A cold read of n bytes at m's price. */
static double cold_price(const struct strata_model *m, double n)
{
    return m->alpha + n * m->beta + m->lock * ceil(n / m->page);
}

/* The warm slope and the sizes it holds for (module comment, "warm"): none
 * when the smallest warm read is not clearly under the cold price, or the
 * slope is not a slope (a disturbed run). */
static void warm_model(const struct results *R, struct strata_model *m)
{
    m->warm_beta = slope(R->warm_size, R->warm_us, 4);
    m->warm_bytes = 0;
    for (int i = 0; i < R->nwarm && R->warm_us[i] <= WARM_SHARE * cold_price(m, R->warm_size[i]); i++)
        m->warm_bytes = R->warm_size[i];
    if (m->warm_beta <= 0 || m->warm_bytes == 0) m->warm_beta = m->warm_bytes = 0;
}

static void to_model(const struct results *R, struct strata_model *m)
{
    strata_model_defaults(m);
    snprintf(m->source, sizeof m->source, "strata-calibrate");
    gethostname(m->machine, sizeof m->machine - 1);
    time_t t = time(NULL);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M", localtime(&t));
    m->cpus = R->cpus;
    m->page = (double)page;
    if (!R->flag_busy) m->flag = R->flag;
    double shm = (R->shm_round - 2 * m->flag) / (2.0 * SHM_ROUND);
    if (!R->shm_busy && shm > 0) m->shm_beta = shm;
    if (!R->pipe_busy && R->pipe_round > 0) m->shm_pipe_beta = R->pipe_round / (double)SHM_ROUND;
    else m->shm_pipe_beta = 2 * m->shm_beta + m->flag / SHM_ROUND; /* not measured: no overlap */
    if (R->map_ok && R->map_us > 0) m->map_alpha = R->map_us;
    if (R->map_ok && R->map_lookup_us > 0) m->map_lookup = R->map_lookup_us;
    if (!R->cma_ok) return; /* the CMA figures stay the defaults; strata will not use CMA */
    m->alpha = R->t2;
    m->lock = R->lock > 0 ? R->lock : 0;
    m->memcpy_beta = slope(R->size, R->memcpy_us, R->nsizes);
    double beta = slope(R->size, R->read_us, R->nsizes) - m->lock / m->page;
    /* A lock figure larger than the whole per-page cost is noise: then the
     * copy is taken to run at memcpy speed and l is the rest. */
    if (beta < 0.25 * m->memcpy_beta) {
        beta = m->memcpy_beta;
        double rest = (slope(R->size, R->read_us, R->nsizes) - beta) * m->page;
        m->lock = rest > 0 ? rest : 0;
    }
    m->beta = beta;
    warm_model(R, m);
    if (R->ngamma < 2) return; /* no contention measured: the built-in gammas stay */
    m->ngamma = R->ngamma;
    for (int k = 0; k < R->ngamma; k++) m->gamma[k] = R->gamma[k];
    fit_gamma(R->gamma, R->ngamma, &m->gamma_a, &m->gamma_b);
}

static void print_table(FILE *f, const struct results *R, const struct strata_model *m)
{
    fprintf(f, "strata-calibrate on %s: %d CPUs usable, %zu-byte pages, sources cold (pool %zu MiB)\n",
            m->machine, R->cpus, page, pool_bytes >> 20);
    fprintf(f, "  flag hand-off (half a cache-line ping-pong)   %8.3f us%s\n", R->flag,
            R->flag_busy ? " (disturbed: not used)" : "");
    if (!R->cma_ok) {
        fprintf(f, "  Cross-Memory Attach is not usable here: the CMA figures are the built-in ones\n");
    } else {
        fprintf(f, "  T1: a CMA call with nothing to copy           %8.3f us\n", R->t1);
        fprintf(f, "  T2: one byte                       -> alpha   %8.3f us\n", R->t2);
        fprintf(f, "  %d iovecs in %d pages / across %d pages       %.2f / %.2f us -> l %.3f us/page\n",
                STRADDLE_IOVS, STRADDLE_IOVS, 2 * STRADDLE_IOVS, R->pages_aligned,
                R->pages_straddled, R->lock);
        fprintf(f, "  one reader, cold source:\n        bytes   read us  memcpy us  model us\n");
        for (int i = 0; i < R->nsizes; i++)
            fprintf(f, "  %11.0f %9.2f %10.2f %9.2f\n", R->size[i], R->read_us[i], R->memcpy_us[i],
                    m->alpha + R->size[i] * m->beta + m->lock * ceil(R->size[i] / m->page));
        fprintf(f, "  beta (read slope less l per page)  %.4g us/B = %.1f GB/s; l used %.3f us/page\n",
                m->beta, 1e-3 / m->beta, m->lock);
        fprintf(f, "  memcpy                             %.4g us/B = %.1f GB/s\n", m->memcpy_beta,
                1e-3 / m->memcpy_beta);
        fprintf(f, "  one reader, warm source (read again and again):\n"
                   "        bytes   read us  cold price us  model us\n");
        for (int i = 0; i < R->nwarm; i++)
            fprintf(f, "  %11.0f %9.2f %14.2f %9.2f\n", R->warm_size[i], R->warm_us[i],
                    cold_price(m, R->warm_size[i]), strata_model_cma(m, R->warm_size[i], 1));
        if (m->warm_bytes > 0)
            fprintf(f, "  warm slope (pinning included)      %.4g us/B = %.1f GB/s, up to %.0f bytes "
                       "(reads at most %.0f%% of the cold price)\n",
                    m->warm_beta, 1e-3 / m->warm_beta, m->warm_bytes, 100 * WARM_SHARE);
        else
            fprintf(f, "  no warm read was under %.0f%% of the cold price: every copy priced cold\n",
                    100 * WARM_SHARE);
        /* The other way to split the per-page cost: copy at memcpy speed, l
         * the rest.  The two agree within noise on the development VM. */
        fprintf(f, "  cross-check: read slope less memcpy  l = %.3f us/page\n",
                (slope(R->size, R->read_us, R->nsizes) - m->memcpy_beta) * m->page);
        fprintf(f, "  readers of one process at once, %zu KiB each:\n      c  us per read  gamma_c\n",
                GAMMA_BYTES >> 10);
        for (int k = 0; k < R->ngamma; k++)
            fprintf(f, "  %5d %12.2f %8.3f\n", k + 1, R->t_c[k], R->gamma[k]);
        if (R->ngamma < 2)
            fprintf(f, "  no two readers ran at once: the built-in contention factors stay\n");
        else
            fprintf(f, "  fit gamma_c = %.4g c^2 + %.4g c, used past c = %d (%s)\n", m->gamma_a,
                    m->gamma_b, R->ngamma,
                    R->gamma_busy ? "the machine was too busy to measure more readers at once"
                                  : "no more CPUs to measure more readers at once");
    }
    fprintf(f, "  shm round: %zu KiB in, flag, out, flag   %8.2f us -> %.4g us/B = %.1f GB/s per copy%s\n",
            SHM_ROUND >> 10, R->shm_round, m->shm_beta, 1e-3 / m->shm_beta,
            R->shm_busy ? " (disturbed: default kept)" : "");
    fprintf(f, "  pipelined pair: %zu KiB rounds, in and out at once %8.2f us -> %.4g us/B = %.1f "
            "GB/s%s\n", SHM_ROUND >> 10, R->pipe_round, m->shm_pipe_beta, 1e-3 / m->shm_pipe_beta,
            R->pipe_busy ? " (disturbed: no overlap assumed)" : "");
    if (R->map_ok)
        fprintf(f, "  8 bytes through a mapped memfd, lookup included -> map_alpha %8.3f us\n",
                R->map_us);
    if (R->map_ok)
        fprintf(f, "  a lookup outside every arena (the CMA fallback's extra) -> map_lookup %.4f us\n",
                R->map_lookup_us);
    else
        fprintf(f, "  no memfd could be mapped: map_alpha stays the built-in figure\n");
    char why[256];
    int wins = strata_model_map_wins(m, why, sizeof why);
    fprintf(f, "  transport map %s transport cma: %s\n", wins ? "beats" : "does not beat", why);
    fprintf(f, "  samples kept %d, dropped %d (a process lost its CPU during them)\n", kept, dropped);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: strata-calibrate [--output FILE] [--print] [--quiet]\n"
               "  measures this machine's cost model (alpha, beta, l, gamma_c, shm, memcpy, flag)\n"
               "  --output FILE  where to write it (default: strata's per-host cache file)\n"
               "  --print        write the model to stdout instead of a file\n"
               "  --quiet        no table, only errors\n");
}

static int start_workers(void)
{
    int done[2];
    if (pipe(done)) return -1;
    for (int w = 0; w < nworkers; w++) {
        int p[2];
        if (pipe(p)) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            close(p[1]);
            close(done[0]);
            for (int i = 0; i < w; i++) close(cmd_fd[i]);
            done_fd = done[1];
            worker_main(w, p[0]);
        }
        close(p[0]);
        cmd_fd[w] = p[1];
    }
    close(done[1]);
    done_fd = done[0];
    return 0;
}

int main(int argc, char **argv)
{
    const char *output = NULL;
    int print = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--output") && i + 1 < argc) output = argv[++i];
        else if (!strncmp(argv[i], "--output=", 9)) output = argv[i] + 9;
        else if (!strcmp(argv[i], "--print")) print = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "strata-calibrate: unknown option \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    double start = now_us();
    signal(SIGALRM, on_alarm);
    alarm(TIME_LIMIT_S);
    /* Yama (ptrace_scope 1) lets a process read only its descendants: allow
     * the workers to read their parent.  EINVAL where Yama is absent. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
    struct results R = {0};
    R.cpus = usable_cpus();
    page = (size_t)sysconf(_SC_PAGESIZE);
    pool_bytes = 2 * last_level_cache();
    if (pool_bytes < ((size_t)16 << 20)) pool_bytes = (size_t)16 << 20;
    if (pool_bytes > ((size_t)256 << 20)) pool_bytes = (size_t)256 << 20;
    nworkers = R.cpus < 2 ? 2 : R.cpus > MAX_WORKERS ? MAX_WORKERS : R.cpus;
    parent = getpid();
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    src_pool = map_pool(pool_bytes);
    if (sh == MAP_FAILED || !src_pool) {
        fprintf(stderr, "strata-calibrate: out of memory: %s\n", strerror(errno));
        return 1;
    }
    /* The memfd is mapped before the workers fork, so they share it as a
     * peer maps an arena: the same pages, MAP_SHARED. */
    int mfd = memfd_create("strata-calibrate", MFD_CLOEXEC);
    if (mfd >= 0 && ftruncate(mfd, (off_t)pool_bytes) == 0) {
        void *mp = mmap(NULL, pool_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
        if (mp != MAP_FAILED) {
            map_src = mp;
            memset(map_src, 1, pool_bytes);
        }
    }
    if (mfd >= 0) close(mfd); /* the mapping keeps the memory */
    R.map_ok = map_src != NULL;
    if (start_workers()) {
        fprintf(stderr, "strata-calibrate: cannot start workers: %s\n", strerror(errno));
        return 1;
    }
    memset(src_pool, 1, pool_bytes); /* after fork: these pages are the parent's alone */

    struct command probe = {.op = OP_ONE_BYTE, .reps = 1};
    int probe_err = dispatch(&probe, 1, NULL);
    R.cma_ok = probe_err == 0;
    int failed = measure(&R);
    int saved = errno;
    struct command quit = {.op = OP_QUIT};
    for (int w = 0; w < nworkers; w++)
        if (write(cmd_fd[w], &quit, sizeof quit) < 0) break;
    while (wait(NULL) > 0) continue;
    if (failed) {
        fprintf(stderr, "strata-calibrate: a measurement failed: %s\n", strerror(saved));
        return 1;
    }

    struct strata_model m;
    to_model(&R, &m);
    if (!quiet) {
        print_table(stdout, &R, &m);
        if (!R.cma_ok) printf("  (the probe read failed: %s)\n", strerror(probe_err));
        printf("took %.2f s\n", (now_us() - start) * 1e-6);
    }
    if (R.flag_busy || R.shm_busy)
        fprintf(stderr, "strata-calibrate: warning: two processes never had a CPU each at the same "
                "time (the machine is busy): %s keep%s the built-in value; run strata-calibrate "
                "again when the machine is idle\n",
                R.flag_busy && R.shm_busy ? "flag_us and shm_us_per_byte" : R.flag_busy ? "flag_us"
                : "shm_us_per_byte", R.flag_busy && R.shm_busy ? "" : "s");
    if (R.gamma_busy)
        fprintf(stderr, "strata-calibrate: warning: only %d of the %d CPUs ever read at once (the "
                "machine is busy): contention factors past %d come from the fit; run strata-calibrate "
                "again when the machine is idle\n", R.ngamma, R.cpus, R.ngamma);
    if (too_busy)
        fprintf(stderr, "strata-calibrate: warning: the machine was too busy for %d of the "
                "measurements (other processes kept taking the CPUs): the model describes the load, "
                "not the machine; run strata-calibrate again when it is idle\n", too_busy);
    if (print) return strata_model_write(&m, stdout) ? 1 : 0;
    char path[1024], why[1536];
    if (output) {
        snprintf(path, sizeof path, "%s", output);
        if (strata_model_save(&m, path)) {
            fprintf(stderr, "strata-calibrate: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
    } else {
        /* The cache strata reads unasked: only into a directory of this
         * user's alone. */
        strata_model_default_path(path, sizeof path);
        if (strata_model_save_cache(&m, path, why, sizeof why)) {
            fprintf(stderr, "strata-calibrate: %s\n", why);
            return 1;
        }
    }
    if (!quiet) printf("wrote %s\n", path);
    return 0;
}
