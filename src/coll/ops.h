/* Reduction kernels for the predefined MPI operations on the predefined C
 * datatypes (MPI-3.1 section 5.9.2).  Combinations the standard does not
 * define, and user-defined operations, have no kernel: strata hands those
 * calls to the host MPI, which accepts or rejects them as it always does. */
#ifndef STRATA_OPS_H
#define STRATA_OPS_H

#include <mpi.h>
#include <stddef.h>

/* acc[i] = acc[i] op src[i] for i < count elements. */
typedef void (*strata_reduce_fn)(void *restrict acc, const void *restrict src, size_t count);

/* The kernel for (op, datatype), or NULL if strata has none. */
strata_reduce_fn strata_reduce_kernel(MPI_Op op, MPI_Datatype type);

#endif
