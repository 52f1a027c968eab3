/* Gatherv, Scatterv, Allgatherv and Alltoallv across nodes, with nobody
 * using counts it was not given.
 *
 * As for the block collectives (net_block.c), each node's blocks cross the
 * network as one bundle: the node's blocks one after the other in the
 * node's rank order, with no gaps.  What a v-collective adds is that the
 * bundle's layout (each member's length) is known only where the standard
 * puts the counts:
 *
 *  Gatherv    the root knows every length, every other rank its own.  A
 *             node other than the root's first gathers its members' lengths
 *             to its leader (a node Gatherv of one 8-byte word per rank),
 *             then the data (a node Gatherv into the bundle), and the
 *             leader streams the bundle to the root.  The root, which
 *             knows every bundle's length, posts the receives first,
 *             gathers its own node straight into the user's buffer, then
 *             puts each received block at its displacement.
 *  Scatterv   the mirror image: the root packs every other node's bundle
 *             and streams it to that node's leader, which learns the
 *             bundle's length from its members (the same lengths gather)
 *             and scatters it inside the node; the root's node scatters
 *             straight from the user's buffer.
 *  Allgatherv every rank knows every length (the standard gives recvcounts
 *             to all).  Each leader gathers its node's bundle into a
 *             node-ordered copy of the whole result, leaders exchange
 *             bundles all with all, the leader broadcasts the whole copy
 *             inside its node, and every rank puts each block at its own
 *             displacement.
 *  Alltoallv  one level, no leaders: every rank knows the length of each
 *             block it sends and receives, which is all a point-to-point
 *             message needs.  Blocks between ranks of one node go through
 *             the node's plane (a node Alltoallv of the node's members'
 *             blocks); blocks to and from other nodes' ranks go straight
 *             over the host MPI, one stream per peer, posted in pairwise
 *             order (receives from rank - i, sends to rank + i) so that
 *             the peers' first segments are spread; the node part and
 *             the streams advance in the same steps.  A leader level
 *             would need each node's counts per destination node (a node
 *             gather, a leaders' exchange and a node scatter of counts
 *             before any data) and two more copies of every byte that
 *             leaves a node; it pays only by merging many small messages
 *             on a real network, and the direct form already moves each
 *             byte between nodes once, with no copy (docs/DESIGN.md).
 *             In place, the outgoing blocks are copied once into private
 *             memory first (they share recv with the incoming ones).
 *
 * The node parts are the node engine's (vblock.c), its algorithm chosen
 * there by the cost model from the largest block of the node, identical on
 * the node's ranks.
 *
 * Resumable operations (coll/task.h): node parts are sub-operations, the
 * leaders' streams (engine.h) advance one pass per step. */
#include "net/net.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/select.h"
#include "util/colls.h"
#include "util/log.h"

enum { TAG_GATHERV = 11, TAG_SCATTERV = 12, TAG_ALLGATHERV = 13, TAG_ALLTOALLV = 14 };

static struct strata_net_v_task *v_of(struct strata_task *op)
{
    return (struct strata_net_v_task *)((char *)op - offsetof(struct strata_net_v_task, op));
}

static void *alloc_or_abort(struct strata_net *net, size_t bytes)
{
    void *m = malloc(bytes ? bytes : 1);
    if (!m) {
        strata_error("out of memory for a v-collective across nodes");
        PMPI_Abort(net->comm, 1);
    }
    return m;
}

static unsigned char *staging_or_abort(struct strata_net *net, enum strata_net_buffer which,
                                       size_t bytes)
{
    unsigned char *t = strata_net_staging(net, which, bytes ? bytes : 1);
    if (!t) {
        strata_error("out of memory for %zu bytes of a v-collective across nodes", bytes);
        PMPI_Abort(net->comm, 1);
    }
    return t;
}

/* A stream cut in `seg`-byte segments, `limit` in flight (a send: all
 * its bytes ready). */
