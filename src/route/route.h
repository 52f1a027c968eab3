/* The per-call decision: does strata serve this call, and with what?
 *
 * The verdict of a communicator is agreed once (context.h); per call, strata
 * looks only at arguments that every rank passes identically (collective,
 * byte count of the type signature, op, root), so all ranks decide alike. */
#ifndef STRATA_ROUTE_H
#define STRATA_ROUTE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "context/context.h"
#include "util/colls.h"

/* Why strata hands this collective on this communicator to the host MPI,
 * or NULL if strata serves it.  ctx may be NULL (no context). */
const char *strata_route_refusal(const struct strata_ctx *ctx, enum strata_coll coll);

/* Whether this rank's count elements of type at buf (a buffer the call
 * reads or writes) are arguments the host MPI must judge: a negative count,
 * a null or uncommitted datatype, or, holding data, MPI_IN_PLACE (where the
 * caller does not allow it) or address 0.  Strata would crash on them or
 * swallow the error the host MPI reports; the host may crash too, but then
 * it is the host's behaviour the application gets. */
int strata_route_bad_data(const void *buf, long long count, MPI_Datatype type);

/* One data argument of a call: count elements of a type at buf, on this
 * rank, filled in by strata_route_data_arg. */
struct strata_data_arg {
    const void *buf;
    int bad;          /* for the host MPI to judge (as strata_route_bad_data) */
    long long bytes;  /* type signature of count elements (one block) */
    uintptr_t lo, hi; /* the memory `blocks` blocks span if the type has no
                         holes, else lo == hi */
};

/* Describes count elements of type at buf, repeated `blocks` times (a
 * buffer of one block per rank), asking the host MPI as little as possible:
 * predefined types are known without calls beyond their size. */
void strata_route_data_arg(const void *buf, long long count, int blocks, MPI_Datatype type,
                           struct strata_data_arg *d);

/* Whether a call's send and receive data share memory, which the standard
 * forbids and the host MPI may report: the same address (not MPI_BOTTOM),
 * or overlapping spans of types without holes.  Spans with holes are not
 * compared (they may interleave legitimately), so no valid call is ever
 * refused. */
int strata_route_overlap(const struct strata_data_arg *a, const struct strata_data_arg *b);

/* call: a call id (util/colls.h; a collective's own value for its blocking
 * form), so that MPI_Ibcast reports under its name. */
/* Records and (at STRATA_VERBOSE=2) reports a call handed to the host MPI. */
void strata_route_to_host(const struct strata_ctx *ctx, int call, const char *reason);

/* Reports (at STRATA_VERBOSE=2) a call strata serves, naming the algorithm. */
void strata_route_served(const struct strata_ctx *ctx, int call, const char *algorithm,
                         size_t bytes);

/* The name of the path a payload of `bytes` takes on this plane. */
const char *strata_route_path(const struct strata_plane *p, size_t bytes);

#endif
