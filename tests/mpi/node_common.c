/* Options and checks shared by the node-collective test programs. */
#include <string.h>

#include "context/context.h"
#include "route/route.h"
#include "node_common.h"

struct node_opts node_opt = {
    .seed = 0x5eed,
    .all_roots = 1,
    .large = 1,
    .huge = 0,
    .host_check = 1,
    .expect_host = 0,
    .reps = 1,
    .types = (1u << NODE_NCATS) - 1,
};

int node_roots(int size, int *roots)
{
    if (node_opt.all_roots) {
        for (int r = 0; r < size; r++) roots[r] = r;
        return size;
    }
    int n = 0;
    roots[n++] = 0;
    if (size > 1) roots[n++] = size - 1;
    if (size > 2) roots[n++] = size / 2;
    return n;
}

void node_check_route(MPI_Comm comm, const char *what)
{
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Barrier(comm); /* creates the context if this is the first collective */
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx != NULL || node_opt.expect_host, "%s: no strata context", what);
    const enum strata_coll colls[] = {STRATA_COLL_BCAST, STRATA_COLL_REDUCE,
                                      STRATA_COLL_ALLREDUCE, STRATA_COLL_BARRIER};
    /* Why the host MPI has it, when the test knows (the fallback tests). */
    if (ctx && size > 1 && node_opt.host_reason)
        CHECK(!ctx->plane && strstr(ctx->plane_why, node_opt.host_reason),
              "%s: strata has %s; expected the host MPI because \"%s\"", what,
              ctx->plane ? "a data plane" : ctx->plane_why, node_opt.host_reason);
    /* The transport test runs the matrix once per transport: make sure the
     * run really used the one it names (a silent fallback would test the
     * other one twice). */
    if (ctx && ctx->plane && node_opt.transport)
        CHECK(!strcmp(ctx->plane->xport->name, node_opt.transport),
              "%s: the plane moves data with transport %s, expected %s", what,
              ctx->plane->xport->name, node_opt.transport);
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        const char *refusal = strata_route_refusal(ctx, colls[i]);
        if (node_opt.expect_host)
            CHECK(refusal != NULL, "%s: strata serves %s, expected the host MPI", what,
                  strata_coll_name(colls[i]));
        else
            CHECK(refusal == NULL, "%s: %s goes to the host MPI (%s), expected strata", what,
                  strata_coll_name(colls[i]), refusal);
    }
}
