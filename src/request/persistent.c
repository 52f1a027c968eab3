/* Persistent collectives (MPI-4 MPI_Bcast_init, ...; Open MPI 4.1 has them
 * as MPIX_Bcast_init, ... in mpi-ext.h) and their starts (MPI_Start /
 * MPI_Startall, interpose/requests.c).
 *
 * The request is a persistent receive of an empty message on strata's
 * private duplicate of MPI_COMM_SELF, with a tag of its own for its life.
 * MPI_Start builds one operation as the nonblocking form builds it and
 * holds it back: the starting thread's next other MPI call queues the run
 * of starts so far in _init order (MPI-4 matches persistent collectives by
 * _init, whatever order the ranks start them in; see "Order of persistent
 * starts" below).  The request's receive stays inactive: strata's MPI_Wait, MPI_Test and
 * MPI_Request_get_status complete the start themselves (the operation's
 * end is a flag; no host request is started, matched or tested).  Only
 * when the request reaches a call the host MPI serves (an array of
 * requests, a Fortran completion call on Open MPI) is its receive started
 * (strata_persist_to_host), and strata then sends the empty message when
 * the operation finishes (at once if it has), so the host completes it as
 * any receive; from then until the next start the request is the host's.
 * _init decides (route, argument checks, algorithm, tree, chunking, the
 * composition across nodes) by building the operation once, as the
 * nonblocking form builds it, and STRATA_STATS counts that under
 * MPI_<coll>_init.  Where the built operation holds nothing that depends on
 * the buffers' contents (contiguous buffers, no staged datatype), it is kept
 * and every MPI_Start only resets its progress state and queues it again:
 * the start costs the data movement alone.  Otherwise each start builds it
 * again from the kept decisions (the algorithm is not chosen again, nothing
 * is counted again).  docs/DESIGN.md, "Persistent collectives", says what is
 * decided when.  A call strata leaves to the host MPI at _init is the
 * host's own persistent request. */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "context/runtime.h"
#include "request/nonblocking.h"
#include "request/persistent.h"
#include "shm/wait.h"
#include "util/log.h"

struct strata_persist {
    MPI_Request req; /* the application's handle (compared, never dereferenced) */
    int tag;
    /* Its arguments, as _init received them (entry_points.c), and the calls
     * of its collective and form on them. */
    struct strata_persist_args a;
    const struct strata_persist_calls *calls;
    /* Copies the request owns (own_args), since an application may free or
     * reuse its arrays right after _init, as both hosts allow (mpi4py
     * does): one block behind a's array pointers. */
    void *owned_arrays;
    /* a.stype / a.rtype duplicated at _init when derived (the application
     * may free its handle after _init): freed with the request. */
    int owned_stype, owned_rtype;
    struct strata_choice choice;
    int have_choice, started, freed;
    /* The request's state, written by the thread that calls MPI on it
     * (start, completion) and, under the lock, by the progress that
     * finishes its operation and by strata_persist_to_host; read by both
     * without the lock in MPI_Start and the completion calls: atomics,
     * relaxed except done.
     * active: started and not yet completed by a completion call (MPI's
     * "active").  hosted: this start's host receive was started (the host
     * completes the request); else strata's completion calls do.  done:
     * this start's operation finished (release / acquire, so a waiter that
     * sees it sees the results too). */
    _Atomic int active, hosted, done;
    int host;              /* decided at _init: the host's own _init serves it */
    struct strata_nb *tmpl; /* built at _init, reused by every start (or NULL) */
    struct strata_persist *next; /* in its bucket */
    /* Its place in _init order (every rank inits a communicator's requests
     * in the same order, so one process-wide count orders each
     * communicator's alike on every rank). */
    unsigned long long init_seq;
    /* Its own plane and queue (context.h, strata_ctx_channel), or NULL: its
     * starts then share the communicator's queue.  The request holds the
     * communicator's context, which owns the channel. */
    struct strata_ctx *chan;
    /* This start, built and held back until its batch is queued (lock). */
    struct strata_nb *held;
    struct strata_persist *next_held; /* in the batch, by init_seq */
};

