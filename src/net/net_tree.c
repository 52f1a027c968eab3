/* Chain and k-nomial trees among node leaders; the model's choice. */
#include "net/net_tree.h"

#include <stdio.h>

#include "coll/coll.h"

static int chain_links(int nnodes, int pos, int *parent_pos, int *children)
{
    *parent_pos = pos - 1;
    if (pos + 1 >= nnodes) return 0;
    children[0] = pos + 1;
    return 1;
}

/* Radix r = k + 1: a position's parent clears its lowest non-zero digit;
 * its children add one non-zero digit below that one. */
static int knomial_links(int nnodes, int k, int pos, int *parent_pos, int *children)
{
    long radix = k + 1, span = 1;
    *parent_pos = -1;
    if (pos > 0) {
        while ((pos / span) % radix == 0) span *= radix;
        *parent_pos = (int)(pos - ((pos / span) % radix) * span);
    } else {
        while (span < nnodes) span *= radix;
    }
    int n = 0;
    /* Digits below the lowest non-zero one, highest first: largest subtrees. */
    for (long s = span / radix; s >= 1; s /= radix)
        for (long j = 1; j <= k; j++)
            if (pos + j * s < nnodes) children[n++] = (int)(pos + j * s);
    return n;
}

int strata_net_tree_links(const struct strata_net_tree *t, int nnodes, int root_node, int node,
                          int *parent, int *children)
{
    int pos = (node - root_node + nnodes) % nnodes, parent_pos;
    int n = t->shape == STRATA_NET_CHAIN ? chain_links(nnodes, pos, &parent_pos, children)
                                         : knomial_links(nnodes, t->k, pos, &parent_pos, children);
    *parent = parent_pos < 0 ? -1 : (parent_pos + root_node) % nnodes;
    for (int i = 0; i < n; i++) children[i] = (children[i] + root_node) % nnodes;
    return n;
}

double strata_net_tree_predict(const struct strata_model *m, const struct strata_net_tree *t,
                               int nnodes, size_t bytes, size_t seg)
{
    if (nnodes < 2) return 0;
    if (seg == 0 || seg > bytes) seg = bytes ? bytes : 1;
    double nseg = (double)((bytes + seg - 1) / seg);
    double per_seg = m->net_alpha + (double)seg * m->net_beta;
    if (t->shape == STRATA_NET_CHAIN) return (nnodes - 1 + nseg - 1) * per_seg;
    /* Depth d, and a node sends each segment to up to k children per level
     * below it: the root, with k*d children, is the pipeline's slowest
     * stage; the last leaf hears of the first segment after d hops of up
     * to k sends each. */
    int depth = 0;
    for (long span = 1; span < nnodes; span *= t->k + 1) depth++;
    int fan = t->k * depth < nnodes - 1 ? t->k * depth : nnodes - 1;
    return ((nseg - 1) * fan + (double)depth * t->k) * per_seg;
}

void strata_net_tree_choose(const struct strata_model *m, int nnodes, size_t bytes, size_t seg,
                            struct strata_net_tree *out)
{
    const struct strata_tuning *tu = strata_tuning();
    if (tu->net_tree != STRATA_NET_AUTO) {
        *out = (struct strata_net_tree){tu->net_tree, tu->net_tree_k, -1};
        out->predicted_us = strata_net_tree_predict(m, out, nnodes, bytes, seg);
        return;
    }
    *out = (struct strata_net_tree){STRATA_NET_CHAIN, 1, 0};
    out->predicted_us = strata_net_tree_predict(m, out, nnodes, bytes, seg);
    for (int k = 1; k <= 7 && k < nnodes; k++) {
        struct strata_net_tree t = {STRATA_NET_KNOMIAL, k, 0};
        t.predicted_us = strata_net_tree_predict(m, &t, nnodes, bytes, seg);
        /* Ties go to the tree with fewer hops: the model has no jitter term,
         * and every hop is another chance to meet a slow leader. */
        if (t.predicted_us <= out->predicted_us) *out = t;
    }
}

const char *strata_net_tree_name(const struct strata_net_tree *t, char *buf, size_t len)
{
    if (t->shape == STRATA_NET_CHAIN) snprintf(buf, len, "chain");
    else if (t->k == 1) snprintf(buf, len, "binomial");
    else snprintf(buf, len, "knomial:%d", t->k);
    return buf;
}
