/* Reduce and Allreduce across nodes.
 *
 * The vector is cut into segments.  For each segment, every node first
 * reduces it to its leader with the node's own algorithm (reduce.c: CMA,
 * every rank sharing the work); the leader then combines the partial
 * results its child nodes sent for that segment and sends the segment on
 * to its parent node, while the next segment is being reduced inside the
 * node: the tree is the broadcast's, run upwards.  Partial results of the
 * children are received ahead, up to STRATA_NET_RECVS segments per child.
 *
 * Combining order: at each leader, its own node's result first, then its
 * children in the tree's order, the same on every run (not the host MPI's
 * order: floating-point sums may round differently from it, as they may
 * between any two MPI libraries).  Allreduce reduces towards rank 0 and
 * then broadcasts the result from it (net_bcast.c), pipelined the same way.
 *
 * A resumable operation (coll/task.h): the node reductions run as
 * sub-operations, the engine one pass per step. */
#include "net/net.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "coll/select.h"
#include "net/net_tree.h"
#include "util/log.h"

/* Tags on the private duplicate: a child node's partial result, and a
 * node's own part from its second leader to its leader. */
enum { TAG_REDUCE = 2, TAG_NODE_PART = 7 };

/* Bytes of elements [first, first + n) as they lie in a buffer: the last
 * element of the vector counts up to its true extent only. */
static size_t span(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* out = x op y over elements [first, first + n) (out may be x).  The
 * vector's last element may end in padding the buffers do not have (pair
 * types): it is combined in full-sized copies, and only its true extent is
 * written back. */
static void combine(const struct strata_reduce_args *a, unsigned char *out,
                    const unsigned char *x, const unsigned char *y, size_t first, size_t n)
{
    int tail = a->true_extent < a->extent && first + n == a->count;
    if (n - (size_t)tail) strata_combine(a, out, x, y, n - (size_t)tail);
    if (!tail) return;
    /* Predefined types only reach here: 32 bytes (long double + int) at most. */
    _Alignas(64) unsigned char tx[64], ty[64];
    size_t last = (n - 1) * a->extent;
    memcpy(tx, x + last, a->true_extent);
    memcpy(ty, y + last, a->true_extent);
    strata_combine(a, tx, tx, ty, 1);
    memcpy(out + last, tx, a->true_extent);
}

/* One segment's arguments for a node reduction to `local_root`. */
static void segment_args(const struct strata_reduce_args *a, struct strata_reduce_args *seg,
                         size_t first, size_t n, const void *send, void *acc, int local_root)
{
    *seg = *a;
    size_t off = first * a->extent;
    seg->count = n;
    seg->sendbuf = send ? (const unsigned char *)send + off : NULL;
    seg->recvbuf = acc ? (unsigned char *)acc + off : NULL;
    seg->root = local_root;
    /* Only the vector's last element may lack its padding. */
    if (first + n < a->count) seg->true_extent = seg->extent;
}

/* Elements of the segment that starts at element `first`. */
static size_t segment_len(const struct strata_reduce_args *a, size_t first, size_t seg_elems)
{
    return a->count - first < seg_elems ? a->count - first : seg_elems;
}

/* The rank that reduces inside this node for a call rooted at `root`, when
 * the node uses two leaders: the node's second rank, while its first (the
 * leader) only talks to other nodes.  -1 when the node uses one leader: it
 * has fewer than three ranks, or the root lives on it but is not its first
 * rank (data then leaves the root directly, as in every other path). */
static int second_leader(const struct strata_net *net, int root)
{
    int first = net->members[net->node_start[net->my_node]];
    if (!net->double_leader || strata_net_leader(net, net->my_node, root) != first) return -1;
    return net->members[net->node_start[net->my_node] + 1];
}

static struct strata_net_reduce_task *net_reduce_of(struct strata_task *op)
{
    return (struct strata_net_reduce_task *)((char *)op - offsetof(struct strata_net_reduce_task, op));
}

static void out_of_memory(struct strata_net *net)
{
    strata_error("out of memory starting a reduction across nodes");
    PMPI_Abort(net->comm, 1);
}

/* Sets up the reduction to `root`, leaving the result in `acc` at the
 * root; send is this rank's input (NULL: it is already in acc).  acc is
 * significant at the leaders and at second leaders. */
