/* A reduction passed MPI_DATATYPE_NULL: strata's own MPI_ERR_TYPE.
 *
 * Handing such a call over would leave the answer to the host, and the
 * hosts differ: Open MPI and MPICH 4.0 return MPI_ERR_TYPE, MPICH 5.0 fails
 * an assertion inside the reduction (mpir_datatype.h: dt_ptr) and ends the
 * job whatever the error handler.  So strata answers it the same on every
 * host, before the device layer or the host sees the call. */
#ifndef STRATA_SERVE_NULL_TYPE_H
#define STRATA_SERVE_NULL_TYPE_H

#include <mpi.h>

#include "route/build.h"
#include "util/colls.h"

/* 1 when strata answers the call itself: datatype is MPI_DATATYPE_NULL on
 * an intracommunicator (MPI_COMM_NULL and intercommunicators, whose roots'
 * groups may pass anything, stay the host's).  *rc is then MPI_ERR_TYPE,
 * raised on comm's error handler first, with a message naming the call.
 * Costs one comparison when datatype is anything else. */
int strata_null_type_answer(MPI_Comm comm, enum strata_coll coll,
                            const struct strata_build *build, int *rc);

static inline int strata_null_type(MPI_Datatype datatype, MPI_Comm comm, enum strata_coll coll,
                                   const struct strata_build *build, int *rc)
{
    if (__builtin_expect(datatype != MPI_DATATYPE_NULL, 1)) return 0;
    return strata_null_type_answer(comm, coll, build, rc);
}

#endif
