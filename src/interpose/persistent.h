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

/* A persistent request whose arguments live outside this file: the MPI-4
 * large-count forms (MPI_Bcast_init_c, ...; large_count_persist.c), whose
 * counts and arrays are MPI_Count and MPI_Aint.  decide is the blocking
 * form's decision for one start (strata_call_<coll> with large 1), host the
 * host MPI's nonblocking _c form for a request strata leaves; args is
 * malloc'd and handed to both. */
struct strata_persist_ext {
    int (*decide)(const void *args);
    int (*host)(const void *args, MPI_Request *request);
    void *args;
};

/* _init of such a request for a call of coll (enum strata_coll) on comm,
 * decided as the int forms' _init decides.  *host set: the host's own
 * _init_c form serves the call (strata is off, or no tag is left) and
 * ext->args stays the caller's; else the result of the _init, ext->args
 * now the request's (freed with it, or at once on an error). */
int strata_persist_init_ext(int coll, MPI_Comm comm,
                            const struct strata_persist_ext *ext, MPI_Request *request,
                            int *host);

#endif
