/* How the host MPI pairs the blocks of duplicate edges (topo.h,
 * strata_topo_pairing): asked once per process and collective, on
 * MPI_COMM_SELF, where the rank is its own neighbour several times, so no
 * other rank is involved and every rank (one host library) finds the same. */
#include <pthread.h>
#include <stdatomic.h>

#include "context/topo.h"
#include "util/colls.h"
#include "util/log.h"

/* Self-edges of the probes: a Cartesian grid of 1 x 1, periodic (four
 * blocks, two per dimension), a graph and a distributed graph of three. */
enum { CART_BLOCKS = 4, GRAPH_BLOCKS = 3, KINDS = 3, PROBED = 3 };

static int kind_index(int kind) { return kind == MPI_CART ? 0 : kind == MPI_GRAPH ? 1 : 2; }

static int coll_index(int coll)
{
    return coll == STRATA_COLL_NEIGHBOR_ALLTOALL    ? 0
           : coll == STRATA_COLL_NEIGHBOR_ALLTOALLV ? 1
                                                     : 2;
}

static MPI_Comm self_topology(int kind, int *n)
{
    MPI_Comm c = MPI_COMM_NULL;
    if (kind == MPI_CART) {
        int dims[2] = {1, 1}, periods[2] = {1, 1};
        *n = CART_BLOCKS;
        PMPI_Cart_create(MPI_COMM_SELF, 2, dims, periods, 0, &c);
    } else if (kind == MPI_GRAPH) {
        int index[1] = {GRAPH_BLOCKS}, edges[GRAPH_BLOCKS] = {0, 0, 0};
        *n = GRAPH_BLOCKS;
        PMPI_Graph_create(MPI_COMM_SELF, 1, index, edges, 0, &c);
    } else {
        /* Weighted: MPI_UNWEIGHTED is a marker address compilers warn about. */
        int self[GRAPH_BLOCKS] = {0, 0, 0}, weights[GRAPH_BLOCKS] = {1, 1, 1};
        *n = GRAPH_BLOCKS;
        PMPI_Dist_graph_create_adjacent(MPI_COMM_SELF, GRAPH_BLOCKS, self, weights, GRAPH_BLOCKS,
                                        self, weights, MPI_INFO_NULL, 0, &c);
    }
    return c;
}

/* Runs the host's coll on c: block i carries i; got[j] what receive block j got. */
static int run_host(int coll, MPI_Comm c, int n, int *got)
{
    int sent[CART_BLOCKS], counts[CART_BLOCKS], displs[CART_BLOCKS];
    MPI_Aint bytes[CART_BLOCKS];
    MPI_Datatype types[CART_BLOCKS];
    for (int i = 0; i < n; i++) {
        sent[i] = i, got[i] = -1, counts[i] = 1, displs[i] = i;
        bytes[i] = (MPI_Aint)i * (MPI_Aint)sizeof(int);
        types[i] = MPI_INT;
    }
    if (coll == STRATA_COLL_NEIGHBOR_ALLTOALL)
        return PMPI_Neighbor_alltoall(sent, 1, MPI_INT, got, 1, MPI_INT, c);
    if (coll == STRATA_COLL_NEIGHBOR_ALLTOALLV)
        return PMPI_Neighbor_alltoallv(sent, counts, displs, MPI_INT, got, counts, displs, MPI_INT,
                                       c);
    return PMPI_Neighbor_alltoallw(sent, counts, bytes, types, got, counts, bytes, types, c);
}

static int probe(int coll, int kind)
{
    int n = 0, got[CART_BLOCKS];
    MPI_Comm c = self_topology(kind, &n);
    if (c == MPI_COMM_NULL) return STRATA_PAIR_UNKNOWN;
    int rc = run_host(coll, c, n, got);
    PMPI_Comm_free(&c);
    if (rc != MPI_SUCCESS) return STRATA_PAIR_UNKNOWN;
    /* Which rule gives what the host did. */
    const int rules[3] = {STRATA_PAIR_ORDER, STRATA_PAIR_REVERSE, STRATA_PAIR_DIRECTION};
    for (int k = 0; k < 3; k++) {
        if (rules[k] == STRATA_PAIR_DIRECTION && kind != MPI_CART) continue;
        int same = 1;
        for (int j = 0; j < n; j++) {
            int want = rules[k] == STRATA_PAIR_ORDER     ? j
                       : rules[k] == STRATA_PAIR_REVERSE ? n - 1 - j
                                                         : j ^ 1;
            same &= got[j] == want;
        }
        if (same) return rules[k];
    }
    return STRATA_PAIR_UNKNOWN;
}

/* -1: not asked yet. */
static _Atomic int found[PROBED][KINDS] = {{-1, -1, -1}, {-1, -1, -1}, {-1, -1, -1}};

int strata_topo_pairing(int coll, int kind)
{
    /* Allgather's blocks from one sender are all the same: any pairing. */
    if (coll == STRATA_COLL_NEIGHBOR_ALLGATHER || coll == STRATA_COLL_NEIGHBOR_ALLGATHERV)
        return STRATA_PAIR_ORDER;
    _Atomic int *f = &found[coll_index(coll)][kind_index(kind)];
    int v = atomic_load_explicit(f, memory_order_relaxed); /* a value, nothing published with it */
    if (v < 0) {
        v = probe(coll, kind);
        atomic_store_explicit(f, v, memory_order_relaxed);
        static const char *rule[] = {"in list order", "the k-th receive with the k-th send "
                                     "from the end", "by direction (towards -1 meets from +1)",
                                     "in an order strata does not know: the host serves it"};
        strata_verbose(2, "%s on a %s: the host pairs duplicate edges' blocks %s",
                       strata_coll_name(coll),
                       kind == MPI_CART    ? "Cartesian grid"
                       : kind == MPI_GRAPH ? "graph"
                                           : "distributed graph",
                       rule[v]);
    }
    return v;
}
