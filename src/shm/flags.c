/* Waiting on flags: spin, then yield, and notice dead peers. */
#include "shm/flags.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "util/log.h"
#include "util/hot.h"

static unsigned spin_polls = 256;

void strata_flag_set_spin(unsigned polls) { spin_polls = polls; }

STRATA_HOT unsigned strata_flag_spin(void) { return spin_polls; }

/* After this many yields a waiter checks its peer's liveness; a yield is
 * about a microsecond when others are runnable, so this is every few ms. */
#define LIVENESS_EVERY 4096

void strata_peer_check_alive(pid_t pid)
{
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
        strata_error("rank process %d died during a collective; ending this one too",
                     (int)pid);
        /* MPI cannot be trusted to return here (a peer is gone mid-operation),
         * and waiting forever is worse than leaving now. */
        abort();
    }
}

void strata_backoff(unsigned long round)
{
    if (round < spin_polls) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    sched_yield();
}

int strata_liveness_due(unsigned long round)
{
    return round > spin_polls && (round - spin_polls) % LIVENESS_EVERY == 0;
}
