/* Reduction kernels for the predefined MPI operations on the predefined C
 * and Fortran datatypes (MPI-3.1 section 5.9.2), as the host MPI accepts
 * them.  Combinations the host does not take, and user-defined operations,
 * have no kernel: strata hands those calls to the host MPI, which accepts
 * or rejects them as it always does. */
#ifndef STRATA_OPS_H
#define STRATA_OPS_H

#include <mpi.h>
#include <stddef.h>

/* dst[i] = a[i] op b[i] for i < count elements.  dst may be a (combining
 * into an accumulator) but neither may overlap b.  Three operands let the
 * first two operands of a reduction meet in the destination, saving a copy. */
typedef void (*strata_reduce_fn)(void *dst, const void *a, const void *restrict b, size_t count);

/* The kernel for (op, datatype), or NULL if strata has none. */
strata_reduce_fn strata_reduce_kernel(MPI_Op op, MPI_Datatype type);

/* 1 if type is one of the predefined C datatypes strata reduces (a named
 * type, committed, its elements in memory order), found in a static table:
 * cheaper than asking the host (MPI_Type_get_envelope), which the entry
 * points do per call otherwise.  0 says nothing about other types. */
int strata_predefined_c_type(MPI_Datatype type);

#endif
