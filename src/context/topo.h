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
 * one or two ranks) and may be its own neighbour. */
struct strata_topo {
    int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int indeg, outdeg;
    int *sources, *dests;
};

/* Which of s's blocks to d meets which of d's blocks from s when one pair of
 * ranks shares several edges.  MPI leaves it to the implementation, and the
 * hosts differ: Open MPI 4.1 pairs a Cartesian block sent towards -1 in a
 * dimension with the receiver's block from +1 (DIRECTION), graphs in list
 * order (ORDER); MPICH 4.0's Neighbor_alltoall pairs the k-th receive with
 * the k-th send from the end (REVERSE), its v and w forms in list order.
 * strata asks its host (strata_topo_pairing) and does the same. */
enum strata_pairing {
    STRATA_PAIR_ORDER,     /* the k-th send to d meets d's k-th receive from s */
    STRATA_PAIR_REVERSE,   /* the k-th from the last send meets the k-th receive */
    STRATA_PAIR_DIRECTION, /* Cartesian: send block i meets receive block i ^ 1 */
    STRATA_PAIR_UNKNOWN    /* none of these: strata leaves the call to the host */
};

/* The key of block i of a side (recv: a receive block) under a pairing: a
 * pair's blocks meet in the order of their keys, ties in list order.  The
 * send side keeps list order (a sender's blocks to one peer then lie in
 * memory order, one run of memory when they are adjacent, which peers can
 * read in one copy); the receive side takes the permutation, where the
 * engine can land a stream in several places (coll/block.h, strata_vpieces). */
static inline int strata_pair_key(int pairing, int i, int recv)
{
    if (!recv) return 0;
    if (pairing == STRATA_PAIR_DIRECTION) return i ^ 1;
    return pairing == STRATA_PAIR_REVERSE ? -i : 0;
}

/* How the host MPI pairs duplicate edges in coll (enum strata_coll, a
 * neighbourhood collective) on a topology of `kind`: found once per process
 * by running the host's own call on MPI_COMM_SELF with the rank its own
 * neighbour several times (topo_pairing.c), so the same on every rank. */
int strata_topo_pairing(int coll, int kind);

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
