/* strata-bench's measurement: the buffers, the calls of either
 * implementation, and timing one row.
 *
 * The program links libstrata, so MPI_X is strata's entry point (which
 * serves the call or hands it to the host MPI) and PMPI_X is the host MPI's
 * own.  The machine moves its vCPUs between near and far placements every few
 * seconds, which changes any timing 2-4x; comparing separate runs would
 * compare placements, so both implementations are timed alternately in one
 * process, call after call, and each gets the same preparation:
 *
 *   rewrite the send buffer (a new value pattern, so no call finds last
 *   call's data already in place), optionally evict the caches (--cold),
 *   PMPI_Barrier, time one call on every rank.
 *
 * With --root-shift, iteration i's calls (both implementations') have root
 * i % size, so each root takes its turn and a root's warm caches do not
 * flatter every call.  A call's time is the maximum over the ranks (the
 * collective is done when its last rank is done); the row's figures are the
 * median, min and max over the calls, and the spread of the ranks' own mean
 * times.  For bcast, a third contestant gives the floor of a single-copy path:
 * one process_vm_readv (CMA) copy of the same bytes from rank 0 to rank 1. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bench.h"

#define CACHE_LINE 64

/* ---- buffers ---------------------------------------------------------- */

/* Bytes the send and receive buffers need for a block of `bytes` per rank:
 * the rooted and all-to-all collectives hold one block per rank. */
static size_t buffer_bytes_for(const struct bench *b, size_t bytes)
{
    size_t doubles = (bytes + 7) / 8; /* reduce rounds up to one double */
    size_t blocks = b->size > BENCH_HALO_BLOCKS ? (size_t)b->size : BENCH_HALO_BLOCKS;
    return (doubles ? doubles : 1) * 8 * blocks;
}

static void *alloc_touched(size_t bytes, int alloc_mem)
{
    /* Page-aligned, and every page faulted in now, not inside a timed call. */
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    void *p = NULL;
    if (alloc_mem) {
        if (MPI_Alloc_mem((MPI_Aint)rounded, MPI_INFO_NULL, &p) != MPI_SUCCESS) p = NULL;
    } else {
        p = aligned_alloc(4096, rounded);
    }
    if (p) memset(p, 0, rounded);
    return p;
}

void bench_free_buffer(const struct bench *b, void *p)
{
    if (p && b->opt.alloc_mem) MPI_Free_mem(p);
    else free(p);
}

int bench_alloc_buffers(struct bench *b)
{
    size_t largest = 0;
    for (int i = 0; i < b->opt.nsizes; i++)
        if (b->opt.sizes[i] > largest) largest = b->opt.sizes[i];
    b->buf_bytes = buffer_bytes_for(b, largest);
    b->send = alloc_touched(b->buf_bytes, b->opt.alloc_mem);
    b->recv = alloc_touched(b->buf_bytes, b->opt.alloc_mem);
    b->flush = b->opt.cold ? alloc_touched(BENCH_FLUSH_BYTES, 0) : NULL;
    b->vcounts = malloc(2 * (size_t)b->size * sizeof(int));
    b->vdispls = b->vcounts ? b->vcounts + b->size : NULL;
    b->wbytes = malloc((size_t)b->size * sizeof *b->wbytes);
    b->wtypes = malloc((size_t)b->size * sizeof *b->wtypes);
    return b->send && b->recv && b->vcounts && b->wbytes && b->wtypes &&
                   (!b->opt.cold || b->flush)
               ? 0
               : -1;
}

/* A fresh value pattern: the data differs on every call, so nothing the
 * previous call left in a cache or in a receive buffer matches it.  Small
 * integers as doubles keep the reductions on the fast path (no NaN, no
 * denormals) and exact. */
static void fill_pattern(char *buf, size_t bytes, unsigned seed)
{
    double *d = (double *)buf;
    size_t n = bytes / 8;
    for (size_t i = 0; i < n; i++) d[i] = (double)((seed + i) & 0xffff);
    for (size_t i = n * 8; i < bytes; i++) buf[i] = (char)(seed + i);
}

/* Reads and writes every line of a buffer twice the L3, which evicts the
 * benchmark's buffers.  A read-modify-write per line cannot be turned into a
 * memset with non-temporal stores, which would bypass the cache instead. */
static void flush_caches(struct bench *b)
{
    for (size_t i = 0; i < BENCH_FLUSH_BYTES; i += CACHE_LINE) b->flush[i]++;
}

