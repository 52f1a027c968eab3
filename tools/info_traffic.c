/* strata-info --traffic: the bytes and messages STRATA_STATS will count for
 * one broadcast, by distance, from the same trees the collective follows. */
#include <ctype.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/select.h"
#include "coll/tree.h"
#include "coll/tuning_file.h"
#include "config/config.h"
#include "context/context.h"
#include "context/runtime.h"
#include "info.h"
#include "route/route.h"
#include "net/net_tree.h"
#include "util/stats.h"

/* ------------------------------------------------------------- --traffic */

/* One call's traffic by distance, as STRATA_STATS counts it (summed over
 * ranks).  A message count that depends on timing is a range. */
struct traffic {
    unsigned long long bytes[STRATA_NDIST], fewest[STRATA_NDIST], most[STRATA_NDIST];
};

struct traffic_request {
    size_t bytes;
    int root;
    int ranks; /* 0: the size of MPI_COMM_WORLD */
};

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* A data plane's copy-in/copy-out region (plane.c rounds STRATA_CICO_MAX up
 * to whole cache lines). */
static size_t plane_region(void)
{
    return ceil_div(strata_tuning()->cico_max, STRATA_CACHE_LINE) * STRATA_CACHE_LINE;
}

/* argv after "--traffic"; 0, or -1 with the problem in err. */
static int parse_traffic(int argc, char **argv, struct traffic_request *rq, char *err,
                         size_t errlen)
{
    *rq = (struct traffic_request){0, 0, 0};
    if (argc < 2) {
        snprintf(err, errlen, "--traffic needs a collective and a size");
        return -1;
    }
    if (strata_coll_parse(argv[0]) != STRATA_COLL_BCAST) {
        snprintf(err, errlen, "\"%s\": --traffic follows the broadcast's tree, so it takes "
                 "bcast only", argv[0]);
        return -1;
    }
    if (info_parse_bytes(argv[1], &rq->bytes)) {
        snprintf(err, errlen, "\"%s\" is not a size (65536, 64K, 1M, 1G)", argv[1]);
        return -1;
    }
    for (int i = 2; i < argc; i += 2) {
        int is_root = !strcmp(argv[i], "--root"), is_n = !strcmp(argv[i], "-n");
        if (!is_root && !is_n) {
            snprintf(err, errlen, "unexpected \"%s\" (only --root R and -n ranks may follow)",
                     argv[i]);
            return -1;
        }
        char *end = NULL;
        long v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
        if (i + 1 >= argc || *end || end == argv[i + 1] || v < (is_n ? 1 : 0) || v > 1 << 20) {
            snprintf(err, errlen, "%s takes a number from %d to %d", argv[i], is_n ? 1 : 0,
                     1 << 20);
            return -1;
        }
        if (is_n) rq->ranks = (int)v;
        else rq->root = (int)v;
    }
    return 0;
}

/* Locations of n ranks started on this one machine, as runtime.c gives
 * them: dealt to STRATA_VIRTUAL_NODES nodes (block or cyclic), each node's
 * i-th rank bound as STRATA_MAP says for local rank i.  0, or -1 with err. */
static int assumed_locations(const struct strata_runtime *rt, int n, struct strata_location *loc,
                             char *err, size_t errlen)
{
    const struct strata_config *cfg = strata_config();
    int v = cfg->virtual_nodes < n ? cfg->virtual_nodes : n;
    int *placed = calloc((size_t)v, sizeof(int));
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = placed && set ? 0 : -1;
    if (rc) snprintf(err, errlen, "out of memory");
    for (int r = 0; r < n && !rc; r++) {
        int node = v <= 1 ? 0
                 : cfg->vnode_layout == STRATA_VNODE_CYCLIC ? r % v
                                                            : (int)((long)r * v / n);
        rc = strata_binding(rt->topo, cfg, placed[node]++, set, err, errlen);
        strata_location_from_binding(rt->topo, &rt->levels, set, &loc[r]);
        loc[r].node = node;
    }
    if (set) hwloc_bitmap_free(set);
    free(placed);
    return rc;
}

/* Adds one pull: `to` copies `bytes` from `from` in fewest..most messages. */
static void add_pull(struct traffic *t, enum strata_distance d, size_t bytes, size_t fewest,
                     size_t most, int from, int to, int print)
{
    t->bytes[d] += bytes;
    t->fewest[d] += fewest;
    t->most[d] += most;
    if (!print) return;
    char msgs[64];
    if (fewest == most) snprintf(msgs, sizeof msgs, "%zu", most);
    else snprintf(msgs, sizeof msgs, "%zu..%zu", fewest, most);
    printf("    rank %d <- rank %d  %-12s %12zu bytes  %s message%s\n", to, from,
           strata_distance_name(d), bytes, msgs, most == 1 ? "" : "s");
}

/* The node broadcast strata_bcast_bytes (bcast.c) runs on `size` ranks at
 * loc[] (world ranks rank_of[]) from local rank `root`: every rank but the
 * root pulls the payload once from its parent in the per-call tree
 * (tree.c) -- through the segment in one message up to STRATA_CICO_MAX, in
 * rounds of one region with CMA off, else one CMA copy per chunk of its
 * level, except that a leaf no throttle holds back copies whatever its
 * parent has ready (one to all chunks, depending on timing). */
