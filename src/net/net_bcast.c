/* Bcast across nodes (HierKNEM's overlap of the inter-node tree with the
 * intra-node pull).
 *
 * Node leaders form a chain or k-nomial tree rooted at the root's node (the
 * model chooses, net_tree.h).  A leader receives its payload from its
 * parent in segments straight into the user's buffer, forwards each
 * segment to its children the moment it has arrived, and announces every
 * completed prefix to its own node, whose ranks pull it with one CMA copy
 * per chunk while later segments are still on the wire: the intra-node time
 * hides behind the inter-node time. */
#include "net/net.h"

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

int strata_net_bcast(struct strata_net *net, void *data, size_t bytes, int root, char *desc,
                     size_t desclen)
{
    const struct strata_tuning *tu = strata_tuning();
    struct strata_plane *np = net->node_plane;
    int leader = strata_net_leader(net, net->my_node, root);
    int local_root = net->node_rank[leader];
    struct strata_net_tree t;
    strata_net_tree_choose(strata_select_model(), net->nnodes, bytes, tu->net_segment, &t);
    if (net->rank != leader) {
        describe(desc, desclen, &t, net->nnodes, tu->net_segment, 0);
        return strata_bcast_bytes(np, data, bytes, local_root);
    }

    int root_node = net->node_of[root], parent_node, *children = net->tree_buf;
    int nchildren = strata_net_tree_links(&t, net->nnodes, root_node, net->my_node, &parent_node,
                                          children);
    struct strata_engine *e = &net->engine;
    strata_engine_reset(e, net->dup);
    strata_engine_count_as(e, STRATA_COLL_BCAST);
    int from = -1;
    if (parent_node >= 0)
        from = strata_engine_add(e, 0, strata_net_leader(net, parent_node, root), TAG_BCAST, data,
                                 bytes, tu->net_segment, tu->net_recvs);
    int first_send = e->nstreams;
    for (int i = 0; i < nchildren; i++)
        if (strata_engine_add(e, 1, strata_net_leader(net, children[i], root), TAG_BCAST, data,
                              bytes, tu->net_segment, tu->net_sends) < 0)
            from = -2;
    if (from == -2 || (parent_node >= 0 && from < 0)) {
        strata_error("out of memory starting a broadcast across nodes");
        PMPI_Abort(net->comm, 1);
    }

    uint64_t base = 0;
    int fed = np && strata_bcast_feed_open(np, data, bytes, &base);
    describe(desc, desclen, &t, net->nnodes, tu->net_segment, fed);
    size_t announced = 0;
    for (;;) {
        size_t have = from >= 0 ? e->s[from].done : bytes;
        for (int i = first_send; i < e->nstreams; i++) strata_stream_ready(e, i, have);
        if (fed && have > announced) strata_bcast_feed_advance(np, base, announced = have);
        if (strata_engine_complete(e)) break;
        int moved, rc = strata_engine_progress(e, &moved);
        if (rc != MPI_SUCCESS) return rc;
        strata_engine_idle(e, moved);
    }
    if (fed) strata_bcast_feed_close(np, base);
    else if (np) return strata_bcast_bytes(np, data, bytes, local_root);
    return MPI_SUCCESS;
}
