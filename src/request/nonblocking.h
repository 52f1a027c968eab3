/* Nonblocking and persistent collectives (issue 17): the operation object
 * behind an MPI_Ibcast (or one start of an MPI_Bcast_init), the queue of a
 * communicator's outstanding operations, and progress.
 *
 * How a call becomes an operation: the entry point (entry_points.c) opens a
 * strata_nb with strata_nb_begin and calls the same strata_call_<coll> as
 * the blocking form, passing it the operation's build (route/build.h,
 * strata_nb_build): the call makes every decision the blocking form makes
 * (route, argument checks, algorithm) and, where the blocking form would
 * run the algorithm, writes what to start into the build instead.
 * strata_nb_end then queues the operation, which starts and finishes what
 * its build says.
 *
 * The request the application gets is a handle of nb_handle.h: a real
 * host request (an inactive persistent receive), which strata's own
 * completion calls complete from a flag, and which is handed to the host
 * (its receive started, the message sent when the operation finishes) only
 * before a call the host serves.  docs/DESIGN.md, "Requests".
 *
 * Ordering: the operations of one communicator run one at a time, in the
 * order they were posted (MPI makes every rank post them in the same
 * order; persistent starts are posted by batch, in _init order, which MPI
 * makes the same on every rank: persistent.c); each communicator's first
 * one progresses beside every other communicator's.  A blocking collective first completes the ones pending on
 * its communicator. */
#ifndef STRATA_NONBLOCKING_H
#define STRATA_NONBLOCKING_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

#include "coll/agree.h"
#include "coll/block.h"
#include "coll/coll.h"
#include "coll/select.h"
#include "context/context.h"
#include "route/reduce_op.h"
#include "route/run_view.h"
#include "net/net.h"
#include "route/build.h"
#include "util/colls.h"
#include "request/nb_handle.h"

struct strata_nb {
    /* What the call decided (route/build.h); first, so that the memset of
     * a reused one clears it. */
    struct strata_build build;
    int kept;                   /* a persistent request's, reused by every start (not freed) */

    union {
        struct strata_task op;
        struct strata_block_task block;
        struct strata_reduce_task reduce;
        struct strata_barrier_task barrier;
        struct strata_net_bcast_task net_bcast;
        struct strata_net_reduce_task net_reduce;
        struct strata_net_block_task net_block;
        struct strata_net_barrier_task net_barrier;
    } u;
    MPI_Request host_req;       /* STRATA_BUILD_HOST */
    /* The agreement (coll/agree.h): build.sig is published when the
     * operation reaches its plane (the communicator's order), which starts
     * it only once every rank's agrees; a persistent request's, at every
     * start. */
    int agreeing;               /* started: 1 waiting for every rank's signature,
                                   2 for the v-collectives' pairs round */
    int attaching;              /* started on a persistent request's plane that
                                   this rank has not attached yet (context.h,
                                   strata_ctx_channel_ready) */
    /* The small class (build.agree_small; coll/agree.h): 1 while its
     * operation runs with the call open on the plane, 2 when it gave up (a
     * stalled operation saw a differing signature) and waits for every
     * rank's to refuse, 3 when it finished having read nothing and 4 when
     * what it read is suspect: both wait for every rank's signature. */
    int small;
    unsigned polls; /* its steps pending so far (the stall check's pace) */
    /* A v-collective's pairs' round (build.vpairs). */
    struct strata_agree_vround vround;

    /* Completion: the application's request (nb_handle.h), set DONE when
     * the operation finishes; NULL for a persistent start (on_done). */
    struct strata_nb_handle *handle;
    /* A persistent start: called (lock held) when it finishes, instead of
     * the nonblocking completion: persistent.c sends its message. */
    void (*on_done)(void *arg);
    void *done_arg;
    struct strata_nb *next_in_comm; /* the communicator's queue */
    struct strata_nb *next_active;  /* the heads of every queue */
    struct strata_nb *next_all;     /* every outstanding operation */
};

