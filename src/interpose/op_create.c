/* MPI_Op_create and MPI_Op_free: strata remembers each user-defined op's
 * function and commutativity (coll/user_op.h) so that its reductions can
 * serve them.  The host MPI creates and frees the op as always and reports
 * its own errors; strata records only what the host accepted. */
#include <mpi.h>

#include "coll/user_op.h"
#include "util/log.h"

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    strata_user_op_lock();
    int rc = PMPI_Op_create(user_fn, commute, op);
    /* Nested: a binding's MPI_Op_create (MPICH's Fortran one) called this
     * through the host; that binding's wrapper registers the op with its
     * own caller, and one creation must count once (the op's serial). */
    if (rc == MPI_SUCCESS && user_fn && !strata_user_op_nested() &&
        strata_user_op_register(*op, (void (*)(void))user_fn, strata_user_op_call_c, commute))
        strata_verbose(1, "out of memory recording a user-defined op: the host MPI serves "
                          "reductions with it");
    strata_user_op_unlock();
    return rc;
}

int MPI_Op_free(MPI_Op *op)
{
    /* Forgotten before the host frees it, under the lock: the handle may
     * be reused by the next MPI_Op_create once freed.  Reductions already
     * running hold their own copy of the entry; contexts cache nothing of
     * an op. */
    strata_user_op_lock();
    MPI_Op handle = op ? *op : MPI_OP_NULL;
    int rc = PMPI_Op_free(op);
    if (rc == MPI_SUCCESS) strata_user_op_forget(handle);
    strata_user_op_unlock();
    return rc;
}