/* Started requests held back, by init_seq (under the lock), and the count
 * of _init calls so far. */
static struct strata_persist *held_batch;
static unsigned long long init_count;

/* The requests by handle (under strata_nb_lock): a completion call looks
 * its request up at every call while one is active, so a hash, not a list. */
#define BUCKETS 256
static struct strata_persist *buckets[BUCKETS];

/* Active requests whose host receive was not started (hosted 0): while
 * none is, strata's completion calls go straight to the host's.  Changed
 * under the lock; read without it as a hint (relaxed): a request the
 * caller itself started is counted before its MPI_Start returned. */
_Atomic int strata_persist_unhosted_count;

static unsigned bucket_of(MPI_Request req)
{
    uint64_t k = 0; /* a pointer (Open MPI) or an int (MPICH) */
    memcpy(&k, &req, sizeof req < sizeof k ? sizeof req : sizeof k);
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 56) % BUCKETS;
}

static struct strata_persist *find(MPI_Request req)
{
    for (struct strata_persist *ps = buckets[bucket_of(req)]; ps; ps = ps->next)
        if (ps->req == req) return ps;
    return NULL;
}

/* Requests freed so far: a thread's last lookup stays valid while this has
 * not moved (a freed request's handle may come back for a new one). */
static _Atomic unsigned long free_epoch;

/* The last request this thread looked up (MPI_Start then MPI_Wait on the
 * same one is the common case): no lock then.  initial-exec as
 * strata_nb_deferred_mine (nonblocking.h). */
static _Thread_local struct {
    MPI_Request req;
    struct strata_persist *ps;
    unsigned long epoch;
} last __attribute__((tls_model("initial-exec")));

/* The request behind handle req, or NULL. */
static struct strata_persist *lookup(MPI_Request req)
{
    /* Acquire, pairing with unlink_free's release: read before the table,
     * so a request freed after this read moves it for the next lookup.  A
     * request freed while this thread still uses it would be the
     * application's error (a free concurrent with a call on it). */
    unsigned long epoch = atomic_load_explicit(&free_epoch, memory_order_acquire);
    if (last.ps && last.req == req && last.epoch == epoch) return last.ps;
    strata_nb_lock();
    struct strata_persist *ps = find(req);
    strata_nb_unlock();
    if (ps) {
        last.req = req;
        last.ps = ps;
        last.epoch = epoch;
    }
    return ps;
}

static int get(_Atomic int *v) { return atomic_load_explicit(v, memory_order_relaxed); }
static void set(_Atomic int *v, int x) { atomic_store_explicit(v, x, memory_order_relaxed); }

/* A start ends for the application (completed by strata's completion call,
 * or handed to the host). */
static void unhosted_end(struct strata_persist *ps)
{
    atomic_fetch_sub_explicit(&strata_persist_unhosted_count, 1, memory_order_relaxed);
    set(&ps->hosted, 1); /* counted out once */
}

/* Whether request is one of strata's persistent requests (active_only: and
 * started, not yet finished): requests.c's MPI_Cancel. */
int strata_persist_owns(MPI_Request request, int active_only)
{
    if (request == MPI_REQUEST_NULL) return 0;
    struct strata_persist *ps = lookup(request);
    return ps && (!active_only || get(&ps->active));
}

/* What the request owns of its arguments goes. */
static void release_args(struct strata_persist *ps)
{
    if (ps->a.kept) ps->a.release(ps->a.kept);
    ps->a.kept = NULL;
    if (ps->owned_stype) PMPI_Type_free(&ps->a.stype);
    if (ps->owned_rtype) PMPI_Type_free(&ps->a.rtype);
    ps->owned_stype = ps->owned_rtype = 0;
    free(ps->owned_arrays);
    ps->owned_arrays = NULL;
}

