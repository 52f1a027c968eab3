/* The pool of handles of nonblocking operations (nb_handle.h). */
#include "request/nb_handle.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


_Atomic int strata_nb_handles_live_count;

/* The shared free list (taken only when a thread's own list is empty or
 * full).  Never held across a host call: the operation's end gives a handle
 * back from inside the host's attribute callbacks too (MPI_Comm_free drains
 * the communicator's operations), where the host may hold its own lock. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strata_nb_handle *pool_free;
/* Growth (host calls under it): only a post that found no handle takes it. */
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;

/* The handles by receive.  Published with release under grow_lock, never
 * removed before MPI_Finalize: a lookup reads without a lock. */
#define BUCKETS 1024
static _Atomic(struct strata_nb_handle *) buckets[BUCKETS];

/* The communicators of the handles, one per 32768 tags (MPI guarantees
 * tags up to 32767); the last one's next tag. */
#define TAGS 32768
#define MAX_COMMS 4096
static MPI_Comm comms[MAX_COMMS];
static int ncomms, next_tag = TAGS;

/* This thread's handles given back: a post then takes one without a lock
 * (a post and its wait on one thread is the common case).  initial-exec as
 * nonblocking.h's strata_nb_deferred_mine.  A thread that ends leaves its
 * few here: still in the table, freed at MPI_Finalize. */
#define MINE_MAX 16
static _Thread_local struct {
    struct strata_nb_handle *list;
    int n;
} mine __attribute__((tls_model("initial-exec")));

static unsigned bucket_of(MPI_Request req)
{
    uint64_t k = 0; /* a pointer (Open MPI) or an int (MPICH) */
    memcpy(&k, &req, sizeof req < sizeof k ? sizeof req : sizeof k);
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 54) % BUCKETS;
}

/* A new handle (grow_lock held). */
static struct strata_nb_handle *make(int *rc)
{
    if (next_tag == TAGS) {
        if (ncomms == MAX_COMMS) {
            *rc = MPI_ERR_NO_MEM;
            return NULL;
        }
        *rc = PMPI_Comm_dup(MPI_COMM_SELF, &comms[ncomms]);
        if (*rc != MPI_SUCCESS) return NULL;
        PMPI_Comm_set_name(comms[ncomms], "strata nonblocking collectives");
        ncomms++;
        next_tag = 0;
    }
    struct strata_nb_handle *h = calloc(1, sizeof *h);
    if (!h) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    h->comm = comms[ncomms - 1];
    h->tag = next_tag;
    *rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, h->tag, h->comm, &h->req);
    if (*rc != MPI_SUCCESS) {
        free(h);
        return NULL;
    }
    next_tag++;
    unsigned b = bucket_of(h->req);
    h->next_bucket = atomic_load_explicit(&buckets[b], memory_order_relaxed);
    /* Release: a lookup that finds it sees its fields. */
    atomic_store_explicit(&buckets[b], h, memory_order_release);
    return h;
}

struct strata_nb_handle *strata_nb_handle_take(int *rc)
{
    struct strata_nb_handle *h = mine.list;
    if (h) {
        mine.list = h->next_free;
        mine.n--;
    } else {
        pthread_mutex_lock(&pool_lock);
        h = pool_free;
        if (h) pool_free = h->next_free;
        pthread_mutex_unlock(&pool_lock);
        if (!h) {
            pthread_mutex_lock(&grow_lock);
            h = make(rc);
            pthread_mutex_unlock(&grow_lock);
            if (!h) return NULL;
        }
    }
    h->next_free = NULL;
    h->app_freed = 0;
    atomic_store_explicit(&h->hosted, 0, memory_order_relaxed);
    /* Relaxed: the handle is this thread's until its post returns; the
     * queue's lock orders it for the thread that finishes the operation. */
    atomic_store_explicit(&h->state, STRATA_NB_HANDLE_ACTIVE, memory_order_relaxed);
    atomic_fetch_add_explicit(&strata_nb_handles_live_count, 1, memory_order_relaxed);
    return h;
}

void strata_nb_handle_give(struct strata_nb_handle *h)
{
    /* Relaxed: no one else holds it (given back by the thread that completed it). */
    atomic_store_explicit(&h->state, STRATA_NB_HANDLE_FREE, memory_order_relaxed);
    atomic_fetch_sub_explicit(&strata_nb_handles_live_count, 1, memory_order_relaxed);
    if (mine.n < MINE_MAX) {
        h->next_free = mine.list;
        mine.list = h;
        mine.n++;
        return;
    }
    pthread_mutex_lock(&pool_lock);
    h->next_free = pool_free;
    pool_free = h;
    pthread_mutex_unlock(&pool_lock);
}

struct strata_nb_handle *strata_nb_handle_find(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL) return NULL;
    /* Acquire: pairs with make()'s release (its req and next are seen). */
    for (struct strata_nb_handle *h =
             atomic_load_explicit(&buckets[bucket_of(req)], memory_order_acquire);
         h; h = h->next_bucket)
        if (h->req == req)
            return atomic_load_explicit(&h->state, memory_order_relaxed) != STRATA_NB_HANDLE_FREE
                       ? h
                       : NULL;
    return NULL;
}

void strata_nb_handle_finalize(void)
{
    pthread_mutex_lock(&grow_lock);
    for (int b = 0; b < BUCKETS; b++)
        for (struct strata_nb_handle *h = atomic_load_explicit(&buckets[b], memory_order_relaxed);
             h; h = h->next_bucket)
            if (h->req != MPI_REQUEST_NULL) PMPI_Request_free(&h->req);
    for (int i = 0; i < ncomms; i++) PMPI_Comm_free(&comms[i]);
    ncomms = 0;
    next_tag = TAGS;
    pthread_mutex_unlock(&grow_lock);
}
