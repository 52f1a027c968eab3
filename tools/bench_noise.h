/* strata-bench --noise: how much each implementation slows down under noise.
 *
 * Two forms; --noise-form=rate (the default) is the ADAPT paper's experiment
 * (section 5.1.1), --noise-form=late the tool's earlier per-call probe.
 *
 * RATE FORM: noise at a fixed rate of wall time, slowdown of the mean call.
 *
 * The paper injects on every process, at a fixed frequency of 10 Hz, a
 * busy-wait of U(0, 10) ms ("5% noise": 5 ms mean per 100 ms) or U(0, 20) ms
 * ("10%"), runs the collective back to back (IMB's loop), and reports the
 * slowdown: by how much the mean time per call grows with noise.  Here:
 *
 *   - each rank has its own noise clock: the first event falls at a random
 *     phase in [0, 100 ms) after the block's start, each next one 100 ms
 *     later; each event's length is U(0, MS) ms.  Phase and lengths come from
 *     a generator seeded by (--noise-seed, row, round, rank), so ranks are out
 *     of phase with one another, as independent OS noise is;
 *   - noise acts only in a block of calls of one implementation run back to
 *     back WITHOUT a barrier between calls: a barrier per call would wait out
 *     every event and re-synchronise the ranks, charging each event whole to
 *     every implementation and hiding exactly what tells them apart (whether
 *     the others keep working while one rank is stolen from);
 *   - before each call a rank reads CLOCK_MONOTONIC and, for every event now
 *     due, busy-waits its length (spinning on the clock, not sleeping: noise
 *     takes the CPU) and moves its clock on by 100 ms.  An event that falls
 *     due inside a call is therefore served at the next call boundary: it
 *     delays the rank's entry instead of stalling it mid-collective.  This is
 *     the honest limit of a benchmark that cannot act inside the host MPI;
 *     interrupting the call with a signal that spins would also break its
 *     system calls, and is not done.  The quiet blocks run the same loop with
 *     a clock that never fires (same clock reads, no events);
 *   - a block: PMPI_Barrier, then every rank times its own loop of C calls on
 *     CLOCK_MONOTONIC; the block's time is the maximum over the ranks (the
 *     loop is over when the slowest rank's last call returns);
 *   - C is the same for both implementations and every block of a row: a
 *     quiet probe of back-to-back calls of each (repeated with 4x the calls
 *     until the faster one's lasts 50 ms; times of the slowest rank, by
 *     PMPI_Allreduce MAX, so every rank computes the same C) sets C so that
 *     the faster implementation's quiet block lasts --noise-block seconds
 *     (default 0.75 s: ~7 events per rank), and so every block sees several
 *     events; the slower one's blocks are longer, but C is cut so that they
 *     last at most 4x that (bounding a row's time: where one implementation
 *     is more than 4x slower, the faster one's blocks are shorter than
 *     --noise-block, and "events" in the JSON says how many it met), and C
 *     is at least --noise-calls;
 *   - per row, --noise-rounds rounds (default 4) of four blocks: host quiet,
 *     strata quiet, host noisy, strata noisy, the order rotated by one each
 *     round (with 4 rounds each kind takes each place once).  Both noisy
 *     blocks of a round replay the same noise of every rank (same phases and
 *     lengths from the block's start): the comparison is paired.
 *
 * Reported per row and implementation (µs, %):
 *   quiet_mean, noisy_mean  time per call: the blocks' times summed over the
 *                           rounds / (rounds * C)
 *   slowdown                (noisy_mean / quiet_mean - 1) * 100, the paper's
 *                           figure; per round also (round_slowdown, JSON),
 *                           which shows how much it moves on this machine
 *   injected                the noise actually spent, % of wall time: per rank
 *                           the events' measured spin times / its loop time,
 *                           mean over ranks and noisy blocks: about MS/2 / 100
 *                           ms, i.e. 5% at MS=10 and 10% at MS=20 (a little less
 *                           as events due after a rank's last call are dropped)
 *   events                  events per rank and noisy block
 *   strata / host slowdown  the project's target: at most 0.5 at MS=20.
 * Scale: with P ranks each losing a fraction f, a collective that keeps the
 * ranks in lock step pays every rank's events, about P * f; one that absorbs
 * noise pays about f.  On a machine with fewer cores than ranks a spinning
 * rank also takes a core from the others, so figures on such a machine mix
 * noise with oversubscription.
 *
 * LATE FORM (--noise-form=late): in each of --noise-calls noisy calls per
 * implementation, after the per-call barrier, one rank drawn uniformly
 * busy-waits U(0, MS) ms inside its timed region before entering the call;
 * the draw depends on (seed, row, call) only, so the host's and strata's call
 * of one iteration meet the same late rank and delay.  Figures (µs):
 *   late cost   = call time (max over ranks) - the late rank's delay; median
 *                 over the noisy calls (and mean, JSON)
 *   late factor = late cost / quiet median: 1 when the collective waits for the
 *                 late rank and then runs whole, below 1 when the others' part
 *                 was done during the delay, above 1 when waiting costs extra
 *   slowdown    = (noisy mean - quiet median) / mean delay (JSON)
 *   strata / host: strata's late cost / the host's (medians).
 * It isolates what a collective still needs once a late rank arrives, one
 * call at a time; it is not the paper's figure.
 *
 * JSON: method.noise = {"form": "rate"|"late", "max_ms", "seed", "calls",
 * and for rate "rounds", "block_s", "hz"}; per row "noise" =
 *   rate: {"form": "rate", "calls_per_block", "rounds", "native": S, "strata": S,
 *          "strata_vs_native_slowdown": x|null} with S = {"quiet_mean",
 *          "noisy_mean", "slowdown", "round_slowdown": [...], "injected",
 *          "events"} (slowdown and injected in %);
 *   late: {"form": "late", "calls", "delay_mean", "native": L, "strata": L,
 *          "strata_vs_native", "strata_vs_native_mean"} with L = {"quiet_median",
 *          "noisy_mean", "noisy_median", "late_cost_mean", "late_cost_median",
 *          "late_factor", "slowdown"}. */
