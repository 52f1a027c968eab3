/* strata-bench's shared types: what one run is asked for (options), what one
 * row of the results holds, and the run's state; and the functions each part
 * of the tool offers the others:
 *
 *   strata-bench.c    main, set-up, which rows run in which order
 *   bench_row.c       one row of results and what is derived from it (bench_row.h)
 *   bench_options.c   the command line
 *   bench_timing.c    buffers, the calls, timing one row (and its noise)
 *   bench_table.c     what is printed on the terminal
 *   bench_output.c    the --json and --csv files (fields: bench-schema.json)
 *   bench_noise.c     --noise (bench_noise.h)
 *   bench_load.c      --load: busy processes beside the job (bench_load.h) */
#ifndef STRATA_TOOLS_BENCH_H
#define STRATA_TOOLS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <mpi.h>

#include "bench_load.h"
#include "bench_noise.h"
#include "bench_row.h"
#include "route/route.h"

#define BENCH_MAX_SIZES 32
#define BENCH_DEFAULT_SIZES "8,1K,64K,1M,4M"
/* --sweep: 8 B to 16 MiB, every power of 2 (22 sizes). */
#define BENCH_SWEEP_MIN 8u
#define BENCH_SWEEP_MAX (16u << 20)
#define BENCH_WARMUP_ITERS 5
#define BENCH_MIN_ITERS 15
#define BENCH_MAX_ITERS 2000
#define BENCH_ROW_BUDGET_S 0.2    /* adaptive iterations: ~this long per row */
#define BENCH_FLUSH_BYTES (64u << 20) /* twice the 32 MiB L3 */
#define BENCH_ROOT 0              /* the root, or the first one with --root-shift */

struct bench_options {
    size_t sizes[BENCH_MAX_SIZES];
    int nsizes;
    int want[STRATA_NCOLLS];      /* 1 = benchmark this collective */
    int iters;                    /* 0 = adaptive */
    int cold;
    int alloc_mem;                /* --alloc-mem: buffers from MPI_Alloc_mem */
    int algorithms;               /* --algorithms: every algorithm forced in turn */
    int root_shift;               /* --root-shift: the root of call i is rank i % size */
    int sweep;                    /* --sweep: every collective, 8 B to 16 MiB */
    int overlap;                  /* --overlap: the nonblocking forms, post-compute-wait */
    int device;                   /* --device: device buffers, strata against manual staging */
    int persistent;               /* --persistent: MPI_Start + MPI_Wait per call */
    int nonblocking;              /* --nonblocking: --overlap, or with --noise the noisy
                                     calls are the nonblocking forms (post + wait) */
    const char *json;
    const char *csv;
    const char *fit;              /* --fit FILE: --algorithms' ratios into a model file */
    struct bench_noise_options noise; /* --noise: max_ms > 0 */
    int pattern;                  /* --pattern: enum bench_pattern (the v-collectives) */
    int load;                     /* --load N: busy processes per node beside the job */
    enum bench_load_kind load_kind; /* --load-kind spin|noise */
    int load_pin;                 /* --load-pin: competitor i on CPU i mod CPUs */
};

/* How the v-collectives' blocks differ between ranks (--pattern): block j
 * has `count` elements (uniform), none for rank size/2 (empty), or
 * count / (j + 1) of them, at least 1 (skewed: a power law). */
enum bench_pattern { BENCH_PATTERN_UNIFORM, BENCH_PATTERN_EMPTY, BENCH_PATTERN_SKEWED };
const char *bench_pattern_name(int pattern);

struct bench {
    int rank, size, nodes;
    struct bench_options opt;
    char *send, *recv;            /* sized for the largest row */
    size_t buf_bytes;
    unsigned char *flush;         /* --cold only */
    struct strata_ctx *ctx;
    int copy_ok;                  /* rank 1 can read rank 0's memory */
    pid_t peer_pid;               /* on rank 1: rank 0's pid and send buffer */
    uint64_t peer_addr;
    unsigned seed;                /* changes every rewrite */
    int root;                     /* the root of the call being made */
    struct bench_row *rows;       /* rank 0: every row, for the files */
    int nrows;
    int noise_rows;               /* rows timed with noise so far: the noise's key */
    const struct bench_row *noisy_row; /* the row the noisy calls are timing */
    int *vcounts, *vdispls;       /* [size]: the v-collectives' counts, packed displacements */
    int *wbytes;                  /* [size]: Alltoallw's byte displacements */
    MPI_Datatype *wtypes;         /* [size]: and datatypes */
    MPI_Comm halo;                /* the neighbourhood collectives': a periodic 2-D Cartesian grid of
                                     the ranks (a halo exchange, BENCH_HALO_BLOCKS neighbours) */
    int halo_dims[2];
    struct bench_load load;       /* the node's first rank: its competitors */
};


