/* Reading a communicator's process topology for the neighbourhood
 * collectives (topo.h). */
#include "context/topo.h"

#include <stdlib.h>

#include "context/context.h"

void strata_topo_free(struct strata_topo *t)
{
    if (!t) return;
    free(t->sources); /* one block: sources, then dests */
    free(t);
}

int strata_topo_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    int kind = MPI_UNDEFINED, rank = 0, n = 0, weighted = 0;
    int rc = PMPI_Topo_test(comm, &kind);
    if (rc != MPI_SUCCESS) return rc;
    switch (kind) {
    case MPI_CART:
        rc = PMPI_Cartdim_get(comm, &n);
        *indeg = *outdeg = 2 * n;
        return rc;
    case MPI_GRAPH:
        PMPI_Comm_rank(comm, &rank);
        rc = PMPI_Graph_neighbors_count(comm, rank, &n);
        *indeg = *outdeg = n;
        return rc;
    case MPI_DIST_GRAPH: return PMPI_Dist_graph_neighbors_count(comm, indeg, outdeg, &weighted);
    default: return MPI_ERR_TOPOLOGY;
    }
}

/* The lists of a topology of `kind` into t (its arrays allocated). */
static int read_lists(struct strata_topo *t, MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->indeg / 2; d++) {
            int lo, hi;
            int rc = PMPI_Cart_shift(comm, d, 1, &lo, &hi);
            if (rc != MPI_SUCCESS) return rc;
            t->sources[2 * d] = t->dests[2 * d] = lo;
            t->sources[2 * d + 1] = t->dests[2 * d + 1] = hi;
        }
        return MPI_SUCCESS;
    }
    if (t->kind == MPI_GRAPH) {
        int rc = PMPI_Graph_neighbors(comm, rank, t->indeg, t->sources);
        for (int i = 0; i < t->outdeg; i++) t->dests[i] = t->sources[i];
        return rc;
    }
    /* Weights are not needed, but a weighted graph must be asked with room
     * for them. */
    int in, out, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    int *w = weighted ? malloc(((size_t)in + (size_t)out + 1) * sizeof(int)) : NULL;
    if (weighted && !w) return MPI_ERR_NO_MEM;
    int rc = PMPI_Dist_graph_neighbors(comm, t->indeg, t->sources, weighted ? w : MPI_UNWEIGHTED,
                                       t->outdeg, t->dests,
                                       weighted ? w + t->indeg : MPI_UNWEIGHTED);
    free(w);
    return rc;
}

static struct strata_topo *topo_read(MPI_Comm comm, const char **why)
{
    struct strata_topo *t = calloc(1, sizeof *t);
    if (!t) {
        *why = "out of memory for the communicator's topology";
        return NULL;
    }
    if (PMPI_Topo_test(comm, &t->kind) != MPI_SUCCESS || t->kind == MPI_UNDEFINED ||
        strata_topo_degrees(comm, &t->indeg, &t->outdeg) != MPI_SUCCESS) {
        *why = "the communicator has no process topology (an erroneous call: the host MPI "
               "reports it)";
        free(t);
        return NULL;
    }
    size_t n = (size_t)t->indeg + (size_t)t->outdeg;
    t->sources = calloc(n ? n : 1, sizeof(int));
    if (!t->sources) {
        *why = "out of memory for the communicator's topology";
        free(t);
        return NULL;
    }
    t->dests = t->sources + t->indeg;
    if (read_lists(t, comm) != MPI_SUCCESS) {
        *why = "the host MPI could not list the communicator's neighbours";
        strata_topo_free(t);
        return NULL;
    }
    return t;
}

const struct strata_topo *strata_topo_of(struct strata_ctx *ctx, MPI_Comm comm, const char **why)
{
    /* A persistent request's channel keeps it in the communicator's own
     * context. */
    struct strata_ctx *owner = ctx->channel_of ? ctx->channel_of : ctx;
    if (!owner->topo) owner->topo = topo_read(comm, why);
    return owner->topo;
}
