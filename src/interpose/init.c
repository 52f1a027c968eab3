/* MPI_Init and MPI_Init_thread: set strata up right after the host MPI.
 * MPI_Finalize needs no wrapper: strata releases everything from an
 * attribute on MPI_COMM_SELF, which MPI_Finalize deletes first. */
#include <mpi.h>

#include "context/runtime.h"

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        int provided = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&provided);
        strata_runtime_init(provided);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) strata_runtime_init(*provided);
    return rc;
}
