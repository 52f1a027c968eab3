/* What happens when a copy fails mid-operation: the job ends with a
 * message a user can act on, naming the peer's MPI_COMM_WORLD rank (from
 * the pid table util/log keeps), not its rank in a node plane, which means
 * nothing to a user. */
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

void strata_transport_failed(const struct strata_transport *t, const char *what, int node_rank,
                             pid_t pid, int err)
{
    int world_rank = strata_log_world_rank(pid);
    const char *name = t ? t->name : "?";
    if (world_rank >= 0)
        strata_error("transport %s: %s MPI_COMM_WORLD rank %d (pid %d) failed mid-operation: %s",
                     name, what, world_rank, (int)pid, strerror(err));
    else
        strata_error("transport %s: %s rank %d of the node (pid %d) failed mid-operation: %s",
                     name, what, node_rank, (int)pid, strerror(err));
    /* The probe said this transport works, so a peer died or passed a bad
     * buffer: MPI cannot be trusted to return, and hanging is worse. */
    abort();
}