/* *type duplicated if it is a derived datatype (*owned set: PMPI_Type_free
 * it with the request); a named one is kept as is (it cannot be freed, and
 * its handle is what the reduction kernels compare). */
static int own_type(MPI_Datatype *type, int *owned)
{
    int ints, addrs, types, combiner;
    *owned = 0;
    if (*type == MPI_DATATYPE_NULL) return MPI_SUCCESS;
    int rc = PMPI_Type_get_envelope(*type, &ints, &addrs, &types, &combiner);
    if (rc != MPI_SUCCESS || combiner == MPI_COMBINER_NAMED) return rc;
    rc = PMPI_Type_dup(*type, type);
    *owned = rc == MPI_SUCCESS;
    return rc;
}

int strata_persist_own_type(MPI_Datatype *type, int *owned) { return own_type(type, owned); }

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
struct args_read {
    unsigned arrays;
    int len, stype, rtype;
};
static struct args_read args_read(int coll, MPI_Comm comm, int root, const void *sendbuf,
                                  const void *recvbuf)
{
    struct args_read a = {0, 0, 0, 1};
    int inter = 0, me = -1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &a.len);
    else PMPI_Comm_size(comm, &a.len);
    if (!inter) PMPI_Comm_rank(comm, &me);
    int is_root = inter ? root == MPI_ROOT : root == me;
    int send_in_place = sendbuf == MPI_IN_PLACE;
    switch (coll) {
    case STRATA_COLL_BARRIER: a.rtype = 0; break;
    case STRATA_COLL_REDUCE:
    case STRATA_COLL_ALLREDUCE:
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
    case STRATA_COLL_SCAN:
    case STRATA_COLL_EXSCAN: a.rtype = 0; break;
    case STRATA_COLL_REDUCE_SCATTER:
        a.arrays = 0x4u;
        a.rtype = 0;
        break;
    case STRATA_COLL_GATHER:
    case STRATA_COLL_GATHERV:
        a.arrays = is_root && coll == STRATA_COLL_GATHERV ? 0xCu : 0;
        a.stype = !send_in_place;
        a.rtype = is_root;
        break;
    case STRATA_COLL_SCATTER:
    case STRATA_COLL_SCATTERV:
        a.arrays = is_root && coll == STRATA_COLL_SCATTERV ? 0x3u : 0;
        a.stype = is_root;
        a.rtype = recvbuf != MPI_IN_PLACE;
        break;
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_ALLGATHERV:
        a.arrays = coll == STRATA_COLL_ALLGATHERV ? 0xCu : 0;
        a.stype = !send_in_place;
        break;
    case STRATA_COLL_ALLTOALL:
    case STRATA_COLL_ALLTOALLV:
        a.arrays = coll == STRATA_COLL_ALLTOALLV ? (send_in_place ? 0xCu : 0xFu) : 0;
        a.stype = !send_in_place;
        break;
    default: break;
    }
    return a;
}

/* The request takes its own copies of the arrays and derived datatypes it
 * reads at every start (counts int or MPI_Count, displacements int or
 * MPI_Aint, by the form).  An error: the host serves it instead. */
static int own_args(struct strata_persist *ps)
{
    struct strata_persist_args *p = &ps->a;
    if (p->kept) return MPI_SUCCESS; /* the caller copied them */
    struct args_read r = args_read(p->coll, p->comm, p->root, p->sendbuf, p->recvbuf);
    const void **arrays[4] = {&p->scounts, &p->sdispls, &p->rcounts, &p->rdispls};
    const size_t count = p->large ? sizeof(MPI_Count) : sizeof(int);
    const size_t displ = p->large ? sizeof(MPI_Aint) : sizeof(int);
    const size_t elem[4] = {count, displ, count, displ};
    size_t bytes = 0;
    for (int i = 0; i < 4; i++)
        if ((r.arrays >> i & 1u) && *arrays[i]) bytes += elem[i] * (size_t)r.len;
    if (bytes) {
        ps->owned_arrays = malloc(bytes);
        if (!ps->owned_arrays) return MPI_ERR_NO_MEM;
        char *at = ps->owned_arrays;
        for (int i = 0; i < 4; i++) {
            if (!(r.arrays >> i & 1u) || !*arrays[i]) continue;
            memcpy(at, *arrays[i], elem[i] * (size_t)r.len);
            *arrays[i] = at;
            at += elem[i] * (size_t)r.len;
        }
    }
    int rc = MPI_SUCCESS;
    if (r.stype) rc = own_type(&p->stype, &ps->owned_stype);
    if (rc == MPI_SUCCESS && r.rtype) rc = own_type(&p->rtype, &ps->owned_rtype);
    return rc;
}

