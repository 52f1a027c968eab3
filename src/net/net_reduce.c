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
    if (n - (size_t)tail) a->fn(out, x, y, n - (size_t)tail);
    if (!tail) return;
    /* Predefined types only reach here: 32 bytes (long double + int) at most. */
    _Alignas(64) unsigned char tx[64], ty[64];
    size_t last = (n - 1) * a->extent;
    memcpy(tx, x + last, a->true_extent);
    memcpy(ty, y + last, a->true_extent);
    a->fn(tx, tx, ty, 1);
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

/* A rank that is not its node's leader: its share of each segment's node
 * reduction.  The second leader of a two-leader node is the workers' root:
 * it reduces into acc and streams each segment to the leader as it is done. */
static int reduce_in_node(struct strata_net *net, const struct strata_reduce_args *a,
                          const void *send, void *acc, int root, size_t seg_elems)
{
    int second = second_leader(net, root);
    if (second < 0) {
        int local_root = net->node_rank[strata_net_leader(net, net->my_node, root)];
        for (size_t first = 0; first < a->count; first += seg_elems) {
            struct strata_reduce_args seg;
            segment_args(a, &seg, first, segment_len(a, first, seg_elems), send, NULL, local_root);
            int rc = strata_reduce(net->node_plane, &seg);
            if (rc != MPI_SUCCESS) return rc;
        }
        return MPI_SUCCESS;
    }
    /* Workers: the second leader is rank 0 of their communicator. */
    struct strata_plane *wp = net->workers_plane;
    int is_second = net->rank == second;
    struct strata_engine *e = &net->engine;
    int up = -1;
    if (is_second) {
        strata_engine_reset(e, net->dup);
        int leader = strata_net_leader(net, net->my_node, root);
        /* Traffic inside the node: counted at the leader's distance. */
        strata_engine_count_at(e, STRATA_COLL_REDUCE, net->node_plane->dist[net->node_rank[leader]]);
        up = strata_engine_add(e, 1, leader, TAG_NODE_PART,
                               acc, span(a, 0, a->count), seg_elems * a->extent,
                               strata_tuning()->net_sends);
        if (up < 0) {
            strata_error("out of memory starting a reduction across nodes");
            PMPI_Abort(net->comm, 1);
        }
    }
    for (size_t first = 0; first < a->count; first += seg_elems) {
        size_t n = segment_len(a, first, seg_elems);
        struct strata_reduce_args seg;
        segment_args(a, &seg, first, n, send, is_second ? acc : NULL, 0);
        int rc = strata_reduce(wp, &seg);
        if (rc != MPI_SUCCESS) return rc;
        if (!is_second) continue;
        strata_stream_ready(e, up, span(a, 0, first + n));
        int moved;
        rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
    }
    while (is_second && !strata_engine_complete(e)) {
        int moved, rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
        strata_engine_idle(e, moved);
    }
    return MPI_SUCCESS;
}

/* The reduction to `root`, leaving the result in `acc` at the root; send is
 * this rank's input (NULL: it is already in acc).  acc is significant at
 * the leaders and at second leaders. */
