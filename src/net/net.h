/* A communicator that spans several nodes: its node view and the
 * compositions that run on it.
 *
 * Every node's ranks form a node communicator with a strata context of its
 * own (its data plane: shared segment, flags, CMA); node leaders talk over
 * the host MPI's non-blocking point-to-point on a private duplicate of the
 * communicator, created with the context, so that no message of strata can
 * match a receive of the application.  A node's leader is its lowest rank,
 * except that the root of a rooted call leads its own node for that call
 * (data leaves the root directly, as inside a node).
 *
 * Every composition runs on every rank of the communicator with the same
 * arguments the entry point checked, so every rank takes the same path. */
#ifndef STRATA_NET_H
#define STRATA_NET_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "net/engine.h"

struct strata_ctx;

struct strata_net {
    MPI_Comm comm;           /* the communicator itself (the application's) */
    int rank, size;          /* this rank in it, its size */
    MPI_Comm dup;            /* leaders' traffic, private to strata */
    MPI_Comm node_comm;      /* this rank's node */
    /* Its context (owned by the context layer, opaque here) and that
     * context's data plane, NULL on a one-rank node. */
    struct strata_ctx *node;
    struct strata_plane *node_plane;
    /* Reductions with two leaders (HierKNEM): on a node of three ranks or
     * more, every rank but the node's first forms the workers communicator;
     * the second rank reduces the workers' data inside the node while the
     * first talks to other nodes.  double_leader: the node agreed it can. */
    MPI_Comm workers_comm;
    struct strata_ctx *workers;           /* its context (opaque here) */
    struct strata_plane *workers_plane;   /* and that context's data plane */
    int double_leader;
    int nnodes;
    int my_node;
    int *node_of;            /* [size] node of each rank (nodes numbered by lowest rank) */
    int *node_rank;          /* [size] rank inside its node communicator */
    int *node_start;         /* [nnodes + 1] offsets into members */
    int *members;            /* [size] ranks grouped by node, ascending inside a node */
    unsigned char *contiguous; /* [nnodes] the node's ranks are consecutive */
    int max_node_size;
    int *tree_buf;           /* [nnodes] children of this node in a call's tree */
    pid_t *peer_pid;         /* [size] pid of each rank this process can watch, else 0 */
    struct strata_engine engine;
    void *staging[2];        /* private buffers, grown on demand */
    size_t staging_bytes[2];
};

/* The two private buffers of a composition: what arrives from other nodes
 * (or leaves for them), and a leader's own accumulation. */
enum strata_net_buffer { STRATA_NET_TRANSIT, STRATA_NET_ACC };

/* The rank that leads `node` in a call rooted at `root` (-1: unrooted). */
static inline int strata_net_leader(const struct strata_net *net, int node, int root)
{
    if (root >= 0 && net->node_of[root] == node) return root;
    return net->members[net->node_start[node]];
}

/* Ranks on `node`. */
static inline int strata_net_node_size(const struct strata_net *net, int node)
{
    return net->node_start[node + 1] - net->node_start[node];
}

/* Private buffer `which` of at least `bytes`; NULL if memory runs out
 * (src/net/staging.c). */
void *strata_net_staging(struct strata_net *net, enum strata_net_buffer which, size_t bytes);

/* The compositions; each returns MPI_SUCCESS or the host MPI's error.  desc
 * (if not NULL) receives a line naming the algorithm for verbose output. */
int strata_net_bcast(struct strata_net *net, void *data, size_t bytes, int root, char *desc,
                     size_t desclen);
int strata_net_reduce(struct strata_net *net, const struct strata_reduce_args *a, char *desc,
                      size_t desclen);
int strata_net_allreduce(struct strata_net *net, const struct strata_reduce_args *a, char *desc,
                         size_t desclen);
/* coll: STRATA_COLL_GATHER, SCATTER or ALLGATHER, with block.h's byte-run
 * conventions (a->send or a->recv NULL: in place). */
int strata_net_block(struct strata_net *net, int coll, const struct strata_block_args *a,
                     char *desc, size_t desclen);
int strata_net_barrier(struct strata_net *net);

/* ---- Resumable forms (coll/task.h): start, then strata_task_step until
 * MPI_SUCCESS (or the host MPI's error).  The node's part runs as a
 * sub-operation; the leaders' network part polls the host MPI (and the
 * engine of engine.h) once per step instead of waiting. */
struct strata_net_barrier_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_barrier_task node;  /* the node barriers, before and after */
    int dist, from, to;
    MPI_Request req[2];
    char token;                     /* the zero-byte message's buffer */
};
void strata_net_barrier_start(struct strata_net_barrier_task *o, struct strata_net *net);