static void add_stream(struct strata_net *net, int is_send, int peer, int tag, void *buf,
                       size_t bytes, size_t seg, int limit)
{
    if (strata_engine_add(&net->engine, is_send, peer, tag, buf, bytes, seg, limit) < 0) {
        strata_error("out of memory starting a v-collective across nodes");
        PMPI_Abort(net->comm, 1);
    }
    if (is_send) strata_stream_ready(&net->engine, net->engine.nstreams - 1, bytes);
}

/* The same with the leaders' segments and limits (STRATA_NET_*). */
static void add_or_abort(struct strata_net *net, int is_send, int peer, int tag, void *buf,
                         size_t bytes)
{
    const struct strata_tuning *tu = strata_tuning();
    add_stream(net, is_send, peer, tag, buf, bytes, tu->net_segment,
               is_send ? tu->net_sends : tu->net_recvs);
}

/* Runs the engine until every stream completed, one pass per step ("not
 * yet" when nothing moved, so the run loop's spin-then-yield applies). */
#define AWAIT_ENGINE(op, e)                                                                \
    for (;;) {                                                                             \
        int moved_, rc_ = strata_engine_progress(e, &moved_);                             \
        if (rc_ != MPI_SUCCESS) return rc_;                                                \
        if (strata_engine_complete(e)) break;                                              \
        if (moved_) {                                                                      \
            (op)->waits++;                                                                 \
        } else {                                                                           \
            (op)->waiting_for = strata_engine_waiting_for(e);                              \
            STRATA_TASK_YIELD(op);                                                         \
        }                                                                                  \
    }

/* The node engine's choice, once the node's ranks agree on their largest
 * block (as the entry point's, on the node's plane). */
static void choose(struct strata_block_task *o)
{
    struct strata_choice ch;
    strata_select(o->op.p, o->v.coll, o->v.agreed, &ch);
    o->v.al = ch.al;
    o->v.single_copy = strata_vblock_path(ch.al);
    o->k = ch.k;
    o->v.predicted_us = ch.predicted_us;
    o->v.why = ch.why;
    o->v.rule = ch.rule;
}

/* This rank's node layout: four [node size] arrays, zeroed. */
static void node_layout_clear(struct strata_net_v_task *o)
{
    memset(o->arrays, 0, 4 * (size_t)o->nsize * sizeof(size_t));
}

/* Starts a node v-collective on the layout in o->arrays. */
static void node_start(struct strata_net_v_task *o, int coll, const unsigned char *send,
                       unsigned char *recv)
{
    size_t *arr = o->arrays, n = (size_t)o->nsize;
    o->nlay = (struct strata_vlayout){arr, arr + n, arr + 2 * n, arr + 3 * n, NULL, NULL};
    struct strata_block_args a = {send, recv, 0, o->local_root, 1, &o->nlay};
    strata_vblock_start(&o->node, o->net->node_plane, coll, &a, -1, choose);
}

static size_t *out_len(struct strata_net_v_task *o) { return o->arrays; }
static size_t *out_off(struct strata_net_v_task *o) { return o->arrays + o->nsize; }
static size_t *in_len(struct strata_net_v_task *o) { return o->arrays + 2 * (size_t)o->nsize; }
static size_t *in_off(struct strata_net_v_task *o) { return o->arrays + 3 * (size_t)o->nsize; }

/* The rank of node n's i-th member. */
static int member(const struct strata_net *net, int n, int i)
{
    return net->members[net->node_start[n] + i];
}

/* Bytes of node n's bundle, from lengths every rank of the call was given
 * (the root's, or Allgatherv's recvcounts). */
static size_t bundle_bytes(const struct strata_net *net, const size_t *len, int n)
{
    size_t b = 0;
    for (int i = net->node_start[n]; i < net->node_start[n + 1]; i++) b += len[net->members[i]];
    return b;
}

/* ---- Lengths: a node Gatherv of one word per rank to the leader, into
 * o->lens ([node size], the leader's). */
