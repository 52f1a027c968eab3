/* Reduce_scatter(_block), Scan and Exscan across nodes: node parts on the
 * node's plane (reduce.c, scan.c, bcast.c), leaders over the host MPI's
 * point-to-point on the private duplicate.
 *
 * Reduce_scatter: every node reduces the whole vector to its leader (the
 * node reduction, every rank sharing the work); leader a sends leader b the
 * blocks of b's ranks (b's share), and receives its own node's share from
 * every other leader; it combines the shares in node order, then broadcasts
 * the node's share inside the node, where each rank copies its block.
 * Between nodes each byte of the vector crosses the network once, as in a
 * reduce-scatter among the leaders.
 *
 * Scan, Exscan (nodes whose ranks are consecutive, which the router checks:
 * node order is then rank order): the node's scan (Exscan: exclusive scan)
 * first; the node's last rank then holds its node's total T_a and sends it
 * to the leaders of all later nodes; leader b folds T_0 .. T_{b-1} in node
 * order into E_b, broadcasts it inside the node, and each rank puts E_b in
 * front of its node-local result (node 0 has nothing to add).
 *
 * Order: node results combine in node order (commutative ops only: the
 * router hands non-commutative user ops to the host across nodes), the same
 * on every run.  Resumable operations (coll/task.h): the node parts run as
 * sub-operations, the leaders' requests are tested once per step. */
#include "net/net.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/colls.h"
#include "util/log.h"

enum { TAG_RS_SHARE = 9, TAG_SCAN_TOTAL = 10 };

/* Whether every request of reqs[n] has completed (completed ones become
 * MPI_REQUEST_NULL); an error of the host MPI in *rc. */
static int requests_done(MPI_Request *reqs, int n, int *rc)
{
    int all = 1;
    *rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int flag = 1;
        if (reqs[i] != MPI_REQUEST_NULL) *rc = PMPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        if (*rc != MPI_SUCCESS) return 1;
        all &= flag;
    }
    return all;
}

/* Waits, one test per step, for o->nreq requests in o->reqs. */
#define AWAIT_REQUESTS(op, o)                                                              \
    while (!requests_done((o)->reqs, (o)->nreq, &(o)->rc)) {                               \
        (op)->waiting_for = 0;                                                             \
        STRATA_TASK_YIELD(op);                                                             \
    }                                                                                      \
    if ((o)->rc != MPI_SUCCESS) return (o)->rc

static void out_of_memory(struct strata_net *net, const char *what)
{
    strata_error("out of memory for %s across nodes", what);
    PMPI_Abort(net->comm, 1);
}

/* Bytes of elements [first, first + n) as they lie in a user buffer (the
 * vector's last element up to its true extent). */
