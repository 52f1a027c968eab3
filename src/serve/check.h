/* Per-call argument agreement, from the entry layer (STRATA_CHECK_ARGS).
 *
 * Without it, strata would trust what the standard requires: every rank of
 * a collective calls the same collective with the same root and matching
 * type signatures.  An erroneous program breaks that trust: ranks whose
 * byte counts differ compute different flag bases and algorithms, and a
 * peer's copies can run past a buffer.  The agreement (coll/agree.h on a
 * node's plane; one host MPI reduction across nodes) makes such a call an
 * error on the rank whose receive differs, with no byte moved outside any
 * buffer, and no hang.
 *
 * The entry layer's side, per blocking call: strata_check_begin once the
 * rank has read its own arguments (what it receives and sends per block),
 * strata_check_algorithm once it has chosen an algorithm, and
 * strata_check_end with the call's result.  Each takes the call's build
 * (route/build.h): NULL for a blocking call; a nonblocking or persistent
 * call's keeps its signature for when its operation reaches the plane
 * (nonblocking.c), and the plane's open call is never its own. */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include <stddef.h>

#include "coll/agree.h"
#include "route/build.h"
#include "route/route.h"

/* What strata_check_begin decided. */
enum strata_check_outcome {
    STRATA_CHECK_RUN,     /* serve the call */
    STRATA_CHECK_TO_HOST, /* every rank hands it to the host MPI (why says why) */
    STRATA_CHECK_REFUSED  /* the ranks disagree: nothing moved; the entry
                             point returns strata_check_take_refused() */
};

/* Set when strata_check_begin refused this thread's call: the entry point's
 * hand-off to the host MPI (HOST_CALL) returns strata_check_take_refused()
 * instead. */
extern _Thread_local int strata_check_refused;
int strata_check_take_refused(void);

/* Whether STRATA_CHECK_ARGS is on at all (auto or 1). */
int strata_check_enabled(void);

/* This rank's part of the call: its signature (sig->host: it leaves the
 * call to the host MPI), `bytes`, the most it streams through the plane,
 * and whether the collective's node path for such a call is one plane
 * operation through the segment (`one_operation`: what lets a small call
 * skip the wait for everyone's signature).  `call` is the call id
 * STRATA_STATS counts (util/colls.h). */
enum strata_check_outcome strata_check_begin(struct strata_ctx *ctx, int call,
                                             const struct strata_sig_args *sig, size_t bytes,
                                             int one_operation, char *why, size_t whylen,
                                             struct strata_build *build);

/* After the choice: an algorithm that exposes user buffers to peers
 * (single_copy) needs everyone's agreement first, even for a small call.
 * STRATA_CHECK_RUN, or STRATA_CHECK_REFUSED with *rc. */
enum strata_check_outcome strata_check_algorithm(struct strata_ctx *ctx, int call,
                                                 int single_copy, int *rc,
                                                 struct strata_build *build);

/* The v-collectives, whose counts differ per rank by design, once settled:
 * the pairs' round of coll/agree.h over what this rank sends each rank
 * (to[size]) and expects from each (from[size], bytes; -1: nothing),
 * `receives`: it receives anything.  Blocking (build NULL): now; with a
 * build: kept in it for when its operation starts.  STRATA_CHECK_RUN, or
 * STRATA_CHECK_REFUSED (the entry point's HOST_CALL returns
 * strata_check_take_refused()). */
enum strata_check_outcome strata_check_vcounts(struct strata_ctx *ctx, int call,
                                               const long long *to, const long long *from,
                                               int receives, struct strata_build *build);

/* Whether this blocking call's v-collective operation checks the counts
 * itself (coll/agree.h: a blocking call under STRATA_CHECK_ARGS=auto, whose
 * pairs were not compared before it; block.h's v.verify). */
int strata_check_verifies(const struct strata_ctx *ctx, const struct strata_build *build);

/* A v-collective operation found that the counts differ (it returned
 * STRATA_VBLOCK_FOUND, or its class without verify): reports it on this rank
 * (a refusal first rewinds the plane as every rank does) and ends the open
 * call.  Returns this rank's error. */
int strata_check_vfound(struct strata_ctx *ctx, int call, const struct strata_agree_vfinding *f);

/* The call's result: rc, or the error of a disagreement found while it ran
 * (a stalled wait gave up) or after it (a small call's sources differ). */
int strata_check_end(struct strata_ctx *ctx, int call, int rc, const struct strata_build *build);

#endif