static void reduce_to_start(struct strata_net_reduce_task *o, char *desc, size_t desclen)
{
    struct strata_net *net = o->net;
    const struct strata_tuning *tu = strata_tuning();
    const struct strata_reduce_args *a = &o->a;
    int root = o->root;
    o->leader = strata_net_leader(net, net->my_node, root);
    o->second = second_leader(net, root);
    o->seg_elems = tu->net_segment / a->extent ? tu->net_segment / a->extent : 1;
    o->total = span(a, 0, a->count);
    /* Incoming vectors lie a whole number of elements apart, so each starts
     * aligned for the reduction kernels (a padded type's last element is
     * shorter than its extent). */
    o->stride = a->count * a->extent;
    o->up = -1;
    o->nchildren = o->nin = 0;
    struct strata_net_tree t;
    strata_net_tree_choose(strata_select_model(), net->nnodes, o->total,
                           o->seg_elems * a->extent, &t);
    if (desc) {
        char name[32];
        snprintf(desc, desclen, "across nodes: each node reduces %zu-element segments to its "
                 "leader%s, leaders combine up a %s tree of %d nodes (%.1f us predicted)",
                 o->seg_elems, o->second >= 0 ? " (this node: a second leader reduces, the first "
                 "only talks to other nodes)" : "", strata_net_tree_name(&t, name, sizeof name),
                 net->nnodes, t.predicted_us);
    }
    struct strata_engine *e = &net->engine;
    if (net->rank != o->leader) {
        if (net->rank != o->second) return;
        /* The second leader is the workers' root: it reduces into acc and
         * streams each segment to the leader as it is done. */
        strata_engine_reset(e, net->dup);
        /* Traffic inside the node: counted at the leader's distance. */
        strata_engine_count_at(e, STRATA_COLL_REDUCE,
                               net->node_plane->dist[net->node_rank[o->leader]]);
        o->up = strata_engine_add(e, 1, o->leader, TAG_NODE_PART, o->acc, o->total,
                                  o->seg_elems * a->extent, tu->net_sends);
        if (o->up < 0) out_of_memory(net);
        return;
    }
    int parent_node, *children = net->tree_buf;
    o->nchildren = strata_net_tree_links(&t, net->nnodes, net->node_of[root], net->my_node,
                                         &parent_node, children);
    /* Incoming streams: each child node's partial result, then (two
     * leaders) the node's own, reduced by the second leader. */
    o->nin = o->nchildren + (o->second >= 0);
    o->from_in = strata_net_staging(net, STRATA_NET_TRANSIT, (size_t)o->nin * o->stride);
    strata_engine_reset(e, net->dup);
    /* Counted under the collective the application called (stats.c). */
    strata_engine_count_as(e, STRATA_COLL_REDUCE);
    int bad = o->nin && !o->from_in;
    for (int i = 0; i < o->nin && !bad; i++) {
        int peer = i < o->nchildren ? strata_net_leader(net, children[i], root) : o->second;
        bad = strata_engine_add(e, 0, peer, i < o->nchildren ? TAG_REDUCE : TAG_NODE_PART,
                                o->from_in + (size_t)i * o->stride, o->total,
                                o->seg_elems * a->extent, tu->net_recvs) != i;
    }
    if (!bad && parent_node >= 0) {
        o->up = strata_engine_add(e, 1, strata_net_leader(net, parent_node, root), TAG_REDUCE,
                                  o->acc, o->total, o->seg_elems * a->extent, tu->net_sends);
        bad = o->up < 0;
    }
    if (bad) out_of_memory(net);
    /* Elements reduced in the node (by this rank, one leader) and combined
     * with what came in.  With two leaders the node's part arrives as a
     * stream and this rank never takes part in a node reduction. */
    o->reduced = o->second >= 0 ? a->count : 0;
    o->combined = 0;
}

/* Combines every segment the node has reduced and every stream has
 * brought: own or node result first, then the children in order.  Returns
 * whether anything was combined. */
static int combine_ready(struct strata_net_reduce_task *o)
{
    const struct strata_reduce_args *a = &o->a;
    struct strata_engine *e = &o->net->engine;
    const unsigned char *own = o->send ? (const unsigned char *)o->send
                                       : (const unsigned char *)o->acc;
    int any = 0;
    while (o->combined < o->reduced) {
        size_t n = segment_len(a, o->combined, o->seg_elems);
        size_t end = span(a, 0, o->combined + n), off = o->combined * a->extent;
        int ready = 1;
        for (int i = 0; i < o->nin; i++) ready &= e->s[i].done >= end;
        if (!ready) break;
        unsigned char *out = (unsigned char *)o->acc + off;
        if (o->second >= 0)
            combine(a, out, own + off, o->from_in + (size_t)o->nchildren * o->stride + off,
                    o->combined, n);
        for (int i = 0; i < o->nchildren; i++)
            combine(a, out, out, o->from_in + (size_t)i * o->stride + off, o->combined, n);
        o->combined += n;
        if (o->up >= 0) strata_stream_ready(e, o->up, end);
        any = 1;
    }
    return any;
}

