/* Reduce_scatter(_block), Scan and Exscan behind every form of their entry
 * points (C, _c, Fortran), as collectives.h for the first eight: the MPI
 * function's arguments, then `large` and the call's build (collectives.h,
 * device_vcalls.c).
 *
 * strata_serve_reduce_scatter: recvcounts NULL means MPI_Reduce_scatter_block
 * with `blockcount` per rank; otherwise the array (int, or MPI_Count when
 * `large`) of MPI_Reduce_scatter. */
#ifndef STRATA_SERVE_RS_SCAN_CALLS_H
#define STRATA_SERVE_RS_SCAN_CALLS_H

#include <mpi.h>

#include "route/build.h"

/* On host memory only (rs_scan_calls.c; exclusive: MPI_Exscan), behind the
 * staging of device buffers (device_vcalls.c). */
int strata_serve_reduce_scatter(const void *sendbuf, void *recvbuf, const void *recvcounts,
                                long long blockcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, int large, struct strata_build *build);
int strata_serve_scan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, int exclusive, int large,
                      struct strata_build *build);

#endif
