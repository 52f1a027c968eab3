/* The datatype arrays of Alltoallw and Neighbor_alltoallw from Fortran:
 * arrays of MPI_Fint handles, converted one element at a time into the C
 * arrays the C call takes. */
#ifndef STRATA_FORTRAN_WTYPES_H
#define STRATA_FORTRAN_WTYPES_H

#include <mpi.h>

struct strata_fortran_wtypes {
    MPI_Datatype *send; /* NULL where the send side is MPI_IN_PLACE */
    MPI_Datatype *recv;
};

/* Converts the send and receive type arrays of a call on comm: as many
 * elements as the communicator's (remote) size, or with neighbor its
 * out- and in-degree.  sendbuf is the C view of the send buffer (in place:
 * no send types read).  Returns MPI_SUCCESS or an MPI error; t is then
 * ready for strata_fortran_wtypes_free either way. */
int strata_fortran_wtypes_get(struct strata_fortran_wtypes *t, MPI_Comm comm, int neighbor,
                              const void *sendbuf, const MPI_Fint *sendtypes,
                              const MPI_Fint *recvtypes);

void strata_fortran_wtypes_free(struct strata_fortran_wtypes *t);

#endif
