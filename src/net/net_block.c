/* Gather, Scatter and Allgather across nodes, two levels.
 *
 * Each node's blocks travel between nodes as one bundle (the node's blocks
 * in rank order), built or taken apart inside the node by the node's own
 * algorithm (the cost model's choice on the node's plane, block.h).  A node
 * whose ranks are consecutive in the communicator (a block layout) has its
 * bundle in the user's buffer already, so bundles go to and from the
 * network straight from there; other layouts go through private memory,
 * laid out node after node, and are sorted into rank order at the end.
 *
 *  Gather     the root posts a receive stream for every other node's bundle,
 *             gathers its own node, and collects the bundles as they come;
 *             other leaders gather their node, then stream the bundle.
 *  Scatter    the root streams every other node's bundle while scattering
 *             its own node; other leaders receive their bundle, then
 *             scatter it inside the node.
 *  Allgather  every leader gathers its node, then leaders exchange bundles:
 *             each with every other when there are few nodes, around a ring
 *             of leaders (each bundle forwarded segment by segment as it
 *             arrives) when there are many; then each leader broadcasts the
 *             whole result inside its node.
 *
 * Resumable operations (coll/task.h): the node parts run as sub-operations,
 * the engine one pass per step. */
#include "net/net.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "coll/select.h"
#include "util/colls.h"
#include "util/log.h"

enum { TAG_GATHER = 3, TAG_SCATTER = 4, TAG_ALLGATHER = 5 };
/* Allgather's ring gives every bundle its own tag past this one, so that
 * the bundles forwarded between two leaders cannot match each other. */
#define TAG_RING_FIRST 64
/* Up to this many nodes, leaders exchange Allgather bundles all with all. */
#define ALLGATHER_DIRECT_MAX_NODES 4

static struct strata_net_block_task *net_block_of(struct strata_task *op)
{
    return (struct strata_net_block_task *)((char *)op - offsetof(struct strata_net_block_task, op));
}

/* Starts one block collective inside this rank's node, as the model
 * chooses it, in o->node (run it with STRATA_TASK_AWAIT_STEPS). */
static void node_block_start(struct strata_net_block_task *o, int coll, const unsigned char *send,
                             unsigned char *recv)
{
    struct strata_plane *np = o->net->node_plane;
    struct strata_choice ch;
    strata_select(np, coll, o->a.block, &ch);
    struct strata_block_args a = {send, recv, o->a.block, o->local_root, ch.k, NULL};
    strata_block_starter((int)ch.al->id)(&o->node, np, &a);
}

/* Runs the engine until every stream completed: one pass per step, "not
 * yet" when nothing moved (the run loop spins, then yields).  `each` runs
 * after every pass (ring forwarding). */
#define AWAIT_ENGINE(op, e, each)                                                         \
    for (;;) {                                                                             \
        int moved_, rc_ = strata_engine_progress(e, &moved_);                             \
        if (rc_ != MPI_SUCCESS) return rc_;                                                \
        each;                                                                              \
        if (strata_engine_complete(e)) break;                                              \
        if (moved_) {                                                                      \
            (op)->waits++;                                                                 \
        } else {                                                                           \
            (op)->waiting_for = strata_engine_waiting_for(e);                                        \
            STRATA_TASK_YIELD(op);                                                         \
        }                                                                                  \
    }

/* Where node n's bundle lies: in the user's buffer `user` (rank order) if
 * the node's ranks are consecutive, else in `transit` (node order). */
static unsigned char *bundle_of(const struct strata_net *net, int n, unsigned char *user,
                                unsigned char *transit, size_t block)
{
    if (net->contiguous[n] && user)
        return user + (size_t)net->members[net->node_start[n]] * block;
    return transit + (size_t)net->node_start[n] * block;
}

/* Copies the blocks of the bundles that went through transit memory into
 * (to_user) or out of (!to_user) the user's rank-ordered buffer. */
