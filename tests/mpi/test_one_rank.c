/* One-rank communicators (MPI_COMM_SELF, a split of one rank each, a dup of
 * MPI_COMM_SELF): strata serves every collective itself, as a local copy or
 * nothing (in place), and counts each call as served (STRATA_STATS must be
 * set) under "one rank: ...".  Results are compared with the host MPI's
 * (PMPI_ calls) on the same inputs, buffers whole (nothing outside the data
 * written), with contiguous, gapped (vector) and mixed send/receive
 * datatypes. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "route/route.h"
#include "testutil.h"
#include "util/stats.h"

enum { N = 6, BUF = 4096 };
static MPI_Datatype gapped; /* 3 ints, stride 2: holes between them */
static MPI_Datatype triple; /* 3 contiguous ints */

static unsigned char in[BUF], out_s[BUF], out_h[BUF];

static void fill(unsigned char *b, unsigned salt)
{
    for (int i = 0; i < BUF; i++) b[i] = (unsigned char)(i * 7 + salt);
}

/* The call of collective `coll`, through strata (host 0) or the host MPI. */
static int call(int coll, int host, MPI_Comm comm, int in_place, MPI_Datatype st, int sc,
                MPI_Datatype rt, int rc_, unsigned char *out)
{
    const void *s = in_place ? MPI_IN_PLACE : in;
    switch (coll) {
    case STRATA_COLL_BCAST:
        return host ? PMPI_Bcast(out, rc_, rt, 0, comm) : MPI_Bcast(out, rc_, rt, 0, comm);
    case STRATA_COLL_REDUCE:
        return host ? PMPI_Reduce(s, out, rc_, rt, MPI_SUM, 0, comm)
                    : MPI_Reduce(s, out, rc_, rt, MPI_SUM, 0, comm);
    case STRATA_COLL_ALLREDUCE:
        return host ? PMPI_Allreduce(s, out, rc_, rt, MPI_BXOR, comm)
                    : MPI_Allreduce(s, out, rc_, rt, MPI_BXOR, comm);
    case STRATA_COLL_ALLGATHER:
        return host ? PMPI_Allgather(s, sc, st, out, rc_, rt, comm)
                    : MPI_Allgather(s, sc, st, out, rc_, rt, comm);
    case STRATA_COLL_GATHER:
        return host ? PMPI_Gather(s, sc, st, out, rc_, rt, 0, comm)
                    : MPI_Gather(s, sc, st, out, rc_, rt, 0, comm);
    case STRATA_COLL_SCATTER:
        /* In place is the receive side at the root. */
        return host ? PMPI_Scatter(in, sc, st, in_place ? MPI_IN_PLACE : out, rc_, rt, 0, comm)
                    : MPI_Scatter(in, sc, st, in_place ? MPI_IN_PLACE : out, rc_, rt, 0, comm);
    case STRATA_COLL_ALLTOALL:
        return host ? PMPI_Alltoall(s, sc, st, out, rc_, rt, comm)
                    : MPI_Alltoall(s, sc, st, out, rc_, rt, comm);
    case STRATA_COLL_BARRIER:
        return host ? PMPI_Barrier(comm) : MPI_Barrier(comm);
    case STRATA_COLL_REDUCE_SCATTER_BLOCK:
        return host ? PMPI_Reduce_scatter_block(s, out, rc_, rt, MPI_SUM, comm)
                    : MPI_Reduce_scatter_block(s, out, rc_, rt, MPI_SUM, comm);
    case STRATA_COLL_REDUCE_SCATTER: {
        int counts[1] = {rc_};
        return host ? PMPI_Reduce_scatter(s, out, counts, rt, MPI_MAX, comm)
                    : MPI_Reduce_scatter(s, out, counts, rt, MPI_MAX, comm);
    }
    case STRATA_COLL_SCAN:
        return host ? PMPI_Scan(s, out, rc_, rt, MPI_BOR, comm)
                    : MPI_Scan(s, out, rc_, rt, MPI_BOR, comm);
    case STRATA_COLL_EXSCAN:
        /* The result is undefined on rank 0: strata leaves the buffer as
         * it is, which the comparison below checks against the host's. */
        return host ? PMPI_Exscan(s, out, rc_, rt, MPI_SUM, comm)
                    : MPI_Exscan(s, out, rc_, rt, MPI_SUM, comm);
    }
    /* The v-collectives: one block each way, at displacement 0. */
    int scs[1] = {sc}, rcs[1] = {rc_}, zero[1] = {0};
    switch (coll) {
    case STRATA_COLL_GATHERV:
        return host ? PMPI_Gatherv(s, sc, st, out, rcs, zero, rt, 0, comm)
                    : MPI_Gatherv(s, sc, st, out, rcs, zero, rt, 0, comm);
    case STRATA_COLL_SCATTERV:
        return host ? PMPI_Scatterv(in, scs, zero, st, in_place ? MPI_IN_PLACE : out, rc_, rt, 0, comm)
                    : MPI_Scatterv(in, scs, zero, st, in_place ? MPI_IN_PLACE : out, rc_, rt, 0, comm);
    case STRATA_COLL_ALLGATHERV:
        return host ? PMPI_Allgatherv(s, sc, st, out, rcs, zero, rt, comm)
                    : MPI_Allgatherv(s, sc, st, out, rcs, zero, rt, comm);
    case STRATA_COLL_ALLTOALLV:
        return host ? PMPI_Alltoallv(s, scs, zero, st, out, rcs, zero, rt, comm)
                    : MPI_Alltoallv(s, scs, zero, st, out, rcs, zero, rt, comm);
    }
    MPI_Datatype sts[1] = {st}, rts[1] = {rt};
    if (coll == STRATA_COLL_ALLTOALLW)
        return host ? PMPI_Alltoallw(s, scs, zero, sts, out, rcs, zero, rts, comm)
                    : MPI_Alltoallw(s, scs, zero, sts, out, rcs, zero, rts, comm);
    return MPI_ERR_OTHER;
}

