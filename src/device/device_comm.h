/* A communicator's device state, kept as an attribute: its staging lane
 * (transport/device.h) and, once a device broadcast needed them, its node
 * and node-leader communicators (device/device_ipc.c). */
#ifndef STRATA_DEVICE_COMM_H
#define STRATA_DEVICE_COMM_H

#include <mpi.h>

#include "transport/device.h"

struct strata_device_comm {
    struct strata_device_lane *lane;
    int split;            /* node and leaders made */
    MPI_Comm node;        /* the ranks of this rank's (virtual) node */
    MPI_Comm leaders;     /* node rank 0 of every node; MPI_COMM_NULL elsewhere */
    int nnodes;
};

/* comm's state, created (empty) on first use; NULL only if MPI refuses an
 * attribute. */
struct strata_device_comm *strata_device_comm(MPI_Comm comm);

/* comm's lane, entered for device buffer p (device.h: strata_device_enter);
 * leave it with strata_device_leave. */
struct strata_device_lane *strata_device_comm_enter(MPI_Comm comm, const void *p);

/* Makes dc's node and leaders communicators.  Collective over comm: call it
 * only where every rank of comm does. */
void strata_device_comm_split(struct strata_device_comm *dc, MPI_Comm comm);

/* device_ipc_reduce.c: an Allreduce above one piece when every rank's send
 * and receive buffers are each one contiguous run of device memory that
 * CUDA IPC can export, and (op, type) has a reduction kernel (agreed here:
 * collective over comm).  Each node leader reduces its node's buffers on the
 * device through IPC with the device reducer, the leaders combine across
 * nodes through pinned host memory, the peers copy the result from their
 * leader.  Returns 1 when it served the call (result in *rc), 0 when it did
 * not (nothing written). */
int strata_device_allreduce_ipc(const void *sendbuf, void *recvbuf, long long count,
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm, size_t bytes,
                                int *rc);

#endif

/* device_ipc.c: a broadcast above one piece when every rank's buffer is one
 * contiguous run of device memory that CUDA IPC can export (agreed here, so
 * collective over comm: every rank calls it for the same calls).  The node
 * leaders stage the data through pinned host memory for the host MPI, each
 * once (the ADAPT paper's figure 6c), and the other ranks of each node copy
 * it device to device from their node's source through CUDA IPC.  Returns 1
 * when it served the call (result in *rc), 0 when the ranks did not all
 * qualify (nothing done). */
int strata_device_bcast_ipc(void *buffer, long long count, MPI_Datatype type, int root,
                            MPI_Comm comm, size_t bytes, int *rc);
