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
 * then broadcasts the result from it (net_bcast.c), pipelined the same way. */
#include "net/net.h"

#include <stdio.h>
#include <string.h>

#include "coll/select.h"
#include "context/context.h"
#include "net/net_tree.h"
#include "util/log.h"

enum { TAG_REDUCE = 2 };

/* Bytes of elements [first, first + n) as they lie in a buffer: the last
 * element of the vector counts up to its true extent only. */
static size_t span(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* acc = acc op operand over elements [first, first + n).  The vector's last
 * element may end in padding the buffers do not have (pair types): it is
 * combined in a full-sized copy, and only its true extent is written back. */
static void combine(const struct strata_reduce_args *a, unsigned char *acc,
                    const unsigned char *operand, size_t first, size_t n)
{
    int tail = a->true_extent < a->extent && first + n == a->count;
    if (n - (size_t)tail) a->fn(acc, acc, operand, n - (size_t)tail);
    if (!tail) return;
    /* Predefined types only reach here: 32 bytes (long double + int) at most. */
    _Alignas(64) unsigned char x[64], y[64];
    size_t last = (n - 1) * a->extent;
    memcpy(x, acc + last, a->true_extent);
    memcpy(y, operand + last, a->true_extent);
    a->fn(x, x, y, 1);
    memcpy(acc + last, x, a->true_extent);
}

/* One segment's arguments for the node's reduction to its leader. */
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

/* The reduction to `root`, leaving the result in `acc` at the root; send is
 * this rank's input (NULL: it is already in acc). */
static int reduce_to(struct strata_ctx *ctx, const struct strata_reduce_args *a, const void *send,
                     void *acc, int root, char *desc, size_t desclen)
{
    struct strata_net *net = ctx->net;
    const struct strata_tuning *tu = strata_tuning();
    struct strata_plane *np = net->node->plane;
    int leader = strata_net_leader(net, net->my_node, root);
    int local_root = net->node_rank[leader];
    size_t seg_elems = tu->net_segment / a->extent ? tu->net_segment / a->extent : 1;
    size_t total = span(a, 0, a->count);
    struct strata_net_tree t;
    strata_net_tree_choose(strata_select_model(), net->nnodes, total, seg_elems * a->extent, &t);
    if (desc) {
        char name[32];
        snprintf(desc, desclen, "across nodes: each node reduces %zu-element segments to its "
                 "leader, leaders combine up a %s tree of %d nodes (%.1f us predicted)",
                 seg_elems, strata_net_tree_name(&t, name, sizeof name), net->nnodes,
                 t.predicted_us);
    }
    if (ctx->rank != leader) {
        /* Not a leader: only the node's reductions, segment by segment. */
        for (size_t first = 0; first < a->count; first += seg_elems) {
            size_t n = a->count - first < seg_elems ? a->count - first : seg_elems;
            struct strata_reduce_args seg;
            segment_args(a, &seg, first, n, send, NULL, local_root);
            int rc = strata_reduce(np, &seg);
            if (rc != MPI_SUCCESS) return rc;
        }
        return MPI_SUCCESS;
    }

    int parent_node, *children = net->tree_buf;
    int nchildren = strata_net_tree_links(&t, net->nnodes, net->node_of[root], net->my_node,
                                          &parent_node, children);
    unsigned char *from_children = strata_net_staging(net, STRATA_NET_TRANSIT, (size_t)nchildren * total);
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    int bad = nchildren && !from_children;
    for (int i = 0; i < nchildren && !bad; i++)
        bad = strata_engine_add(e, 0, strata_net_leader(net, children[i], root), TAG_REDUCE,
                                from_children + (size_t)i * total, total,
                                seg_elems * a->extent, tu->net_recvs) != i;
    int up = -1;
    if (!bad && parent_node >= 0) {
        up = strata_engine_add(e, 1, strata_net_leader(net, parent_node, root), TAG_REDUCE, acc,
                               total, seg_elems * a->extent, tu->net_sends);
        bad = up < 0;
    }
    if (bad) {
        strata_error("out of memory starting a reduction across nodes");
        PMPI_Abort(ctx->comm, 1);
    }

    size_t reduced = 0, combined = 0; /* elements reduced in the node / with the children */
    for (;;) {
        int moved, rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
        /* Combine every segment the node has reduced and every child has sent. */
        while (combined < reduced) {
            size_t n = reduced - combined < seg_elems ? reduced - combined : seg_elems;
            size_t end = span(a, 0, combined + n), off = combined * a->extent;
            int ready = 1;
            for (int i = 0; i < nchildren; i++) ready &= e->s[i].done >= end;
            if (!ready) break;
            for (int i = 0; i < nchildren; i++)
                combine(a, (unsigned char *)acc + off, from_children + (size_t)i * total + off,
                        combined, n);
            combined += n;
            if (up >= 0) strata_stream_ready(e, up, end);
            moved = 1;
        }
        if (reduced < a->count) {
            /* The node's next segment; the network moves on meanwhile only
             * through the progress calls around it (MPI has no other). */
            size_t n = a->count - reduced < seg_elems ? a->count - reduced : seg_elems;
            struct strata_reduce_args seg;
            segment_args(a, &seg, reduced, n, send, acc, local_root);
            if (np) rc = strata_reduce(np, &seg);
            else if (seg.sendbuf) memcpy(seg.recvbuf, seg.sendbuf, span(a, reduced, n));
            if (rc != MPI_SUCCESS) return rc;
            reduced += n;
            continue;
        }
        if (combined == a->count && strata_engine_complete(e)) break;
        strata_engine_idle(e, moved);
    }
    return MPI_SUCCESS;
}

int strata_net_reduce(struct strata_ctx *ctx, const struct strata_reduce_args *a, char *desc,
                      size_t desclen)
{
    if (a->count == 0) {
        if (desc) snprintf(desc, desclen, "nothing to move");
        return MPI_SUCCESS;
    }
    struct strata_net *net = ctx->net;
    int leader = strata_net_leader(net, net->my_node, a->root);
    void *acc = NULL;
    if (ctx->rank == a->root) {
        acc = a->recvbuf;
    } else if (ctx->rank == leader) {
        /* A leader that is not the root holds its node's partial result in
         * private memory (its receive buffer is not significant). */
        acc = strata_net_staging(net, STRATA_NET_ACC, span(a, 0, a->count));
        if (!acc) {
            strata_error("out of memory for a reduction across nodes");
            PMPI_Abort(ctx->comm, 1);
        }
    }
    /* a->sendbuf is NULL only at the root (in place): the input is in acc. */
    return reduce_to(ctx, a, a->sendbuf, acc, a->root, desc, desclen);
}

int strata_net_allreduce(struct strata_ctx *ctx, const struct strata_reduce_args *a,
                         char *desc, size_t desclen)
{
    if (a->count == 0) {
        if (desc) snprintf(desc, desclen, "nothing to move");
        return MPI_SUCCESS;
    }
    /* Every rank has a receive buffer: leaders accumulate in it, and an
     * in-place rank's input is there already. */
    const void *send = a->sendbuf;
    struct strata_net *net = ctx->net;
    int leader = strata_net_leader(net, net->my_node, 0);
    if (!send && ctx->rank != leader) send = a->recvbuf;
    int rc = reduce_to(ctx, a, send, a->recvbuf, 0, desc, desclen);
    if (rc != MPI_SUCCESS) return rc;
    return strata_net_bcast(ctx, a->recvbuf, span(a, 0, a->count), 0, NULL, 0);
}