static void sort_bundles(const struct strata_net *net, unsigned char *user,
                         unsigned char *transit, size_t block, int to_user, int only_node)
{
    for (int n = 0; n < net->nnodes; n++) {
        if (net->contiguous[n] || (only_node >= 0 && n != only_node)) continue;
        for (int i = net->node_start[n]; i < net->node_start[n + 1]; i++) {
            unsigned char *u = user + (size_t)net->members[i] * block;
            unsigned char *t = transit + (size_t)i * block;
            if (to_user) memcpy(u, t, block);
            else memcpy(t, u, block);
        }
    }
}

static unsigned char *transit_or_abort(struct strata_net *net, size_t bytes)
{
    unsigned char *t = strata_net_staging(net, STRATA_NET_TRANSIT, bytes);
    if (!t && bytes) {
        strata_error("out of memory for %zu bytes of a collective across nodes", bytes);
        PMPI_Abort(net->comm, 1);
    }
    return t;
}

static void add_or_abort(struct strata_net *net, int is_send, int peer, int tag, void *buf,
                         size_t bytes)
{
    const struct strata_tuning *tu = strata_tuning();
    if (strata_engine_add(&net->engine, is_send, peer, tag, buf, bytes, tu->net_segment,
                          is_send ? tu->net_sends : tu->net_recvs) < 0) {
        strata_error("out of memory starting a collective across nodes");
        PMPI_Abort(net->comm, 1);
    }
}

/* Send streams are posted whole: their bytes are all in place. */
static void all_ready(struct strata_engine *e)
{
    for (int i = 0; i < e->nstreams; i++) strata_stream_ready(e, i, e->s[i].bytes);
}

static void gather_start(struct strata_net_block_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_block_args *a = &o->a;
    size_t b = a->block;
    int me = net->my_node, nsize = strata_net_node_size(net, me);
    o->send = a->send;
    if (net->rank != o->leader) return;
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, STRATA_COLL_GATHER);
    if (net->rank == a->root) {
        o->transit = transit_or_abort(net, (size_t)net->size * b);
        /* Receives first, so bundles can land while this node gathers. */
        for (int n = 0; n < net->nnodes; n++)
            if (n != me)
                add_or_abort(net, 0, strata_net_leader(net, n, a->root), TAG_GATHER,
                             bundle_of(net, n, a->recv, o->transit, b),
                             (size_t)strata_net_node_size(net, n) * b);
        o->mine = bundle_of(net, me, a->recv, o->transit, b);
        /* In place, the root's block is at its rank's slot of recv: where
         * the node gather wants it only if the bundle is recv itself. */
        if (!o->send && !net->contiguous[me]) o->send = a->recv + (size_t)net->rank * b;
    } else {
        o->mine = o->transit = transit_or_abort(net, (size_t)nsize * b);
    }
}

static int gather_progress(struct strata_task *op)
{
    struct strata_net_block_task *o = net_block_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_block_args *a = &o->a;
    size_t b = a->block;
    STRATA_TASK_BEGIN(op);
    if (net->rank != o->leader) {
        node_block_start(o, STRATA_COLL_GATHER, o->send, NULL);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else {
        if (net->node_plane) {
            node_block_start(o, STRATA_COLL_GATHER, o->send, o->mine);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        } else if (o->send) {
            memcpy(o->mine, o->send, b);
        }
        if (net->rank != a->root)
            add_or_abort(net, 1, a->root, TAG_GATHER, o->mine,
                         (size_t)strata_net_node_size(net, net->my_node) * b);
        all_ready(e);
        AWAIT_ENGINE(op, e, (void)0);
        if (net->rank == a->root) sort_bundles(net, a->recv, o->transit, b, 1, -1);
    }
    STRATA_TASK_END(op);
}

static int scatter_start(struct strata_net_block_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_block_args *a = &o->a;
    size_t b = a->block;
    int me = net->my_node, nsize = strata_net_node_size(net, me);
    if (net->rank != o->leader) return MPI_SUCCESS;
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, STRATA_COLL_SCATTER);
    if (net->rank == a->root) {
        o->transit = transit_or_abort(net, (size_t)net->size * b);
        sort_bundles(net, (unsigned char *)a->send, o->transit, b, 0, -1);
        for (int n = 0; n < net->nnodes; n++)
            if (n != me)
                add_or_abort(net, 1, strata_net_leader(net, n, a->root), TAG_SCATTER,
                             bundle_of(net, n, (unsigned char *)a->send, o->transit, b),
                             (size_t)strata_net_node_size(net, n) * b);
        all_ready(e);
        /* The first segments leave before this node scatters; the rest
         * follow at the end. */
        int moved;
        int rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
        o->mine = bundle_of(net, me, (unsigned char *)a->send, o->transit, b);
    } else {
        o->mine = transit_or_abort(net, (size_t)nsize * b);
        add_or_abort(net, 0, a->root, TAG_SCATTER, o->mine, (size_t)nsize * b);
    }
    return MPI_SUCCESS;
}

