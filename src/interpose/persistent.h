/* Persistent collectives (persistent.c): what the completion calls ask. */
#ifndef STRATA_PERSISTENT_H
#define STRATA_PERSISTENT_H

#include <mpi.h>
#include <stdatomic.h>

/* Whether request is one of strata's persistent requests (active_only: and
 * started, not yet finished). */
int strata_persist_owns(MPI_Request request, int active_only);

/* MPI_Request_free of a persistent request: forgets an inactive one (the
 * caller then frees the host's request); an active one is kept, completed
 * and freed by strata when its start finishes, and *request set to
 * MPI_REQUEST_NULL: returns 1 then. */
int strata_persist_free(MPI_Request *request);

/* Started persistent requests whose host receive was not started: the
 * completion calls ask strata_persist_complete first while any is (one
 * relaxed load: a hint; the request's own state is read under the lock). */
extern _Atomic int strata_persist_unhosted_count;
static inline int strata_persist_unhosted(void)
{
    return atomic_load_explicit(&strata_persist_unhosted_count, memory_order_relaxed) != 0;
}

enum strata_persist_how {
    STRATA_PERSIST_WAIT, /* MPI_Wait: until complete, then inactive */
    STRATA_PERSIST_TEST, /* MPI_Test: inactive if complete */
    STRATA_PERSIST_PEEK  /* MPI_Request_get_status: the request unchanged */
};

/* A completion call on one request: if it is one of strata's started
 * persistent requests that the host MPI has not seen, strata completes it
 * (progress until its operation finished for WAIT; *flag; an empty status)
 * and returns 1.  0: the host's call serves request. */
int strata_persist_complete(MPI_Request request, enum strata_persist_how how, int *flag,
                            MPI_Status *status);

/* Before a call the host MPI serves gets one of strata's started persistent
 * requests (an array of requests, a Fortran completion call): the host
 * receive behind it is started, and completed at once if its operation has
 * finished; the host completes the request from then on.  Anything else is
 * left alone. */
void strata_persist_to_host(MPI_Request request);
void strata_persist_to_host_all(int count, const MPI_Request requests[]);

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
    /* Frees args and what it owns (copied arrays, duplicated datatypes);
     * NULL: free(args). */
    void (*release)(void *args);
};

/* _init of such a request for a call of coll (enum strata_coll) on comm,
 * decided as the int forms' _init decides.  *host set: the host's own
 * _init_c form serves the call (strata is off, or no tag is left) and
 * ext->args stays the caller's; else the result of the _init, ext->args
 * now the request's (freed with it, or at once on an error). */
int strata_persist_init_ext(int coll, MPI_Comm comm,
                            const struct strata_persist_ext *ext, MPI_Request *request,
                            int *host);

/* What a rank reads of a persistent collective's arguments at every start
 * (MPI's significant arguments: the root's side of a rooted v-collective,
 * no send side in place) and the request owns: the arrays of counts and
 * displacements (bit 0 send counts, 1 send displacements, 2 receive
 * counts, 3 receive displacements) and their length, copied at _init, and
 * whether the send and receive datatypes are duplicated.  An application
 * may free its own right after _init (both hosts allow it; mpi4py does).
 * A reduction's datatype is not duplicated: a user op must be handed the
 * application's own handle, which therefore stays the application's to
 * keep alive while the request lives. */
struct strata_persist_read {
    unsigned arrays;
    int len, stype, rtype;
};
struct strata_persist_read strata_persist_args_read(int coll, MPI_Comm comm, int root,
                                                    const void *sendbuf, const void *recvbuf);

/* *type duplicated if it is a derived datatype (*owned set: PMPI_Type_free
 * it with the request); a named one is kept as is (it cannot be freed, and
 * its handle is what the reduction kernels compare). */
int strata_persist_own_type(MPI_Datatype *type, int *owned);

#endif
