/* A communicator's device state (device_comm.h). */
#include "device/device_comm.h"

#include <pthread.h>
#include <stdlib.h>

#include "context/runtime.h"
#include "util/log.h"

static int keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;

static int state_delete(MPI_Comm comm, int kv, void *value, void *extra)
{
    struct strata_device_comm *dc = value;
    strata_device_lane_free(dc->lane);
    if (dc->node != MPI_COMM_NULL) PMPI_Comm_free(&dc->node);
    if (dc->leaders != MPI_COMM_NULL) PMPI_Comm_free(&dc->leaders);
    free(dc);
    return MPI_SUCCESS;
}

static void make_keyval(void)
{
    /* A duplicate starts without state: its own lane, made on first use. */
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, state_delete, &keyval, NULL);
}

struct strata_device_comm *strata_device_comm(MPI_Comm comm)
{
    pthread_once(&keyval_once, make_keyval);
    if (keyval == MPI_KEYVAL_INVALID) return NULL;
    struct strata_device_comm *dc = NULL;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval, &dc, &found);
    if (found) return dc;
    if (!(dc = calloc(1, sizeof *dc))) return NULL;
    dc->node = dc->leaders = MPI_COMM_NULL;
    if (PMPI_Comm_set_attr(comm, keyval, dc) != MPI_SUCCESS) {
        free(dc);
        return NULL;
    }
    return dc;
}

struct strata_device_lane *strata_device_comm_enter(MPI_Comm comm, const void *p)
{
    struct strata_device_comm *dc = strata_device_comm(comm);
    if (!dc) {
        strata_error("device transport: MPI refused the attribute that keeps a communicator's "
                     "device state");
        abort();
    }
    strata_device_enter(&dc->lane, p);
    return dc->lane;
}

void strata_device_comm_split(struct strata_device_comm *dc, MPI_Comm comm)
{
    if (dc->split) return;
    /* The runtime's node of this rank: a virtual node (STRATA_VIRTUAL_NODES)
     * always lies inside one machine, where CUDA IPC can reach. */
    const struct strata_runtime *rt = strata_runtime();
    int rank, node_rank;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_split(comm, rt ? rt->node : 0, rank, &dc->node);
    PMPI_Comm_rank(dc->node, &node_rank);
    PMPI_Comm_split(comm, node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &dc->leaders);
    int leader = node_rank == 0;
    PMPI_Allreduce(&leader, &dc->nnodes, 1, MPI_INT, MPI_SUM, comm);
    dc->split = 1;
}
