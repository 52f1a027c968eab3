/* Helpers of the tests that check where a call went (strata or the host
 * MPI) and what it returned: test_bad_input.c and test_check_args.c.
 * STRATA_STATS must be set (the route counters count only then). */
#ifndef STRATA_TEST_ROUTE_CHECK_H
#define STRATA_TEST_ROUTE_CHECK_H

#include <mpi.h>

#include "context/context.h"
#include "route/route.h"
#include "testutil.h"
#include "util/stats.h"

/* The error class of a return code (MPI_SUCCESS stays itself). */
static inline int route_error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

/* Calls of coll on this rank that strata served (served = 1) or handed to
 * the host MPI (served = 0). */
static inline unsigned long long route_calls(enum strata_coll coll, int served)
{
    return strata_stats_local_calls(coll, served);
}

/* A call strata serves, checked: after an erroneous call, the
 * communicator c still works and is still strata's. */
static inline void route_check_still_served(MPI_Comm c, const char *after)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    unsigned long long served = route_calls(STRATA_COLL_ALLREDUCE, 1);
    int mine = rank + 1, sum = 0;
    int rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(rc == MPI_SUCCESS && sum == size * (size + 1) / 2,
          "after %s: Allreduce rc %d sum %d, expected %d", after, rc, sum, size * (size + 1) / 2);
    CHECK(route_calls(STRATA_COLL_ALLREDUCE, 1) == served + 1,
          "after %s: strata no longer serves the communicator", after);
}

/* A duplicate of MPI_COMM_WORLD that returns errors, which strata must
 * serve; its context in *ctx. */
static inline MPI_Comm route_served_dup(struct strata_ctx **ctx)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Barrier(c);
    *ctx = strata_ctx_get(c);
    CHECK(*ctx && ((*ctx)->plane || (*ctx)->net), "strata must serve the test communicator: %s",
          *ctx ? (*ctx)->plane_why : "no context");
    return c;
}

#endif
