/* One row of strata-bench's results (a collective at one size, each
 * contestant's times), shared by the parts that time, print and write rows. */
#ifndef STRATA_TOOLS_BENCH_ROW_H
#define STRATA_TOOLS_BENCH_ROW_H

#include <stddef.h>

#include <mpi.h>

#include "bench_noise.h"
#include "util/colls.h"

/* A 2-D grid's neighbours: -1 and +1 in each dimension (some may be one
 * rank on small grids: a halo exchange as a periodic stencil code does it). */
#define BENCH_HALO_BLOCKS 4

/* The contestants of one row, in the order iteration 0 runs them. */
enum bench_variant { V_NATIVE, V_STRATA, V_COPY, NVARIANTS };

/* One contestant's times in one row, µs. */
struct bench_stats {
    double median, min, max;      /* over the calls, of each call's max over ranks */
    /* Each rank's mean time per call; min, median, max over the ranks. */
    double rank_min, rank_median, rank_max;
};

struct bench_row {
    enum strata_coll coll;
    size_t bytes;                 /* per rank block, as moved */
    int count;                    /* elements passed to the call */
    MPI_Datatype type;
    int iters;
    int nvariants;                /* 3 when the CMA copy is timed too */
    int copy_failed;
    struct bench_stats st[NVARIANTS];
    const char *refusal;          /* NULL: strata serves it */
    int nonblocking;              /* --nonblocking --noise: the noisy calls are the I-forms */
    const char *algorithm;        /* --algorithms: the algorithm forced, or the tuned choice */
    int k;                        /* its factor (0: none) */
    int tuned;                    /* strata chose (nothing forced) */
    double predicted;             /* the model's prediction, µs (< 0: none) */
    struct bench_noise_row noise; /* --noise */
};

const char *bench_coll_name(enum strata_coll coll);   /* "bcast", ... */
/* The bytes a bandwidth figure counts for this row (0: none, barrier). */
size_t bench_bandwidth_bytes(const struct bench_row *r, int ranks);

#endif
