/* MPI_Init and MPI_Init_thread: set strata up right after the host MPI.
 * MPI_Finalize needs no wrapper: strata releases everything from an
 * attribute on MPI_COMM_SELF, which MPI_Finalize deletes first.  Where
 * MPI_Init bypasses these (PMPI_Init called directly), the first collective
 * over the world sets strata up (strata_runtime_start_late). */
#include <mpi.h>

#include "context/runtime.h"
#include "heap/heap.h"
#include "shm/arena.h"
#include "util/log.h"

/* What became of STRATA_SHARED_HEAP, said once by world rank 0: refused
 * (loudly), or on (at STRATA_VERBOSE=1). */
static void say_heap(void)
{
    const struct strata_runtime *rt = strata_runtime_state();
    size_t min;
    const char *why_off;
    int on = strata_heap_enabled(&min, &why_off);
    if (!rt || rt->world_rank != 0) return;
    if (why_off)
        strata_warn("STRATA_SHARED_HEAP=1 is refused: %s; allocations stay in the C library's "
                    "heap", why_off);
    else if (on)
        strata_verbose(1, "shared heap: on, allocations of %zu bytes or more come from the "
                       "arena (transport %s)", min,
                       strata_runtime() ? strata_runtime()->transport->name : "none: strata is off");
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        strata_runtime_start();
        say_heap();
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        strata_runtime_start();
        say_heap();
    }
    return rc;
}