static int reduce_to(struct strata_net *net, const struct strata_reduce_args *a, const void *send,
                     void *acc, int root, char *desc, size_t desclen)
{
    const struct strata_tuning *tu = strata_tuning();
    struct strata_plane *np = net->node_plane;
    int leader = strata_net_leader(net, net->my_node, root);
    int second = second_leader(net, root);
    size_t seg_elems = tu->net_segment / a->extent ? tu->net_segment / a->extent : 1;
    size_t total = span(a, 0, a->count);
    /* Incoming vectors lie a whole number of elements apart, so each starts
     * aligned for the reduction kernels (a padded type's last element is
     * shorter than its extent). */
    size_t stride = a->count * a->extent;
    struct strata_net_tree t;
    strata_net_tree_choose(strata_select_model(), net->nnodes, total, seg_elems * a->extent, &t);
    if (desc) {
        char name[32];
        snprintf(desc, desclen, "across nodes: each node reduces %zu-element segments to its "
                 "leader%s, leaders combine up a %s tree of %d nodes (%.1f us predicted)",
                 seg_elems, second >= 0 ? " (this node: a second leader reduces, the first "
                 "only talks to other nodes)" : "", strata_net_tree_name(&t, name, sizeof name),
                 net->nnodes, t.predicted_us);
    }
    if (net->rank != leader) return reduce_in_node(net, a, send, acc, root, seg_elems);

    int parent_node, *children = net->tree_buf;
    int nchildren = strata_net_tree_links(&t, net->nnodes, net->node_of[root], net->my_node,
                                          &parent_node, children);
    /* Incoming streams: each child node's partial result, then (two
     * leaders) the node's own, reduced by the second leader. */
    int nin = nchildren + (second >= 0);
    unsigned char *from_in = strata_net_staging(net, STRATA_NET_TRANSIT, (size_t)nin * stride);
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    /* Counted under the collective the application called (stats.c). */
    strata_engine_count_as(e, STRATA_COLL_REDUCE);
    int bad = nin && !from_in;
    for (int i = 0; i < nin && !bad; i++) {
        int peer = i < nchildren ? strata_net_leader(net, children[i], root) : second;
        bad = strata_engine_add(e, 0, peer, i < nchildren ? TAG_REDUCE : TAG_NODE_PART,
                                from_in + (size_t)i * stride, total, seg_elems * a->extent,
                                tu->net_recvs) != i;
    }
    int up = -1;
    if (!bad && parent_node >= 0) {
        up = strata_engine_add(e, 1, strata_net_leader(net, parent_node, root), TAG_REDUCE, acc,
                               total, seg_elems * a->extent, tu->net_sends);
        bad = up < 0;
    }
    if (bad) {
        strata_error("out of memory starting a reduction across nodes");
        PMPI_Abort(net->comm, 1);
    }
    /* Elements reduced in the node (by this rank, one leader) and combined
     * with what came in.  With two leaders the node's part arrives as a
     * stream and this rank never blocks in a node reduction. */
    size_t reduced = second >= 0 ? a->count : 0, combined = 0;
    const unsigned char *own = send ? (const unsigned char *)send : (const unsigned char *)acc;
    for (;;) {
        int moved, rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
        /* Combine every segment the node has reduced and every stream has
         * brought: own or node result first, then the children in order. */
        while (combined < reduced) {
            size_t n = segment_len(a, combined, seg_elems);
            size_t end = span(a, 0, combined + n), off = combined * a->extent;
            int ready = 1;
            for (int i = 0; i < nin; i++) ready &= e->s[i].done >= end;
            if (!ready) break;
            unsigned char *out = (unsigned char *)acc + off;
            if (second >= 0)
                combine(a, out, own + off, from_in + (size_t)nchildren * stride + off, combined, n);
            for (int i = 0; i < nchildren; i++)
                combine(a, out, out, from_in + (size_t)i * stride + off, combined, n);
            combined += n;
            if (up >= 0) strata_stream_ready(e, up, end);
            moved = 1;
        }
        if (reduced < a->count) {
            /* The node's next segment; the network moves on meanwhile only
             * through the progress calls around it (MPI has no other). */
            size_t n = segment_len(a, reduced, seg_elems);
            struct strata_reduce_args seg;
            segment_args(a, &seg, reduced, n, send, acc, net->node_rank[leader]);
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

int strata_net_reduce(struct strata_net *net, const struct strata_reduce_args *a, char *desc,
                      size_t desclen)
{
    if (a->count == 0) {
        if (desc) snprintf(desc, desclen, "nothing to move");
        return MPI_SUCCESS;
    }
    int leader = strata_net_leader(net, net->my_node, a->root);
    void *acc = NULL;
    if (net->rank == a->root) {
        acc = a->recvbuf;
    } else if (net->rank == leader || net->rank == second_leader(net, a->root)) {
        /* A leader that is not the root, and a second leader, hold their
         * node's partial result in private memory (their receive buffers
         * are not significant). */
        acc = strata_net_staging(net, STRATA_NET_ACC, span(a, 0, a->count));
        if (!acc) {
            strata_error("out of memory for a reduction across nodes");
            PMPI_Abort(net->comm, 1);
        }
    }
    /* a->sendbuf is NULL only at the root (in place): the input is in acc. */
    return reduce_to(net, a, a->sendbuf, acc, a->root, desc, desclen);
}

int strata_net_allreduce(struct strata_net *net, const struct strata_reduce_args *a,
                         char *desc, size_t desclen)
{
    if (a->count == 0) {
        if (desc) snprintf(desc, desclen, "nothing to move");
        return MPI_SUCCESS;
    }
    /* Every rank has a receive buffer: leaders accumulate in it, and an
     * in-place rank's input is there already. */
    const void *send = a->sendbuf;
    int leader = strata_net_leader(net, net->my_node, 0);
    if (!send && net->rank != leader && net->rank != second_leader(net, 0))
        send = a->recvbuf;
    int rc = reduce_to(net, a, send, a->recvbuf, 0, desc, desclen);
    if (rc != MPI_SUCCESS) return rc;
    return strata_net_bcast(net, a->recvbuf, span(a, 0, a->count), 0, NULL, 0);
}
