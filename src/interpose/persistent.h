/* Persistent collectives (persistent.c): what the completion calls ask. */
#ifndef STRATA_PERSISTENT_H
#define STRATA_PERSISTENT_H

#include <mpi.h>

/* Whether request is one of strata's persistent requests (active_only: and
 * started, not yet finished). */
int strata_persist_owns(MPI_Request request, int active_only);

/* MPI_Request_free of a persistent request: forgets an inactive one (the
 * caller then frees the host's request); an active one is kept, completed
 * and freed by strata when its start finishes, and *request set to
 * MPI_REQUEST_NULL: returns 1 then. */
int strata_persist_free(MPI_Request *request);

struct strata_ctx;
/* A communicator's context goes (strata_nb lock held): persistent requests
 * that kept an operation built on it build again at their next start. */
void strata_persist_forget_ctx_locked(const struct strata_ctx *ctx);

#endif
