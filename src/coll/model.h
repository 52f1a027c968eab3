/* The cost model of the contention-aware paper (section II), calibrated on
 * the machine, and its predictions for every algorithm in the registry.
 *
 * A CMA copy of n bytes costs alpha + n*beta + l*gamma_c*ceil(n/s) when c
 * ranks access the same process at once (gamma_1 = 1), from a cold source;
 * from a source in the caches (n up to warm_bytes: a buffer its owner has
 * just written, as programs pass them) alpha + n*warm_beta +
 * l*(gamma_c - 1)*ceil(n/s), the contention's extra pinning kept.  Copies through the
 * shared segment cost shm_beta per byte per copy; a flag hand-off between
 * two ranks (the paper's T^sm terms for tiny control messages) costs flag.
 * All times are in microseconds. */
#ifndef STRATA_MODEL_H
#define STRATA_MODEL_H

#include <stddef.h>
#include <stdio.h>

#include "coll/algorithm.h"

#define STRATA_MODEL_MAX_GAMMA 64
/* "measured" lines kept (coll/learn.h: what selection measured). */
#define STRATA_MODEL_MAX_MEASURED 64

/* One algorithm's measured cost in one job, for a communicator shape, a
 * collective and a size class: the ratio of its measured time to the
 * model's prediction (the slowest rank's mean). */
struct strata_model_measured {
    int coll;           /* enum strata_coll */
    int ranks, groups, single_copy; /* the shape (strata_model_shape) */
    int cls;            /* size class: the bit length of the block */
    int algo, k;        /* enum strata_algo and its factor */
    double ratio;       /* measured / predicted */
};

struct strata_model {
    char source[512];   /* where the numbers come from (file, defaults) */
    char skipped[160];  /* keys of the cache this build does not know (a
                           newer strata-calibrate's), skipped; "" for none */
    double alpha;       /* CMA start-up per call (system call + access check) */
    double beta;        /* CMA per byte */
    double lock;        /* l: lock and pin one page, no contention */
    double page;        /* s: bytes per page */
    double warm_beta;   /* CMA per byte from a source in the caches (just
                           written by its owner), one reader's pinning
                           included; 0: not measured, every copy priced cold */
    double warm_bytes;  /* the largest copy whose source stays warm; larger
                           ones are priced cold */
    int ngamma;         /* gamma[c - 1] measured for c = 1 .. ngamma */
    double gamma[STRATA_MODEL_MAX_GAMMA];
    double gamma_a, gamma_b; /* fit gamma_c = a c^2 + b c, used past ngamma */
    double shm_beta;    /* one copy through the shared segment, per byte */
    double memcpy_beta; /* a private memcpy, per byte */
    double shm_pipe_beta; /* the segment pipeline: a copy in and a copy out at
                             once, per byte of the stream (strata-calibrate's
                             pipelined pair; 2*shm_beta: no overlap) */
    double map_alpha;   /* a copy through a mapped peer arena: start-up (the
                           translation); per byte it is a memcpy (memcpy_beta) */
    double map_lookup;  /* transport map's lookup of a buffer outside every
                           arena, before its CMA copy: the fallback's extra */
    double flag;        /* one flag hand-off between two ranks */
    double net_alpha;   /* one message between node leaders: start-up */
    double net_beta;    /* ... per byte */
    /* Where and when it was measured (informational, kept by load/save). */
    char machine[64];
    char date[32];
    int cpus;
    int max_concurrent; /* accessors that can run at once (0: no limit); set per prediction */
    int nmeasured;      /* measured[0 .. nmeasured - 1]: "measured" lines */
    struct strata_model_measured measured[STRATA_MODEL_MAX_MEASURED];
};

/* What of the communicator a prediction depends on. */
struct strata_model_shape {
    int size;           /* ranks */
    int groups;         /* groups of the finest hierarchy level */
    int largest_group;  /* ranks in the largest of them */
    int single_copy;        /* single copy available */
    size_t region;      /* bytes of one copy-in/copy-out round */
    int cores;          /* cores the ranks share (0: as many as ranks) */
    int mapped;         /* the copies go through peers' mappings (transport map,
                           buffers in arenas on every rank): a copy costs
                           map_alpha + n*memcpy_beta, no page pinning */
};

/* Contention factor with c concurrent accessors of one process. */
double strata_model_gamma(const struct strata_model *m, int c);

/* The cost functions the algorithm table's rows name (algorithm.c; each an
 * strata_cost_fn, defined in model.c beside the formulas it is made of). */
#define STRATA_COSTS(X)                                                                    \
    X(pipelined) X(parallel) X(sequential_others) X(sequential) X(knomial)                 \
    X(scatter_allgather) X(segment_pipeline) X(throttled) X(pairwise) X(ring_waiting)      \
    X(ring) X(recursive_doubling) X(bruck) X(hier_leader) X(gather_cico) X(scatter_cico)   \
    X(allgather_cico) X(alltoall_cico) X(gatherv_cico) X(gatherv_sequential)               \
    X(v_throttled) X(scatterv_cico) X(alltoallv_cico) X(alltoallv_ring)
#define STRATA_COST_DECLARE(name)                                                          \
    double strata_cost_##name(const struct strata_model *m,                                \
                              const struct strata_model_shape *s, double n, int k);
STRATA_COSTS(STRATA_COST_DECLARE)
#undef STRATA_COST_DECLARE

