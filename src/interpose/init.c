/* MPI_Init and MPI_Init_thread: set strata up right after the host MPI.
 * MPI_Finalize needs no wrapper: strata releases everything from an
 * attribute on MPI_COMM_SELF, which MPI_Finalize deletes first.  Where
 * MPI_Init bypasses these (PMPI_Init called directly), the first collective
 * over the world sets strata up (strata_runtime_start_late). */
#include <mpi.h>

#include "context/runtime.h"

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) strata_runtime_start();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) strata_runtime_start();
    return rc;
}
