/* The registry of strata's collective algorithms: their names (what users
 * write in overrides and tuning files, and what verbose output prints), the
 * collective each serves, what it needs to run, and the meaning of its
 * factor k.  Algorithms are always named, never numbered, outside strata. */
#ifndef STRATA_ALGORITHM_H
#define STRATA_ALGORITHM_H

#include "coll/block.h"

/* If you add a value here, also add its ALGO row to the table of
 * src/coll/algorithm.c (its start function and its cost there; the table's
 * size is checked at compile time, a hole by tests/unit/test_select.c) and
 * its name to the algorithm lists of docs/USAGE.md. */
enum strata_algo {
    STRATA_ALGO_BCAST_PIPELINED,
    STRATA_ALGO_BCAST_DIRECT_READ,
    STRATA_ALGO_BCAST_DIRECT_WRITE,
    STRATA_ALGO_BCAST_KNOMIAL,
    STRATA_ALGO_BCAST_SCATTER_ALLGATHER,
    STRATA_ALGO_BCAST_SEGMENT_PIPELINE,
    STRATA_ALGO_SCATTER_CICO,
    STRATA_ALGO_SCATTER_PARALLEL_READ,
    STRATA_ALGO_SCATTER_SEQUENTIAL_WRITE,
    STRATA_ALGO_SCATTER_THROTTLED_READ,
    STRATA_ALGO_GATHER_CICO,
    STRATA_ALGO_GATHER_PARALLEL_WRITE,
    STRATA_ALGO_GATHER_SEQUENTIAL_READ,
    STRATA_ALGO_GATHER_THROTTLED_WRITE,
    STRATA_ALGO_ALLTOALL_CICO,
    STRATA_ALGO_ALLTOALL_PAIRWISE,
    STRATA_ALGO_ALLGATHER_CICO,
    STRATA_ALGO_ALLGATHER_RING_NEIGHBOUR,
    STRATA_ALGO_ALLGATHER_RING_SOURCE_READ,
    STRATA_ALGO_ALLGATHER_RING_SOURCE_WRITE,
    STRATA_ALGO_ALLGATHER_RECURSIVE_DOUBLING,
    STRATA_ALGO_ALLGATHER_BRUCK,
    STRATA_ALGO_ALLGATHER_HIER_LEADER,
    STRATA_ALGO_ALLGATHER_HIER_RING,
    STRATA_ALGO_GATHERV_CICO,
    STRATA_ALGO_GATHERV_SEQUENTIAL_READ,
    STRATA_ALGO_GATHERV_THROTTLED_WRITE,
    STRATA_ALGO_SCATTERV_CICO,
    STRATA_ALGO_SCATTERV_THROTTLED_READ,
    STRATA_ALGO_ALLGATHERV_CICO,
    STRATA_ALGO_ALLGATHERV_RING_READ,
    STRATA_ALGO_ALLTOALLV_CICO,
    STRATA_ALGO_ALLTOALLV_RING_READ,
    STRATA_NALGOS
};

/* What an algorithm needs of the communicator. */
/* If you add a value here, also update strata_algorithm_refusal
 * (src/coll/algorithm.c), which says why an algorithm cannot run. */
enum strata_algo_needs {
    STRATA_NEEDS_SINGLE_COPY = 1 << 0, /* a transport that reaches peers' memory */
    STRATA_NEEDS_POW2 = 1 << 1, /* a power-of-two number of ranks */
    STRATA_NEEDS_COPRIME_K = 1 << 2, /* k and the number of ranks coprime */
};

struct strata_model;
struct strata_model_shape;
/* An algorithm's predicted time (coll/model.h): blocks of n bytes (the
 * largest, for a v-collective), factor k, on a communicator of shape s. */
typedef double (*strata_cost_fn)(const struct strata_model *m, const struct strata_model_shape *s,
                                 double n, int k);

struct strata_algorithm {
    enum strata_algo id;
    int coll;               /* enum strata_coll */
    const char *name;       /* "throttled-read" */
    unsigned needs;         /* enum strata_algo_needs */
    const char *k_meaning;  /* NULL: the algorithm takes no factor */
    int k_default;          /* used when none is given (1 if no factor) */
    strata_block_fn run;
    strata_block_start_fn start; /* its resumable form (coll/block.h) */
    strata_cost_fn cost;    /* strata_cost_<name> (coll/model.h) */
    const char *summary;    /* one line for --explain and the docs */
};

const struct strata_algorithm *strata_algorithm(enum strata_algo id);

/* Whether algorithm `al`, run on plane p for blocks of `block` bytes, lets
 * peers copy from or into this rank's own buffers (single-copy transports,
 * a mapping's direct reads): what makes a call wait for every rank's
 * agreement before it starts (coll/agree.h). */
int strata_algo_single_copy(const struct strata_algorithm *al, const struct strata_plane *p,
                            size_t block);

/* The algorithm of collective `coll` called `name` (case-insensitive), or NULL. */
const struct strata_algorithm *strata_algorithm_find(int coll, const char *name);

/* Why algorithm `al` with factor k cannot run correctly on a communicator of
 * `size` ranks (single_copy: the plane's transport reaches peers' memory,
 * strata_plane_single_copy), or NULL if it can. */
const char *strata_algorithm_refusal(const struct strata_algorithm *al, int size,
                                     int single_copy, int k);

/* Parses "name" or "name:k" for collective coll.  On error returns -1 and
 * writes a message naming what is accepted into err. */
int strata_algorithm_parse(int coll, const char *text, const struct strata_algorithm **al, int *k,
                           char *err, size_t errlen);

/* The names of coll's algorithms, comma-separated (for messages). */
void strata_algorithm_names(int coll, char *out, size_t outlen);

#endif