/* Predicted time of algorithm al with factor k moving `block` bytes per rank
 * (Bcast: the payload) on a communicator of this shape: its row's cost. */
double strata_model_predict(const struct strata_model *m, const struct strata_algorithm *al,
                            const struct strata_model_shape *shape, size_t block, int k);

/* One CMA copy of n bytes while c ranks access the same process; one rank
 * (or each, in parallel) reading the flags p-1 others published. */
double strata_model_cma(const struct strata_model *m, double n, int c);
double strata_model_sm_gather(const struct strata_model *m, int p);

/* Reduce_scatter(_block), Scan and Exscan inside a node have no table of
 * algorithms: the vector's size picks the path (copy-in/copy-out up to one
 * window, single copy past it where the transport has it; coll.h's
 * strata_rs_scan_path).  strata-info --explain shows the model's price of
 * both paths beside the one taken (model_rs_scan.c). */
struct strata_rs_scan_price {
    const char *name;      /* "copy-in-copy-out", "slice-read", "pipelined-prefix" */
    const char *summary;   /* what it does, in a line */
    double us;             /* predicted; < 0 where it cannot run */
    const char *refusal;   /* why it cannot run (us < 0) */
    int taken;             /* the path strata takes for this call */
};
/* coll: STRATA_COLL_REDUCE_SCATTER_BLOCK, _REDUCE_SCATTER, _SCAN or _EXSCAN;
 * bytes: the whole vector of one rank.  Fills out[0] (copy-in/copy-out)
 * and out[1] (single copy); returns 2, or 0 for another collective. */
int strata_model_rs_scan(const struct strata_model *m, const struct strata_model_shape *shape,
                         int coll, size_t bytes, struct strata_rs_scan_price out[2]);

/* Whether a copy through a peer's mapping beats a CMA copy at every size
 * by m's figures (start-up and per byte, page pinning included), with the
 * price the map transport pays on buffers outside arenas (map_alpha on top
 * of each CMA copy: map_lookup) small against what a mapped copy saves.
 * 1, or 0; the reason in words either way (strata-info --explain, verbose). */
int strata_model_map_wins(const struct strata_model *m, char *why, size_t whylen);

/* The "measured" line's values after the key, parsed into m (a record
 * for the same shape, collective, class and algorithm replaces the one
 * before).  NULL, or what is wrong (in why). */
const char *strata_model_parse_measured(struct strata_model *m, char *values, char *why,
                                        size_t whylen);

/* Writes m's "measured" lines to f. */
void strata_model_write_measured(const struct strata_model *m, FILE *f);

/* Adds or replaces a record (the oldest goes when the list is full). */
void strata_model_put_measured(struct strata_model *m, const struct strata_model_measured *r);

/* The record of algorithm algo (factor k) for this shape, collective and
 * class, or NULL. */
const struct strata_model_measured *strata_model_find_measured(const struct strata_model *m,
                                                               const struct strata_model_shape *s,
                                                               int coll, int cls, int algo, int k);

/* Figures strata-calibrate measured on the development machine (the same
 * as tests/data/model.conf), used when no calibration file exists. */
void strata_model_defaults(struct strata_model *m);

/* Reads a model file ("key value" lines, # comments; docs/USAGE.md).  0, or
 * -1 with a message naming the file, line and problem in err. */
int strata_model_load(struct strata_model *m, const char *path, char *err, size_t errlen);

/* Reads the per-host cache (strata_model_default_path), only if it is this
 * user's alone (keys this build does not know are skipped and named in
 * m->skipped: a newer strata-calibrate may have written it): the file and its directory owned by the effective user and
 * not writable by group or others, neither a symbolic link.  0: loaded; 1:
 * no such file (nor directory); 2: refused, why in err (the caller warns and
 * keeps m); -1: a bad file of the user's own, file:line and problem in err. */
int strata_model_load_cache(struct strata_model *m, const char *path, char *err, size_t errlen);

/* Writes m to path (creating its directory, mode 0700; atomically: a new
 * temporary file, mode 0600, never one already there nor a link's target,
 * renamed over it).  0, or -1 with errno. */
int strata_model_save(const struct strata_model *m, const char *path);

/* strata_model_save to the per-host cache, refused unless its directory is
 * this user's alone (as strata_model_load_cache checks).  0, or -1 with
 * the reason in why. */
int strata_model_save_cache(const struct strata_model *m, const char *path, char *why,
                            size_t whylen);

/* Writes m in the file format, header comments included, to an open stream.
 * 0, or -1 with errno. */
int strata_model_write(const struct strata_model *m, FILE *f);

/* Where this machine's calibration is kept when STRATA_MODEL is unset:
 * $XDG_CACHE_HOME/strata/model-<hostname>.conf, else
 * $HOME/.cache/strata/model-<hostname>.conf, else
 * $TMPDIR/strata-<uid>/model-<hostname>.conf ($TMPDIR unset or relative:
 * /tmp), a directory that must be the user's alone, never a shared name. */
void strata_model_default_path(char *out, size_t outlen);

/* Runs the strata-calibrate program installed beside this library
 * (<libdir>/../bin or <libdir>/bin) to measure this machine and write the
 * model to path, and waits for it (about a second; it forks its own reader
 * processes and never calls MPI).  0 once path is written, or -1 with a
 * message in err. */
int strata_model_calibrate_now(const char *path, char *err, size_t errlen);

#endif