/* The bytes this rank sends in this call; the rest is received. */
static size_t send_bytes(const struct bench *b, const struct bench_row *r)
{
    switch (r->coll) {
    case STRATA_COLL_GATHERV:
    case STRATA_COLL_ALLGATHERV: return (size_t)b->vcounts[b->rank];
    case STRATA_COLL_SCATTERV: return b->rank == b->root ? bench_v_layout(b, r) : 0;
    case STRATA_COLL_ALLTOALLV:
    case STRATA_COLL_ALLTOALLW: return bench_v_layout(b, r);
    case STRATA_COLL_BCAST: return b->rank == b->root ? r->bytes : 0;
    case STRATA_COLL_SCATTER: return b->rank == b->root ? r->bytes * (size_t)b->size : 0;
    case STRATA_COLL_ALLTOALL:
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
    case STRATA_COLL_REDUCE_SCATTER: return r->bytes * (size_t)b->size;
    case STRATA_COLL_BARRIER: return 0;
    /* The halo: the allgather forms send one block to every neighbour. */
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
    case STRATA_COLL_NEIGHBOR_ALLTOALLW: return r->bytes * BENCH_HALO_BLOCKS;
    default: return r->bytes;
    }
}

static void prepare_call(struct bench *b, const struct bench_row *r)
{
    if (strata_coll_is_v(r->coll)) bench_v_layout(b, r);
    bench_prepare_arrays(b, r);
    fill_pattern(b->send, send_bytes(b, r), (unsigned)b->rank * 7919u + ++b->seed);
    if (b->flush) flush_caches(b);
}

