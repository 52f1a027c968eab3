/* The tree node leaders use across nodes, and the model's choice of it.
 *
 * Nodes are numbered by their position from the root's node: position 0 is
 * the root's node, then the others in ascending node order, wrapping.  A
 * chain hands every segment from position p to p + 1; a k-nomial tree of
 * factor k (radix k + 1) gives each node up to k children per level,
 * binomial being k = 1.  Children are listed largest subtree first, so the
 * data heading deepest leaves first. */
#ifndef STRATA_NET_TREE_H
#define STRATA_NET_TREE_H

#include <stddef.h>

#include "coll/model.h"

/* If you add a value here, also update: the tree's links and cost and its
 * name (src/net/net_tree.c), and STRATA_NET_TREE's parsing and row in
 * src/config/config.c. */
enum strata_net_shape { STRATA_NET_AUTO, STRATA_NET_CHAIN, STRATA_NET_KNOMIAL };

struct strata_net_tree {
    int shape;   /* STRATA_NET_CHAIN or STRATA_NET_KNOMIAL */
    int k;       /* children per level (k-nomial) */
    double predicted_us;
};

/* Node `node`'s parent node (-1 at the root's node) in the tree over
 * `nnodes` nodes rooted at root_node; fills children[] (nodes) and returns
 * their number. */
int strata_net_tree_links(const struct strata_net_tree *t, int nnodes, int root_node, int node,
                          int *parent, int *children);

/* Predicted time of a pipelined broadcast of `bytes` in segments of `seg`
 * down tree t among nnodes leaders. */
double strata_net_tree_predict(const struct strata_model *m, const struct strata_net_tree *t,
                               int nnodes, size_t bytes, size_t seg);

/* The tree for this call: STRATA_NET_TREE if it names one, else the
 * model's fastest of chain and k-nomial (k = 1 .. 7). */
void strata_net_tree_choose(const struct strata_model *m, int nnodes, size_t bytes, size_t seg,
                            struct strata_net_tree *out);

/* "chain", "binomial" or "knomial:k" into buf. */
const char *strata_net_tree_name(const struct strata_net_tree *t, char *buf, size_t len);

#endif
