/* Fortran's datatype arrays of the w collectives, converted per element
 * (an MPI_Fint handle is not an MPI_Datatype on Open MPI).  The C arrays
 * live only during the call: strata copies the types a nonblocking or
 * persistent operation keeps (serve/wcollectives.c, serve/wpersist.c) and
 * both hosts copy theirs when they build their schedule, as their own
 * Fortran bindings rely on. */
#include "fortran/wtypes.h"

#include <stdlib.h>

/* How many send (out) and receive (in) blocks a call on comm has. */
static int block_counts(MPI_Comm comm, int neighbor, int *out, int *in)
{
    if (!neighbor) {
        int inter = 0, rc = PMPI_Comm_test_inter(comm, &inter);
        if (rc == MPI_SUCCESS) rc = inter ? PMPI_Comm_remote_size(comm, out)
                                          : PMPI_Comm_size(comm, out);
        *in = *out;
        return rc;
    }
    int topo = MPI_UNDEFINED, rc = PMPI_Topo_test(comm, &topo);
    if (rc != MPI_SUCCESS) return rc;
    switch (topo) {
    case MPI_CART: {
        int ndims = 0;
        rc = PMPI_Cartdim_get(comm, &ndims);
        *out = *in = 2 * ndims; /* each dimension's source and destination */
        return rc;
    }
    case MPI_GRAPH: {
        int rank = 0;
        rc = PMPI_Comm_rank(comm, &rank);
        if (rc == MPI_SUCCESS) rc = PMPI_Graph_neighbors_count(comm, rank, out);
        *in = *out;
        return rc;
    }
    case MPI_DIST_GRAPH: {
        int weighted = 0;
        return PMPI_Dist_graph_neighbors_count(comm, in, out, &weighted);
    }
    default:
        return MPI_ERR_TOPOLOGY;
    }
}

static int convert(const MPI_Fint *f, int n, MPI_Datatype **c)
{
    *c = malloc(sizeof **c * (size_t)(n > 0 ? n : 1));
    if (!*c) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) (*c)[i] = PMPI_Type_f2c(f[i]);
    return MPI_SUCCESS;
}

int strata_fortran_wtypes_get(struct strata_fortran_wtypes *t, MPI_Comm comm, int neighbor,
                              const void *sendbuf, const MPI_Fint *sendtypes,
                              const MPI_Fint *recvtypes)
{
    t->send = t->recv = NULL;
    int out = 0, in = 0, rc = block_counts(comm, neighbor, &out, &in);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE) rc = convert(sendtypes, out, &t->send);
    if (rc == MPI_SUCCESS) rc = convert(recvtypes, in, &t->recv);
    return rc;
}

void strata_fortran_wtypes_free(struct strata_fortran_wtypes *t)
{
    free(t->send);
    free(t->recv);
    t->send = t->recv = NULL;
}
