/* MPI_Alloc_mem and MPI_Free_mem: memory from this process's arena
 * (shm/arena.h) when the node's ranks map each other's arenas (the map
 * transport), so collectives on it copy with memcpy and reduce in place.
 *
 * Anything else goes to the host MPI unchanged: a size it must judge (0 or
 * negative), strata off or on another transport, an arena that cannot
 * grow (said at STRATA_VERBOSE=1), and MPI_Free_mem of any pointer that is
 * not a live block from here (the host gives its own error). */
#include <mpi.h>

#include <errno.h>
#include <string.h>

#include "context/runtime.h"
#include "shm/arena.h"
#include "util/log.h"

/* Whether this process's collectives read peers' arenas through mappings. */
static int arena_serves(void)
{
    const struct strata_runtime *rt = strata_runtime();
    return rt && (rt->transport->features & STRATA_XPORT_MAP_PEER);
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    if (size <= 0 || !baseptr || !arena_serves()) return PMPI_Alloc_mem(size, info, baseptr);
    void *p = strata_arena_alloc((size_t)size, 0, 0, STRATA_ARENA_MPI);
    if (!p) {
        strata_verbose(1, "MPI_Alloc_mem of %lld bytes: the arena cannot hold it (%s); "
                       "the host MPI allocates it (collectives on it copy by CMA)",
                       (long long)size, strerror(errno));
        return PMPI_Alloc_mem(size, info, baseptr);
    }
    memcpy(baseptr, &p, sizeof p); /* baseptr is a void ** passed as void * */
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    if (strata_arena_free(base, STRATA_ARENA_MPI)) return MPI_SUCCESS;
    return PMPI_Free_mem(base);
}