static int node_bcast_traffic(const struct strata_location *loc, const int *rank_of, int size,
                              int root, size_t bytes, int single_copy, struct traffic *t, int print)
{
    const struct strata_runtime *rt = strata_runtime();
    const struct strata_tuning *tu = strata_tuning();
    struct strata_hier h;
    if (strata_hier_build(&rt->levels, loc, size, strata_config()->hierarchy, &h)) return -1;
    int *children = malloc(sizeof(int) * (size_t)size * 2), *siblings = children + size;
    if (!children) {
        strata_hier_free(&h);
        return -1;
    }
    size_t region = plane_region(), small = region < tu->cico_max ? region : tu->cico_max;
    for (int r = 0; r < size; r++) {
        int parent, grand;
        int nchildren = strata_tree_links(&h, root, r, &parent, children);
        if (parent < 0) continue;
        enum strata_distance d = strata_distance(&rt->levels, &loc[r], &loc[parent]);
        size_t fewest, most;
        if (bytes <= small) {
            fewest = most = 1;
        } else if (!single_copy) {
            fewest = most = ceil_div(bytes, region);
        } else {
            size_t chunk = tu->chunk[strata_tree_levels_of(&h, root, r) - 1];
            int nsib = strata_tree_links(&h, root, parent, &grand, siblings), held = 0;
            for (int i = 0; i < nsib; i++)
                if (siblings[i] == r) held = tu->throttle > 0 && i >= tu->throttle;
            most = ceil_div(bytes, chunk);
            fewest = nchildren == 0 && !held ? 1 : most;
        }
        add_pull(t, d, bytes, fewest, most, rank_of[parent], rank_of[r], print);
    }
    free(children);
    strata_hier_free(&h);
    return 0;
}

/* Across nodes (net_bcast.c, netctx.c): nodes numbered by their lowest
 * rank, led by it (the root leads its own node); the leaders' tree
 * (net_tree.c) sends every child node the payload in STRATA_NET_SEGMENT
 * segments, each one message at other_node; then each node broadcasts from
 * its leader as above. */
static int net_bcast_traffic(const struct strata_location *loc, int size, int root, size_t bytes,
                             int single_copy, struct traffic *t, int print)
{
    const struct strata_tuning *tu = strata_tuning();
    int *node_of = malloc(sizeof(int) * (size_t)size * 4);
    struct strata_location *nloc = malloc(sizeof *nloc * (size_t)size);
    if (!node_of || !nloc) {
        free(node_of);
        free(nloc);
        return -1;
    }
    int *first = node_of + size, *members = first + size, *children = members + size;
    int nnodes = 0;
    for (int r = 0; r < size; r++) {
        int n = 0;
        while (n < nnodes && loc[first[n]].node != loc[r].node) n++;
        if (n == nnodes) first[nnodes++] = r;
        node_of[r] = n;
    }
    struct strata_net_tree tree;
    char name[32];
    strata_net_tree_choose(strata_select_model(), nnodes, bytes, tu->net_segment, &tree);
    if (print)
        printf("  across nodes: %s among %d node leaders, %zu-byte segments\n",
               strata_net_tree_name(&tree, name, sizeof name), nnodes, tu->net_segment);
    size_t seg = tu->net_segment ? tu->net_segment : bytes;
    int rc = 0;
    for (int n = 0; n < nnodes && !rc; n++) {
        int leader = node_of[root] == n ? root : first[n], parent;
        strata_net_tree_links(&tree, nnodes, node_of[root], n, &parent, children);
        if (parent >= 0) {
            int from = node_of[root] == parent ? root : first[parent];
            add_pull(t, STRATA_DIST_NODE, bytes, ceil_div(bytes, seg), ceil_div(bytes, seg),
                     from, leader, print);
        }
        /* The node's own broadcast, over its ranks in ascending order. */
        int count = 0, local_root = 0;
        for (int r = 0; r < size; r++) {
            if (node_of[r] != n) continue;
            if (r == leader) local_root = count;
            members[count] = r;
            nloc[count++] = loc[r];
        }
        if (count > 1)
            rc = node_bcast_traffic(nloc, members, count, local_root, bytes, single_copy, t, print);
    }
    free(nloc);
    free(node_of);
    return rc;
}

static void print_traffic_table(const struct traffic *t)
{
    unsigned long long bytes = 0, fewest = 0, most = 0;
    printf("\n  %-14s %14s  %s\n", "distance", "bytes", "messages");
    for (int d = 0; d <= STRATA_NDIST; d++) {
        unsigned long long b = d < STRATA_NDIST ? t->bytes[d] : bytes;
        unsigned long long lo = d < STRATA_NDIST ? t->fewest[d] : fewest;
        unsigned long long hi = d < STRATA_NDIST ? t->most[d] : most;
        if (d < STRATA_NDIST) bytes += b, fewest += lo, most += hi;
        printf("  %-14s %14llu  ", d < STRATA_NDIST ? strata_distance_name(d) : "total", b);
        if (lo == hi) printf("%llu\n", hi);
        else printf("%llu..%llu\n", lo, hi);
    }
}

