/* Per-call argument agreement (STRATA_CHECK_ARGS=1).
 *
 * Without it, strata trusts what the standard requires: every rank of a
 * collective calls the same collective with the same root and matching type
 * signatures, and each rank decides alone whether its own arguments are for
 * the host MPI to judge.  An erroneous program breaks that trust: ranks whose
 * byte counts differ compute different flag bases and algorithms, and a rank
 * that hands its call to the host leaves the others waiting in strata.
 *
 * With it, every rank publishes what it brings (collective, root, bytes, or
 * "for the host") before any data moves and reads what every other rank
 * brought; all ranks reach the same verdict, and a call that is not the same
 * everywhere goes to the host MPI on every rank, unchanged, so the
 * application gets exactly the host's errors (MPI_ERR_TRUNCATE and the like)
 * and the host's behaviour. */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include <stddef.h>

#include "interpose/route.h"

/* Whether STRATA_CHECK_ARGS is on. */
int strata_check_enabled(void);

/* What this rank brings: coll, root (-1 if unrooted) and the bytes of its
 * type signature (per block for block collectives), or bytes = -1 when this
 * rank leaves the call to the host MPI.  Collective over ctx's communicator.
 * Returns 1 if every rank brought the same call with bytes >= 0; otherwise 0,
 * with the same description of the disagreement on every rank in why. */
int strata_check_call(struct strata_ctx *ctx, enum strata_coll coll, int root, long long bytes,
                      char *why, size_t whylen);

#endif