static int net_reduce_progress(struct strata_task *op)
{
    struct strata_net_reduce_task *o = net_reduce_of(op);
    struct strata_net *net = o->net;
    struct strata_engine *e = &net->engine;
    struct strata_plane *np = net->node_plane;
    const struct strata_reduce_args *a = &o->a;
    int moved, rc;
    STRATA_TASK_BEGIN(op);
    if (a->count == 0) return MPI_SUCCESS; /* nothing to move */
    if (net->rank != o->leader && o->second < 0) {
        /* This rank's share of each segment's node reduction. */
        for (o->first = 0; o->first < a->count; o->first += o->seg_elems) {
            segment_args(a, &o->seg, o->first, segment_len(a, o->first, o->seg_elems), o->send,
                         NULL, net->node_rank[o->leader]);
            strata_reduce_start(&o->node, np, &o->seg);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        }
    } else if (net->rank != o->leader) {
        /* Workers of a two-leader node: the second leader is rank 0 of
         * their communicator and streams each reduced segment on. */
        for (o->first = 0; o->first < a->count; o->first += o->seg_elems) {
            segment_args(a, &o->seg, o->first, segment_len(a, o->first, o->seg_elems), o->send,
                         net->rank == o->second ? o->acc : NULL, 0);
            strata_reduce_start(&o->node, net->workers_plane, &o->seg);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
            if (net->rank != o->second) continue;
            strata_stream_ready(e, o->up,
                                span(a, 0, o->first + segment_len(a, o->first, o->seg_elems)));
            if ((rc = strata_engine_progress(e, &moved)) != MPI_SUCCESS) return rc;
        }
        while (net->rank == o->second && !strata_engine_complete(e)) {
            if ((rc = strata_engine_progress(e, &moved)) != MPI_SUCCESS) return rc;
            if (strata_engine_complete(e)) break;
            if (moved) {
                op->waits++;
            } else {
                op->waiting_for = strata_engine_waiting_for(e);
                STRATA_TASK_YIELD(op);
            }
        }
    } else {
        for (;;) {
            if ((rc = strata_engine_progress(e, &moved)) != MPI_SUCCESS) return rc;
            moved |= combine_ready(o);
            if (o->reduced < a->count) {
                /* The node's next segment; the network moves on meanwhile
                 * through the progress steps of this loop around it. */
                segment_args(a, &o->seg, o->reduced, segment_len(a, o->reduced, o->seg_elems),
                             o->send, o->acc, net->node_rank[o->leader]);
                if (np) {
                    strata_reduce_start(&o->node, np, &o->seg);
                    STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
                } else if (o->seg.sendbuf) {
                    memcpy(o->seg.recvbuf, o->seg.sendbuf,
                           span(a, o->reduced, segment_len(a, o->reduced, o->seg_elems)));
                }
                o->reduced += segment_len(a, o->reduced, o->seg_elems);
                continue;
            }
            if (o->combined == a->count && strata_engine_complete(e)) break;
            if (moved) {
                op->waits++;
            } else {
                op->waiting_for = strata_engine_waiting_for(e);
                STRATA_TASK_YIELD(op);
            }
        }
    }
    if (o->allreduce) {
        /* Allreduce: the result goes back from rank 0 (net_bcast.c). */
        strata_net_bcast_start(&o->bcast, net, a->recvbuf, span(a, 0, a->count), 0, NULL, 0);
        STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    }
    STRATA_TASK_END(op);
}

void strata_net_reduce_start(struct strata_net_reduce_task *o, struct strata_net *net,
                             const struct strata_reduce_args *a, char *desc, size_t desclen)
{
    strata_task_init(&o->op, net->node_plane, net_reduce_progress);
    o->net = net;
    o->a = *a;
    o->allreduce = a->root < 0;
    o->root = o->allreduce ? 0 : a->root;
    o->acc = NULL;
    if (a->count == 0) {
        if (desc) snprintf(desc, desclen, "nothing to move");
        return;
    }
    int leader = strata_net_leader(net, net->my_node, o->root);
    int second = second_leader(net, o->root);
    if (o->allreduce) {
        /* Every rank has a receive buffer: leaders accumulate in it, and an
         * in-place rank's input is there already. */
        o->send = a->sendbuf;
        if (!o->send && net->rank != leader && net->rank != second) o->send = a->recvbuf;
        o->acc = a->recvbuf;
    } else {
        if (net->rank == o->root) {
            o->acc = a->recvbuf;
        } else if (net->rank == leader || net->rank == second) {
            /* A leader that is not the root, and a second leader, hold
             * their node's partial result in private memory (their receive
             * buffers are not significant). */
            o->acc = strata_net_staging(net, STRATA_NET_ACC, span(a, 0, a->count));
            if (!o->acc) out_of_memory(net);
        }
        /* a->sendbuf is NULL only at the root (in place): the input is in acc. */
        o->send = a->sendbuf;
    }
    reduce_to_start(o, desc, desclen);
}

int strata_net_reduce(struct strata_net *net, const struct strata_reduce_args *a, char *desc,
                      size_t desclen)
{
    struct strata_net_reduce_task o;
    strata_net_reduce_start(&o, net, a, desc, desclen);
    return strata_task_run(&o.op);
}

int strata_net_allreduce(struct strata_net *net, const struct strata_reduce_args *a,
                         char *desc, size_t desclen)
{
    struct strata_net_reduce_task o;
    struct strata_reduce_args all = *a;
    all.root = -1; /* Allreduce: towards rank 0, then back */
    strata_net_reduce_start(&o, net, &all, desc, desclen);
    return strata_task_run(&o.op);
}
