/* Reduction kernels for the predefined MPI operations on the predefined C
 * and Fortran datatypes (MPI-3.1 section 5.9.2), as the host MPI accepts
 * them.  Combinations the host does not take, and user-defined operations,
 * have no kernel: strata hands those calls to the host MPI, which accepts
 * or rejects them as it always does. */
#ifndef STRATA_OPS_H
#define STRATA_OPS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

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

/* 1 if type is a predefined C type without holes (not one of the pairs
 * with padding): lower bound 0, extent equal to its size, its bytes in
 * memory order, known without asking the host MPI, whose extent queries
 * are a fair share of a small call. */
int strata_type_plain(MPI_Datatype type);

/* strata_type_size, and *plain = strata_type_plain, in one look-up. */
int strata_type_size_plain(MPI_Datatype type, int *size, int *plain);

/* MPI_Type_size without asking the host for a predefined C type (its size
 * is kept per thread with the type above); any other type goes to the host,
 * which also reports a bad handle as it would without strata. */
int strata_type_size(MPI_Datatype type, int *size);

/* Asks the host once which operations it accepts on the Fortran types
 * strata has kernels for (MPI_Reduce_local under MPI_ERRORS_RETURN, the
 * application's handlers restored): called at MPI_Init, before the
 * application can use MPI_COMM_WORLD, and otherwise at the first reduction
 * on a Fortran type.  Needs MPI initialised. */
void strata_reduce_probe_host(void);

/* 1 when type is a Fortran type strata has a kernel for under op but the
 * host rejected that pair: such calls are the host's, error included. */
int strata_reduce_host_rejects(MPI_Op op, MPI_Datatype type);

/* (op, type) as the device reducers number them (transport/device_reduce.h:
 * enum strata_dev_op, enum strata_dev_kind): 0, or -1 when strata has no
 * CPU kernel for the pair (then no device reducer is asked either). */
int strata_reduce_classify(MPI_Op op, MPI_Datatype type, int *dop, int *dkind);
/* The CPU kernel of a classified pair, or NULL. */
strata_reduce_fn strata_reduce_kernel_at(int dop, int dkind);
/* Fortran LOGICAL's .false. and .true. words as the host encodes them
 * (probed once; both 0 where the probe refused LOGICAL kernels, which
 * strata_reduce_classify then never names). */
void strata_reduce_logical_words(int32_t *false_word, int32_t *true_word);

#endif