/* Looping only if the kernel returns a short count. */
int bench_copy_from_root(struct bench *b, size_t bytes)
{
    size_t done = 0;
    while (done < bytes) {
        struct iovec local = {b->send + done, bytes - done};
        struct iovec remote = {(void *)(uintptr_t)(b->peer_addr + done), bytes - done};
        ssize_t got = process_vm_readv(b->peer_pid, &local, 1, &remote, 1, 0);
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

/* The root of iteration i, the same on every rank. */
static int root_of_iteration(const struct bench *b, int i)
{
    return b->opt.root_shift ? i % b->size : BENCH_ROOT;
}

/* The root of the next back-to-back call (noise): the next rank in turn. */
static void next_root(struct bench *b)
{
    if (b->opt.root_shift) b->root = (b->root + 1) % b->size;
}

/* ---- timing one row --------------------------------------------------- */

/* One timed contestant: prepare, synchronise, time this rank's part. */
static double time_variant(struct bench *b, struct bench_row *r, enum bench_variant v)
{
    prepare_call(b, r);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    /* --nonblocking --noise: the quiet figures are the nonblocking forms' too. */
    if (b->opt.nonblocking && v != V_COPY) bench_call_nonblocking(b, r, v == V_STRATA);
    else if (v == V_NATIVE) bench_call_blocking(b, r, 0);
    else if (v == V_STRATA) bench_call_blocking(b, r, 1);
    else if (b->rank == 1 && bench_copy_from_root(b, r->bytes)) r->copy_failed = 1;
    return MPI_Wtime() - t0;
}

/* Iteration i runs every contestant once, with the same root.  Native and
 * strata swap places every iteration, so each goes first half the time and
 * each follows the other as often; the CMA copy, when timed, always comes
 * last, so that it precedes (and disturbs) both of them alike.  With the
 * root rotating, they swap every round of roots instead: swapping every
 * iteration would tie the order to the root's parity (at 2 ranks, native
 * always first with root 0 and strata with root 1), and then only strata
 * ever followed a copy in the other direction, which costs a cross-process
 * read here about 1.7x (measured: strata's Bcast minimum 13 µs at 64 KiB
 * against native's 8; both 13 without the copy contestant). */
static void time_one_iteration(struct bench *b, struct bench_row *r, int i, double *times)
{
    int round = b->opt.root_shift ? i / b->size : i;
    enum bench_variant first = round % 2 ? V_STRATA : V_NATIVE;
    enum bench_variant order[NVARIANTS] = {first, first == V_NATIVE ? V_STRATA : V_NATIVE, V_COPY};
    b->root = root_of_iteration(b, i);
    for (int k = 0; k < r->nvariants; k++)
        times[order[k] * r->iters + i] = time_variant(b, r, order[k]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t[0..n-1] (seconds); median, min and max in µs. */
static void summarize(double *t, int n, double *median, double *min, double *max)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median = (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) * 1e6;
    *min = t[0] * 1e6;
    *max = t[n - 1] * 1e6;
}

/* Warm-up calls (connections, the host MPI's lazily built structures), then
 * the number of timed iterations: --iters, or what fits the row budget.  The
 * estimate is the median warm-up iteration (the first one pays for the lazy
 * set-up), slowest rank, so every rank arrives at the same count. */
static int choose_iterations(struct bench *b, struct bench_row *r)
{
    double scratch[NVARIANTS * BENCH_WARMUP_ITERS], wall[BENCH_WARMUP_ITERS], ignored;
    r->iters = BENCH_WARMUP_ITERS;
    for (int i = 0; i < BENCH_WARMUP_ITERS; i++) {
        double t0 = MPI_Wtime();
        time_one_iteration(b, r, i, scratch);
        wall[i] = MPI_Wtime() - t0;
    }
    double per_iter;
    summarize(wall, BENCH_WARMUP_ITERS, &per_iter, &ignored, &ignored);
    per_iter *= 1e-6;
    PMPI_Allreduce(MPI_IN_PLACE, &per_iter, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (b->opt.iters) return b->opt.iters;
    double fit = BENCH_ROW_BUDGET_S / (per_iter > 0 ? per_iter : 1e-9);
    return fit < BENCH_MIN_ITERS ? BENCH_MIN_ITERS : fit > BENCH_MAX_ITERS ? BENCH_MAX_ITERS
                                                                          : (int)fit;
}

/* Rank 0: min, median and max over the ranks of their mean times (means[rank
 * * NVARIANTS + v], seconds), per contestant. */
static void summarize_ranks(struct bench_row *r, double *means, int ranks)
{
    double *one = means + (size_t)ranks * NVARIANTS; /* room left after the means */
    for (int v = 0; v < r->nvariants; v++) {
        for (int k = 0; k < ranks; k++) one[k] = means[k * NVARIANTS + v];
        summarize(one, ranks, &r->st[v].rank_median, &r->st[v].rank_min, &r->st[v].rank_max);
    }
}

/* Per-rank times stay local during the loop, so the only communication
 * between calls is the barrier; afterwards one PMPI_Reduce(MAX) gives each
 * call's time over all ranks, and one PMPI_Gather each rank's mean. */
int bench_run_row(struct bench *b, struct bench_row *r)
{
    r->nvariants = r->coll == STRATA_COLL_BCAST && b->copy_ok && !r->algorithm ? 3 : 2;
    r->iters = choose_iterations(b, r);
    r->copy_failed = 0;
    size_t n = (size_t)r->nvariants * (size_t)r->iters;
    double *mine = malloc(n * sizeof *mine);
    double *all = b->rank == 0 ? malloc(n * sizeof *all) : NULL;
    double *means = b->rank == 0 ? malloc((size_t)b->size * (NVARIANTS + 1) * sizeof *means) : NULL;
    int failed = !mine || (b->rank == 0 && (!all || !means)), any_failed;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed) {
        free(mine);
        free(all);
        free(means);
        return -1;
    }
    for (int i = 0; i < r->iters; i++) time_one_iteration(b, r, i, mine);

    double my_mean[NVARIANTS] = {0};
    for (int v = 0; v < r->nvariants; v++) {
        for (int i = 0; i < r->iters; i++) my_mean[v] += mine[v * r->iters + i];
        my_mean[v] /= r->iters;
    }
    PMPI_Gather(my_mean, NVARIANTS, MPI_DOUBLE, means, NVARIANTS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine, all, (int)n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    failed = r->copy_failed;
    PMPI_Allreduce(&failed, &r->copy_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (b->rank == 0) {
        for (int v = 0; v < r->nvariants; v++)
            summarize(all + v * r->iters, r->iters, &r->st[v].median, &r->st[v].min,
                      &r->st[v].max);
        summarize_ranks(r, means, b->size);
    }
    free(mine);
    free(all);
    free(means);
    return 0;
}

/* ---- the same row with noise (--noise) -------------------------------- */

/* A late-form call (a bench_noise_call_fn): prepared and synchronised as
 * time_variant, and the late rank spends its delay inside its timed region
 * before it enters the collective. */
static double time_noisy_call(void *ctx, int impl, const struct bench_noise_draw *draw,
                              double *late_s)
{
    struct bench *b = ctx;
    next_root(b);
    prepare_call(b, b->noisy_row);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    *late_s = 0;
    if (b->rank == draw->late_rank) {
        bench_noise_spin_until(t0, draw->delay_s);
        *late_s = MPI_Wtime() - t0;
    }
    if (b->opt.nonblocking) bench_call_nonblocking(b, b->noisy_row, impl);
    else bench_call_blocking(b, b->noisy_row, impl);
    return MPI_Wtime() - t0;
}

/* A rate-form call (a bench_noise_loop_fn): back to back with the previous
 * one, as in IMB's loop, so no new values and no barrier; the data stay
 * those the last quiet call prepared. */
static void loop_call(void *ctx, int impl)
{
    struct bench *b = ctx;
    next_root(b);
    if (b->opt.nonblocking) bench_call_nonblocking(b, b->noisy_row, impl);
    else bench_call_blocking(b, b->noisy_row, impl);
}

int bench_run_noisy_row(struct bench *b, struct bench_row *r)
{
    double quiet_us[2] = {r->st[V_NATIVE].median, r->st[V_STRATA].median};
    b->noisy_row = r;
    int rc = b->opt.noise.form == BENCH_NOISE_RATE
                 ? bench_noise_run_rate_row(&b->opt.noise, b->noise_rows, MPI_COMM_WORLD,
                                            loop_call, b, &r->noise)
                 : bench_noise_run_late_row(&b->opt.noise, b->noise_rows, MPI_COMM_WORLD,
                                            quiet_us, time_noisy_call, b, &r->noise);
    b->noise_rows++;
    b->noisy_row = NULL;
    return rc;
}