/* A new operation for a call of `coll` in `form`; NULL if strata is not
 * running (the caller hands the call to the host MPI). */
struct strata_nb *strata_nb_begin(enum strata_coll coll, enum strata_coll_form form);

/* The build the call fills (its strata_call_<coll>'s last argument). */
static inline struct strata_build *strata_nb_build(struct strata_nb *nb) { return &nb->build; }

/* Ends building.  Returns 1 if the host MPI takes the call (the operation is
 * gone; the caller calls the host's nonblocking form).  Otherwise rc is the
 * strata_call_<coll>'s result: on success the operation is queued and
 * *request completes when it finishes; on error nothing is queued and
 * *request is MPI_REQUEST_NULL; *rc_out is what the entry point returns. */
int strata_nb_end(struct strata_nb *nb, int rc, MPI_Request *request, int *rc_out);

/* Outstanding operations in this process (nonblocking.c changes it under
 * its lock). */
extern _Atomic int strata_nb_outstanding_count;

/* Whether any operation is outstanding in this process (cheap: inline, one
 * load, for every intercepted call).  A non-zero count is a hint: whoever
 * acts on it takes the lock. */
static inline int strata_nb_outstanding(void)
{
    /* Acquire (a plain load on x86): a thread that sees zero sees every
     * finished operation's writes, pairing with complete()'s release, so its
     * next blocking call may reuse their plane without a drain.  The host's
     * completion message orders them in time too, but sanitizers cannot see
     * an uninstrumented MPI's synchronisation. */
    return atomic_load_explicit(&strata_nb_outstanding_count, memory_order_acquire) != 0;
}

/* What the queue must tell the files above it (progress_thread.c,
 * persistent.c), which it does not call by name so that no loop of files
 * forms: each of those files fills its fields from a constructor, before
 * any MPI call (plain pointers: written before main, only read after).  A
 * field left NULL is skipped. */
struct strata_nb_upcalls {
    void (*setup)(void);             /* the queue is set up: the progress thread may start */
    void (*first_outstanding)(void); /* the outstanding count left zero: wake that thread */
    void (*finalize)(void);          /* MPI_Finalize, nothing outstanding: stop it */
    void (*flush_deferred)(void);    /* queue the persistent starts held back (persistent.c) */
};
extern struct strata_nb_upcalls strata_nb_upcalls;

/* Persistent starts are held back until the starting thread's next MPI
 * call other than MPI_Start / MPI_Startall, then queued in _init order
 * (persistent.c, docs/DESIGN.md "Order of persistent starts").  Set by
 * persistent.c when this thread holds such starts; every entry that may
 * queue, run or wait for an operation queues them first (the progress
 * below, strata_nb_drain, strata_nb_end).  initial-exec: libstrata is
 * linked or preloaded, never loaded by dlopen, so the variable sits at a
 * fixed offset from the thread pointer (the default model called
 * __tls_get_addr at every read). */
extern _Thread_local int strata_nb_deferred_mine __attribute__((tls_model("initial-exec")));

/* Advances every outstanding operation as far as it goes without waiting,
 * completing those that finish, after queueing this thread's held-back
 * persistent starts.  Any thread; a thread that finds another progressing
 * returns at once. */
void strata_nb_progress(void);

/* The same without queueing the held-back starts (MPI_Start: the starts of
 * one batch are queued together; a call being built, which may be one of
 * them). */
void strata_nb_progress_queued(void);

/* One unsuccessful poll of a completion loop (round counts from 0): spins,
 * then yields, and every few ms checks that the peers the outstanding
 * operations wait for still live. */
void strata_nb_idle(unsigned long round);

/* A blocking collective on ctx: completes the operations pending on it first. */
void strata_nb_drain(struct strata_ctx *ctx);

/* A blocking call strata hands to the host MPI while operations are
 * outstanding goes through the host's nonblocking form, on this thread's
 * request, and waits here with progress (a rank blocked inside the host MPI
 * would stall strata's operations that peers wait for). */
