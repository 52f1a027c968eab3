/* strata's own collective algorithms on a communicator's node data plane.
 * Each returns MPI_SUCCESS; they are called only for calls the router
 * accepted (valid arguments, supported datatype and op). */
#ifndef STRATA_COLL_H
#define STRATA_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "coll/task.h"
#include "coll/plane.h"
#include "coll/user_op.h"

/* Tuning of the data plane (STRATA_ variables), fixed at MPI_Init. */
struct strata_tuning {
    size_t cico_max;      /* largest payload copied through the segment */
    size_t chunk[STRATA_MAX_HIER]; /* bcast pipeline chunk per level */
    size_t reduce_chunk;  /* reduction pipeline chunk */
    size_t min_slice;     /* smallest share of a chunk one reducer takes */
    int throttle;         /* readers of one source at once (0: unlimited) */
    size_t net_segment;   /* across nodes: message size between leaders */
    int net_sends;        /* ... segments in flight per peer */
    int net_recvs;        /* ... receives posted ahead per peer */
    int net_tree, net_tree_k; /* ... tree among leaders (enum strata_net_shape) */
    int net_reduce_leaders;   /* ... leaders per node of a reduction (1 or 2) */
};

const struct strata_tuning *strata_tuning(void);
void strata_tuning_set(const struct strata_tuning *t);

/* Broadcast of `bytes` at data from `root` (coll/bcast.c), blocking. */
int strata_bcast_bytes(struct strata_plane *p, void *data, size_t bytes, int root);

/* The same as a resumable operation (coll/task.h): start, then
 * strata_task_step(&o->op) until it returns MPI_SUCCESS.  Every field past
 * `op` is the operation's private state. */
struct strata_bcast_task {
    struct strata_task op;
    struct strata_task step;        /* one round through the segment */
    unsigned char *data;
    size_t bytes;
    int root;
    int parent, nchildren, sibling, whole, i;
    const int *children;          /* the plane's bcast_plan (or tree_buf: feed close) */
    uint64_t base;
    size_t off, len, chunk;
    unsigned char *cur_data;      /* the round in flight (segment paths) */
    size_t cur_bytes;
    const unsigned char *src;     /* the parent's exposed buffer (single copy) */
    int slot;                     /* the flag lines' slot (payloads of one slot) */
};
void strata_bcast_start(struct strata_bcast_task *o, struct strata_plane *p, void *data,
                        size_t bytes, int root);

/* The same through the segment only: payloads above one region go in
 * rounds of a region (two halves of the segment alternate, so the parent
 * copies round k+1 in while its children copy round k out), never by the
 * single-copy transport.  Algorithm "segment-pipeline". */
void strata_bcast_segment_start(struct strata_bcast_task *o, struct strata_plane *p, void *data,
                                size_t bytes, int root);

/* A node broadcast from this rank whose payload arrives progressively (from
 * the network): the others call strata_bcast_bytes with this rank as root
 * and pull each piece as soon as it is announced.  Open returns 0 when the
 * payload takes a path that cannot be fed piecewise (small, or CMA off): the
 * caller then broadcasts the whole payload once it has it.  Otherwise it
 * returns 1 and the operation's base; advance announces that the first
 * `ready` bytes are in place; close waits until every rank has its copy. */
int strata_bcast_feed_open(struct strata_plane *p, void *data, size_t bytes, uint64_t *base);
void strata_bcast_feed_advance(struct strata_plane *p, uint64_t base, size_t ready);
void strata_bcast_feed_close(struct strata_plane *p, uint64_t base);
/* Resumable close: o waits for the children's acknowledgements. */
void strata_bcast_feed_close_start(struct strata_bcast_task *o, struct strata_plane *p,
                                   uint64_t base);

int strata_barrier(struct strata_plane *p);

/* The barrier as a resumable operation (start, then strata_task_step). */
struct strata_barrier_task {
    struct strata_task op;
    int parent, nchildren, i;
    const int *children; /* the plane's tree_buf */
    uint64_t base;
};
void strata_barrier_start(struct strata_barrier_task *o, struct strata_plane *p);

/* count elements `extent` bytes apart, of which the last `true_extent` bytes
 * hold data (pair types such as MPI_DOUBLE_INT end in padding a user buffer
 * may not have), reduced with fn; root < 0 means Allreduce. */
struct strata_reduce_args {
    const void *sendbuf;  /* NULL: in place (data already in recvbuf) */
    void *recvbuf;        /* significant at the root (all ranks for Allreduce) */
    size_t count;
    size_t extent;
    size_t true_extent;
    void (*fn)(void *dst, const void *a, const void *restrict b, size_t count);
    /* A user-defined op (user_op.h), used instead of fn; its elements have
     * no padding the buffers lack (true_extent == extent). */
    struct strata_user_op_call *user;
    int root;
};

/* dst = x op y over n elements (fn's contract: dst may be x; x comes from
 * lower ranks than y). */