static int scatter_progress(struct strata_task *op)
{
    struct strata_net_block_task *o = net_block_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_block_args *a = &o->a;
    STRATA_TASK_BEGIN(op);
    if (o->rc != MPI_SUCCESS) return o->rc; /* the start's first engine pass failed */
    if (net->rank != o->leader) {
        node_block_start(o, STRATA_COLL_SCATTER, NULL, a->recv);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else {
        /* A non-root leader needs its bundle before its node can scatter. */
        if (net->rank != a->root) AWAIT_ENGINE(op, e, (void)0);
        if (net->node_plane) {
            node_block_start(o, STRATA_COLL_SCATTER, o->mine, a->recv);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        } else if (a->recv) {
            memcpy(a->recv, o->mine, a->block);
        }
        AWAIT_ENGINE(op, e, (void)0);
    }
    STRATA_TASK_END(op);
}
/* Leaders exchange bundles: all with all, or around the ring of leaders. */
static void exchange_bundles(struct strata_net *net, unsigned char *recv, unsigned char *transit,
                             size_t b)
{
    struct strata_engine *e = &net->engine;
    int me = net->my_node, nn = net->nnodes;
    size_t mine_bytes = (size_t)strata_net_node_size(net, me) * b;
    unsigned char *mine = bundle_of(net, me, recv, transit, b);
    if (nn <= ALLGATHER_DIRECT_MAX_NODES) {
        for (int n = 0; n < nn; n++) {
            if (n == me) continue;
            int peer = strata_net_leader(net, n, -1);
            add_or_abort(net, 0, peer, TAG_ALLGATHER, bundle_of(net, n, recv, transit, b),
                         (size_t)strata_net_node_size(net, n) * b);
            add_or_abort(net, 1, peer, TAG_ALLGATHER, mine, mine_bytes);
            strata_stream_ready(e, e->nstreams - 1, mine_bytes);
        }
        return;
    }
    /* Ring: bundle of node (me - j) arrives from the left for j = 1 .. nn-1
     * and goes on to the right for j = 0 .. nn-2; each bundle its own
     * stream pair, so a segment is forwarded as soon as it has arrived. */
    int left = strata_net_leader(net, (me + nn - 1) % nn, -1);
    int right = strata_net_leader(net, (me + 1) % nn, -1);
    for (int j = 1; j < nn; j++) {
        int n = (me + nn - j) % nn;
        unsigned char *buf = bundle_of(net, n, recv, transit, b);
        size_t bytes = (size_t)strata_net_node_size(net, n) * b;
        add_or_abort(net, 0, left, TAG_RING_FIRST + n, buf, bytes);
        if (j < nn - 1) add_or_abort(net, 1, right, TAG_RING_FIRST + n, buf, bytes);
    }
    add_or_abort(net, 1, right, TAG_RING_FIRST + me, mine, mine_bytes);
    strata_stream_ready(e, e->nstreams - 1, mine_bytes);
}

/* Ring forwarding: a received bundle's completed prefix may go on. */
static void forward_ring(struct strata_engine *e, int nnodes)
{
    if (nnodes <= ALLGATHER_DIRECT_MAX_NODES) return;
    /* Streams come in (receive, send) pairs, the last pair's send missing. */
    for (int i = 0; i + 1 < e->nstreams - 1; i += 2)
        strata_stream_ready(e, i + 1, e->s[i].done);
}

static int allgather_progress(struct strata_task *op)
{
    struct strata_net_block_task *o = net_block_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    struct strata_plane *np = net->node_plane;
    const struct strata_block_args *a = &o->a;
    size_t b = a->block, total = (size_t)net->size * b;
    STRATA_TASK_BEGIN(op);
    if (net->rank != o->leader) {
        node_block_start(o, STRATA_COLL_GATHER, o->send, NULL);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else {
        if (np) {
            node_block_start(o, STRATA_COLL_GATHER, o->send, o->mine);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        } else if (o->send) {
            memcpy(o->mine, o->send, b);
        }
        strata_engine_reset(e, net->dup);
        strata_engine_count_as(e, STRATA_COLL_ALLGATHER);
        exchange_bundles(net, a->recv, o->transit, b);
        AWAIT_ENGINE(op, e, forward_ring(e, net->nnodes));
        sort_bundles(net, a->recv, o->transit, b, 1, -1);
    }
    if (np) {
        strata_bcast_start(&o->bcast, np, a->recv, total, o->local_root);
        STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    }
    STRATA_TASK_END(op);
}

static void allgather_start(struct strata_net_block_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_block_args *a = &o->a;
    size_t b = a->block;
    /* In place, this rank's block is at its slot of recv. */
    o->send = a->send ? a->send : a->recv + (size_t)net->rank * b;
    if (net->rank != o->leader) return;
    o->transit = transit_or_abort(net, (size_t)net->size * b);
    o->mine = bundle_of(net, net->my_node, a->recv, o->transit, b);
    /* The leader's block is in place only if the bundle is recv itself. */
    if (!a->send && net->contiguous[net->my_node]) o->send = NULL;
}

void strata_net_block_start(struct strata_net_block_task *o, struct strata_net *net, int coll,
                            const struct strata_block_args *a, char *desc, size_t desclen)
{
    if (desc) {
        const char *how = coll == STRATA_COLL_ALLGATHER
            ? (net->nnodes <= ALLGATHER_DIRECT_MAX_NODES ? "leaders exchange bundles all with all"
                                                         : "leaders pass bundles around a ring")
            : "leaders stream node bundles to and from the root";
        snprintf(desc, desclen, "across nodes: two levels over %d nodes, %s", net->nnodes, how);
    }
    o->net = net;
    o->a = *a;
    o->coll = coll;
    o->rc = MPI_SUCCESS;
    o->transit = o->mine = NULL;
    o->send = NULL;
    o->leader = strata_net_leader(net, net->my_node, coll == STRATA_COLL_ALLGATHER ? -1 : a->root);
    o->local_root = net->node_rank[o->leader];
    switch (coll) {
    case STRATA_COLL_GATHER:
        strata_task_init(&o->op, net->node_plane, gather_progress);
        gather_start(o);
        break;
    case STRATA_COLL_SCATTER:
        strata_task_init(&o->op, net->node_plane, scatter_progress);
        o->rc = scatter_start(o);
        break;
    default:
        strata_task_init(&o->op, net->node_plane, allgather_progress);
        allgather_start(o);
        break;
    }
}

int strata_net_block(struct strata_net *net, int coll, const struct strata_block_args *a,
                     char *desc, size_t desclen)
{
    struct strata_net_block_task o;
    strata_net_block_start(&o, net, coll, a, desc, desclen);
    return strata_task_run(&o.op);
}
