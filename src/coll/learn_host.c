/* The host MPI's collective on a block call's bytes (learn.h): what
 * selection times, now and then, to know the host's cost of the same call.
 * The arguments follow block.h's conventions (NULL: in place). */
#include <limits.h>
#include <mpi.h>

#include "coll/learn.h"
#include "util/colls.h"

int strata_learn_host_serves(int coll)
{
    return coll == STRATA_COLL_BCAST || coll == STRATA_COLL_GATHER ||
           coll == STRATA_COLL_SCATTER || coll == STRATA_COLL_ALLGATHER ||
           coll == STRATA_COLL_ALLTOALL;
}

int strata_learn_host_run(MPI_Comm comm, int coll, const struct strata_block_args *a)
{
    /* strata_learn_decide times the host only for blocks an int counts. */
    int n = (int)a->block;
    const void *send = a->send ? (const void *)a->send : MPI_IN_PLACE;
    switch (coll) {
    case STRATA_COLL_BCAST: return PMPI_Bcast(a->recv, n, MPI_BYTE, a->root, comm);
    case STRATA_COLL_GATHER:
        return PMPI_Gather(send, n, MPI_BYTE, a->recv, n, MPI_BYTE, a->root, comm);
    case STRATA_COLL_SCATTER:
        return PMPI_Scatter(a->send, n, MPI_BYTE, a->recv ? (void *)a->recv : MPI_IN_PLACE, n,
                            MPI_BYTE, a->root, comm);
    case STRATA_COLL_ALLGATHER:
        return PMPI_Allgather(send, n, MPI_BYTE, a->recv, n, MPI_BYTE, comm);
    case STRATA_COLL_ALLTOALL:
        return PMPI_Alltoall(send, n, MPI_BYTE, a->recv, n, MPI_BYTE, comm);
    }
    return MPI_ERR_INTERN;
}
