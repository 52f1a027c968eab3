/* Device Allreduce with the reduction on the device (device_comm.h:
 * strata_device_allreduce_ipc): the ADAPT paper's GPU staging for a
 * reduction.  Inside each node the leader (node rank 0) maps its peers'
 * device buffers through CUDA IPC and combines them into its own receive
 * buffer with the device reducer (coll/device_reduce.h: the GPU plugin on a
 * real device, the CPU reducer on the fake); across nodes the leaders stage
 * that one buffer through pinned host memory for the host MPI; then every
 * peer copies the result device to device from its leader.
 *
 * Order of combination: node ranks in order at each leader, then the host
 * path across leaders.  Exact for the integer, logical, bitwise and
 * MIN/MAX/LOC operations; a floating-point SUM or PROD may round
 * differently from the host MPI's order (as strata's own host paths may),
 * identically on every rank. */
#include <stdint.h>
#include <stdlib.h>

#include "coll/device_reduce.h"
#include "coll/ops.h"
#include "route/run_view.h"
#include "serve/collectives.h"
#include "device/device_comm.h"
#include "util/log.h"

int strata_device_allreduce_ipc(const void *sendbuf, void *recvbuf, long long count,
                                MPI_Datatype type, MPI_Op op, MPI_Comm comm, size_t bytes,
                                int *rcp)
{
    int dop, dkind, in_place = sendbuf == MPI_IN_PLACE;
    unsigned char *rrun = strata_contiguous_run(recvbuf, count, type, bytes);
    unsigned char *srun = in_place ? rrun : strata_contiguous_run((void *)sendbuf, count, type, bytes);
    struct strata_device_handle hs, hr;
    /* Every rank's verdict: both buffers one run of device memory that IPC
     * can export, a predefined (op, type) with a kernel, an int count. */
    int ok = count > 0 && count <= 0x7fffffff && rrun && srun &&
             strata_reduce_classify(op, type, &dop, &dkind) == 0 &&
             strata_device_is_device(rrun) && strata_device_is_device(srun) &&
             strata_device_export(srun, &hs) == 0 && strata_device_export(rrun, &hr) == 0;
    int all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) return 0;
    struct strata_device_comm *dc = strata_device_comm(comm);
    struct strata_device_lane *lane = strata_device_comm_enter(comm, rrun);
    strata_device_settle(lane); /* before any peer touches this rank's buffers */
    strata_device_comm_split(dc, comm);
    int node_rank, node_size;
    PMPI_Comm_rank(dc->node, &node_rank);
    PMPI_Comm_size(dc->node, &node_size);

    /* Mapping first, nothing written yet: the leader maps every peer's
     * source, every peer maps the leader's receive buffer; if any rank
     * cannot, the whole call takes the staging path (returns 0). */
    struct strata_device_handle *hv = NULL;
    void **peers = NULL;
    void *leader_recv = NULL;
    int mapped = 1;
    if (node_rank == 0) {
        hv = malloc(sizeof *hv * (size_t)node_size);
        peers = calloc((size_t)node_size, sizeof *peers);
        if (!hv || !peers) {
            strata_error("out of memory for %d device handles", node_size);
            PMPI_Abort(comm, 1);
        }
    }
    PMPI_Gather(&hs, sizeof hs, MPI_BYTE, hv, sizeof hs, MPI_BYTE, 0, dc->node);
    for (int k = 1; k < node_size && node_rank == 0 && mapped; k++)
        if (!(peers[k] = strata_device_import(&hv[k]))) mapped = 0;
    struct strata_device_handle lh = hr;
    PMPI_Bcast(&lh, sizeof lh, MPI_BYTE, 0, dc->node);
    if (node_rank != 0 && !(leader_recv = strata_device_import(&lh))) mapped = 0;
    int all_mapped;
    PMPI_Allreduce(&mapped, &all_mapped, 1, MPI_INT, MPI_MIN, comm);
    if (!all_mapped) {
        if (node_rank == 0 && mapped)
            strata_verbose(1, "MPI_Allreduce: CUDA IPC cannot map a peer's device buffer on "
                              "some node; the call is staged through host memory instead");
        free(hv);
        free(peers);
        strata_device_leave(lane);
        return 0;
    }
    strata_verbose(2, "MPI_Allreduce: %zu device bytes combined through CUDA IPC at each node "
                      "leader by the device reducer (%s), %d node%s",
                   bytes, strata_device_reducer_why(), dc->nnodes, dc->nnodes > 1 ? "s" : "");
    int rc = MPI_SUCCESS;
    if (node_rank == 0) {
        /* acc = s0, then acc = acc op s_k in node-rank order. */
        if (!in_place) strata_device_to_device(lane, rrun, srun, bytes);
        for (int k = 1; k < node_size; k++) {
            strata_device_reduce(lane, op, type, rrun, rrun, peers[k], (size_t)count);
            strata_device_count(STRATA_DEVICE_IPC, bytes);
        }
        strata_device_sync(lane);
    }
    /* Peers' sources are read; they may be written again (in place: with
     * the result, below). */
    PMPI_Barrier(dc->node);
    if (node_rank == 0 && dc->nnodes > 1) {
        unsigned char *host = strata_device_pinned(lane, 0, bytes);
        strata_device_to_host(lane, host, rrun, bytes);
        strata_device_sync(lane);
        /* The host path on the leaders' host copy (type and op as passed:
         * the layout is one contiguous run, so the host copy is too). */
        rc = strata_serve_allreduce(MPI_IN_PLACE, host - (rrun - (unsigned char *)recvbuf), count,
                                    type, op, dc->leaders, 0, NULL);
        if (rc == MPI_SUCCESS) {
            strata_device_count(STRATA_DEVICE_NETWORK, bytes);
            strata_device_from_host(lane, rrun, host, bytes);
            strata_device_sync(lane);
        }
    }
    /* The leader's result to every peer of its node. */
    PMPI_Bcast(&rc, 1, MPI_INT, 0, dc->node);
    if (rc == MPI_SUCCESS && node_rank != 0) {
        strata_device_to_device(lane, rrun, leader_recv, bytes);
        strata_device_count(STRATA_DEVICE_IPC, bytes);
        strata_device_sync(lane);
    }
    /* The leader's buffer is the application's again once every peer has
     * copied from it. */
    PMPI_Barrier(dc->node);
    free(hv);
    free(peers);
    strata_device_leave(lane);
    *rcp = rc;
    return 1;
}
