/* The request an MPI_I<coll> returns (issue 31 item 3): a handle strata's
 * own completion calls complete, without a host request per operation.
 *
 * Each handle is an inactive persistent receive of an empty message (a
 * real host request: MPI_Request_c2f, arrays mixing it with point-to-point
 * requests and the host's own calls all accept it), made once and kept in
 * a pool: a post takes one, the completion call that frees the application's
 * request gives it back.  While its operation runs the receive stays
 * inactive and strata's MPI_Wait, MPI_Test, MPI_Request_get_status,
 * MPI_Request_free and MPI_Cancel answer from the handle's state alone (a
 * flag: no host call).  Only when the request reaches a call the host
 * serves (an array of requests, Open MPI's Fortran completion calls) is the
 * receive started ("hosted", strata_nb_handle_to_host in nonblocking.c):
 * strata then sends the empty message when the operation finishes (at once
 * if it has), the host completes the receive as any other, and strata sets
 * the application's handle to MPI_REQUEST_NULL after the host's call and
 * takes the receive back.  docs/DESIGN.md, "Requests".
 *
 * Each handle has a tag of its own on its own duplicate of MPI_COMM_SELF
 * (a hosted receive must match only its own message); a new duplicate
 * every 32768 handles, so the pool never runs out of tags.  Handles live
 * until MPI_Finalize: a lookup walks the table without a lock. */
#ifndef STRATA_NB_HANDLE_H
#define STRATA_NB_HANDLE_H

#include <mpi.h>
#include <stdatomic.h>

enum strata_nb_handle_state {
    STRATA_NB_HANDLE_FREE,   /* in the pool */
    STRATA_NB_HANDLE_ACTIVE, /* its operation runs */
    STRATA_NB_HANDLE_DONE    /* its operation finished; a completion call frees it */
};

struct strata_nb_handle {
    MPI_Request req; /* the persistent receive (the application's handle) */
    MPI_Comm comm;
    int tag;
    /* enum strata_nb_handle_state.  ACTIVE -> DONE with release (the
     * operation's results are written before a completion call sees it);
     * read with acquire by the completion calls. */
    _Atomic int state;
    /* The receive was started for a call the host serves (under
     * nonblocking.c's lock; read without it by the completion calls of the
     * thread that owns the request, which alone hosts it). */
    _Atomic int hosted;
    int app_freed; /* MPI_Request_free'd while active (under nonblocking.c's lock) */
    struct strata_nb_handle *next_bucket; /* set before it is published, then fixed */
    struct strata_nb_handle *next_free;
};

/* A handle from the pool (made if the pool is empty), ACTIVE, not hosted;
 * NULL if the host could not make one (*rc its error). */
struct strata_nb_handle *strata_nb_handle_take(int *rc);

/* The handle back to the pool (its receive inactive; no one uses it). */
void strata_nb_handle_give(struct strata_nb_handle *h);

/* Handles taken and not given back: while none is, the completion calls
 * skip the lookup (relaxed: a hint; a thread's own requests were counted
 * before its post returned). */
extern _Atomic int strata_nb_handles_live_count;
static inline int strata_nb_handles_live(void)
{
    return atomic_load_explicit(&strata_nb_handles_live_count, memory_order_relaxed) != 0;
}

/* The handle whose receive is req, taken (ACTIVE or DONE), or NULL. */
struct strata_nb_handle *strata_nb_handle_find(MPI_Request req);

/* MPI_Finalize: every handle's receive and communicator freed. */
void strata_nb_handle_finalize(void);

#endif