static void unlink_free(struct strata_persist *ps)
{
    /* Release: every thread's cached lookup is invalid before the memory goes. */
    atomic_fetch_add_explicit(&free_epoch, 1, memory_order_release);
    for (struct strata_persist **pp = &buckets[bucket_of(ps->req)]; *pp; pp = &(*pp)->next)
        if (*pp == ps) {
            *pp = ps->next;
            break;
        }
    strata_nb_persist_tag_free_locked(ps->tag);
    struct strata_ctx *owner = ps->chan ? ps->chan->channel_of : NULL;
    if (ps->tmpl) {
        /* The kept operation holds the communicator's context (its starts
         * ran on the channel). */
        if (owner) ps->tmpl->build.ctx = owner;
        strata_nb_kept_free(ps->tmpl);
    }
    release_args(ps);
    free(ps);
    if (owner) strata_ctx_drop(owner);
}

/* The message that completes the application's request.  Lock held. */
static void persist_send(struct strata_persist *ps)
{
    /* The receive was started: a send of nothing to oneself never waits. */
    PMPI_Send(NULL, 0, MPI_BYTE, 0, ps->tag, strata_nb_persist_comm_locked());
}

/* A start finished (the operation's on_done, lock held).  Hosted: its
 * message, which completes the host's receive.  Else the flag strata's
 * completion calls read.  Then a request the application freed while it
 * was active is released. */
static void persist_finished(void *arg)
{
    struct strata_persist *ps = arg;
    if (get(&ps->hosted)) {
        /* Inactive before the message: once it is sent, the application's
         * host call may complete the request and start it again at once
         * (another thread, or this one after the progress thread sent it),
         * and that start must not find it still active. */
        set(&ps->active, 0);
        persist_send(ps);
        if (!ps->freed) return;
        /* Freed by the application while active: its receive matched just now. */
        PMPI_Wait(&ps->req, MPI_STATUS_IGNORE);
    } else if (ps->freed) {
        unhosted_end(ps);
    } else {
        /* Release: the results are written before a waiter sees the flag. */
        atomic_store_explicit(&ps->done, 1, memory_order_release);
        return;
    }
    /* Freed: the host receive is inactive (completed just now, or never
     * started this time).  Unlinked (every cached lookup invalidated)
     * before the host frees the handle, which it may hand out again at
     * once. */
    MPI_Request host_req = ps->req;
    unlink_free(ps);
    PMPI_Request_free(&host_req);
}

/* ---- Order of persistent starts (docs/DESIGN.md).  A start is built at
 * MPI_Start (its errors are MPI_Start's) and held back; the starting
 * thread's next MPI call other than MPI_Start / MPI_Startall queues the
 * batch held so far, in _init order, so that ranks which start the same
 * requests in different orders queue them alike on every communicator. */

/* A built start held back in the batch, by init_seq. */
static int hold(struct strata_persist *ps, struct strata_nb *nb)
{
    strata_nb_defer();
    strata_nb_lock();
    ps->held = nb;
    struct strata_persist **pp = &held_batch;
    while (*pp && (*pp)->init_seq < ps->init_seq) pp = &(*pp)->next_held;
    ps->next_held = *pp;
    *pp = ps;
    strata_nb_unlock();
    strata_nb_deferred_mine = 1;
    return MPI_SUCCESS;
}