static size_t span(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* ---- Reduce_scatter ---- */

static struct strata_net_rs_task *rs_of(struct strata_task *op)
{
    return (struct strata_net_rs_task *)((char *)op - offsetof(struct strata_net_rs_task, op));
}

/* Elements of node n's share (its ranks' blocks). */
static size_t share_of(const struct strata_net *net, const size_t *counts, int n)
{
    size_t s = 0;
    for (int i = net->node_start[n]; i < net->node_start[n + 1]; i++) s += counts[net->members[i]];
    return s;
}

static size_t first_of(const size_t *counts, int rank)
{
    size_t f = 0;
    for (int q = 0; q < rank; q++) f += counts[q];
    return f;
}

/* The leader's exchange: posts the receives of its share from every other
 * leader and the sends of their shares, taken from the node's result in
 * `full` and laid out node after node in `perm`. */
static int rs_post(struct strata_net_rs_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_reduce_args *a = &o->a.r;
    size_t at = 0;
    o->nreq = 0;
    for (int n = 0; n < net->nnodes; n++) {
        size_t start = at;
        for (int i = net->node_start[n]; i < net->node_start[n + 1]; i++) {
            int q = net->members[i];
            size_t first = first_of(o->a.counts, q), c = o->a.counts[q];
            memcpy(o->perm + at * a->extent, o->full + first * a->extent, span(a, first, c));
            at += c;
        }
        if (n == net->my_node) {
            o->own = o->perm + start * a->extent;
            continue;
        }
        int leader = strata_net_leader(net, n, -1), rc;
        size_t theirs = (at - start) * a->extent;
        rc = PMPI_Irecv(o->in + (size_t)n * o->share * a->extent, (int)(o->share * a->extent),
                        MPI_BYTE, leader, TAG_RS_SHARE, net->dup, &o->reqs[o->nreq++]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(o->perm + start * a->extent, (int)theirs, MPI_BYTE, leader,
                            TAG_RS_SHARE, net->dup, &o->reqs[o->nreq++]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

/* The node's share: every node's contribution, in node order, into res. */
static void rs_fold(struct strata_net_rs_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_reduce_args *a = &o->a.r;
    size_t bytes = o->share * a->extent;
    for (int n = 0; n < net->nnodes; n++) {
        const unsigned char *c = n == net->my_node ? o->own : o->in + (size_t)n * bytes;
        if (n == 0) memcpy(o->res, c, bytes);
        else strata_combine(a, o->res, o->res, c, o->share);
    }
}

static int rs_progress(struct strata_task *op)
{
    struct strata_net_rs_task *o = rs_of(op);
    struct strata_net *net = o->net;
    const struct strata_reduce_args *a = &o->a.r;
    STRATA_TASK_BEGIN(op);
    if (net->node_plane)
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    if (o->leader) {
        o->rc = rs_post(o);
        if (o->rc != MPI_SUCCESS) return o->rc;
        AWAIT_REQUESTS(op, o);
        rs_fold(o);
    }
    if (net->node_plane && o->share) {
        strata_bcast_start(&o->bcast, net->node_plane, o->res, o->share * a->extent,
                           net->node_rank[strata_net_leader(net, net->my_node, -1)]);
        STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
    }
    /* This rank's block, from the node's share. */
    if (o->a.counts[net->rank]) {
        size_t before = 0;
        for (int i = net->node_start[net->my_node]; net->members[i] != net->rank; i++)
            before += o->a.counts[net->members[i]];
        memcpy(a->recvbuf, o->res + before * a->extent,
               span(a, first_of(o->a.counts, net->rank), o->a.counts[net->rank]));
    }
    /* Freed here, not by the caller: an operation run by steps (nonblocking,
     * alternated) has no caller that frees; the blocking wrapper's free of
     * the NULL left here is harmless. */
    free(o->reqs);
    o->reqs = NULL;
    STRATA_TASK_END(op);
}

void strata_net_reduce_scatter_start(struct strata_net_rs_task *o, struct strata_net *net,
                                     const struct strata_rs_args *a, char *desc, size_t desclen)
{
    const struct strata_reduce_args *r = &a->r;
    o->net = net;
    o->a = *a;
    o->leader = strata_net_leader(net, net->my_node, -1) == net->rank;
    o->share = share_of(net, a->counts, net->my_node);
    size_t total = r->count * r->extent, share = o->share * r->extent;
    const unsigned char *operand = r->sendbuf ? r->sendbuf : r->recvbuf;
    strata_task_init(&o->op, net->node_plane, rs_progress);
    /* The leader's buffers: the node's result (ACC), then (TRANSIT) the
     * shares laid out by node, every other node's contribution to this
     * node's share, and the share itself.  Others receive the share. */
    o->full = (unsigned char *)operand;
    if (o->leader) {
        size_t n = (size_t)net->nnodes;
        o->perm = strata_net_staging(net, STRATA_NET_TRANSIT, total + (n + 1) * share + 1);
        if (!o->perm) out_of_memory(net, "a Reduce_scatter");
        o->in = o->perm + total;
        o->res = o->in + n * share;
        o->reqs = malloc(sizeof *o->reqs * 2 * n);
        if (!o->reqs) out_of_memory(net, "a Reduce_scatter");
        if (net->node_plane) {
            o->full = strata_net_staging(net, STRATA_NET_ACC, total);
            if (!o->full) out_of_memory(net, "a Reduce_scatter");
        }
    } else {
        o->reqs = NULL;
        o->res = strata_net_staging(net, STRATA_NET_TRANSIT, share + 1);
        if (!o->res) out_of_memory(net, "a Reduce_scatter");
    }
    if (net->node_plane) {
        struct strata_reduce_args nr = *r;
        nr.sendbuf = operand;
        nr.recvbuf = o->leader ? o->full : NULL;
        nr.root = net->node_rank[strata_net_leader(net, net->my_node, -1)];
        strata_reduce_start(&o->node, net->node_plane, &nr);
    }
    if (desc)
        snprintf(desc, desclen, "across nodes: node reduction to %d leaders, shares exchanged "
                 "between leaders, node broadcast of each share", net->nnodes);
}

int strata_net_reduce_scatter(struct strata_net *net, const struct strata_rs_args *a, char *desc,
                              size_t desclen)
{
    struct strata_net_rs_task o;
    strata_net_reduce_scatter_start(&o, net, a, desc, desclen);
    int rc = strata_task_run(&o.op);
    free(o.reqs);
    return rc;
}

/* ---- Scan and Exscan ---- */

static struct strata_net_scan_task *scan_of(struct strata_task *op)
{
    return (struct strata_net_scan_task *)((char *)op - offsetof(struct strata_net_scan_task, op));
}

/* The node's last rank: its node's total, into o->total_buf, then sent to
 * every later node's leader. */
static int scan_send_total(struct strata_net_scan_task *o)
{
    struct strata_net *net = o->net;
    const struct strata_reduce_args *a = &o->a;
    size_t bytes = a->count * a->extent;
    if (!o->exclusive) memcpy(o->total_buf, a->recvbuf, span(a, 0, a->count));
    else if (o->node_size > 1) strata_combine(a, o->total_buf, a->recvbuf, o->x, a->count);
    else memcpy(o->total_buf, o->x, span(a, 0, a->count));
    for (int n = net->my_node + 1; n < net->nnodes; n++) {
        int rc = PMPI_Isend(o->total_buf, (int)bytes, MPI_BYTE, strata_net_leader(net, n, -1),
                            TAG_SCAN_TOTAL, net->dup, &o->reqs[o->nreq++]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static int scan_progress(struct strata_task *op)
{
    struct strata_net_scan_task *o = scan_of(op);
    struct strata_net *net = o->net;
    const struct strata_reduce_args *a = &o->a;
    size_t bytes = a->count * a->extent;
    STRATA_TASK_BEGIN(op);
    if (net->node_plane)
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    o->nreq = 0;
    if (o->last && net->my_node + 1 < net->nnodes) {
        o->rc = scan_send_total(o);
        if (o->rc != MPI_SUCCESS) return o->rc;
    }
    if (o->leader && net->my_node > 0) {
        for (int n = 0; n < net->my_node; n++) {
            const int *m = net->members + net->node_start[n + 1] - 1; /* node n's last rank */
            o->rc = PMPI_Irecv(o->prefix + (size_t)(n + 1) * bytes, (int)bytes, MPI_BYTE, *m,
                               TAG_SCAN_TOTAL, net->dup, &o->reqs[o->nreq++]);
            if (o->rc != MPI_SUCCESS) return o->rc;
        }
    }
    AWAIT_REQUESTS(op, o);
    if (net->my_node > 0) { /* node 0's node-local results are final */
        if (o->leader) {
            /* E = T_0 op ... op T_{b-1}, in node order. */
            memcpy(o->prefix, o->prefix + bytes, bytes);
            for (int n = 1; n < net->my_node; n++)
                strata_combine(a, o->prefix, o->prefix, o->prefix + (size_t)(n + 1) * bytes,
                               a->count);
        }
        if (net->node_plane) {
            strata_bcast_start(&o->bcast, net->node_plane, o->prefix, bytes, o->local_leader);
            STRATA_TASK_AWAIT_STEPS(op, &o->bcast.op, strata_task_step(&o->bcast.op));
        }
        /* E in front of the node-local result (Exscan's first rank: E alone). */
        if (!(o->exclusive && o->leader))
            strata_combine(a, o->prefix, o->prefix, a->recvbuf, a->count);
        memcpy(a->recvbuf, o->prefix, span(a, 0, a->count));
    }
    free(o->reqs); /* as in rs_progress */
    o->reqs = NULL;
    STRATA_TASK_END(op);
}

void strata_net_scan_start(struct strata_net_scan_task *o, struct strata_net *net,
                           const struct strata_reduce_args *a, int exclusive, char *desc,
                           size_t desclen)
{
    o->net = net;
    o->a = *a;
    o->exclusive = exclusive;
    o->node_size = strata_net_node_size(net, net->my_node);
    o->leader = strata_net_leader(net, net->my_node, -1) == net->rank;
    o->last = net->members[net->node_start[net->my_node + 1] - 1] == net->rank;
    size_t bytes = a->count * a->extent;
    strata_task_init(&o->op, net->node_plane, scan_progress);
    o->reqs = malloc(sizeof *o->reqs * (size_t)net->nnodes);
    /* TRANSIT: E, then (leader) the totals of the nodes before; ACC (the
     * node's last rank): its total, then (Exscan) its operand, which the
     * node's exclusive scan overwrites in place.  Whole elements: the
     * kernels read and write padding too. */
    o->prefix = strata_net_staging(net, STRATA_NET_TRANSIT,
                                   (o->leader ? (size_t)net->my_node + 1 : 1) * bytes);
    o->total_buf = o->x = NULL;
    if (o->last) {
        o->total_buf = strata_net_staging(net, STRATA_NET_ACC, 2 * bytes);
        if (o->total_buf && exclusive) o->x = o->total_buf + bytes;
    }
    if (!o->reqs || !o->prefix || (o->last && !o->total_buf)) out_of_memory(net, "a Scan");
    if (o->x) memcpy(o->x, a->sendbuf ? a->sendbuf : a->recvbuf, span(a, 0, a->count));
    o->local_leader = net->node_rank[strata_net_leader(net, net->my_node, -1)];
    if (net->node_plane) strata_scan_start(&o->node, net->node_plane, a, exclusive);
    else if (!exclusive && a->sendbuf) /* alone on its node: its scan is its operand */
        memcpy(a->recvbuf, a->sendbuf, span(a, 0, a->count));
    if (desc)
        snprintf(desc, desclen, "across nodes: node %s, node totals sent to the later nodes' "
                 "leaders (%d nodes), node broadcast of the prefix",
                 exclusive ? "exclusive scan" : "scan", net->nnodes);
}

int strata_net_scan(struct strata_net *net, const struct strata_reduce_args *a, int exclusive,
                    char *desc, size_t desclen)
{
    struct strata_net_scan_task o;
    strata_net_scan_start(&o, net, a, exclusive, desc, desclen);
    int rc = strata_task_run(&o.op);
    free(o.reqs);
    return rc;
}