MPI_Request *strata_nb_host_request(void);
int strata_nb_host_wait(int rc);

/* ---- The completion calls on the application's request of a nonblocking
 * operation (nb_handle.h; interpose/requests.c, fortran/requests_fortran.c). */

enum strata_nb_how {
    STRATA_NB_WAIT, /* MPI_Wait: until complete, then *request = MPI_REQUEST_NULL */
    STRATA_NB_TEST, /* MPI_Test: the same if complete */
    STRATA_NB_PEEK  /* MPI_Request_get_status: the request unchanged */
};

/* A completion call on *request: if it is a nonblocking operation's
 * handle, strata completes it (progress until its operation finished for
 * WAIT; *flag; an empty status) and returns the call's result (MPI_SUCCESS
 * or the host's error).  -1: not one (nothing done). */
int strata_nb_complete(MPI_Request *request, enum strata_nb_how how, int *flag,
                       MPI_Status *status);

/* MPI_Request_free of an operation's handle: an active operation still
 * completes, and strata takes its handle back then.  *request set to
 * MPI_REQUEST_NULL and the call's result returned if it was one; -1 if not. */
int strata_nb_free(MPI_Request *request);

/* Whether request is the handle of an operation not yet completed by a
 * completion call (MPI_Cancel). */
int strata_nb_owns(MPI_Request request);

/* Before a call the host MPI serves gets requests: the receive of each
 * handle among them is started, and its message sent if its operation has
 * finished, so that the host completes it as any receive. */
void strata_nb_to_host_all(int count, const MPI_Request requests[]);

/* After the host's call completed *request: if it is a handle, it is taken
 * back and *request set to MPI_REQUEST_NULL (the host leaves a completed
 * persistent receive as it was); returns 1 then. */
int strata_nb_from_host(MPI_Request *request);

/* ---- Persistent requests (persistent.c uses these). */

/* The private communicator persistent requests receive on, and a tag of it
 * for a new request (-1: none left); the tag is released with the request. */
MPI_Comm strata_nb_persist_comm(void);
int strata_nb_persist_tag(void);
void strata_nb_persist_tag_free_locked(int tag); /* lock held */
MPI_Comm strata_nb_persist_comm_locked(void);       /* lock held, after the first */

/* The persistent start this thread built (or rearmed) is held back
 * (persistent.c queues it later with strata_nb_post_persistent): it counts
 * as outstanding from now on, so that every MPI call progresses (and
 * queues it). */
void strata_nb_defer(void);

/* Queues a held-back operation (strata_nb_defer) whose on_done completes a
 * persistent request; MPI_SUCCESS. */
int strata_nb_post_persistent(struct strata_nb *nb);

/* Building a persistent start that cannot go on: frees it. */
void strata_nb_abandon(struct strata_nb *nb);

/* A persistent operation built at _init: kept for every start if it holds
 * nothing that depends on the buffers' contents or must be redone per start
 * (packed views, a staged datatype, a one-rank copy made while building);
 * else abandoned: NULL.  A kept operation is not freed when it completes. */
struct strata_nb *strata_nb_keep(struct strata_nb *nb);

/* A kept operation made ready for its next start (progress state and
 * queue links cleared; the decisions stay): returns it. */
struct strata_nb *strata_nb_rearm(struct strata_nb *kept);

/* Frees a kept operation (not outstanding). */
void strata_nb_kept_free(struct strata_nb *kept);

/* Fills status as a completed collective leaves it, empty (MPI 4.0,
 * 3.7.3); MPI_STATUS_IGNORE: nothing.  Strata's completion of its own
 * handles, nonblocking and persistent. */
void strata_nb_status_empty(MPI_Status *status);

/* The lock of every structure above (persistent.c's table too). */
void strata_nb_lock(void);
void strata_nb_unlock(void);

#endif