/* Queues one held start; a start the host serves makes its nonblocking
 * call now.  A host call that fails is reported as a failed operation is
 * (the communicator's error handler) and the request completes. */
static void post_held(struct strata_persist *ps, struct strata_nb *nb)
{
    /* On its own plane it waits behind nothing (its place in the batch
     * then orders nothing: harmless). */
    if (ps->chan && nb->build.ctx == ps->chan->channel_of) nb->build.ctx = ps->chan;
    if (nb->build.kind == STRATA_BUILD_HOST) {
        int rc = ps->calls->host(&ps->a, &nb->host_req);
        if (rc != MPI_SUCCESS) {
            strata_error("%s: the host's nonblocking form failed (error %d)",
                         strata_call_name(nb->build.call), rc);
            PMPI_Comm_call_errhandler(ps->a.comm, rc);
            nb->build.kind = STRATA_BUILD_NOTHING;
        }
    }
    strata_nb_post_persistent(nb);
}

/* Every held start queued, in _init order (the upcall of strata_nb_progress
 * and the other entries; any thread, so that a thread waiting on a request
 * another thread started does not wait for that thread's next call). */
static void flush_held(void)
{
    strata_nb_deferred_mine = 0;
    strata_nb_lock();
    struct strata_persist *batch = held_batch;
    held_batch = NULL;
    strata_nb_unlock();
    while (batch) {
        struct strata_persist *ps = batch;
        struct strata_nb *nb = ps->held;
        batch = ps->next_held;
        /* Cleared before the post: once queued, the operation may finish
         * and the request be started again by another thread. */
        ps->held = NULL;
        ps->next_held = NULL;
        post_held(ps, nb);
    }
}

/* Whether ps waits in the batch (a completion call on it queues the batch). */
static int is_held(struct strata_persist *ps)
{
    strata_nb_lock();
    int held = ps->held != NULL;
    strata_nb_unlock();
    return held;
}

__attribute__((constructor)) static void persist_upcalls(void)
{
    strata_nb_upcalls.flush_deferred = flush_held;
}

/* One start from the operation kept at _init: its progress state reset and
 * queued again (nothing decided, nothing counted, no argument read). */
static int start_kept(struct strata_persist *ps)
{
    struct strata_nb *nb = strata_nb_rearm(ps->tmpl);
    nb->on_done = persist_finished;
    nb->done_arg = ps;
    return hold(ps, nb);
}

/* A start that cannot run: the request completes at once (as a start whose
 * operation finished); rc is MPI_Start's. */
static int start_failed(struct strata_persist *ps, int rc)
{
    strata_nb_lock();
    persist_finished(ps);
    strata_nb_unlock();
    return rc;
}

/* One start of ps (active, not hosted: MPI_Start set it). */
static int start_one(struct strata_persist *ps)
{
    if (ps->tmpl) return start_kept(ps);
    struct strata_nb *nb = strata_nb_begin(ps->a.coll, STRATA_FORM_PERSISTENT);
    if (!nb) return start_failed(ps, MPI_ERR_NO_MEM);
    nb->build.replay = ps->started;
    nb->build.choice = ps->choice;
    nb->build.have_choice = ps->have_choice;
    int rc = ps->calls->decide(&ps->a, strata_nb_build(nb));
    if (rc == MPI_SUCCESS && nb->build.to_host) {
        /* A rebuild the host serves after all (a v-collective's layouts):
         * its nonblocking form, called when the batch is queued, in _init
         * order as strata's own operations (post_held), tested by progress. */
        nb->build.to_host = 0;
        nb->build.kind = STRATA_BUILD_HOST;
    }
    if (rc != MPI_SUCCESS) {
        /* The request completes at once; the error is this call's. */
        strata_nb_abandon(nb);
        return start_failed(ps, rc);
    }
    ps->choice = nb->build.choice;
    ps->have_choice = nb->build.have_choice;
    ps->started = 1;
    nb->on_done = persist_finished;
    nb->done_arg = ps;
    return hold(ps, nb);
}

