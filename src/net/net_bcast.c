/* Bcast across nodes (HierKNEM's overlap of the inter-node tree with the
 * intra-node pull).
 *
 * Node leaders form a chain or k-nomial tree rooted at the root's node (the
 * model chooses, net_tree.h).  A leader receives its payload from its
 * parent in segments straight into the user's buffer, forwards each
 * segment to its children the moment it has arrived, and announces every
 * completed prefix to its own node, whose ranks pull it with one CMA copy
 * per chunk while later segments are still on the wire: the intra-node time
 * hides behind the inter-node time.  A resumable operation (coll/task.h): the
 * engine's progress is one of its steps. */
#include "net/net.h"

#include <stddef.h>
#include <stdio.h>

#include "coll/select.h"
#include "net/net_tree.h"
#include "util/log.h"

enum { TAG_BCAST = 1 };

static void describe(char *desc, size_t len, const struct strata_net_tree *t, int nnodes,
                     size_t seg, int fed)
{
    if (!desc) return;
    char name[32];
    snprintf(desc, len, "across nodes: %s among %d node leaders, %zu-byte segments "
             "(%.1f us predicted), %s", strata_net_tree_name(t, name, sizeof name), nnodes, seg,
             t->predicted_us, fed ? "each node pulling segments as they arrive"
                                  : "then each node's own broadcast");
}

static struct strata_net_bcast_task *net_bcast_of(struct strata_task *op)
{
    return (struct strata_net_bcast_task *)((char *)op - offsetof(struct strata_net_bcast_task, op));
}

static int net_bcast_progress(struct strata_task *op)
{
    struct strata_net_bcast_task *o = net_bcast_of(op);
    struct strata_net *net = o->net;
    struct strata_plane *np = net->node_plane;
    struct strata_engine *e = &net->engine;
    STRATA_TASK_BEGIN(op);
    if (o->net->rank == o->leader) {
        /* The engine's progress joins the operation's: one pass per step;
         * the run loop (strata_task_run) spins, then yields, in between. */
        for (;;) {
            size_t have = o->from >= 0 ? e->s[o->from].done : o->bytes;
            for (int i = o->first_send; i < e->nstreams; i++) strata_stream_ready(e, i, have);
            if (o->fed && have > o->announced)
                strata_bcast_feed_advance(np, o->base, o->announced = have);
            if (strata_engine_complete(e)) break;
            int moved, rc = strata_engine_progress(e, &moved);
            if (rc != MPI_SUCCESS) return rc;
            if (moved) {
                op->waits++; /* something arrived: the next wait spins afresh */
            } else {
                op->waiting_for = strata_engine_waiting_for(e);
                STRATA_TASK_YIELD(op);
            }
        }
        if (o->fed) {
            strata_bcast_feed_close_start(&o->node, np, o->base);
            STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
        }
    }
    if (np && !o->fed) {
        strata_bcast_start(&o->node, np, o->data, o->bytes, o->local_root);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    }
    STRATA_TASK_END(op);
}

void strata_net_bcast_start(struct strata_net_bcast_task *o, struct strata_net *net, void *data,
                            size_t bytes, int root, char *desc, size_t desclen)
{
    const struct strata_tuning *tu = strata_tuning();
    struct strata_plane *np = net->node_plane;
    strata_task_init(&o->op, np, net_bcast_progress);
    o->net = net;
    o->data = data;
    o->bytes = bytes;
    o->leader = strata_net_leader(net, net->my_node, root);
    o->local_root = net->node_rank[o->leader];
    o->fed = 0;
    o->announced = 0;
    o->from = -1;
    o->base = 0;
    struct strata_net_tree t;
    strata_net_tree_choose(strata_select_model(), net->nnodes, bytes, tu->net_segment, &t);
    if (net->rank != o->leader) {
        describe(desc, desclen, &t, net->nnodes, tu->net_segment, 0);
        return; /* the node's broadcast from its leader */
    }

    int root_node = net->node_of[root], parent_node, *children = net->tree_buf;
    int nchildren = strata_net_tree_links(&t, net->nnodes, root_node, net->my_node, &parent_node,
                                          children);
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, STRATA_COLL_BCAST);
    if (parent_node >= 0)
        o->from = strata_engine_add(e, 0, strata_net_leader(net, parent_node, root), TAG_BCAST,
                                    data, bytes, tu->net_segment, tu->net_recvs);
    o->first_send = e->nstreams;
    int failed = parent_node >= 0 && o->from < 0;
    for (int i = 0; i < nchildren; i++)
        if (strata_engine_add(e, 1, strata_net_leader(net, children[i], root), TAG_BCAST, data,
                              bytes, tu->net_segment, tu->net_sends) < 0)
            failed = 1;
    if (failed) {
        strata_error("out of memory starting a broadcast across nodes");
        PMPI_Abort(net->comm, 1);
    }
    o->fed = np && strata_bcast_feed_open(np, data, bytes, &o->base);
    describe(desc, desclen, &t, net->nnodes, tu->net_segment, o->fed);
}

int strata_net_bcast(struct strata_net *net, void *data, size_t bytes, int root, char *desc,
                     size_t desclen)
{
    struct strata_net_bcast_task o;
    strata_net_bcast_start(&o, net, data, bytes, root, desc, desclen);
    return strata_task_run(&o.op);
}
