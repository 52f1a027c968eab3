/* The per-call decision: does strata serve this call, and with what?
 *
 * The verdict of a communicator is agreed once (context.h); per call, strata
 * looks only at arguments that every rank passes identically (collective,
 * byte count of the type signature, op, root), so all ranks decide alike. */
#ifndef STRATA_ROUTE_H
#define STRATA_ROUTE_H

#include <mpi.h>
#include <stddef.h>

#include "context/context.h"

enum strata_coll {
    STRATA_COLL_BCAST,
    STRATA_COLL_REDUCE,
    STRATA_COLL_ALLREDUCE,
    STRATA_COLL_ALLGATHER,
    STRATA_COLL_GATHER,
    STRATA_COLL_SCATTER,
    STRATA_COLL_ALLTOALL,
    STRATA_COLL_BARRIER,
    STRATA_NCOLLS
};

/* "MPI_Bcast", ... */
const char *strata_coll_name(enum strata_coll coll);

/* Parses "bcast", "MPI_Bcast", ... (case-insensitive); -1 if unknown. */
int strata_coll_parse(const char *name);

/* Why strata hands this collective on this communicator to the host MPI,
 * or NULL if strata serves it.  ctx may be NULL (no context). */
const char *strata_route_refusal(const struct strata_ctx *ctx, enum strata_coll coll);

/* Records and (at STRATA_VERBOSE=2) reports a call handed to the host MPI. */
void strata_route_to_host(const struct strata_ctx *ctx, enum strata_coll coll,
                          const char *reason);

/* Reports (at STRATA_VERBOSE=2) a call strata serves, naming the algorithm. */
void strata_route_served(const struct strata_ctx *ctx, enum strata_coll coll,
                         const char *algorithm, size_t bytes);

/* The name of the path a payload of `bytes` takes on this plane. */
const char *strata_route_path(const struct strata_plane *p, size_t bytes);

#endif
