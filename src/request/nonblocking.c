/* Outstanding nonblocking and persistent collectives: queues, progress and
 * the completing messages (nonblocking.h). */
#include "request/nonblocking.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "context/runtime.h"
#include "route/route.h"
#include "shm/flags.h"
#include "shm/wait.h"
#include "util/log.h"
#include "util/stats.h"

/* One lock for the queues, the lists, the tag pools and persistent.c's
 * table: progress steps are short and never wait, so one thread holding it
 * while another completes a request costs little, and a single lock cannot
 * deadlock against itself. */
static pthread_mutex_t nb_lock = PTHREAD_MUTEX_INITIALIZER;
void strata_nb_lock(void) { pthread_mutex_lock(&nb_lock); }
void strata_nb_unlock(void) { pthread_mutex_unlock(&nb_lock); }

static struct strata_nb *active; /* the head of every communicator's queue */
struct strata_nb_upcalls strata_nb_upcalls;

static struct strata_nb *all;    /* every outstanding operation */
/* Outstanding operations: read without the lock by every intercepted call
 * (the fast path when there are none); changed under it. */
_Atomic int strata_nb_outstanding_count;

_Thread_local int strata_nb_deferred_mine __attribute__((tls_model("initial-exec")));

/* This thread's held-back persistent starts queued (nonblocking.h).  Not
 * while a call is built: a persistent start's build runs the collective's
 * entry point, whose progress must not split its batch, so a build
 * progresses with strata_nb_progress_queued (serve/collectives.c). */
static inline void flush_mine(void)
{
    if (strata_nb_deferred_mine && strata_nb_upcalls.flush_deferred)
        strata_nb_upcalls.flush_deferred();
}
static _Thread_local MPI_Request host_request = MPI_REQUEST_NULL;

/* ---- The private communicator of persistent requests and its tags (a
 * tag is a request's for its life). */
#define NB_TAGS 32768 /* MPI guarantees tags up to 32767 */
struct tag_pool {
    unsigned char busy[NB_TAGS / 8];
    int next;
};
static struct tag_pool persist_tags;
static MPI_Comm persist_comm = MPI_COMM_NULL;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static int tag_take(struct tag_pool *p)
{
    for (int i = 0; i < NB_TAGS; i++) {
        int t = (p->next + i) % NB_TAGS;
        if (!(p->busy[t / 8] & (1u << (t % 8)))) {
            p->busy[t / 8] |= (unsigned char)(1u << (t % 8));
            p->next = (t + 1) % NB_TAGS;
            return t;
        }
    }
    return -1;
}