static void lengths_start(struct strata_net_v_task *o)
{
    node_layout_clear(o);
    out_len(o)[o->local_root] = sizeof o->word;
    if (o->leader == o->net->rank)
        for (int i = 0; i < o->nsize; i++) {
            in_len(o)[i] = sizeof o->word;
            in_off(o)[i] = (size_t)i * sizeof o->word;
        }
    node_start(o, STRATA_COLL_GATHERV, (const unsigned char *)&o->word,
               o->leader == o->net->rank ? (unsigned char *)o->lens : NULL);
}

/* ---- Gatherv */

static int gatherv_progress(struct strata_task *op)
{
    struct strata_net_v_task *o = v_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_vlayout *v = o->a.v;
    int root = o->a.root, me = net->my_node, at_root = net->rank == root;
    STRATA_TASK_BEGIN(op);
    if (o->rc != MPI_SUCCESS) return o->rc; /* the start's first engine pass failed */
    if (!at_root && net->node_plane && me != net->node_of[root]) {
        lengths_start(o);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    }
    if (net->node_plane) {
        node_layout_clear(o);
        out_len(o)[o->local_root] = v->out_len[root];
        out_off(o)[o->local_root] = v->out_off[root];
        if (at_root) {
            for (int i = 0; i < o->nsize; i++) {
                in_len(o)[i] = v->in_len[member(net, me, i)];
                in_off(o)[i] = v->in_off[member(net, me, i)];
            }
        } else if (net->rank == o->leader) {
            size_t at = 0;
            for (int i = 0; i < o->nsize; i++) {
                in_len(o)[i] = (size_t)o->lens[i];
                in_off(o)[i] = at;
                at += (size_t)o->lens[i];
            }
            o->bundle = staging_or_abort(net, STRATA_NET_TRANSIT, at);
            o->bundle_bytes = at;
        }
        /* The root in place: its block is already at its displacement. */
        node_start(o, STRATA_COLL_GATHERV, o->a.send,
                   at_root ? o->a.recv : net->rank == o->leader ? o->bundle : NULL);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else if (at_root) {
        if (o->a.send && v->in_len[root])
            memcpy(o->a.recv + v->in_off[root], o->a.send + v->out_off[root], v->in_len[root]);
    } else {
        /* Alone on its node: the bundle is this rank's block. */
        o->bundle_bytes = v->out_len[root];
        o->bundle = o->bundle_bytes ? (unsigned char *)o->a.send + v->out_off[root] : NULL;
    }
    if (net->rank == o->leader && !at_root) {
        strata_engine_reset(e, net->dup);
        strata_engine_count_as(e, STRATA_COLL_GATHERV);
        add_or_abort(net, 1, root, TAG_GATHERV, o->bundle, o->bundle_bytes);
    }
    if (net->rank == o->leader) {
        AWAIT_ENGINE(op, e);
        if (at_root) {
            /* Each block from the node-ordered bundles to its displacement. */
            size_t at = 0;
            for (int n = 0; n < net->nnodes; n++) {
                if (n == me) continue;
                for (int i = 0; i < strata_net_node_size(net, n); i++) {
                    int q = member(net, n, i);
                    if (v->in_len[q]) memcpy(o->a.recv + v->in_off[q], o->transit + at, v->in_len[q]);
                    at += v->in_len[q];
                }
            }
        }
    }
    free(o->arrays); /* freed by the operation: one run by steps has no caller that frees */
    o->arrays = NULL;
    STRATA_TASK_END(op);
}

/* The root's staging for the other nodes' bundles (lens: each rank's bytes
 * on the wire) and the engine that moves them, counted as coll. */
static struct strata_engine *root_transit_open(struct strata_net_v_task *o, const size_t *lens,
                                               int coll)
{
    struct strata_net *net = o->net;
    size_t total = 0;
    for (int n = 0; n < net->nnodes; n++)
        if (n != net->my_node) total += bundle_bytes(net, lens, n);
    o->transit = staging_or_abort(net, STRATA_NET_TRANSIT, total);
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, coll);
    return e;
}