/* bench_options.c: 0 to run, 1 for --help, 2 on a bad option (said on
 * stderr when `verbose`).  Every rank parses the same argv alike. */
int bench_parse_options(int argc, char **argv, struct bench_options *opt, int verbose);
void bench_usage(FILE *to);

/* bench_timing.c */
int bench_alloc_buffers(struct bench *b);
/* Gives back a buffer of bench_alloc_buffers (send or recv). */
void bench_free_buffer(const struct bench *b, void *p);
/* Rank 1 reads `bytes` of rank 0's send buffer with process_vm_readv; -1 if it fails. */
/* bench_layout.c: a v-collective row's counts and displacements
 * (b->vcounts, b->vdispls, --pattern); returns the counts' sum.  Only for
 * the v-collectives. */
size_t bench_v_layout(const struct bench *b, const struct bench_row *r);
int bench_copy_from_root(struct bench *b, size_t bytes);
/* Times one row: warm-up, iterations, the figures (on rank 0).  Collective;
 * -1 when out of memory. */
int bench_run_row(struct bench *b, struct bench_row *r);
/* --noise: the row again with noise, after its quiet calls.  Collective. */
int bench_run_noisy_row(struct bench *b, struct bench_row *r);

/* bench_overlap.c: --overlap, one line per row (rank 0 prints).  Collective. */
void bench_run_overlap(struct bench *b, const struct bench_row *rows, int nrows);

/* bench_device.c: --device, MPI_Bcast and MPI_Allreduce on device buffers,
 * strata against manual staging and host buffers.  Collective. */
void bench_run_device(struct bench *b);
/* bench_persistent.c: --persistent, one line per row (rank 0 prints):
 * strata's blocking call, strata's MPI_Start + MPI_Wait, the host's.
 * Collective.  Available where the host defines persistent collectives. */
void bench_run_persistent(struct bench *b, const struct bench_row *rows, int nrows);
int bench_persistent_available(void);

/* Whether bench_overlap.c posts coll's nonblocking form. */
int bench_nonblocking_supported(int coll);
/* Whether strata-bench times coll at all (bench_calls.c): every collective,
 * the neighbourhood ones as a halo exchange on b->halo. */
int bench_coll_supported(int coll);
/* Builds the arrays row r's calls take besides the buffers (Alltoallw's,
 * the halo's v and w forms'), before a call is timed. */
void bench_prepare_arrays(struct bench *b, const struct bench_row *r);

/* One nonblocking call of row r, posted and waited for at once: strata's
 * (MPI_Ibcast, ... and MPI_Wait) or the host's (PMPI_). */
void bench_call_nonblocking(struct bench *b, const struct bench_row *r, int strata);

/* One blocking call of row r (bench_calls.c): strata's (MPI_) or the host's
 * (PMPI_), with the arguments of the timed table (root b->root). */
void bench_call_blocking(struct bench *b, const struct bench_row *r, int strata);

/* bench_table.c: rank 0's terminal output */
void bench_format_size(size_t bytes, char *out, size_t len);
void bench_print_header(const struct bench *b, const char *command, const char *mpi);
void bench_print_table_header(void);
void bench_print_row(const struct bench_row *r);
void bench_print_noise_row(const struct bench_row *r);
void bench_print_algorithm_header(void);
void bench_print_algorithm_row(const struct bench_row *r);
/* After the rows: per-rank spread and bandwidth of every row. */
void bench_print_rank_table(const struct bench *b);

/* bench_output.c: 0, or -1 with errno set */
int bench_write_json(const struct bench *b, const char *command, const char *mpi);
int bench_write_csv(const struct bench *b);
/* --fit: the model in use plus, per algorithm row, its measured median
 * over the model's prediction ("measured" lines, coll/model.h), written to
 * b->opt.fit.  0, or -1 with errno. */
int bench_write_fit(const struct bench *b);

#endif
