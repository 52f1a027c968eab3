/* Persistent collectives (persistent.c): what the completion calls ask. */
#ifndef STRATA_PERSISTENT_H
#define STRATA_PERSISTENT_H

#include <mpi.h>

/* Whether request is one of strata's persistent requests (active_only: and
 * started, not yet finished). */
int strata_persist_owns(MPI_Request request, int active_only);

#endif