/* Collective over MPI_COMM_WORLD (its context when -n is its size); rank 0
 * prints.  Returns the exit status. */
static int traffic(const struct traffic_request *rq, int world_size)
{
    const struct strata_runtime *rt = strata_runtime();
    int n = rq->ranks ? rq->ranks : world_size, real = n == world_size;
    struct strata_ctx *world = real ? strata_ctx_get(MPI_COMM_WORLD) : NULL;
    if (rt->world_rank != 0) return 0;
    if (rq->root >= n) {
        fprintf(stderr, "strata-info: --root %d is not a rank of %d\n", rq->root, n);
        return 2;
    }
    struct strata_location *assumed = real ? NULL : malloc(sizeof *assumed * (size_t)n);
    const struct strata_location *loc = real ? rt->world_loc : assumed;
    int *rank_of = malloc(sizeof(int) * (size_t)n);
    char err[512] = "out of memory";
    struct strata_hier h;
    if (!loc || !rank_of || (assumed && assumed_locations(rt, n, assumed, err, sizeof err)) ||
        strata_hier_build(&rt->levels, loc, n, strata_config()->hierarchy, &h)) {
        fprintf(stderr, "strata-info: %s\n", err);
        free(assumed);
        free(rank_of);
        return 1;
    }
    for (int r = 0; r < n; r++) rank_of[r] = r;
    printf("MPI_Bcast of %zu bytes from root %d on %d rank%s, %d node%s", rq->bytes, rq->root, n,
           n == 1 ? "" : "s", h.nnodes, h.nnodes == 1 ? "" : "s");
    if (real) printf(" (MPI_COMM_WORLD of this run)\n");
    else printf(" (assumed: ranks placed by STRATA_MAP%s)\n",
                strata_config()->map == STRATA_MAP_ACTUAL ? "=actual: each at this process's "
                "binding; run with -n ranks for theirs" : "");
    char desc[8192];
    strata_hier_describe(&h, desc, sizeof desc);
    printf("hierarchy:\n%s", desc);

    const char *host = real ? strata_route_refusal(world, STRATA_COLL_BCAST) : NULL;
    int alone = !host && n == 1; /* strata serves it locally: no traffic */
    if (!host && h.nnodes > 1 && h.nnodes == n) host = "every node holds a single rank";
    struct traffic t;
    memset(&t, 0, sizeof t);
    int rc = 0, print = n <= 64;
    if (host) {
        printf("the host MPI serves this call (%s): strata counts nothing\n", host);
    } else if (alone) {
        printf("a single rank: strata serves the call locally (nothing to move for a "
               "broadcast): no traffic\n");
    } else if (rq->bytes == 0) {
        printf("nothing to move\n");
    } else if (h.nnodes > 1) {
        printf("transfers (a rank counts what it pulls, a leader the segments it sends):\n");
        rc = net_bcast_traffic(loc, n, rq->root, rq->bytes, strata_transport_single_copy(rt->transport), &t,
                               print);
    } else {
        /* The choice strata_select makes for such a communicator. */
        struct strata_plane shape = {.rank = 0, .size = n, .hier = &h, .xport = rt->transport,
                                     .region = plane_region(), .nregions = 1 + h.nlevels};
        struct strata_choice ch;
        strata_select(&shape, STRATA_COLL_BCAST, rq->bytes, &ch);
        printf("algorithm: %s (%s%.0d)", ch.al->name, ch.why, ch.rule);
        if (ch.al->id != STRATA_ALGO_BCAST_PIPELINED)
            printf("; the traffic below is the pipelined tree's, which "
                   "STRATA_BCAST_ALGORITHM=pipelined gives");
        printf("\ntransfers (a rank counts what it pulls):\n");
        rc = node_bcast_traffic(loc, rank_of, n, rq->root, rq->bytes, strata_transport_single_copy(rt->transport), &t,
                               print);
    }
    if (rc) fprintf(stderr, "strata-info: out of memory\n");
    else print_traffic_table(&t);
    if (!print && !host && !alone) printf("(the %d transfers are not listed above 64 ranks)\n", n - 1);
    strata_hier_free(&h);
    free(rank_of);
    free(assumed);
    return rc ? 1 : 0;
}

int info_traffic_main(int argc, char **argv, int rank, int size)
{
    struct traffic_request rq;
    char err[512];
    int status = 0;
    if (parse_traffic(argc - 2, argv + 2, &rq, err, sizeof err)) {
        if (rank == 0)
            fprintf(stderr, "strata-info: %s\nusage: strata-info --traffic bcast <size> "
                    "[--root R] [-n ranks]\n", err);
        status = 2;
    } else if (!strata_runtime()) {
        if (rank == 0) printf("strata is off: %s\n", strata_runtime_state()->why_disabled);
        status = 1;
    } else {
        status = traffic(&rq, size);
    }
    return status;
}
