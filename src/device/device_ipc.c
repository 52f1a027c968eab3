/* Device broadcast with leader staging and CUDA IPC inside nodes
 * (device_comm.h: strata_device_bcast_ipc). */
#include <stdint.h>

#include "config/config.h"
#include "route/run_view.h"
#include "serve/collectives.h"
#include "device/device_comm.h"
#include "util/log.h"

static size_t piece_bytes(void)
{
    const struct strata_config *cfg = strata_config();
    return cfg ? cfg->cuda_chunk : (1u << 20);
}

/* Host-MPI transfers of `bytes` in pieces (counts stay within int). */
static int host_bcast(unsigned char *p, size_t bytes, int root, MPI_Comm c)
{
    size_t piece = piece_bytes();
    int rc = MPI_SUCCESS;
    for (size_t off = 0; off < bytes && rc == MPI_SUCCESS; off += piece)
        rc = PMPI_Bcast(p + off, (int)(bytes - off < piece ? bytes - off : piece), MPI_BYTE, root, c);
    return rc;
}

static int host_send(unsigned char *p, size_t bytes, int to, MPI_Comm c, int recv)
{
    size_t piece = piece_bytes();
    int rc = MPI_SUCCESS;
    for (size_t off = 0; off < bytes && rc == MPI_SUCCESS; off += piece) {
        int n = (int)(bytes - off < piece ? bytes - off : piece);
        rc = recv ? PMPI_Recv(p + off, n, MPI_BYTE, to, 0, c, MPI_STATUS_IGNORE)
                  : PMPI_Send(p + off, n, MPI_BYTE, to, 0, c);
    }
    return rc;
}

/* Across nodes, among the leaders (lroot: the leader of the root's node,
 * whose pinned `host` holds the data unless it is the root itself, whose
 * device `run` does).  Pieces: the root's copy of piece i+1 to host overlaps
 * the host broadcast of piece i; a receiving leader's copy of piece i to its
 * device overlaps the broadcast of piece i+1. */
static int leaders_bcast(struct strata_device_lane *lane, MPI_Comm leaders, int lroot, int is_root,
                         unsigned char *run, unsigned char *host, size_t bytes)
{
    int lrank;
    PMPI_Comm_rank(leaders, &lrank);
    size_t chunk = piece_bytes(), pieces = (bytes + chunk - 1) / chunk, issued = 0;
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < pieces && rc == MPI_SUCCESS; i++) {
        size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        if (is_root) {
            for (; issued < pieces && issued < i + STRATA_DEVICE_EVENTS; issued++) {
                size_t o = issued * chunk, l = bytes - o < chunk ? bytes - o : chunk;
                strata_device_to_host(lane, host + o, run + o, l);
                strata_device_mark(lane, (int)(issued % STRATA_DEVICE_EVENTS));
            }
            strata_device_wait(lane, (int)(i % STRATA_DEVICE_EVENTS));
        }
        rc = strata_serve_bcast(host + off, (long long)len, MPI_BYTE, lroot, leaders, 0, NULL);
        if (lrank != lroot && rc == MPI_SUCCESS) {
            strata_device_count(STRATA_DEVICE_NETWORK, len);
            strata_device_from_host(lane, run + off, host + off, len);
        }
    }
    strata_device_sync(lane);
    return rc;
}

int strata_device_bcast_ipc(void *buffer, long long count, MPI_Datatype type, int root,
                            MPI_Comm comm, size_t bytes, int *rcp)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    unsigned char *run = strata_contiguous_run(buffer, count, type, bytes);
    struct strata_device_handle mine;
    int ok = run && strata_device_is_device(run) && strata_device_export(run, &mine) == 0, all;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) return 0;
    struct strata_device_comm *dc = strata_device_comm(comm);
    struct strata_device_lane *lane = strata_device_comm_enter(comm, run);
    strata_device_settle(lane); /* before any peer touches this rank's buffers */
    strata_device_comm_split(dc, comm);
    int node_rank, node_size, rc = MPI_SUCCESS;
    PMPI_Comm_rank(dc->node, &node_rank);
    PMPI_Comm_size(dc->node, &node_size);
    /* The root's node rank on the root's node, -1 on the others. */
    int root_here = rank == root ? node_rank : -1, root_nr;
    PMPI_Allreduce(&root_here, &root_nr, 1, MPI_INT, MPI_MAX, dc->node);
    int source = root_nr >= 0 ? root_nr : 0; /* whom the node copies from */
    strata_verbose(2, "MPI_Bcast: %zu device bytes, leader staging across %d node%s, CUDA IPC "
                      "inside nodes",
                   bytes, dc->nnodes, dc->nnodes > 1 ? "s" : "");

    if (dc->nnodes > 1) {
        unsigned char *host = NULL;
        /* The root's node leader needs the data in host memory. */
        if (root_nr > 0 && rank == root) {
            host = strata_device_pinned(lane, 0, bytes);
            strata_device_to_host(lane, host, run, bytes);
            strata_device_sync(lane);
            rc = host_send(host, bytes, 0, dc->node, 0);
        }
        if (node_rank == 0) {
            host = strata_device_pinned(lane, 0, bytes);
            if (root_nr > 0) rc = host_send(host, bytes, root_nr, dc->node, 1);
            int lmine = root_nr >= 0 ? 0 : -1, lrank, lroot;
            PMPI_Comm_rank(dc->leaders, &lrank);
            if (lmine == 0) lmine = lrank;
            PMPI_Allreduce(&lmine, &lroot, 1, MPI_INT, MPI_MAX, dc->leaders);
            if (rc == MPI_SUCCESS)
                rc = leaders_bcast(lane, dc->leaders, lroot, rank == root, run, host, bytes);
        }
    }

    if (node_size > 1) {
        struct strata_device_handle h = mine;
        PMPI_Bcast(&h, sizeof h, MPI_BYTE, source, dc->node);
        int got = 1, all_got;
        if (node_rank != source) {
            void *peer = strata_device_import(&h);
            if (peer) {
                strata_device_to_device(lane, run, peer, bytes);
                strata_device_count(STRATA_DEVICE_IPC, bytes);
            } else {
                got = 0;
            }
            strata_device_sync(lane);
        }
        PMPI_Allreduce(&got, &all_got, 1, MPI_INT, MPI_MIN, dc->node);
        if (!all_got) {
            /* Some peer cannot map the source's memory (no peer access
             * between the two devices, say): the node goes through host
             * memory instead, and says so. */
            if (node_rank == 0)
                strata_verbose(1, "MPI_Bcast: CUDA IPC failed on a rank of this node; staging "
                                  "through host memory inside the node");
            unsigned char *host = strata_device_pinned(lane, 0, bytes);
            if (node_rank == source) {
                strata_device_to_host(lane, host, run, bytes);
                strata_device_sync(lane);
            }
            int brc = host_bcast(host, bytes, source, dc->node);
            if (rc == MPI_SUCCESS) rc = brc;
            if (!got) {
                strata_device_from_host(lane, run, host, bytes);
                strata_device_sync(lane);
            }
        }
        /* The source's buffer is the application's again only once every
         * peer has finished copying from it (each synchronised above). */
        PMPI_Barrier(dc->node);
    }
    strata_device_leave(lane);
    *rcp = rc;
    return 1;
}
