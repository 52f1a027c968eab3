/* Names of MPI handles for messages a user can act on: predefined handles
 * by their MPI name ("MPI_SUM", "MPI_LONG_DOUBLE_INT"), others by kind and
 * handle value ("MPI_Op 0x...", "derived datatype (struct) 0x..."). */
#ifndef STRATA_MPI_NAMES_H
#define STRATA_MPI_NAMES_H

#include <mpi.h>
#include <stddef.h>

/* The MPI name of a predefined op, or NULL for any other. */
const char *strata_predefined_op_name(MPI_Op op);

/* Writes op's name into out: "MPI_MAXLOC", "MPI_Op 0x55d3c0a0". */
const char *strata_op_name(MPI_Op op, char *out, size_t len);

/* Writes type's name into out: "MPI_DOUBLE_INT", or for a derived type
 * the name the application gave it (MPI_Type_set_name) or its handle, and
 * its constructor: "derived datatype 'particle' (struct)", "derived
 * datatype 0x9c000001 (vector)". */
const char *strata_type_name(MPI_Datatype type, char *out, size_t len);

/* "0x..." for a handle of `size` bytes (pointers in Open MPI, integers in
 * MPICH). */
const char *strata_handle_hex(const void *handle, size_t size, char *out, size_t len);

#endif
