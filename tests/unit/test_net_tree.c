/* Unit tests of the trees among node leaders (src/net/net_tree.c), without
 * an MPI launch: for every shape, node count and root, every node but the
 * root has one parent that lists it once among its children, parents lead
 * to the root, and k-nomial trees keep their depth and fan-out bounds; a
 * few trees are checked node by node; and the model's predictions and
 * choices are checked against values worked out by hand.  Prints every
 * failure, then "N passed, N failed"; exits non-zero if anything failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/model.h"
#include "net/net_tree.h"

static int passed, failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) {                                                         \
            passed++;                                                       \
        } else {                                                            \
            failed++;                                                       \
            fprintf(stderr, "FAIL test_net_tree.c:%d: ", __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

#define MAX_NODES 70

static int depth_bound(int k, int nnodes)
{
    int d = 0;
    for (long span = 1; span < nnodes; span *= k + 1) d++;
    return d;
}

/* The structural checks for one tree. */
static void check_tree(const struct strata_net_tree *t, int nnodes, int root)
{
    int parent[MAX_NODES], children[MAX_NODES][MAX_NODES], nchildren[MAX_NODES];
    for (int n = 0; n < nnodes; n++)
        nchildren[n] = strata_net_tree_links(t, nnodes, root, n, &parent[n], children[n]);
    char what[64];
    snprintf(what, sizeof what, "shape %d k %d, %d nodes, root %d", t->shape, t->k, nnodes, root);
    int total = 0, bad = 0;
    for (int n = 0; n < nnodes; n++) {
        total += nchildren[n];
        if (n == root) {
            bad |= parent[n] != -1;
            continue;
        }
        if (parent[n] < 0 || parent[n] >= nnodes || parent[n] == n) {
            bad = 1;
            continue;
        }
        int listed = 0;
        for (int i = 0; i < nchildren[parent[n]]; i++) listed += children[parent[n]][i] == n;
        bad |= listed != 1;
        /* Parents lead to the root without a cycle. */
        int hops = 0, at = n;
        while (at != root && hops <= nnodes) at = parent[at], hops++;
        bad |= at != root;
        if (t->shape == STRATA_NET_KNOMIAL) bad |= hops > depth_bound(t->k, nnodes);
        if (t->shape == STRATA_NET_CHAIN) bad |= hops != (n - root + nnodes) % nnodes;
    }
    for (int n = 0; n < nnodes; n++) {
        int limit = t->shape == STRATA_NET_CHAIN ? 1 : t->k * depth_bound(t->k, nnodes);
        bad |= nchildren[n] > limit;
        for (int i = 0; i < nchildren[n]; i++) bad |= parent[children[n][i]] != n;
    }
    CHECK(!bad && total == nnodes - 1, "%s: not a tree with the expected bounds", what);
}

static void check_children(const struct strata_net_tree *t, int nnodes, int root, int node,
                           const int *want, int nwant)
{
    int parent, got[MAX_NODES];
    int n = strata_net_tree_links(t, nnodes, root, node, &parent, got);
    int same = n == nwant;
    for (int i = 0; same && i < n; i++) same = got[i] == want[i];
    CHECK(same, "shape %d k %d, %d nodes, root %d: children of node %d differ (got %d)",
          t->shape, t->k, nnodes, root, node, n);
}

int main(void)
{
    for (int nnodes = 2; nnodes <= MAX_NODES; nnodes += nnodes < 12 ? 1 : 7)
        for (int root = 0; root < nnodes; root++) {
            struct strata_net_tree chain = {STRATA_NET_CHAIN, 1, 0};
            check_tree(&chain, nnodes, root);
            for (int k = 1; k <= 7; k++) {
                struct strata_net_tree t = {STRATA_NET_KNOMIAL, k, 0};
                check_tree(&t, nnodes, root);
            }
        }

    /* Binomial over 8 nodes from node 0: largest subtree first. */
    struct strata_net_tree binomial = {STRATA_NET_KNOMIAL, 1, 0};
    check_children(&binomial, 8, 0, 0, (int[]){4, 2, 1}, 3);
    check_children(&binomial, 8, 0, 4, (int[]){6, 5}, 2);
    check_children(&binomial, 8, 0, 6, (int[]){7}, 1);
    check_children(&binomial, 8, 0, 7, NULL, 0);
    /* The same tree rooted at node 5: positions shift by 5, wrapping. */
    check_children(&binomial, 8, 5, 5, (int[]){1, 7, 6}, 3);
    check_children(&binomial, 8, 5, 1, (int[]){3, 2}, 2);
    /* Radix 3 over 9 nodes: the root's children 3, 6 (level 1), then 1, 2. */
    struct strata_net_tree trinomial = {STRATA_NET_KNOMIAL, 2, 0};
    check_children(&trinomial, 9, 0, 0, (int[]){3, 6, 1, 2}, 4);
    check_children(&trinomial, 9, 0, 3, (int[]){4, 5}, 2);
    struct strata_net_tree chain = {STRATA_NET_CHAIN, 1, 0};
    check_children(&chain, 5, 3, 4, (int[]){0}, 1);
    check_children(&chain, 5, 3, 2, NULL, 0);

    /* Predictions: 2 us + 1e-4 us per byte per message (10 GB/s). */
    struct strata_model m;
    strata_model_defaults(&m);
    m.net_alpha = 2;
    m.net_beta = 1e-4;
    size_t seg = 128 << 10;
    double per_seg = 2 + 131072 * 1e-4; /* 15.1072 */
    /* 4 MiB, 32 segments, 32 nodes: chain (31 + 31) segment times. */
    double chain_us = strata_net_tree_predict(&m, &chain, 32, 4 << 20, seg);
    CHECK(fabs(chain_us - 62 * per_seg) < 1e-6, "chain 32 nodes 4 MiB: %.3f", chain_us);
    /* Binomial: depth 5, the root's 5 children: (31 * 5 + 5) segment times. */
    double bin_us = strata_net_tree_predict(&m, &binomial, 32, 4 << 20, seg);
    CHECK(fabs(bin_us - 160 * per_seg) < 1e-6, "binomial 32 nodes 4 MiB: %.3f", bin_us);
    /* 8 bytes, one segment of 8 bytes: chain 31 hops, binomial 5. */
    double small = 2 + 8 * 1e-4;
    CHECK(fabs(strata_net_tree_predict(&m, &binomial, 32, 8, seg) - 5 * small) < 1e-9,
          "binomial 32 nodes 8 bytes");
    CHECK(fabs(strata_net_tree_predict(&m, &chain, 32, 8, seg) - 31 * small) < 1e-9,
          "chain 32 nodes 8 bytes");

    struct strata_net_tree pick;
    strata_net_tree_choose(&m, 32, 4 << 20, seg, &pick);
    CHECK(pick.shape == STRATA_NET_CHAIN, "32 nodes, 4 MiB: chain expected (got %d:%d)",
          pick.shape, pick.k);
    strata_net_tree_choose(&m, 32, 8, seg, &pick);
    CHECK(pick.shape == STRATA_NET_KNOMIAL && pick.k == 1,
          "32 nodes, 8 bytes: binomial expected (got %d:%d)", pick.shape, pick.k);
    char name[32];
    CHECK(!strcmp(strata_net_tree_name(&pick, name, sizeof name), "binomial"), "name %s", name);
    struct strata_net_tree k3 = {STRATA_NET_KNOMIAL, 3, 0};
    CHECK(!strcmp(strata_net_tree_name(&k3, name, sizeof name), "knomial:3"), "name %s", name);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
