/* Hand-off reasons that name the argument and its value, for the calls
 * strata leaves to the host MPI because of their arguments. */
#ifndef STRATA_REASONS_H
#define STRATA_REASONS_H

#include <mpi.h>

#include "util/hot.h"

/* Which data arguments a call uses on this rank (a bit each). */
enum { STRATA_SIDE_SEND = 1, STRATA_SIDE_RECV = 2 };

/* Why this rank's arguments are for the host MPI to judge: the first of
 * root (when root_used) outside [0, size), a send or receive side in
 * `sides` with a negative count, a null or uncommitted datatype, MPI_IN_PLACE
 * where not allowed, address 0, or a signature other than `block` bytes per
 * rank (block < 0: unknown), or the two sides sharing memory.  The text
 * lives in a per-thread buffer until the next call. */
STRATA_COLD const char *strata_reason_bad_args(int root_used, int root, int size, int sides,
                                   const void *sendbuf, long long scount, MPI_Datatype stype,
                                   const void *recvbuf, long long rcount, MPI_Datatype rtype,
                                   long long block);

/* Why a communicator has no strata context at all (strata off or not set
 * up, MPI_COMM_NULL, an intercommunicator). */
const char *strata_reason_no_context(MPI_Comm comm);

#endif
