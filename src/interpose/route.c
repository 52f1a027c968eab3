/* Per-call routing between strata's algorithms and the host MPI. */
#include "interpose/route.h"

#include <strings.h>

#include "coll/coll.h"
#include "config/config.h"
#include "util/log.h"

/* Collectives strata implements itself (on a one-node communicator); the
 * others go to the host MPI until they are built. */
static const struct {
    const char *name;
    const char *short_name;
    int built;
} colls[STRATA_NCOLLS] = {
    [STRATA_COLL_BCAST] = {"MPI_Bcast", "bcast", 1},
    [STRATA_COLL_REDUCE] = {"MPI_Reduce", "reduce", 1},
    [STRATA_COLL_ALLREDUCE] = {"MPI_Allreduce", "allreduce", 1},
    [STRATA_COLL_ALLGATHER] = {"MPI_Allgather", "allgather", 1},
    [STRATA_COLL_GATHER] = {"MPI_Gather", "gather", 1},
    [STRATA_COLL_SCATTER] = {"MPI_Scatter", "scatter", 1},
    [STRATA_COLL_ALLTOALL] = {"MPI_Alltoall", "alltoall", 1},
    [STRATA_COLL_BARRIER] = {"MPI_Barrier", "barrier", 1},
};

const char *strata_coll_name(enum strata_coll coll) { return colls[coll].name; }

int strata_coll_parse(const char *name)
{
    for (int c = 0; c < STRATA_NCOLLS; c++)
        if (!strcasecmp(name, colls[c].name) || !strcasecmp(name, colls[c].short_name))
            return c;
    return -1;
}

const char *strata_route_refusal(const struct strata_ctx *ctx, enum strata_coll coll)
{
    if (!ctx) return "strata is off or this is not an intracommunicator";
    if (!ctx->served) return ctx->reason;
    if (!colls[coll].built) return "not yet built in strata";
    if (ctx->size == 1) return "a single-rank communicator has nothing to exchange";
    if (ctx->net) {
        /* Alltoall's traffic is all between nodes: a node level adds a copy
         * and takes nothing off the network. */
        if (coll == STRATA_COLL_ALLTOALL)
            return "Alltoall across nodes is left to the host MPI (every block crosses the "
                   "network anyway)";
        return NULL;
    }
    if (!ctx->plane) return ctx->plane_why;
    return NULL;
}

const char *strata_route_path(const struct strata_plane *p, size_t bytes)
{
    size_t cico = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (bytes <= STRATA_TINY_MAX) return "tiny payload in the flag lines (Allreduce) or copy-in/copy-out";
    if (bytes <= cico) return "copy-in/copy-out through the segment";
    return p->use_cma ? "pipelined single copy (CMA)" : "segment rounds (CMA off)";
}

void strata_route_served(const struct strata_ctx *ctx, enum strata_coll coll,
                         const char *algorithm, size_t bytes)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 2) return;
    strata_verbose(2, "%s on communicator #%lu: strata, %zu bytes, %s",
                   colls[coll].name, ctx->serial, bytes, algorithm);
}

void strata_route_to_host(const struct strata_ctx *ctx, enum strata_coll coll,
                          const char *reason)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 2) return;
    strata_verbose(2, "%s on communicator #%lu: host MPI (%s)", colls[coll].name,
                   ctx ? ctx->serial : 0UL, reason);
}
