/* Barrier across nodes: every node gathers at its leader (the node's own
 * barrier), leaders run a dissemination barrier over the network (round r:
 * tell leader i + 2^r, hear from leader i - 2^r; ceil(log2 nodes) rounds,
 * no root), and every node is released by a second node barrier.  The
 * second node barrier is also what keeps a non-leader from leaving before
 * every other node has arrived. */
#include "net/net.h"

#include "shm/flags.h"
#include "util/stats.h"

enum { TAG_BARRIER = 6 }; /* 7: net_reduce.c */

/* Waits for two requests, yielding between polls (no blocking wait: a
 * blocking MPI wait spins at full speed on an oversubscribed machine), and
 * checking that the two peers live where this process can see them. */
static int wait_pair(MPI_Request req[2], const pid_t *peer_pid, int from, int to)
{
    unsigned long round = 0;
    for (;;) {
        MPI_Status st[2]; /* unread; MPICH's headers make GCC reject MPI_STATUSES_IGNORE */
        int done = 0, rc = PMPI_Testall(2, req, &done, st);
        if (rc != MPI_SUCCESS || done) return rc;
        strata_backoff(round++);
        if (strata_liveness_due(round)) {
            strata_peer_check_alive(peer_pid[from]);
            strata_peer_check_alive(peer_pid[to]);
        }
    }
}

int strata_net_barrier(struct strata_net *net)
{
    struct strata_plane *np = net->node_plane;
    int rc = np ? strata_barrier(np) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS) return rc;
    if (net->rank == strata_net_leader(net, net->my_node, -1)) {
        int nn = net->nnodes, me = net->my_node;
        for (int dist = 1; dist < nn; dist *= 2) {
            MPI_Request req[2];
            char token = 0;
            int from = strata_net_leader(net, (me - dist + nn) % nn, -1);
            int to = strata_net_leader(net, (me + dist) % nn, -1);
            rc = PMPI_Irecv(&token, 0, MPI_BYTE, from, TAG_BARRIER, net->dup, &req[0]);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Isend(&token, 0, MPI_BYTE, to, TAG_BARRIER, net->dup, &req[1]);
            if (rc == MPI_SUCCESS && strata_stats_enabled())
                strata_stats_bytes(STRATA_COLL_BARRIER, STRATA_DIST_NODE, 0);
            if (rc == MPI_SUCCESS) rc = wait_pair(req, net->peer_pid, from, to);
            if (rc != MPI_SUCCESS) return rc;
        }
    }
    return np ? strata_barrier(np) : MPI_SUCCESS;
}