static int gatherv_start(struct strata_net_v_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_vlayout *v = o->a.v;
    int root = o->a.root, me = net->my_node;
    if (net->rank != root) return MPI_SUCCESS;
    /* The root receives every other node's bundle into private memory,
     * node after node; receives first, so bundles land while its node
     * gathers. */
    struct strata_engine *e = root_transit_open(o, v->in_len, STRATA_COLL_GATHERV);
    size_t at = 0;
    for (int n = 0; n < net->nnodes; n++) {
        if (n == me) continue;
        size_t b = bundle_bytes(net, v->in_len, n);
        add_or_abort(net, 0, strata_net_leader(net, n, root), TAG_GATHERV, o->transit + at, b);
        at += b;
    }
    int moved;
    return strata_engine_progress(e, &moved); /* the receives are posted */
}

/* ---- Scatterv */

static int scatterv_progress(struct strata_task *op)
{
    struct strata_net_v_task *o = v_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_vlayout *v = o->a.v;
    int root = o->a.root, me = net->my_node, at_root = net->rank == root;
    STRATA_TASK_BEGIN(op);
    if (o->rc != MPI_SUCCESS) return o->rc; /* the start's first engine pass failed */
    if (!at_root && me != net->node_of[root]) {
        if (net->node_plane) {
            lengths_start(o);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        }
        if (net->rank == o->leader) {
            size_t total = 0;
            if (net->node_plane)
                for (int i = 0; i < o->nsize; i++) total += (size_t)o->lens[i];
            else
                total = v->in_len[root];
            /* Alone on its node, the bundle lands in the user's buffer. */
            o->bundle = net->node_plane ? staging_or_abort(net, STRATA_NET_TRANSIT, total)
                        : total ? o->a.recv + v->in_off[root]
                                : NULL;
            o->bundle_bytes = total;
            strata_engine_reset(e, net->dup);
            strata_engine_count_as(e, STRATA_COLL_SCATTERV);
            add_or_abort(net, 0, root, TAG_SCATTERV, o->bundle, total);
            AWAIT_ENGINE(op, e);
        }
    }
    if (net->node_plane) {
        node_layout_clear(o);
        in_len(o)[o->local_root] = v->in_len[root];
        in_off(o)[o->local_root] = v->in_off[root];
        const unsigned char *send = NULL;
        if (at_root) {
            for (int i = 0; i < o->nsize; i++) {
                out_len(o)[i] = v->out_len[member(net, me, i)];
                out_off(o)[i] = v->out_off[member(net, me, i)];
            }
            send = o->a.send;
        } else if (net->rank == o->leader) {
            size_t at = 0;
            for (int i = 0; i < o->nsize; i++) {
                out_len(o)[i] = (size_t)o->lens[i];
                out_off(o)[i] = at;
                at += (size_t)o->lens[i];
            }
            send = o->bundle;
        }
        /* The root in place: recv NULL, its block stays where it is. */
        node_start(o, STRATA_COLL_SCATTERV, send, o->a.recv);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else if (at_root && o->a.recv && v->in_len[root]) {
        memcpy(o->a.recv + v->in_off[root], o->a.send + v->out_off[root], v->in_len[root]);
    }
    if (at_root) AWAIT_ENGINE(op, e);
    free(o->arrays); /* as in gatherv_progress */
    o->arrays = NULL;
    STRATA_TASK_END(op);
}

static int scatterv_start(struct strata_net_v_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_vlayout *v = o->a.v;
    int root = o->a.root, me = net->my_node;
    if (net->rank != root) return MPI_SUCCESS;
    /* The root packs every other node's bundle, node after node, and
     * streams each while its own node scatters. */
    struct strata_engine *e = root_transit_open(o, v->out_len, STRATA_COLL_SCATTERV);
    size_t at = 0;
    for (int n = 0; n < net->nnodes; n++) {
        if (n == me) continue;
        size_t start = at;
        for (int i = 0; i < strata_net_node_size(net, n); i++) {
            int q = member(net, n, i);
            if (v->out_len[q]) memcpy(o->transit + at, o->a.send + v->out_off[q], v->out_len[q]);
            at += v->out_len[q];
        }
        add_or_abort(net, 1, strata_net_leader(net, n, root), TAG_SCATTERV, o->transit + start,
                     at - start);
    }
    int moved;
    return strata_engine_progress(e, &moved);
}

/* ---- Allgatherv */

static int allgatherv_progress(struct strata_task *op)
{
    struct strata_net_v_task *o = v_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_vlayout *v = o->a.v;
    int me = net->my_node, leader = net->rank == o->leader;
    STRATA_TASK_BEGIN(op);
    /* This rank's block: in place, at its own displacement. */
    o->send = o->a.send ? o->a.send + v->out_off[0] : o->a.recv + v->in_off[net->rank];
    if (net->node_plane) {
        node_layout_clear(o);
        out_len(o)[o->local_root] = v->in_len[net->rank];
        if (leader) {
            size_t at = o->node_at[me];
            for (int i = 0; i < o->nsize; i++) {
                in_len(o)[i] = v->in_len[member(net, me, i)];
                in_off(o)[i] = at;
                at += in_len(o)[i];
            }
        }
        node_start(o, STRATA_COLL_GATHERV, o->send, leader ? o->transit : NULL);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    } else if (v->in_len[net->rank]) {
        memcpy(o->transit + o->node_at[me], o->send, v->in_len[net->rank]);
    }
    if (leader) {
        strata_engine_reset(e, net->dup);
        strata_engine_count_as(e, STRATA_COLL_ALLGATHERV);
        for (int n = 0; n < net->nnodes; n++) {
            if (n == me) continue;
            int peer = strata_net_leader(net, n, -1);
            add_or_abort(net, 0, peer, TAG_ALLGATHERV, o->transit + o->node_at[n],
                         o->node_at[n + 1] - o->node_at[n]);
            add_or_abort(net, 1, peer, TAG_ALLGATHERV, o->transit + o->node_at[me],
                         o->node_at[me + 1] - o->node_at[me]);
        }
        AWAIT_ENGINE(op, e);
    }
    if (net->node_plane && o->node_at[net->nnodes]) {
        strata_bcast_start(&o->bcast, net->node_plane, o->transit, o->node_at[net->nnodes],
                           o->local_root);
        STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    }
    /* Every block from the node-ordered copy to its displacement (this
     * rank's own too: the same bytes, unless it is in place already). */
    for (int n = 0; n < net->nnodes; n++) {
        size_t at = o->node_at[n];
        for (int i = 0; i < strata_net_node_size(net, n); i++) {
            int q = member(net, n, i);
            if (v->in_len[q] && !(q == net->rank && !o->a.send))
                memcpy(o->a.recv + v->in_off[q], o->transit + at, v->in_len[q]);
            at += v->in_len[q];
        }
    }
    free(o->arrays); /* as in gatherv_progress */
    o->arrays = NULL;
    STRATA_TASK_END(op);
}

static void allgatherv_start(struct strata_net_v_task *o)
{
    struct strata_net *net = o->net;
    /* node_at[n]: where node n's bundle starts in the node-ordered copy. */
    o->node_at[0] = 0;
    for (int n = 0; n < net->nnodes; n++)
        o->node_at[n + 1] = o->node_at[n] + bundle_bytes(net, o->a.v->in_len, n);
    o->transit = staging_or_abort(net, STRATA_NET_TRANSIT, o->node_at[net->nnodes]);
}

/* ---- Alltoallv */

/* Offsets of this rank's outgoing blocks: the private copy's in place,
 * else the caller's. */
static const size_t *sent_at(const struct strata_net_v_task *o)
{
    return o->sent_at ? o->sent_at : o->a.v->out_off;
}

/* Alltoallv's blocks go whole, one message each (segments of up to 1 GiB,
 * for int counts): nothing is forwarded, so cutting a block would only add
 * messages and in-flight limits to what the host MPI pipelines itself
 * (measured: 1 MiB blocks in 128 KiB segments, 2 in flight, were slower
 * than the host's own Alltoallv). */
#define ALLTOALLV_SEGMENT ((size_t)1 << 30)

/* The streams to and from every rank of another node, pairwise order;
 * zero-length blocks need no message (both ends know the length). */
static void alltoallv_streams(struct strata_net_v_task *o)
{
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_vlayout *v = o->a.v;
    const size_t *soff = sent_at(o);
    int size = net->size, me = net->rank;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, STRATA_COLL_ALLTOALLV);
    for (int i = 1; i < size; i++) {
        int q = (me + size - i) % size;
        if (net->node_of[q] != net->my_node && v->in_len[q])
            add_stream(net, 0, q, TAG_ALLTOALLV, o->a.recv + v->in_off[q], v->in_len[q],
                       ALLTOALLV_SEGMENT, 1);
    }
    for (int i = 1; i < size; i++) {
        int q = (me + i) % size;
        if (net->node_of[q] != net->my_node && v->out_len[q])
            add_stream(net, 1, q, TAG_ALLTOALLV, (unsigned char *)o->send + soff[q],
                       v->out_len[q], ALLTOALLV_SEGMENT, 1);
    }
}

