/* Fortran MPI_Op_create and MPI_Op_free (rows of calls.def): the host's
 * Fortran binding creates and frees the op, strata records it with a
 * Fortran caller (coll/user_op.h). */
#ifndef STRATA_FORTRAN_USER_OPS_H
#define STRATA_FORTRAN_USER_OPS_H

#include <mpi.h>

/* fn: the Fortran SUBROUTINE's address; commute: a Fortran LOGICAL, passed
 * to the host untouched; op: the new handle.  The host's ierror back. */
int strata_fortran_op_create(void (*fn)(void), MPI_Fint *commute, MPI_Fint *op);

/* op: set to MPI_OP_NULL by the host.  The host's ierror back. */
int strata_fortran_op_free(MPI_Fint *op);

#endif
