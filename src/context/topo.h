/* A communicator's process topology as the neighbourhood collectives read
 * it (issue 33): read once, on the communicator's first neighbourhood
 * collective, and kept with its context until the communicator goes. */
#ifndef STRATA_CONTEXT_TOPO_H
#define STRATA_CONTEXT_TOPO_H

#include <mpi.h>

struct strata_ctx;

/* Sources (indeg) and destinations (outdeg) in MPI's order: the order of a
 * neighbourhood collective's receive and send blocks.  MPI_PROC_NULL for a
 * Cartesian neighbour beyond a non-periodic edge (its block is skipped).
 * A rank may appear several times (duplicate edges, a periodic dimension of
 * one or two ranks) and may be its own neighbour.
 *
 * The keys say which blocks meet when one pair of ranks exchanges several:
 * the blocks from s to d, in the order of their keys (ties: in list order),
 * match the blocks d receives from s in the order of theirs.  Graphs and
 * distributed graphs match in list order, as point-to-point messages of one
 * tag do (every key 0).  A Cartesian block sent towards -1 in a dimension is
 * the receiver's block from +1 and the other way round, which both hosts
 * do for a periodic dimension of one or two ranks: send block i has key
 * i ^ 1, receive block j key j. */
struct strata_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int indeg, outdeg;
    int *sources, *dests;
    int *skeys, *dkeys;
};

/* The topology of ctx's communicator comm, read on the first call and kept;
 * NULL with *why set when comm has none (the call is erroneous: the host
 * MPI reports it) or it could not be read. */
const struct strata_topo *strata_topo_of(struct strata_ctx *ctx, MPI_Comm comm, const char **why);

/* The degrees of comm's topology, read from the host each time (persistent
 * _init copies arrays of these lengths before any context exists).
 * MPI_SUCCESS, or an error when comm has no topology. */
int strata_topo_degrees(MPI_Comm comm, int *indeg, int *outdeg);

/* Frees a context's topology (context.c, with the context). */
void strata_topo_free(struct strata_topo *t);

#endif