int strata_persist_start(MPI_Request *request)
{
    /* Not strata_nb_progress: a run of starts is one batch (held back). */
    strata_nb_progress_queued();
    struct strata_persist *ps = request ? lookup(*request) : NULL;
    if (!ps) return PMPI_Start(request);
    if (get(&ps->active)) {
        /* Started twice: MPICH's error for it, through MPI_COMM_WORLD's
         * handler as MPICH raises it (fatal by default; Open MPI 4.1's
         * MPIX_ requests crash on it instead). */
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_REQUEST);
        return MPI_ERR_REQUEST;
    }
    /* Active, completed by strata's completion calls until a call the host
     * serves gets it.  Relaxed: the progress that finishes the operation
     * reads these after taking the lock that queues it. */
    set(&ps->hosted, 0);
    set(&ps->done, 0);
    set(&ps->active, 1);
    atomic_fetch_add_explicit(&strata_persist_unhosted_count, 1, memory_order_relaxed);
    return start_one(ps);
}

int strata_persist_free(MPI_Request *request)
{
    strata_nb_lock();
    struct strata_persist *ps = find(*request);
    if (ps && get(&ps->active) && !get(&ps->hosted) && get(&ps->done)) {
        /* Finished, not yet completed by a completion call: nothing runs. */
        set(&ps->active, 0);
        unhosted_end(ps);
    }
    int kept = ps && get(&ps->active);
    if (kept) ps->freed = 1; /* completed and freed by strata when its start finishes */
    else if (ps) unlink_free(ps);
    strata_nb_unlock();
    if (kept) *request = MPI_REQUEST_NULL;
    return kept;
}


int strata_persist_complete(MPI_Request request, enum strata_persist_how how, int *flag,
                            MPI_Status *status)
{
    struct strata_persist *ps = lookup(request);
    if (!ps || !get(&ps->active) || get(&ps->hosted)) return 0;
    if (is_held(ps)) flush_held();
    /* ps stays: only this request's own free (not concurrent with a
     * completion call on it, MPI 4.0 11.6.2) or a free while active (then
     * the application no longer has the handle) releases it. */
    for (unsigned long round = 0;; round++) {
        /* Acquire: the operation's results are seen with the flag. */
        if (atomic_load_explicit(&ps->done, memory_order_acquire)) break;
        strata_nb_progress();
        if (atomic_load_explicit(&ps->done, memory_order_acquire)) break;
        if (how != STRATA_PERSIST_WAIT) {
            /* Not done: a test turns the host's progress too, as the host's
             * own MPI_Test would (an application may poll this request
             * while a peer needs this rank's progress, shm/wait.h). */
            strata_wait_poke_host();
            *flag = 0;
            return 1;
        }
        strata_nb_idle(round);
    }
    *flag = 1;
    strata_nb_status_empty(status);
    if (how == STRATA_PERSIST_PEEK) return 1;
    /* Inactive, as the standard leaves a completed persistent request (the
     * finished operation no longer touches ps: no lock). */
    set(&ps->active, 0);
    unhosted_end(ps);
    return 1;
}

void strata_persist_to_host(MPI_Request request)
{
    if (request == MPI_REQUEST_NULL) return;
    strata_nb_lock();
    struct strata_persist *ps = find(request);
    int held = ps && ps->held;
    if (ps && get(&ps->active) && !get(&ps->hosted)) {
        unhosted_end(ps); /* hosted now */
        int rc = PMPI_Start(&ps->req);
        if (rc != MPI_SUCCESS) strata_error("restarting a persistent request's receive: error %d", rc);
        if (get(&ps->done)) {
            /* Finished before: the host completes the request at once. */
            persist_send(ps);
            set(&ps->active, 0);
        }
    }
    strata_nb_unlock();
    /* The host's wait on it needs it queued (another thread's start). */
    if (held) flush_held();
}