#ifndef STRATA_TOOLS_BENCH_NOISE_H
#define STRATA_TOOLS_BENCH_NOISE_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#define BENCH_NOISE_DEFAULT_MS 10.0
#define BENCH_NOISE_MAX_MS 1000.0     /* late form; the rate form stops at the period */
#define BENCH_NOISE_DEFAULT_CALLS 20
#define BENCH_NOISE_DEFAULT_SEED 20190813u
#define BENCH_NOISE_HZ 10.0
#define BENCH_NOISE_DEFAULT_ROUNDS 4
#define BENCH_NOISE_MAX_ROUNDS 32
#define BENCH_NOISE_DEFAULT_BLOCK_S 0.75
/* The paper's sizes and collectives, the defaults under --noise. */
#define BENCH_NOISE_DEFAULT_SIZES "4M"
#define BENCH_NOISE_DEFAULT_COLLS "bcast,reduce"

enum bench_noise_form { BENCH_NOISE_RATE, BENCH_NOISE_LATE };

struct bench_noise_options {
    double max_ms;                /* 0: no noise */
    enum bench_noise_form form;
    int calls;                    /* late: noisy calls per implementation and row;
                                     rate: at least this many calls per block */
    int rounds;                   /* rate: rounds of four blocks per row */
    double block_s;               /* rate: a quiet block lasts at least this */
    uint64_t seed;
};

/* One late-form call's schedule, identical on every rank. */
struct bench_noise_draw {
    int late_rank;
    double delay_s;
};

/* Late form: one implementation's figures in one row, µs. */
struct bench_noise_late_stats {
    double quiet_median;          /* the row's quiet median */
    double noisy_mean, noisy_median;
    double late_cost_mean, late_cost_median;
    double late_factor;           /* late_cost_median / quiet_median; 0: undefined */
    double slowdown;              /* (noisy_mean - quiet_median) / delay_mean */
};

/* Rate form: one implementation's figures in one row (µs per call, %). */
struct bench_noise_rate_stats {
    double quiet_mean, noisy_mean;
    double slowdown;
    double round_slowdown[BENCH_NOISE_MAX_ROUNDS];
    double injected;
    double events;
};

/* Index 0: the host MPI, 1: strata. */
struct bench_noise_row {
    enum bench_noise_form form;
    int calls;                    /* 0: not timed with noise; rate: calls per block */
    int rounds;                   /* rate */
    double delay_mean;            /* late: µs, as spent by the late ranks */
    struct bench_noise_late_stats late[2];
    struct bench_noise_rate_stats rate[2];
};

void bench_noise_defaults(struct bench_noise_options *opt);

/* If argv[*i] is --noise[=MS], --noise-form F, --noise-calls N,
 * --noise-rounds R, --noise-block S or --noise-seed S (a value separate or
 * after '='): takes it (moving *i past a separate value) and returns 1; 0 if
 * it is none of them; -1 if its value is bad (said on stderr when `verbose`).
 * Any of them turns the noise on, at the default MS unless --noise=MS. */
int bench_noise_option(int argc, char **argv, int *i, struct bench_noise_options *opt,
                       int verbose);
/* After every option: 0, or -1 if they do not fit together (said when verbose). */
int bench_noise_check(const struct bench_noise_options *opt, int verbose);
void bench_noise_usage(FILE *to);

/* Busy-waits until `seconds` have passed since `start` (both MPI_Wtime). */
void bench_noise_spin_until(double start, double seconds);

/* Late form: times one call of implementation `impl` (0: the host MPI,
 * 1: strata), barrier first, with `draw`'s late rank: returns this rank's time
 * of the call, and in *late_s what the delay took on this rank (0 if it is not
 * the late one). */
typedef double (*bench_noise_call_fn)(void *ctx, int impl, const struct bench_noise_draw *draw,
                                      double *late_s);

/* Late form: the noisy calls of one row, the implementations alternating;
 * collective over `comm`.  On rank 0, *out gets the figures against the quiet
 * medians quiet_us[impl].  Returns -1 on no memory. */
int bench_noise_run_late_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
                             const double quiet_us[2], bench_noise_call_fn time_call, void *ctx,
                             struct bench_noise_row *out);

/* Rate form: makes one untimed call of implementation `impl`, no barrier. */
typedef void (*bench_noise_loop_fn)(void *ctx, int impl);

/* Rate form: the probe and every block of one row; collective over `comm`.
 * On rank 0, *out gets the figures.  Returns -1 on no memory. */
int bench_noise_run_rate_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
                             bench_noise_loop_fn call, void *ctx, struct bench_noise_row *out);

void bench_noise_print_method(const struct bench_noise_options *opt);
void bench_noise_print_header(const struct bench_noise_options *opt);
void bench_noise_print_row(const char *coll, const char *size, const char *path,
                           const struct bench_noise_row *n);
void bench_noise_json_method(FILE *f, const struct bench_noise_options *opt);
void bench_noise_json_row(FILE *f, const struct bench_noise_row *n);

#endif
