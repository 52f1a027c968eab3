/* strata's own collective algorithms on a communicator's node data plane.
 * Each returns MPI_SUCCESS; they are called only for calls the router
 * accepted (valid arguments, supported datatype and op). */
#ifndef STRATA_COLL_H
#define STRATA_COLL_H

#include <mpi.h>
#include <stddef.h>

#include "coll/plane.h"

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

int strata_barrier(struct strata_plane *p);

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
    int root;
};
int strata_reduce(struct strata_plane *p, const struct strata_reduce_args *a);

/* Allreduce of at most STRATA_TINY_MAX bytes through the flag lines. */
int strata_allreduce_tiny(struct strata_plane *p, const struct strata_reduce_args *a);

#endif
