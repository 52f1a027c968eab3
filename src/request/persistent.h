/* Persistent collectives (persistent.c): what the completion calls ask. */
#ifndef STRATA_PERSISTENT_H
#define STRATA_PERSISTENT_H

#include <mpi.h>
#include <stdatomic.h>

#include "route/build.h"
#include "util/colls.h"

/* MPI_Start: a start of one of strata's persistent requests (built, held
 * back until this thread's next other MPI call); the host's PMPI_Start for
 * any other request. */
int strata_persist_start(MPI_Request *request);

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

/* A persistent collective's arguments as its _init received them
 * (entry_points.c, from calls.def's row, whose parameters bear these
 * names): counts and arrays of either width (large: the _init_c form, with
 * MPI_Count counts and MPI_Aint displacements).  The request keeps a copy,
 * and its own copies of the arrays and derived datatypes it reads at every
 * start (the application may free its own after _init: both hosts allow
 * it; mpi4py does).  A reduction's datatype is not duplicated: a user op
 * must be handed the application's own handle, which therefore stays the
 * application's to keep alive while the request lives. */
struct strata_persist_args {
    enum strata_coll coll;
    int large;
    const void *sendbuf;
    void *recvbuf;
    long long scount, rcount;
    MPI_Datatype stype, rtype;
    const void *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    /* Arguments these fields cannot hold (Alltoallw and the neighbourhood
     * collectives: a datatype per block, arrays as long as a topology's
     * degrees), copied by the caller (serve/wpersist.c): a request made
     * owns it from then on and frees it with release; the request copies
     * no array of its own then.  Where *host is set it stays the caller's.
     * NULL otherwise. */
    void *kept;
    void (*release)(void *kept);
};

/* What a request's collective and form do with its arguments at a start:
 * decide is the blocking form's decision (strata_call_<coll>) given the
 * start's build (route/build.h), which it fills for the operation; host the
 * host MPI's nonblocking form (PMPI_I<coll>, or its _c form) for a start
 * strata leaves. */
struct strata_persist_calls {
    int (*decide)(const struct strata_persist_args *args, struct strata_build *build);
    int (*host)(const struct strata_persist_args *args, MPI_Request *request);
};

/* _init of a persistent collective: the request (its arguments copied,
 * decided as a start would decide: route, argument checks, algorithm), or
 * *host set when the host MPI's own _init serves the call (strata is off,
 * no tag is left, its arguments could not be copied, or _init decided to
 * leave the call to the host: then the host's persistent request matches
 * it by _init order and reports its errors, as it would without strata).
 * calls must live as long as the request (a static table). */
/* *type duplicated if it is a derived datatype (*owned set: PMPI_Type_free
 * it when done); a named one is kept as is.  For operations that read a
 * datatype after their entry point returned (serve/wcollectives.c). */
int strata_persist_own_type(MPI_Datatype *type, int *owned);

int strata_persist_init(const struct strata_persist_args *args,
                        const struct strata_persist_calls *calls, MPI_Request *request, int *host);

#endif
