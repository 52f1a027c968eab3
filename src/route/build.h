/* What a nonblocking or persistent call decided, for the operation that
 * runs it later (issue 30): served or the host's, which path and algorithm,
 * on which context, with which resolved buffers, and what to do once it has
 * run.  The serve layer fills it (strata_serve_* with a non-NULL build);
 * the request layer (request/nonblocking.h) keeps it in its operation and
 * starts and finishes what it says.  A blocking call passes no build: the
 * same decisions, then the algorithm runs at once (no allocation and no
 * hand-off on the hot path).
 *
 * It lives here, below both of them, because it is the answer to route's
 * question "where does this call go", written down: serve decides it and
 * never touches the request that holds it, and request runs it without
 * knowing how any collective decides. */
#ifndef STRATA_ROUTE_BUILD_H
#define STRATA_ROUTE_BUILD_H

#include <mpi.h>
#include <stddef.h>

#include "coll/agree.h"
#include "coll/block.h"
#include "coll/coll.h"
#include "coll/select.h"
#include "context/context.h"
#include "route/reduce_op.h"
#include "route/run_view.h"
#include "util/colls.h"

/* What the operation starts once it reaches the head of its communicator's
 * queue. */
enum strata_build_kind {
    STRATA_BUILD_NOTHING,      /* done at posting (no data, one rank) */
    STRATA_BUILD_NODE_BLOCK,   /* a block algorithm (and Bcast) on the node's plane */
    STRATA_BUILD_NODE_REDUCE,  /* Reduce / Allreduce on the node's plane */
    STRATA_BUILD_NODE_BARRIER,
    STRATA_BUILD_NET_BCAST,    /* the compositions across nodes */
    STRATA_BUILD_NET_REDUCE,
    STRATA_BUILD_NET_BLOCK,
    STRATA_BUILD_NET_BARRIER,
    STRATA_BUILD_HOST,         /* a persistent start the host MPI serves (request's host_req) */
    STRATA_BUILD_OWNED         /* an operation its builder keeps (the owned_* fields) */
};

struct strata_build {
    /* Given by whoever asks for the build (request/). */
    int call;                   /* call id (util/colls.h): what STRATA_STATS counts */
    int replay;                 /* a persistent start after the first: counted and decided before */
    struct strata_choice choice;/* the algorithm (node plane), decided once */
    int have_choice;

    /* The decision (serve/). */
    int to_host;                /* strata leaves the call to the host MPI */
    int kind;                   /* enum strata_build_kind */
    struct strata_ctx *ctx;
    strata_block_start_fn block_start;
    struct strata_block_args ba;
    struct strata_reduce_args ra;
    int coll;                   /* enum strata_coll (net block compositions) */
    void *data;                 /* net Bcast */
    size_t bytes;
    int root;
    char desc[320];             /* verbose description (across nodes) */
    int has_desc;

    /* Finishing: what the blocking form does after its algorithm returned. */
    struct strata_run_view view[2];
    struct strata_reduce_how how;
    int has_how;

    /* The agreement (coll/agree.h): this rank's signature, published when
     * the operation reaches its plane; agree: it waits for every rank's.
     * A v-collective's pairs (what it sends each rank, then what it expects
     * from each: 2 * size counts, malloc'ed; NULL otherwise) and whether it
     * receives anything, for the pairs' round. */
    struct strata_sig_args sig;
    int agree;
    /* A nonblocking call the blocking form would agree on as *small*
     * (coll/agree.h): its operation starts with its signature and reads the
     * others' after (nonblocking.c); cleared where the algorithm exposes
     * user buffers (serve/check.c). */
    int agree_small;
    long long *vpairs;
    int vreceives;

    /* STRATA_BUILD_OWNED: the newer collectives (Reduce_scatter, Scan, the
     * v-collectives) keep their call's state in a struct of their own file
     * (rs_scan_calls.c, vcollectives.c), so that a collective or a
     * composition across nodes plugs in without an edit of request/.
     * owned_start starts the operation and sets owned_task to it (the
     * strata_task that progress steps); owned_finish (the queue's lock held,
     * or at an abandoned build with finished 0) ends the call: the results
     * to the application's buffers when finished, STRATA_STATS, then frees
     * owned. */
    void (*owned_start)(struct strata_build *b);
    void (*owned_finish)(struct strata_build *b, int finished);
    struct strata_task *owned_task;
    void *owned;
};

/* The call id (util/colls.h) STRATA_STATS and verbose output name a call
 * of coll by: its blocking form's without a build (MPI_Bcast), else the
 * form of the build's call (MPI_Ibcast, MPI_Bcast_init). */
static inline int strata_build_call_id(const struct strata_build *b, enum strata_coll coll)
{
    return strata_call_id(coll, b ? strata_call_form(b->call) : STRATA_FORM_BLOCKING);
}

/* Whether a call counts in STRATA_STATS: a persistent request counts its
 * MPI_<coll>_init once, not every start. */
static inline int strata_build_counts(const struct strata_build *b) { return !(b && b->replay); }

/* The host MPI takes the call: the build only says so (its entry point
 * calls the host's nonblocking or persistent form).  MPI_SUCCESS. */
static inline int strata_build_to_host(struct strata_build *b)
{
    b->to_host = 1;
    return MPI_SUCCESS;
}

#endif
