/* The host MPI's Fortran MPI_IN_PLACE and MPI_BOTTOM: addresses of
 * variables the MPI's Fortran side exports (each MPI its own), found at run
 * time by name, never assumed. */
#ifndef STRATA_FORTRAN_SENTINELS_H
#define STRATA_FORTRAN_SENTINELS_H

/* buf as C sees it: MPI_IN_PLACE or MPI_BOTTOM for the Fortran sentinels,
 * otherwise buf itself. */
void *strata_fortran_buffer(void *buf);

#endif
