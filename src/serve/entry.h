/* The steps every entry point takes (collectives.c), for the collectives
 * whose entry points live in files of their own (rs_scan_calls.c): find the
 * context, settle the route with the other ranks, count and report.  Each
 * takes the call's build (route/build.h; NULL: a blocking call). */
#ifndef STRATA_SERVE_ENTRY_H
#define STRATA_SERVE_ENTRY_H

#include <mpi.h>
#include <stddef.h>

#include "coll/coll.h"
#include "context/context.h"
#include "route/build.h"
#include "route/reduce_op.h"
#include "util/colls.h"

/* The context if strata serves coll on comm, else NULL (hand-off reported). */
struct strata_ctx *strata_entry_served(MPI_Comm comm, enum strata_coll coll,
                                       struct strata_build *build);

/* The verdict once this rank has read its arguments: why (NULL: nothing)
 * this rank leaves the call; with STRATA_CHECK_ARGS the ranks agree first.
 * NULL if the call goes to the host MPI. */
struct strata_ctx *strata_entry_settle(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                       long long bytes, const char *why,
                                       struct strata_build *build);

/* The same for a v-collective: what this rank sends and receives in all
 * (bytes; STRATA_SIG_UNUSED for a side it does not use), which the pairs'
 * round compares where the region cannot hold a count per rank
 * (serve/check.h, strata_check_vcounts). */
struct strata_ctx *strata_entry_settle_v(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                         long long vsent, long long vrecvd, const char *why,
                                         struct strata_build *build);

/* STRATA_STATS: one served call of coll, run by `algorithm`. */
void strata_entry_count(enum strata_coll coll, const char *algorithm,
                        const struct strata_build *build);

/* Bytes of count elements' type signature, -1 for the host MPI to judge. */
long long strata_entry_signature(long long count, MPI_Datatype type);

/* A reduction's arguments with count elements on both sides (Scan,
 * Exscan), or why strata leaves the call. */
const char *strata_entry_reduce_args(const struct strata_ctx *ctx, struct strata_reduce_args *a,
                                     struct strata_reduce_how *r, char *why, size_t whylen,
                                     const void *sendbuf, void *recvbuf, long long count,
                                     MPI_Datatype type, MPI_Op op);

/* A call across nodes: counted; the verbose description buffer (NULL when
 * nothing will be printed); reported once the composition filled it. */
char *strata_entry_across_start(enum strata_coll coll, char *desc,
                                const struct strata_build *build);
int strata_entry_across_done(struct strata_ctx *ctx, enum strata_coll coll, size_t bytes,
                             const char *desc, int rc, const struct strata_build *build);

#endif