static inline void strata_combine(const struct strata_reduce_args *a, void *dst, const void *x,
                                  const void *restrict y, size_t n)
{
    if (a->user) strata_user_op_apply(a->user, dst, x, y, n);
    else a->fn(dst, x, y, n);
}

/* Allreduce of at most STRATA_TINY_MAX bytes through the flag lines. */
int strata_allreduce_tiny(struct strata_plane *p, const struct strata_reduce_args *a);

/* ... as a resumable operation (start, then strata_task_step). */
struct strata_tiny_task {
    struct strata_task op;
    struct strata_reduce_args a; /* a copy: the caller's may not outlive the start */
    size_t span;
    uint64_t base;
    int slot, r;  /* slot: of the flag lines (plane.h) */
};
void strata_allreduce_tiny_start(struct strata_tiny_task *o, struct strata_plane *p,
                                 const struct strata_reduce_args *a);

int strata_reduce(struct strata_plane *p, const struct strata_reduce_args *a);

/* This rank's plan of one reduction (coll/reduce.c). */
struct reduce_call {
    struct strata_plane *p;
    const struct strata_reduce_args *a;
    int top_root;                 /* the root of the tree (0 for Allreduce) */
    int nlev;                     /* levels this rank takes part in */
    const struct level_role *role; /* [nlev]: the plane's plan (plane.h) */
    uint64_t base;
    size_t chunk_elems, nchunks;
};

/* Reduce / Allreduce as a resumable operation (start, then strata_task_step).
 * Every field past `op` is the operation's private state. */
struct strata_reduce_task {
    struct strata_task op;
    struct strata_task step;          /* one round through the segment */
    struct strata_reduce_args a;    /* the call (a copy) */
    struct strata_reduce_args part; /* the round in flight (segment rounds) */
    struct strata_tiny_task tiny;     /* Allreduce up to STRATA_TINY_MAX bytes */
    struct reduce_call c;
    int *members;                   /* the plane's tree_buf + 2 size */
    int nmembers, parent, nchildren, i, j, l;
    size_t k, c0, n, lo, hi, first, elems, off, bytes, per_round;
    int tail, target;
    unsigned char *dst, *acc;
    const unsigned char *operand0;
};
void strata_reduce_start(struct strata_reduce_task *o, struct strata_plane *p,
                         const struct strata_reduce_args *a);

/* ---- Reduce_scatter(_block), Scan and Exscan inside a node (coll/reduce_scatter.c,
 * coll/scan.c).  Operands combine in rank order (x from the lower rank, y
 * from the higher), so non-commutative ops keep the standard's order and
 * floating-point results are the same on every run.  Both follow the plane's
 * paths: copy-in/copy-out windows through the segment up to a region (and
 * in rounds of one region without a single-copy transport), single copy
 * beyond. */

/* r.count: elements of the whole vector; r.sendbuf NULL: in place (r.recvbuf
 * holds the whole vector, and this rank's block lands at its start);
 * r.recvbuf: this rank's block.  counts[q]: elements of rank q's block (the
 * caller's array, alive until the operation ends). */
struct strata_rs_args {
    struct strata_reduce_args r;
    const size_t *counts;
    int coll; /* STRATA_COLL_REDUCE_SCATTER or _BLOCK: what STRATA_STATS counts */
};

struct strata_rs_task {
    struct strata_task op;
    struct strata_rs_args a;
    size_t first_mine, mine;        /* this rank's block: first element, elements */
    const unsigned char *operand;   /* this rank's whole vector */
    unsigned char *acc;             /* where its block is combined */
    uint64_t base;
    size_t first, win, per_round, chunk, k;
    int q;
};
void strata_reduce_scatter_start(struct strata_rs_task *o, struct strata_plane *p,
                                 const struct strata_rs_args *a);
int strata_reduce_scatter(struct strata_plane *p, const struct strata_rs_args *a);

/* Scan (exclusive 0) or Exscan (1) of r.count elements; r.sendbuf NULL: in
 * place (the operand is in r.recvbuf).  Exscan leaves rank 0's recvbuf as it
 * was (the standard leaves it undefined). */
struct strata_scan_task {
    struct strata_task op;
    struct strata_reduce_args a;
    int exclusive, coll, q, tail;
    const unsigned char *operand;   /* this rank's operand */
    unsigned char *prefix;          /* single copy: where this rank's inclusive prefix lies */
    uint64_t base;
    size_t first, win, per_round, chunk, k, total;
};
void strata_scan_start(struct strata_scan_task *o, struct strata_plane *p,
                       const struct strata_reduce_args *a, int exclusive);
int strata_scan(struct strata_plane *p, const struct strata_reduce_args *a, int exclusive);

/* The path a payload of `bytes` takes in these four (verbose, STRATA_STATS). */
const char *strata_rs_scan_path(const struct strata_plane *p, int coll, size_t bytes);

#endif
