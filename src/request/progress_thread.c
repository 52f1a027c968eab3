/* STRATA_PROGRESS=thread: one thread per process that advances outstanding
 * nonblocking and persistent collectives while the application computes
 * without calling MPI (nonblocking.h, progress_thread.h).
 *
 * It calls the host MPI (the host's point-to-point requests of the
 * compositions across nodes, the self message that completes a request), so
 * it runs only where the host was initialised with MPI_THREAD_MULTIPLE; at a
 * lower level it is refused with a warning and progress stays inside MPI
 * calls.  It sleeps on a condition variable while nothing is outstanding,
 * and while something is it polls as a waiting rank does (spin, then yield):
 * a core, or a share of one when the machine runs more tasks than it has
 * cores.  It never races the application's own progress: both go through
 * strata_nb_progress, whose trylock lets one thread progress at a time. */
#include "request/progress_thread.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>

#include "config/config.h"
#include "request/nonblocking.h"
#include "util/log.h"

static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int running;        /* under wake_lock */
static _Atomic int stop;   /* set once at MPI_Finalize */

static void *progress_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wake_lock);
    /* Acquire pairs with strata_progress_thread_stop's release (also under
     * the lock; the inner loop reads it without). */
    while (!atomic_load_explicit(&stop, memory_order_acquire)) {
        if (!strata_nb_outstanding()) {
            /* The poster signals under wake_lock after counting its
             * operation, and this test runs under it: no lost wake-up. */
            pthread_cond_wait(&wake_cond, &wake_lock);
            continue;
        }
        pthread_mutex_unlock(&wake_lock);
        for (unsigned long round = 0;
             strata_nb_outstanding() && !atomic_load_explicit(&stop, memory_order_acquire);
             round++) {
            strata_nb_progress();
            strata_nb_idle(round);
        }
        pthread_mutex_lock(&wake_lock);
    }
    pthread_mutex_unlock(&wake_lock);
    return NULL;
}

void strata_progress_thread_start(void)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || !cfg->progress_thread) return;
    int level = MPI_THREAD_SINGLE, rank = 0;
    PMPI_Query_thread(&level);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (level != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            strata_warn("STRATA_PROGRESS=thread refused: the progress thread calls the host MPI, "
                        "which was initialised below MPI_THREAD_MULTIPLE (level %d); nonblocking "
                        "collectives progress inside MPI calls only",
                        level);
        return;
    }
    pthread_mutex_lock(&wake_lock);
    if (!running && !atomic_load_explicit(&stop, memory_order_relaxed)) {
        int rc = pthread_create(&thread, NULL, progress_main, NULL);
        if (rc == 0) running = 1;
        else strata_warn("STRATA_PROGRESS=thread: no progress thread (pthread_create: error %d); "
                         "progress stays inside MPI calls", rc);
    }
    pthread_mutex_unlock(&wake_lock);
    if (running) strata_verbose(1, "progress thread started (STRATA_PROGRESS=thread)");
}

void strata_progress_thread_wake(void)
{
    /* Under the lock, so that the thread is either before its test of the
     * count (and sees it) or already waiting (and is woken).  Taken only
     * when the count leaves zero, not at every post. */
    pthread_mutex_lock(&wake_lock);
    if (running) pthread_cond_signal(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
}

void strata_progress_thread_stop(void)
{
    pthread_mutex_lock(&wake_lock);
    /* Release: the thread's acquire loads see it (and what came before). */
    atomic_store_explicit(&stop, 1, memory_order_release);
    int was = running;
    running = 0;
    pthread_cond_signal(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
    if (was) pthread_join(thread, NULL);
}

/* The queue reaches this file only through its upcalls (nonblocking.h). */
__attribute__((constructor)) static void register_upcalls(void)
{
    strata_nb_upcalls.setup = strata_progress_thread_start;
    strata_nb_upcalls.first_outstanding = strata_progress_thread_wake;
    strata_nb_upcalls.finalize = strata_progress_thread_stop;
}