static int alltoallv_progress(struct strata_task *op)
{
    struct strata_net_v_task *o = v_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    const struct strata_vlayout *v = o->a.v;
    int me = net->my_node;
    STRATA_TASK_BEGIN(op);
    o->node_done = net->node_plane == NULL;
    /* The messages first, so they fly while the node part runs (the node
     * part reads the outgoing blocks and writes only the node's incoming
     * ones: in place, it reads the private copy). */
    alltoallv_streams(o);
    {
        int moved, rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
    }
    if (net->node_plane) {
        /* The node's members' blocks, in node order. */
        const size_t *soff = sent_at(o);
        for (int i = 0; i < o->nsize; i++) {
            int q = member(net, me, i);
            out_len(o)[i] = v->out_len[q];
            out_off(o)[i] = soff[q];
            in_len(o)[i] = v->in_len[q];
            in_off(o)[i] = v->in_off[q];
        }
        node_start(o, STRATA_COLL_ALLTOALLV, o->send, o->a.recv);
    } else if (o->a.send && v->in_len[net->rank]) {
        /* Alone on its node: its own block (in place it is there already). */
        memcpy(o->a.recv + v->in_off[net->rank], o->send + sent_at(o)[net->rank],
               v->in_len[net->rank]);
    }
    /* The node part and the streams in the same steps, while both run. */
    while (!o->node_done) {
        int rc = strata_task_step(&o->node.op), moved;
        op->waits += o->node.op.waits;
        o->node.op.waits = 0;
        if (rc == MPI_SUCCESS) o->node_done = 1;
        else if (rc != STRATA_TASK_PENDING) return rc;
        int erc = strata_engine_progress(e, &moved);
        if (erc != MPI_SUCCESS) return erc;
        /* Only the node part left: its own waits (which may block on a flag). */
        if (o->node_done || strata_engine_complete(e)) break;
        if (moved) op->waits++;
        op->waiting_for = o->node.op.waiting_for ? o->node.op.waiting_for
                                                 : strata_engine_waiting_for(e);
        STRATA_TASK_YIELD(op);
    }
    if (!o->node_done) STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    AWAIT_ENGINE(op, e);
    free(o->arrays); /* as in gatherv_progress */
    o->arrays = NULL;
    STRATA_TASK_END(op);
}