void strata_persist_to_host_all(int count, const MPI_Request requests[])
{
    if (!strata_persist_unhosted() || !requests) return;
    for (int i = 0; i < count; i++) strata_persist_to_host(requests[i]);
}

/* _init's decisions: the operation is built once, as a start would build
 * it (every rank calls _init in the same order, as for any collective, so
 * the agreement of STRATA_CHECK_ARGS and a new communicator's context may
 * communicate here).  A call strata leaves goes to the host at every start;
 * an operation that holds nothing of the buffers' contents is kept whole;
 * any other keeps its algorithm and is built again at each start.  An
 * error strata finds in the arguments here is left for the start (which
 * builds again and returns it, as the first start always did). */
static void decide(struct strata_persist *ps)
{
    struct strata_nb *nb = strata_nb_begin(ps->a.coll, STRATA_FORM_PERSISTENT);
    if (!nb) return; /* each start tries again */
    int rc = ps->calls->decide(&ps->a, strata_nb_build(nb));
    ps->started = 1; /* counted under MPI_<coll>_init now */
    if (rc == MPI_SUCCESS && nb->build.to_host) {
        ps->host = 1;
        strata_nb_abandon(nb);
        return;
    }
    if (rc != MPI_SUCCESS) {
        ps->started = 0;
        strata_nb_abandon(nb);
        return;
    }
    ps->choice = nb->build.choice;
    ps->have_choice = nb->build.have_choice;
    ps->tmpl = strata_nb_keep(nb); /* NULL: abandoned, built at each start */
}

/* A request that never became the application's: what it holds goes. */
static void persist_drop(struct strata_persist *ps)
{
    release_args(ps);
    strata_nb_lock();
    strata_nb_persist_tag_free_locked(ps->tag);
    if (ps->tmpl) strata_nb_kept_free(ps->tmpl);
    strata_nb_unlock();
    free(ps);
}

int strata_persist_init(const struct strata_persist_args *args,
                        const struct strata_persist_calls *calls, MPI_Request *request, int *host)
{
    const struct strata_runtime *rt = strata_runtime_state();
    *host = 1;
    if (!rt->ready || rt->disabled) return MPI_SUCCESS;
    strata_nb_progress();
    struct strata_persist *ps = malloc(sizeof *ps);
    if (!ps) return MPI_SUCCESS;
    MPI_Comm comm = strata_nb_persist_comm();
    *ps = (struct strata_persist){.a = *args, .calls = calls};
    ps->tag = strata_nb_persist_tag();
    if (ps->tag < 0) {
        free(ps);
        return MPI_SUCCESS;
    }
    if (own_args(ps) != MPI_SUCCESS) {
        persist_drop(ps);
        return MPI_SUCCESS;
    }
    decide(ps);
    if (ps->host) {
        ps->a.kept = NULL; /* the caller's where the host serves the call */
        persist_drop(ps);
        return MPI_SUCCESS;
    }
    *host = 0;
    int rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, ps->tag, comm, request);
    if (rc != MPI_SUCCESS) {
        persist_drop(ps);
        return rc;
    }
    /* A plane of its own (the k-th _init on the communicator gets channel
     * k on every rank), where the operation runs on the communicator's. */
    struct strata_ctx *ctx = ps->tmpl ? ps->tmpl->build.ctx : strata_ctx_get(ps->a.comm);
    ps->chan = ctx && ctx->plane && !ctx->net ? strata_ctx_channel(ctx) : NULL;
    if (ps->chan) strata_ctx_hold(ctx);
    strata_nb_lock();
    ps->req = *request;
    ps->init_seq = ++init_count;
    unsigned b = bucket_of(ps->req);
    ps->next = buckets[b];
    buckets[b] = ps;
    strata_nb_unlock();
    return rc;
}