static void tag_give(struct tag_pool *p, int t)
{
    p->busy[t / 8] &= (unsigned char)~(1u << (t % 8));
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes, the latest set first:
 * this one (set after the runtime's) completes what is still outstanding
 * (requests the application freed while active) before the STRATA_STATS
 * report and the contexts go. */
static int at_finalize(MPI_Comm self, int keyval, void *value, void *extra)
{
    for (unsigned long round = 0;
         atomic_load_explicit(&strata_nb_outstanding_count, memory_order_acquire); round++) {
        strata_nb_progress();
        strata_nb_idle(round);
    }
    if (strata_nb_upcalls.finalize) strata_nb_upcalls.finalize(); /* nothing outstanding: it ends */
    strata_nb_handle_finalize();
    if (persist_comm != MPI_COMM_NULL) PMPI_Comm_free(&persist_comm);
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void progress_hook(void) { strata_nb_progress(); }

/* A communicator freed with operations pending on it: they complete first
 * (its plane goes with it). */
static void before_ctx_free(struct strata_ctx *ctx) { strata_nb_drain(ctx); }

static void setup(void)
{
    int keyval;
    PMPI_Comm_dup(MPI_COMM_SELF, &persist_comm);
    PMPI_Comm_set_name(persist_comm, "strata persistent collectives");
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &keyval, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
    strata_ctx_before_free = before_ctx_free;
    /* Relaxed: a function set once (task.h). */
    atomic_store_explicit(&strata_task_idle_hook, progress_hook, memory_order_relaxed);
    if (strata_nb_upcalls.setup) strata_nb_upcalls.setup();
}

MPI_Comm strata_nb_persist_comm(void)
{
    pthread_once(&setup_once, setup);
    return persist_comm;
}

int strata_nb_persist_tag(void)
{
    pthread_once(&setup_once, setup);
    strata_nb_lock();
    int t = tag_take(&persist_tags);
    strata_nb_unlock();
    return t;
}

void strata_nb_persist_tag_free_locked(int tag) { tag_give(&persist_tags, tag); }

MPI_Comm strata_nb_persist_comm_locked(void) { return persist_comm; }

/* ---- Building. */

/* The last operation freed, kept for the next post: a post then costs no
 * allocation and no clearing of the operations' union (about 1.3 KiB,
 * written by start() before anything reads it, as a kept persistent
 * operation's is at every start), only of the fields around it.  Atomic
 * exchange: freed under the lock or not, taken by any thread. */
static _Atomic(struct strata_nb *) spare;

static struct strata_nb *nb_alloc(void)
{
    struct strata_nb *nb = atomic_exchange_explicit(&spare, NULL, memory_order_acquire);
    if (!nb) return calloc(1, sizeof *nb);
    memset(nb, 0, offsetof(struct strata_nb, u));
    memset(&nb->host_req, 0, sizeof *nb - offsetof(struct strata_nb, host_req));
    return nb;
}

static void nb_free(struct strata_nb *nb)
{
    /* Release: this thread's writes to it are done before another takes it. */
    free(atomic_exchange_explicit(&spare, nb, memory_order_release));
}

struct strata_nb *strata_nb_begin(enum strata_coll coll, enum strata_coll_form form)
{
    const struct strata_runtime *rt = strata_runtime_state();
    if (!rt->ready || rt->disabled) return NULL;
    struct strata_nb *nb = nb_alloc();
    if (!nb) return NULL; /* the host MPI serves it: nothing was decided yet */
    nb->build.call = strata_call_id(coll, form);
    nb->host_req = MPI_REQUEST_NULL;
    return nb;
}

/* Frees what a built operation holds; unpack: its results go to the
 * application's buffers first (a finished operation). */
static void release(struct strata_nb *nb, int unpack)
{
    if (nb->kept) return; /* its request's, until the request is freed */
    struct strata_build *b = &nb->build;
    if (b->owned_finish) b->owned_finish(b, unpack);
    for (int i = 0; i < 2; i++) {
        if (!unpack) b->view[i].unpack_out = 0;
        strata_run_view_close(&b->view[i], b->ctx ? b->ctx->comm : MPI_COMM_SELF);
    }
    if (b->has_how) {
        if (!unpack) b->how.user_recv = NULL;
        strata_reduce_op_end(&b->how);
    }
    free(b->vpairs);
    nb_free(nb);
}

/* ---- Running. */

/* The started operation of a queue's head. */
static struct strata_task *running_task(struct strata_nb *nb)
{
    return nb->build.kind == STRATA_BUILD_OWNED ? nb->build.owned_task : &nb->u.op;
}

/* The agreement over: the operation may start. */
static int agreed(struct strata_nb *nb)
{
    strata_agree_close(nb->build.ctx->plane);
    nb->agreeing = 0;
    return 1;
}

/* The ranks disagree: nothing moves; the request completes with this
 * rank's result. */
static int refuse_operation(struct strata_nb *nb, const char *why)
{
    /* Auto: a rank whose call was small may have run its one operation (a
     * nonblocking one too, since small_step): every rank of a call that
     * disagrees takes exactly one (coll/agree.h), as the blocking call's
     * refusal does. */
    const struct strata_config *cfg = strata_config();
    if (cfg && cfg->check_args == STRATA_CHECK_AUTO) strata_agree_skip(nb->build.ctx->plane);
    strata_agree_close(nb->build.ctx->plane);
    nb->agreeing = 0;
    if (strata_stats_enabled()) strata_stats_algorithm(nb->build.call, STRATA_STATS_DISAGREED);
    strata_warn("%s on communicator #%lu: %s; nothing was moved", strata_call_name(nb->build.call),
                nb->build.ctx->serial, why);
    return -1;
}

/* A started operation waiting for the agreement (nb->agreeing): 1 once
 * every rank agrees (start its operation now), 0 while some rank has not
 * said, -1 when they disagree: nothing moves, *rc is this rank's result
 * (its error, or MPI_SUCCESS for a rank that only sends). */
static int agreement(struct strata_nb *nb, int *rc)
{
    struct strata_plane *p = nb->build.ctx->plane;
    struct strata_agree_verdict v;
    if (nb->agreeing == 1) {
        if (!strata_agree_poll(p, &v)) return 0;
        if (!v.agreed) {
            *rc = v.error == MPI_SUCCESS && nb->build.sig.in >= 0 ? MPI_ERR_OTHER : v.error;
            return refuse_operation(nb, v.why);
        }
        if (!nb->build.vpairs) return agreed(nb);
        nb->vround = (struct strata_agree_vround){nb->build.vpairs, nb->build.vpairs + p->size,
                                                  nb->build.vreceives, 0, 0, 0};
        nb->agreeing = 2;
    }
    int refused;
    if (!strata_agree_vround_step(p, &nb->vround, 0, rc, &refused, v.why, sizeof v.why))
        return 0;
    return refused ? refuse_operation(nb, v.why) : agreed(nb);
}

static void start_operation(struct strata_nb *nb);

static void start(struct strata_nb *nb)
{
    /* A persistent request's own plane, not attached yet here: step
     * attaches it once its creator has published it, then starts. */
    if (nb->build.ctx && nb->build.ctx->channel_of && !nb->build.ctx->plane) {
        nb->attaching = 1;
        return;
    }
    if (nb->build.agree && nb->build.ctx && nb->build.ctx->plane && !nb->build.ctx->net) {
        /* Small: the signature, then the operation at once; the others'
         * signatures are read after it, or when it stalls (small_step). */
        if (nb->build.agree_small) {
            strata_agree_open(nb->build.ctx->plane, &nb->build.sig, 1);
            nb->small = 1;
            start_operation(nb);
            return;
        }
        /* Full: every rank's signature first; the operation once all agree
         * (step). */
        strata_agree_open(nb->build.ctx->plane, &nb->build.sig, 0);
        nb->agreeing = 1;
        return;
    }
    start_operation(nb);
}

static void start_operation(struct strata_nb *nb)
{
    struct strata_build *b = &nb->build;
    struct strata_ctx *ctx = b->ctx;
    int was = strata_stats_serve_as(b->call);
    char *desc = b->has_desc ? b->desc : NULL;
    switch (b->kind) {
    case STRATA_BUILD_NODE_BLOCK: b->block_start(&nb->u.block, ctx->plane, &b->ba); break;
    case STRATA_BUILD_NODE_REDUCE: strata_reduce_start(&nb->u.reduce, ctx->plane, &b->ra); break;
    case STRATA_BUILD_NODE_BARRIER: strata_barrier_start(&nb->u.barrier, ctx->plane); break;
    case STRATA_BUILD_NET_BCAST:
        strata_net_bcast_start(&nb->u.net_bcast, ctx->net, b->data, b->bytes, b->root, desc,
                               sizeof b->desc);
        break;
    case STRATA_BUILD_NET_REDUCE:
        strata_net_reduce_start(&nb->u.net_reduce, ctx->net, &b->ra, desc, sizeof b->desc);
        break;
    case STRATA_BUILD_NET_BLOCK:
        strata_net_block_start(&nb->u.net_block, ctx->net, b->coll, &b->ba, desc, sizeof b->desc);
        break;
    case STRATA_BUILD_NET_BARRIER: strata_net_barrier_start(&nb->u.net_barrier, ctx->net); break;
    case STRATA_BUILD_OWNED: b->owned_start(b); break;
    default: break;
    }
    strata_stats_serve_as(was);
    if (desc) strata_route_served(ctx, b->call, desc, b->bytes);
}

/* A small call's verdict once every rank has stamped it (nb->small 2-4):
 * what the blocking call's strata_check_end decides, polled. */
static int small_verdict(struct strata_nb *nb)
{
    struct strata_plane *p = nb->build.ctx->plane;
    struct strata_agree_verdict v;
    if (!strata_agree_poll(p, &v)) return STRATA_TASK_PENDING;
    int gave_up = nb->small == 2, read_nothing = nb->small == 3;
    /* A rank that gave up rewinds and takes one empty operation, so that a
     * call that disagrees consumes exactly one on every rank. */
    if (gave_up) strata_agree_skip(p);
    strata_agree_close(p);
    nb->small = 0;
    if (read_nothing && v.agreed) return MPI_SUCCESS;
    int rc = v.error;
    /* A rank that receives got nothing whole: an error even where what it
     * was sent matched. */
    if (rc == MPI_SUCCESS && (!gave_up || nb->build.sig.in >= 0)) rc = MPI_ERR_OTHER;
    if (strata_stats_enabled()) strata_stats_algorithm(nb->build.call, STRATA_STATS_DISAGREED);
    if (rc == MPI_SUCCESS) {
        strata_verbose(1, "%s on communicator #%lu: %s; this rank's receive is whole",
                       strata_call_name(nb->build.call), nb->build.ctx->serial, v.why);
        return rc;
    }
    strata_warn("%s on communicator #%lu: %s; %s", strata_call_name(nb->build.call),
                nb->build.ctx->serial, v.why,
                gave_up ? "nothing was moved" : "no byte was written outside a buffer");
    return rc;
}

/* A small call's step (rc: its operation's, or MPI_SUCCESS for one that
 * moves nothing), as the blocking call's run and strata_check_end. */
static int small_step(struct strata_nb *nb, int rc)
{
    struct strata_plane *p = nb->build.ctx->plane;
    if (rc == STRATA_TASK_PENDING) {
        /* A stalled operation gives up if a stamped signature differs: the
         * data it waits for may never come.  Every few polls (a look at
         * every rank's slot). */
        if ((++nb->polls & 7) != 0 || !strata_agree_stalled(p)) return rc;
        nb->small = 2;
        return small_verdict(nb);
    }
    int receives = nb->build.sig.in >= 0;
    struct strata_agree_verdict v;
    if (rc == MPI_SUCCESS && p->ops == p->call.ops) {
        /* Moved nothing: one empty operation, as every small call takes
         * one; having read nothing, a receiving rank cannot count on its
         * sources having stamped: it waits for them. */
        strata_agree_null_task(p);
        if (receives) {
            nb->small = 3;
            return small_verdict(nb);
        }
    } else if (rc == MPI_SUCCESS && receives && !strata_agree_look(p, &v)) {
        /* Its sources stamped before publishing what it read; a difference
         * among the stamped signatures makes that suspect. */
        nb->small = 4;
        return small_verdict(nb);
    }
    strata_agree_close(p);
    nb->small = 0;
    return rc;
}

static int step(struct strata_nb *nb)
{
    int flag = 0, rc, was;
    if (nb->attaching) {
        char why[STRATA_SEGMENT_NAME_MAX + 64];
        int ready = strata_ctx_channel_ready(nb->build.ctx, why, sizeof why);
        if (ready == 0) return STRATA_TASK_PENDING;
        nb->attaching = 0;
        if (ready < 0) {
            strata_error("%s on communicator #%lu: the persistent request's own plane: %s",
                         strata_call_name(nb->build.call), nb->build.ctx->serial, why);
            return MPI_ERR_NO_MEM;
        }
        start(nb);
    }
    if (nb->agreeing) {
        int verdict = agreement(nb, &rc);
        if (verdict <= 0) return verdict ? rc : STRATA_TASK_PENDING;
        start_operation(nb);
    }
    if (nb->small > 1) return small_verdict(nb);
    switch (nb->build.kind) {
    case STRATA_BUILD_NOTHING: rc = MPI_SUCCESS; break;
    case STRATA_BUILD_HOST:
        rc = PMPI_Test(&nb->host_req, &flag, MPI_STATUS_IGNORE);
        return rc != MPI_SUCCESS ? rc : flag ? MPI_SUCCESS : STRATA_TASK_PENDING;
    default:
        was = strata_stats_serve_as(nb->build.call);
        rc = strata_task_step(running_task(nb));
        strata_stats_serve_as(was);
        break;
    }
    return nb->small ? small_step(nb, rc) : rc;
}

/* The operation behind handle h finished (lock held, or the operation never
 * left its post: then no other thread knows h).  A hosted handle gets its
 * message, which completes the host's receive; a handle the application
 * freed goes back to the pool; else DONE, which strata's completion calls
 * read. */
static void handle_finished(struct strata_nb_handle *h)
{
    if (atomic_load_explicit(&h->hosted, memory_order_relaxed)) {
        /* The receive was started: a send of nothing to oneself never waits.
         * A failure leaves the host's call on the request waiting: said. */
        int rc = PMPI_Send(NULL, 0, MPI_BYTE, 0, h->tag, h->comm);
        if (rc != MPI_SUCCESS) strata_error("completing a nonblocking request: error %d", rc);
        if (h->app_freed) {
            /* Matched just now: returns at once, the receive inactive again
             * (the application no longer has it: an error is only said). */
            rc = PMPI_Wait(&h->req, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) strata_error("a freed nonblocking request: error %d", rc);
            strata_nb_handle_give(h);
            return;
        }
        /* Not waited for here: MPICH 5.0.2's and Intel MPI 2021.19's
         * MPI_Request_get_status deactivates a completed persistent request
         * (bench/results/nb-handles/get_status_deactivates.c), which left the
         * application's array call nothing to find.  The host matches the
         * send in the progress of the application's next completion call;
         * strata's own one-request calls wait on the receive when they see
         * DONE. */
    } else if (h->app_freed) {
        strata_nb_handle_give(h);
        return;
    }
    /* Release: the results (and the send) come before a completion call's
     * acquire of DONE. */
    atomic_store_explicit(&h->state, STRATA_NB_HANDLE_DONE, memory_order_release);
}

/* A finished operation: its results to the application's buffers, then its
 * request completes (a persistent start's on_done, or its handle). */
static void finish(struct strata_nb *nb, int rc)
{
    if (rc != MPI_SUCCESS) {
        /* As the blocking form would: the communicator's error handler (by
         * default the job ends); if it returns, the request completes. */
        strata_error("%s failed (error %d)", strata_call_name(nb->build.call), rc);
        if (nb->build.ctx) PMPI_Comm_call_errhandler(nb->build.ctx->comm, rc);
    }
    void (*on_done)(void *) = nb->on_done;
    void *done_arg = nb->done_arg;
    struct strata_nb_handle *h = nb->handle;
    release(nb, 1);
    if (on_done) on_done(done_arg);
    else handle_finished(h);
}

/* A finished queued operation: out of the list, finished, no longer
 * counted.  Lock held. */
static void complete(struct strata_nb *nb, int rc)
{
    for (struct strata_nb **pp = &all; *pp; pp = &(*pp)->next_all)
        if (*pp == nb) {
            *pp = nb->next_all;
            break;
        }
    finish(nb, rc);
    /* Release: the completion is published after the results and the
     * handle (a thread seeing zero may skip progress). */
    atomic_fetch_sub_explicit(&strata_nb_outstanding_count, 1, memory_order_release);
}

/* One step of every queue's head, completing those that finish.  Lock held. */
static void progress_locked(void)
{
    for (struct strata_nb **pp = &active; *pp;) {
        struct strata_nb *nb = *pp;
        int rc = step(nb);
        if (rc == STRATA_TASK_PENDING) {
            pp = &nb->next_active;
            continue;
        }
        struct strata_nb *next = nb->next_in_comm;
        struct strata_ctx *emptied = NULL;
        if (next) {
            /* The communicator's next operation takes the head's place. */
            next->next_active = nb->next_active;
            *pp = next;
            start(next);
        } else {
            *pp = nb->next_active;
            if (nb->build.ctx && nb->build.ctx->nb_tail == nb) emptied = nb->build.ctx;
        }
        /* Held across complete(), which still reads the context (views
         * unpacked through its communicator) and may drop a persistent
         * request's last hold on it (freed while active), and across the
         * store below: a communicator freed meanwhile leaves the context
         * to the drop. */
        if (emptied) strata_ctx_hold(emptied);
        complete(nb, rc);
        if (emptied) {
            /* Release: pairs with strata_nb_drain's unlocked read. */
            __atomic_store_n(&emptied->nb_tail, NULL, __ATOMIC_RELEASE);
            strata_ctx_drop(emptied);
        }
    }
}

void strata_nb_progress(void)
{
    flush_mine();
    strata_nb_progress_queued();
}

void strata_nb_progress_queued(void)
{
    if (!strata_nb_outstanding()) return;
    if (pthread_mutex_trylock(&nb_lock)) return; /* another thread is at it */
    progress_locked();
    pthread_mutex_unlock(&nb_lock);
}

void strata_nb_idle(unsigned long round)
{
    /* The host's progress too (shm/wait.h): these loops wait on strata's
     * operations, which do not call the host by themselves. */
    unsigned long spin = strata_flag_spin();
    if (round < spin ? strata_wait_host_due(round, 0) : strata_wait_host_due(round - spin, 1))
        strata_wait_poke_host();
    strata_backoff(round);
    if (!strata_liveness_due(round) || pthread_mutex_trylock(&nb_lock)) return;
    for (struct strata_nb *nb = active; nb; nb = nb->next_active)
        if (nb->attaching)
            /* the rank that publishes the channel */
            strata_peer_check_alive(nb->build.ctx->channel_of->plane->pid[0]);
        else if (nb->agreeing || nb->small > 1)
            strata_agree_check_alive(nb->build.ctx->plane); /* the ranks not yet stamped */
        else if (nb->build.kind != STRATA_BUILD_NOTHING && nb->build.kind != STRATA_BUILD_HOST)
            strata_peer_check_alive(running_task(nb)->waiting_for);
    pthread_mutex_unlock(&nb_lock);
}

void strata_nb_drain(struct strata_ctx *ctx)
{
    flush_mine(); /* held-back starts precede this call in the communicator's order */
    if (!strata_nb_outstanding()) return;
    /* Never blocks on the queue's lock: this runs inside MPI_Comm_free's
     * attribute callback too, where the host MPI may hold its own lock (MPICH
     * at MPI_THREAD_MULTIPLE) while another thread holds the queue's lock
     * and waits for the host's (a queue step calls the host MPI).  Acquire:
     * pairs with the release that empties the queue, after the operations'
     * results were written. */
    for (unsigned long round = 0; __atomic_load_n(&ctx->nb_tail, __ATOMIC_ACQUIRE); round++) {
        strata_nb_progress();
        strata_nb_idle(round);
    }
}

/* One more operation outstanding. */
static void count_outstanding(void)
{
    /* Relaxed: the progress thread reads it as a hint and takes the lock
     * before it touches the queues. */
    if (atomic_fetch_add_explicit(&strata_nb_outstanding_count, 1, memory_order_relaxed) == 0)
        if (strata_nb_upcalls.first_outstanding) strata_nb_upcalls.first_outstanding();
}

/* Queues a built operation (counted: strata_nb_defer counted it already;
 * started: strata_nb_end started it, its communicator's queue being empty).
 * Lock held. */
static void enqueue(struct strata_nb *nb, int counted, int started)
{
    if (!counted) count_outstanding();
    nb->next_all = all;
    all = nb;
    struct strata_ctx *ctx = nb->build.ctx;
    /* An operation that moves nothing still takes its turn when it agrees
     * with the others first (its signature is in the communicator's order). */
    int kind = nb->build.kind;
    int queued =
        ctx && kind != STRATA_BUILD_HOST && (kind != STRATA_BUILD_NOTHING || nb->build.agree);
    if (queued && ctx->nb_tail) {
        ((struct strata_nb *)ctx->nb_tail)->next_in_comm = nb;
    } else {
        if (!started) start(nb);
        nb->next_active = active;
        active = nb;
    }
    if (queued) __atomic_store_n(&ctx->nb_tail, nb, __ATOMIC_RELAXED); /* lock held; read unlocked only as empty or not */
}

int strata_nb_end(struct strata_nb *nb, int rc, MPI_Request *request, int *rc_out)
{
    /* Held-back persistent starts come first, whether this call is queued
     * here or handed to the host's nonblocking form. */
    flush_mine();
    if (nb->build.to_host) {
        release(nb, 0);
        return 1;
    }
    *rc_out = rc;
    if (rc != MPI_SUCCESS) {
        release(nb, 0);
        *request = MPI_REQUEST_NULL;
        return 0;
    }
    pthread_once(&setup_once, setup);
    struct strata_nb_handle *h = strata_nb_handle_take(rc_out);
    if (!h) {
        release(nb, 0);
        *request = MPI_REQUEST_NULL;
        return 0;
    }
    nb->handle = h;
    *request = h->req;
    /* Its first steps now (the peers may be waiting).  Where its
     * communicator has nothing queued, on this thread without the queue:
     * no other thread may post on the communicator meanwhile (MPI orders a
     * communicator's collectives), the progress thread touches only queued
     * operations, and one that finishes here is never queued, counted or
     * locked.  Acquire: pairs with the release that emptied the queue,
     * after its last operation finished. */
    struct strata_ctx *ctx = nb->build.ctx;
    int kind = nb->build.kind;
    if (ctx && kind != STRATA_BUILD_HOST && kind != STRATA_BUILD_NOTHING &&
        !__atomic_load_n(&ctx->nb_tail, __ATOMIC_ACQUIRE)) {
        start(nb);
        int rc = step(nb);
        if (rc != STRATA_TASK_PENDING) {
            finish(nb, rc);
            return 0;
        }
        strata_nb_lock();
        enqueue(nb, 0, 1);
        strata_nb_unlock();
        return 0;
    }
    strata_nb_lock();
    enqueue(nb, 0, 0);
    progress_locked(); /* its first steps now: the peers may be waiting */
    strata_nb_unlock();
    return 0;
}

void strata_nb_defer(void)
{
    pthread_once(&setup_once, setup);
    count_outstanding();
}

int strata_nb_post_persistent(struct strata_nb *nb)
{
    strata_nb_lock();
    enqueue(nb, 1, 0);
    progress_locked(); /* its first steps now: the peers may be waiting */
    strata_nb_unlock();
    return MPI_SUCCESS;
}

void strata_nb_abandon(struct strata_nb *nb)
{
    release(nb, 0);
}

struct strata_nb *strata_nb_keep(struct strata_nb *nb)
{
    /* The kinds whose whole state is the arguments (a kind added later is
     * built at each start until it is listed here). */
    int kind_ok = 0;
    switch (nb->build.kind) {
    case STRATA_BUILD_NODE_BLOCK: kind_ok = nb->build.block_start != NULL; break;
    case STRATA_BUILD_NODE_REDUCE:
    case STRATA_BUILD_NODE_BARRIER:
    case STRATA_BUILD_NET_BCAST:
    case STRATA_BUILD_NET_REDUCE:
    case STRATA_BUILD_NET_BLOCK:
    case STRATA_BUILD_NET_BARRIER: kind_ok = 1; break;
    default: break; /* nothing (one rank: data moved while building), the host's */
    }
    const struct strata_build *b = &nb->build;
    int views_ok = 1;
    for (int i = 0; i < 2; i++) views_ok &= !b->view[i].tmp && !b->view[i].dup;
    int how_ok = !b->has_how || (!b->how.staged && !b->how.stage && !b->how.user.tmp);
    if (!(kind_ok && views_ok && how_ok)) {
        release(nb, 0);
        return NULL;
    }
    nb->kept = 1;
    if (nb->build.ctx) strata_ctx_hold(nb->build.ctx); /* starts may come after MPI_Comm_free */
    return nb;
}

struct strata_nb *strata_nb_rearm(struct strata_nb *kept)
{
    /* Not outstanding (MPI forbids starting an active request), so no other
     * thread reads it: plain stores.  The union is set by start(). */
    kept->next_in_comm = kept->next_active = kept->next_all = NULL;
    kept->attaching = 0;
    kept->small = 0;
    kept->polls = 0;
    kept->on_done = NULL;
    kept->done_arg = NULL;
    kept->handle = NULL;
    kept->host_req = MPI_REQUEST_NULL;
    return kept;
}

void strata_nb_kept_free(struct strata_nb *kept)
{
    struct strata_ctx *ctx = kept->build.ctx;
    kept->kept = 0;
    release(kept, 0);
    if (ctx) strata_ctx_drop(ctx);
}

MPI_Request *strata_nb_host_request(void) { return &host_request; }

int strata_nb_host_wait(int rc)
{
    if (rc != MPI_SUCCESS) return rc;
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding()) return PMPI_Wait(&host_request, MPI_STATUS_IGNORE);
        strata_nb_progress();
        int flag = 0;
        rc = PMPI_Test(&host_request, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag) return rc;
        strata_nb_idle(round);
    }
}

/* ---- The completion calls on a handle (nonblocking.h). */

void strata_nb_status_empty(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

static int is_done(struct strata_nb_handle *h)
{
    /* Acquire: the operation's results are seen with DONE. */
    return atomic_load_explicit(&h->state, memory_order_acquire) == STRATA_NB_HANDLE_DONE;
}

int strata_nb_complete(MPI_Request *request, enum strata_nb_how how, int *flag,
                       MPI_Status *status)
{
    struct strata_nb_handle *h = strata_nb_handle_find(*request);
    if (!h) return -1;
    /* h stays: only a completion call on this request (this one: MPI
     * forbids concurrent ones on a request) or its free gives it back. */
    for (unsigned long round = 0; !is_done(h); round++) {
        strata_nb_progress();
        if (is_done(h)) break;
        if (how != STRATA_NB_WAIT) {
            /* Not done: a test turns the host's progress too, as the host's
             * own MPI_Test would (shm/wait.h). */
            strata_wait_poke_host();
            *flag = 0;
            return MPI_SUCCESS;
        }
        strata_nb_idle(round);
    }
    *flag = 1;
    strata_nb_status_empty(status);
    if (how == STRATA_NB_PEEK) return MPI_SUCCESS;
    /* A hosted receive was matched before DONE (handle_finished): this
     * returns at once and leaves it inactive for the pool. */
    int rc = MPI_SUCCESS;
    if (atomic_load_explicit(&h->hosted, memory_order_relaxed))
        rc = PMPI_Wait(&h->req, MPI_STATUS_IGNORE);
    *request = MPI_REQUEST_NULL;
    strata_nb_handle_give(h);
    return rc;
}

int strata_nb_free(MPI_Request *request)
{
    struct strata_nb_handle *h = strata_nb_handle_find(*request);
    if (!h) return -1;
    /* Under the lock: the operation may finish meanwhile (handle_finished
     * reads app_freed under it). */
    strata_nb_lock();
    int running = atomic_load_explicit(&h->state, memory_order_relaxed) == STRATA_NB_HANDLE_ACTIVE;
    if (running) h->app_freed = 1; /* given back when it finishes */
    strata_nb_unlock();
    int rc = MPI_SUCCESS;
    if (!running) {
        if (atomic_load_explicit(&h->hosted, memory_order_relaxed))
            rc = PMPI_Wait(&h->req, MPI_STATUS_IGNORE); /* matched: returns at once */
        strata_nb_handle_give(h);
    }
    *request = MPI_REQUEST_NULL;
    return rc;
}

int strata_nb_owns(MPI_Request request) { return strata_nb_handle_find(request) != NULL; }

void strata_nb_to_host_all(int count, const MPI_Request requests[])
{
    if (!strata_nb_handles_live() || !requests) return;
    for (int i = 0; i < count; i++) {
        struct strata_nb_handle *h = strata_nb_handle_find(requests[i]);
        if (!h || atomic_load_explicit(&h->hosted, memory_order_relaxed)) continue;
        /* Under the lock: the operation may finish meanwhile on another
         * thread (handle_finished then sends the message). */
        strata_nb_lock();
        int rc = PMPI_Start(&h->req);
        if (rc != MPI_SUCCESS) strata_error("starting a nonblocking request's receive: error %d", rc);
        atomic_store_explicit(&h->hosted, 1, memory_order_relaxed);
        if (rc == MPI_SUCCESS &&
            atomic_load_explicit(&h->state, memory_order_relaxed) == STRATA_NB_HANDLE_DONE) {
            rc = PMPI_Send(NULL, 0, MPI_BYTE, 0, h->tag, h->comm); /* finished: complete it now */
            if (rc != MPI_SUCCESS) strata_error("completing a nonblocking request: error %d", rc);
        }
        strata_nb_unlock();
    }
}

int strata_nb_from_host(MPI_Request *request)
{
    struct strata_nb_handle *h = strata_nb_handle_find(*request);
    if (!h || !atomic_load_explicit(&h->hosted, memory_order_relaxed)) return 0;
    *request = MPI_REQUEST_NULL;
    strata_nb_handle_give(h);
    return 1;
}