static void one(MPI_Comm comm, const char *cname, int coll, int in_place, MPI_Datatype st,
                int sc, MPI_Datatype rt, int rc_, const char *tname)
{
    char what[256];
    snprintf(what, sizeof what, "%s on %s, %s%s", strata_coll_name(coll), cname, tname,
             in_place ? ", in place" : "");
    unsigned salt = (unsigned)(coll * 31 + in_place * 7 + sc);
    fill(in, salt);
    fill(out_s, salt + 101);
    fill(out_h, salt + 101);
    if (in_place && coll != STRATA_COLL_SCATTER && coll != STRATA_COLL_SCATTERV) {
        /* The data is in the receive buffer. */
        memcpy(out_s, in, BUF);
        memcpy(out_h, in, BUF);
    }
    unsigned long long served = strata_stats_local_calls(coll, 1);
    unsigned long long host = strata_stats_local_calls(coll, 0);
    unsigned long long copy = strata_stats_local_algorithm(coll, "one rank: local copy");
    CHECK(call(coll, 0, comm, in_place, st, sc, rt, rc_, out_s) == MPI_SUCCESS, "%s", what);
    CHECK(call(coll, 1, comm, in_place, st, sc, rt, rc_, out_h) == MPI_SUCCESS, "%s: host", what);
    CHECK(strata_stats_local_calls(coll, 1) == served + 1 &&
              strata_stats_local_calls(coll, 0) == host,
          "%s: not counted as served by strata", what);
    int copies = !in_place && rc_ > 0 && coll != STRATA_COLL_BCAST && coll != STRATA_COLL_BARRIER &&
                 coll != STRATA_COLL_EXSCAN;
    CHECK(strata_stats_local_algorithm(coll, "one rank: local copy") == copy + (unsigned)copies,
          "%s: not counted as a local copy%s", what, copies ? "" : " only when copying");
    for (int i = 0; i < BUF; i++)
        CHECK(out_s[i] == out_h[i], "%s: byte %d is %u, the host MPI's %u", what, i, out_s[i],
              out_h[i]);
}

static void every_collective(MPI_Comm comm, const char *cname)
{
    int size;
    MPI_Comm_size(comm, &size);
    CHECK(size == 1, "%s has %d ranks", cname, size);
    const struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx && ctx->served, "%s: no strata context", cname);
    for (int coll = 0; coll < STRATA_NCOLLS; coll++) {
        /* They need a topology, which these communicators do not have
         * (test_neighbor: one-rank periodic grids and self-loops). */
        if (strata_coll_is_neighbor(coll)) continue;
        const char *refusal = strata_route_refusal(ctx, coll);
        CHECK(!refusal, "%s: %s goes to the host MPI (%s)", cname, strata_coll_name(coll), refusal);
        int reduction = coll == STRATA_COLL_REDUCE || coll == STRATA_COLL_ALLREDUCE ||
                        coll == STRATA_COLL_REDUCE_SCATTER_BLOCK ||
                        coll == STRATA_COLL_REDUCE_SCATTER || coll == STRATA_COLL_SCAN ||
                        coll == STRATA_COLL_EXSCAN;
        for (int in_place = 0; in_place < 2; in_place++) {
            if (in_place && (coll == STRATA_COLL_BCAST || coll == STRATA_COLL_BARRIER)) continue;
            one(comm, cname, coll, in_place, MPI_INT, 3 * N, MPI_INT, 3 * N, "MPI_INT");
            if (reduction) continue; /* predefined ops take predefined types */
            one(comm, cname, coll, in_place, MPI_INT, 3 * N, gapped, N, "MPI_INT to a vector");
            one(comm, cname, coll, in_place, gapped, N, triple, N, "vector to contiguous");
            one(comm, cname, coll, in_place, MPI_BYTE, 0, MPI_BYTE, 0, "count 0");
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(strata_stats_enabled(), "set STRATA_STATS (the served-call counters tell the route)");
    MPI_Type_vector(3, 1, 2, MPI_INT, &gapped);
    MPI_Type_commit(&gapped);
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    every_collective(MPI_COMM_SELF, "MPI_COMM_SELF");
    MPI_Comm alone, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone);
    every_collective(alone, "a split of one rank");
    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    every_collective(dup, "a duplicate of MPI_COMM_SELF");
    MPI_Comm_free(&alone);
    MPI_Comm_free(&dup);
    MPI_Type_free(&gapped);
    MPI_Type_free(&triple);
    test_pass("one_rank");
    MPI_Finalize();
    return 0;
}
