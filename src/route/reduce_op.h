/* How a reduction combines: a predefined op's kernel (coll/ops.h) or a
 * user-defined op's function (coll/user_op.h), and why strata hands a
 * reduction to the host MPI when it has neither. */
#ifndef STRATA_REDUCE_OP_H
#define STRATA_REDUCE_OP_H

#include <mpi.h>
#include <stddef.h>

#include "coll/coll.h"
#include "context/context.h"

/* One reduction call's combining state. */
struct strata_reduce_how {
    struct strata_user_op_call user;
    int staged;      /* the datatype has holes: data moves through `stage` */
    void *stage;     /* count elements in the datatype's layout, private */
    void *user_recv; /* the application's receive buffer, filled from stage */
    long long count;
    MPI_Datatype type;
    MPI_Comm comm;
};

/* Chooses how strata combines count elements of type with op on ctx: sets
 * a->fn or a->user (pointing into *r).  Returns NULL, or why the host MPI
 * serves the call (naming the op or datatype), written into why[len].  The
 * choice depends only on arguments every rank passes alike. */
const char *strata_reduce_op_choose(const struct strata_ctx *ctx, MPI_Op op, MPI_Datatype type,
                                    long long count, struct strata_reduce_args *a,
                                    struct strata_reduce_how *r, char *why, size_t len);

/* Once the call is strata's, with a's buffers set: a datatype with holes
 * is copied, element by element as the host MPI would, into a private
 * buffer that takes the place of this rank's input and (receives: the
 * root, or every rank of Allreduce) of its result.  The elements' padding
 * and the gaps between them are never written in the application's
 * buffers. */
void strata_reduce_op_begin(struct strata_reduce_args *a, struct strata_reduce_how *r,
                            int receives);

/* After the reduction: the result goes back to the application's buffer;
 * scratch is released. */
void strata_reduce_op_end(struct strata_reduce_how *r);

#endif
