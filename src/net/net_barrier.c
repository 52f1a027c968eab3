/* Barrier across nodes: every node gathers at its leader (the node's own
 * barrier), leaders run a dissemination barrier over the network (round r:
 * tell leader i + 2^r, hear from leader i - 2^r; ceil(log2 nodes) rounds,
 * no root), and every node is released by a second node barrier.  The
 * second node barrier is also what keeps a non-leader from leaving before
 * every other node has arrived.  A resumable operation (coll/task.h). */
#include "net/net.h"

#include <stddef.h>

#include "shm/flags.h"
#include "util/stats.h"

enum { TAG_BARRIER = 6 }; /* 7: net_reduce.c */

static struct strata_net_barrier_task *barrier_of(struct strata_task *op)
{
    return (struct strata_net_barrier_task *)((char *)op -
                                              offsetof(struct strata_net_barrier_task, op));
}

static int net_barrier_progress(struct strata_task *op)
{
    struct strata_net_barrier_task *o = barrier_of(op);
    struct strata_net *net = o->net;
    struct strata_plane *np = net->node_plane;
    int nn = net->nnodes, me = net->my_node, rc;
    STRATA_TASK_BEGIN(op);
    if (np) {
        strata_barrier_start(&o->node, np);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    }
    if (o->net->rank == strata_net_leader(net, me, -1)) {
        for (o->dist = 1; o->dist < nn; o->dist *= 2) {
            o->from = strata_net_leader(net, (me - o->dist + nn) % nn, -1);
            o->to = strata_net_leader(net, (me + o->dist) % nn, -1);
            rc = PMPI_Irecv(&o->token, 0, MPI_BYTE, o->from, TAG_BARRIER, net->dup, &o->req[0]);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Isend(&o->token, 0, MPI_BYTE, o->to, TAG_BARRIER, net->dup, &o->req[1]);
            if (rc != MPI_SUCCESS) return rc;
            if (strata_stats_enabled()) strata_stats_bytes(STRATA_COLL_BARRIER, STRATA_DIST_NODE, 0);
            /* Poll the pair once per step (no blocking wait: a blocking MPI
             * wait spins at full speed on an oversubscribed machine).  The
             * liveness check watches the sender this rank waits for. */
            for (;;) {
                MPI_Status st[2]; /* unread; MPICH's headers make GCC reject MPI_STATUSES_IGNORE */
                int done = 0;
                rc = PMPI_Testall(2, o->req, &done, st);
                if (rc != MPI_SUCCESS) return rc;
                if (done) break;
                op->waiting_for = net->peer_pid[o->from];
                STRATA_TASK_YIELD(op);
            }
            op->waits++; /* a new wait starts its own spin */
        }
    }
    if (np) {
        strata_barrier_start(&o->node, np);
        STRATA_TASK_AWAIT_STEPS(op, &o->node.op, strata_task_step(&o->node.op));
    }
    STRATA_TASK_END(op);
}

void strata_net_barrier_start(struct strata_net_barrier_task *o, struct strata_net *net)
{
    strata_task_init(&o->op, net->node_plane, net_barrier_progress);
    o->net = net;
}

int strata_net_barrier(struct strata_net *net)
{
    struct strata_net_barrier_task o;
    strata_net_barrier_start(&o, net);
    return strata_task_run(&o.op);
}
