/* What the entry points of collectives.c share with those of other files
 * (vcollectives.c): the route of a call, its accounting, and the views of
 * datatypes as byte runs.  See collectives.c for each. */
#ifndef STRATA_INTERPOSE_CALL_H
#define STRATA_INTERPOSE_CALL_H

#include <mpi.h>
#include <stddef.h>

#include "context/context.h"
#include "util/colls.h"

/* The context if strata serves coll on comm, else NULL (hand-off reported,
 * STRATA_STATS counted). */
struct strata_ctx *strata_call_served_ctx(MPI_Comm comm, enum strata_coll coll);

/* The verdict once this rank read its own arguments: why (NULL: nothing)
 * it leaves the call to the host; with STRATA_CHECK_ARGS the ranks agree
 * on root and bytes first.  NULL: the host MPI serves the call. */
struct strata_ctx *strata_call_settle(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                      long long bytes, const char *why);

/* STRATA_STATS: one served call of coll, run by `algorithm`. */
void strata_call_count_algorithm(enum strata_coll coll, const char *algorithm);

/* Where count elements of type at buf lie as one run of `bytes` bytes in
 * memory order, or NULL. */
void *strata_call_contiguous_run(void *buf, long long count, MPI_Datatype type, size_t bytes);

/* Packs (unpack 0) or unpacks count elements of type at buf to or from
 * packed. */
int strata_call_pack(const void *buf, long long count, MPI_Datatype type, void *packed,
                     MPI_Comm comm, int unpack);

#endif
