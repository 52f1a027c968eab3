/* What happens when a copy fails mid-operation: the job ends with a
 * message a user can act on.  The transport layer keeps the world's pid
 * table (given by the runtime at MPI_Init) so that the message names the
 * MPI_COMM_WORLD rank, not the peer's rank in a node plane, which means
 * nothing to a user. */
#include "transport/transport.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static const pid_t *world_pid;
static int world_size;

void strata_transport_set_world(const pid_t *pids, int size)
{
    world_pid = pids;
    world_size = size;
}

void strata_transport_failed(const struct strata_transport *t, const char *what, int node_rank,
                             pid_t pid, int err)
{
    int world_rank = -1;
    for (int r = 0; pid > 0 && world_pid && r < world_size && world_rank < 0; r++)
        if (world_pid[r] == pid) world_rank = r;
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