/* In place (a->send NULL): recv holds the outgoing blocks and takes the
 * incoming ones, so the outgoing ones are read from a private copy, packed
 * in rank order. */
static void alltoallv_start(struct strata_net_v_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_vlayout *v = o->a.v;
    o->send = o->a.send;
    o->sent_at = NULL;
    if (o->a.send) return;
    size_t total = 0;
    o->sent_at = o->node_at + net->nnodes + 1;
    for (int q = 0; q < net->size; q++) o->sent_at[q] = total, total += v->out_len[q];
    unsigned char *copy = staging_or_abort(net, STRATA_NET_TRANSIT, total);
    for (int q = 0; q < net->size; q++)
        if (v->out_len[q]) memcpy(copy + o->sent_at[q], o->a.recv + v->out_off[q], v->out_len[q]);
    o->send = copy;
}

void strata_net_vblock_start(struct strata_net_v_task *o, struct strata_net *net, int coll,
                             const struct strata_block_args *a, char *desc, size_t desclen)
{
    int rooted = coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV;
    o->net = net;
    o->a = *a;
    o->coll = coll;
    o->rc = MPI_SUCCESS;
    o->transit = o->bundle = NULL;
    o->bundle_bytes = 0;
    o->leader = strata_net_leader(net, net->my_node, rooted ? a->root : -1);
    o->local_root = net->node_rank[o->leader];
    o->nsize = strata_net_node_size(net, net->my_node);
    o->word = 0;
    o->sent_at = NULL;
    /* The four node-layout arrays, this rank's word of the lengths gather,
     * the leader's gathered words, (Allgatherv) the bundles' starts and
     * (Alltoallv in place) the private copy's offsets. */
    size_t n = (size_t)o->nsize, words = 4 * n + n + (size_t)net->nnodes + 1;
    if (coll == STRATA_COLL_ALLTOALLV) words += (size_t)net->size;
    o->arrays = alloc_or_abort(net, words * sizeof(size_t));
    o->lens = (uint64_t *)(o->arrays + 4 * n);
    o->node_at = o->arrays + 5 * n;
    switch (coll) {
    case STRATA_COLL_GATHERV:
        o->word = a->v->out_len[a->root];
        strata_task_init(&o->op, net->node_plane, gatherv_progress);
        o->rc = gatherv_start(o);
        break;
    case STRATA_COLL_SCATTERV:
        o->word = a->v->in_len[a->root];
        strata_task_init(&o->op, net->node_plane, scatterv_progress);
        o->rc = scatterv_start(o);
        break;
    case STRATA_COLL_ALLTOALLV:
        strata_task_init(&o->op, net->node_plane, alltoallv_progress);
        alltoallv_start(o);
        break;
    default:
        strata_task_init(&o->op, net->node_plane, allgatherv_progress);
        allgatherv_start(o);
        break;
    }
    if (desc && coll == STRATA_COLL_ALLTOALLV) {
        snprintf(desc, desclen, "across nodes: one level over %d nodes, node Alltoallv on the "
                 "plane beside point-to-point streams to every other node's ranks (pairwise "
                 "order, no leaders)%s", net->nnodes, o->a.send ? "" : ", in place from a "
                 "private copy");
    } else if (desc) {
        const char *how = coll == STRATA_COLL_GATHERV
            ? "node Gatherv of lengths and data to each leader, bundles streamed to the root"
            : coll == STRATA_COLL_SCATTERV
            ? "bundles streamed from the root, node Gatherv of lengths and node Scatterv"
            : "node Gatherv to each leader, leaders exchange bundles all with all, node "
              "broadcast of the whole result";
        snprintf(desc, desclen, "across nodes: two levels over %d nodes, %s", net->nnodes, how);
    }
}

int strata_net_vblock(struct strata_net *net, int coll, const struct strata_block_args *a,
                      char *desc, size_t desclen)
{
    struct strata_net_v_task o;
    strata_net_vblock_start(&o, net, coll, a, desc, desclen);
    int rc = strata_task_run(&o.op);
    free(o.arrays); /* NULL unless the operation ended early with an error */
    return rc;
}