struct strata_net_bcast_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_bcast_task node;    /* this node's broadcast, or the feed's close */
    unsigned char *data;
    size_t bytes, announced;
    int local_root, leader, from, first_send, fed;
    uint64_t base;                  /* the fed node broadcast's */
};
struct strata_net_block_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_block_args a;
    int coll, leader, local_root, rc;
    const unsigned char *send;      /* what this rank gives its node's gather */
    unsigned char *transit, *mine;  /* node-ordered bundles; this node's bundle */
    struct strata_block_task node;    /* the node's part */
    struct strata_bcast_task bcast;   /* Allgather: the result inside the node */
};
/* coll, a, desc as strata_net_block's. */
void strata_net_block_start(struct strata_net_block_task *o, struct strata_net *net, int coll,
                            const struct strata_block_args *a, char *desc, size_t desclen);

/* desc as strata_net_bcast's. */
void strata_net_bcast_start(struct strata_net_bcast_task *o, struct strata_net *net, void *data,
                            size_t bytes, int root, char *desc, size_t desclen);

/* Reduce (a->root >= 0) or Allreduce (a->root < 0) across nodes. */
struct strata_net_reduce_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_reduce_args a;
    const void *send;               /* this rank's input (NULL: already in acc) */
    void *acc;                      /* where the node's / the result accumulates */
    int root, leader, second, nchildren, nin, up, allreduce;
    size_t seg_elems, total, stride, first, reduced, combined;
    unsigned char *from_in;         /* incoming partial results, stride apart */
    struct strata_reduce_args seg;  /* the segment the node is reducing */
    struct strata_reduce_task node;   /* ... its node reduction */
    struct strata_net_bcast_task bcast; /* Allreduce: the result back down */
};
void strata_net_reduce_start(struct strata_net_reduce_task *o, struct strata_net *net,
                             const struct strata_reduce_args *a, char *desc, size_t desclen);

/* Reduce_scatter(_block), Scan and Exscan across nodes (net_rs_scan.c).
 * Scan and Exscan need every node's ranks consecutive (route.c checks). */
int strata_net_reduce_scatter(struct strata_net *net, const struct strata_rs_args *a, char *desc,
                              size_t desclen);
int strata_net_scan(struct strata_net *net, const struct strata_reduce_args *a, int exclusive,
                    char *desc, size_t desclen);

struct strata_net_rs_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_rs_args a;
    int leader, nreq, rc;
    size_t share;                   /* elements of this node's share */
    unsigned char *full;            /* leader: the node's reduction of the vector */
    unsigned char *perm, *in, *own, *res; /* leader: shares by node; others' parts; ours; result */
    MPI_Request *reqs;
    struct strata_reduce_task node;   /* the node reduction */
    struct strata_bcast_task bcast;   /* the share inside the node */
};
void strata_net_reduce_scatter_start(struct strata_net_rs_task *o, struct strata_net *net,
                                     const struct strata_rs_args *a, char *desc, size_t desclen);

struct strata_net_scan_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_reduce_args a;
    int exclusive, leader, last, node_size, local_leader, nreq, rc;
    unsigned char *prefix;          /* E: the earlier nodes' total (leader: then their totals) */
    unsigned char *total_buf, *x;   /* the node's last rank: its total; (Exscan) its operand */
    MPI_Request *reqs;
    struct strata_scan_task node;     /* the node's scan */
    struct strata_bcast_task bcast;   /* E inside the node */
};
void strata_net_scan_start(struct strata_net_scan_task *o, struct strata_net *net,
                           const struct strata_reduce_args *a, int exclusive, char *desc,
                           size_t desclen);

/* Gatherv, Scatterv (a->root), Allgatherv and Alltoallv across nodes (net_vblock.c),
 * coll as enum strata_coll, a as block.h's v-collective arguments (a->v:
 * this rank's own layout, which must outlive the operation). */
struct strata_net_v_task {
    struct strata_task op;
    struct strata_net *net;
    struct strata_block_args a;
    struct strata_vlayout nlay;     /* the node part's layout (views of arrays) */
    int coll, rc, leader, local_root, nsize;
    uint64_t word;                  /* this rank's length, for the lengths gather */
    size_t *arrays;                 /* owned: node layout [4 * nsize], lens, node_at */
    uint64_t *lens;                 /* leader: its members' lengths, node order */
    size_t *node_at;                /* Allgatherv: [nnodes + 1] bundle starts */
    unsigned char *transit, *bundle; /* private copies (see net_vblock.c) */
    size_t bundle_bytes;
    const unsigned char *send;      /* Allgatherv: this rank's block; Alltoallv: its blocks */
    size_t *sent_at;                /* Alltoallv in place: offsets of the private copy */
    int node_done;                  /* Alltoallv: the node part has finished */
    struct strata_block_task node;    /* the node parts */
    struct strata_bcast_task bcast;   /* Allgatherv: the result inside the node */
};
void strata_net_vblock_start(struct strata_net_v_task *o, struct strata_net *net, int coll,
                             const struct strata_block_args *a, char *desc, size_t desclen);
int strata_net_vblock(struct strata_net *net, int coll, const struct strata_block_args *a,
                      char *desc, size_t desclen);

#endif
