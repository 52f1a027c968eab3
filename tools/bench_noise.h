/* strata-bench --noise: how much a late rank costs each implementation.
 *
 * The ADAPT paper (section 5.1.1) injects, on every process, a delay drawn
 * uniformly from 0-10 ms or 0-20 ms at a fixed 10 Hz of wall time, and
 * reports how much slower the average collective becomes.  At 1024 processes
 * and calls of several ms, every call meets dozens of those delays.  Here, with
 * 2-5 ranks and calls of 0.2 µs to a few ms, a 10 Hz noise would touch one
 * call in a hundred to one in a million: a minute of measuring would see a
 * handful of noisy calls, and a faster implementation would simply be hit
 * less often.  So the delays keep the paper's distribution and drop its rate:
 *
 *   every noisy call has exactly one late rank, drawn uniformly among the
 *   ranks, which busy-waits a delay drawn uniformly from [0, MAX] ms
 *   (MAX = --noise=10 or --noise=20) after the barrier, inside its timed
 *   region, before it enters the collective ("late arrival").
 *
 * The draw depends only on (seed, row, call), so every rank computes the same
 * schedule without communicating, and the host MPI's call and strata's call
 * of the same iteration meet exactly the same late rank and the same delay:
 * the comparison is paired, not just statistically alike.  The delay is a
 * busy-wait, as OS noise takes the CPU from the process; it is counted in wall
 * time on the late rank (MPI_Wtime from the barrier exit to the collective's
 * entry), so a preemption during it lengthens the recorded delay too.
 *
 * Late arrival, not a stall in the middle of the collective: the benchmark
 * can only act between calls of the host MPI (a signal handler that spins
 * inside them would also interrupt their system calls), and a rank that is
 * late is what a stall in a preceding computation looks like to the
 * collective.  With delays of ms on calls of µs, every other rank is already
 * waiting when the late one arrives, so what tells the implementations apart
 * is what the collective still needs after the late rank arrives:
 *
 *   late cost   = call time (max over ranks) - the late rank's delay, µs;
 *                 median over the noisy calls, like every figure of the tool
 *                 (the mean is in the JSON: the paper reports averages, but
 *                 here one preemption by another program adds ms to a mean)
 *   late factor = late cost / quiet median: 1 when the collective waits for
 *                 the late rank and then runs whole; below 1 when the others'
 *                 part was done during the delay (the noise is absorbed);
 *                 above 1 when waiting costs extra (waiters that yielded or
 *                 slept wake late; the noise is amplified)
 *   slowdown    = (noisy mean - quiet median) / mean delay, the growth of the
 *                 average call per unit of injected delay (JSON only: with ms
 *                 delays on µs calls it stays near 1 for everyone).
 *
 * strata against the host: strata's late cost / the host's late cost (both
 * medians; a control build with PMPI_ on both sides gave 0.88-1.18 at 40 calls
 * on a loaded machine). */
#ifndef STRATA_TOOLS_BENCH_NOISE_H
#define STRATA_TOOLS_BENCH_NOISE_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#define BENCH_NOISE_DEFAULT_MS 10.0
#define BENCH_NOISE_MAX_MS 1000.0
#define BENCH_NOISE_DEFAULT_CALLS 20
#define BENCH_NOISE_DEFAULT_SEED 20190813u

struct bench_noise_options {
    double max_ms;                /* 0: no noise */
    int calls;                    /* noisy calls per implementation and row */
    uint64_t seed;
};

/* One noisy call's schedule, identical on every rank. */
struct bench_noise_draw {
    int late_rank;
    double delay_s;
};

/* One implementation's figures in one row, µs. */
struct bench_noise_stats {
    double quiet_median;          /* the row's quiet median */
    double noisy_mean, noisy_median;
    double late_cost_mean, late_cost_median;
    double late_factor;           /* late_cost_median / quiet_median; 0: undefined */
    double slowdown;              /* (noisy_mean - quiet_median) / delay_mean */
};

struct bench_noise_row {
    int calls;                    /* 0: the row was not timed with noise */
    double delay_mean;            /* µs, as spent by the late ranks */
    struct bench_noise_stats native, strata;
};

void bench_noise_defaults(struct bench_noise_options *opt);

/* If argv[*i] is --noise, --noise=MS, --noise-calls N or --noise-seed S:
 * takes it (moving *i past a separate value) and returns 1; 0 if it is none
 * of them; -1 if its value is bad (said on stderr when `verbose`). */
int bench_noise_option(int argc, char **argv, int *i, struct bench_noise_options *opt,
                       int verbose);
void bench_noise_usage(FILE *to);

/* Busy-waits until `seconds` have passed since `start` (both MPI_Wtime). */
void bench_noise_spin_until(double start, double seconds);

/* Times one call of implementation `impl` (0: the host MPI, 1: strata) with
 * `draw`'s late rank: returns this rank's time of the call, and in *late_s
 * what the delay took on this rank (0 if it is not the late one). */
typedef double (*bench_noise_call_fn)(void *ctx, int impl, const struct bench_noise_draw *draw,
                                      double *late_s);

/* The noisy calls of one row, the host MPI and strata alternating, both
 * meeting call i's draw; collective over `comm`.  On rank 0 of `comm`, *out
 * gets the figures against the quiet medians quiet_us[impl].  Returns -1 on
 * no memory. */
int bench_noise_run_row(const struct bench_noise_options *opt, int row, MPI_Comm comm,
                        const double quiet_us[2], bench_noise_call_fn time_call, void *ctx,
                        struct bench_noise_row *out);

void bench_noise_print_method(const struct bench_noise_options *opt);
void bench_noise_print_header(void);
void bench_noise_print_row(const char *coll, const char *size, const char *path,
                           const struct bench_noise_row *n);
void bench_noise_json_method(FILE *f, const struct bench_noise_options *opt);
void bench_noise_json_row(FILE *f, const struct bench_noise_row *n);

#endif
