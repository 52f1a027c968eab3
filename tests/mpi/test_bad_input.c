/* Bad arguments to strata's collectives, on a communicator strata serves,
 * with MPI_ERRORS_RETURN.  For every erroneous call that the host MPI
 * reports on every rank without communicating (invalid roots, negative
 * counts, null or uncommitted datatypes, null ops, ops a datatype does not
 * take, MPI_COMM_NULL, MPI_IN_PLACE or aliased buffers where the standard
 * forbids them, null buffers holding data), strata must
 *   - return the error class the host MPI returns for PMPI_ on the same
 *     arguments (no crash first, no error swallowed),
 *   - hand the call to the host MPI (STRATA_STATS counts it there),
 *   - leave the communicator working (a checked Allreduce strata serves).
 * Then valid calls that look odd must still be served, with right results:
 * null buffers of zero size or not significant on this rank, MPI_BOTTOM
 * with a datatype of absolute addresses, committed derived datatypes.
 *
 * A reduction with MPI_DATATYPE_NULL is the exception: strata answers it
 * itself with MPI_ERR_TYPE on every host (serve/null_type.h), since MPICH 5
 * ends the job on it (the others return MPI_ERR_TYPE, or Open MPI 4.1
 * MPI_ERR_OP); the host must then fail it too, where it returns at all.
 *
 * Cases the host MPI itself crashes on or cannot report on every rank are
 * skipped with the reason printed (a null buffer with Open MPI 4.1
 * segfaults inside the host; MPICH 4.0.2 segfaults on a negative Allreduce
 * count).  Arguments erroneous on some ranks only (a root-only argument,
 * datatypes that mismatch across ranks) cannot be judged without
 * communicating and are not tried: strata gives the erring rank the host's
 * error, but the others may wait in the collective, as they may with the
 * host MPI.  Any number of ranks >= 2. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "route/route.h"
#include "route_check.h"
#include "testutil.h"
#include "util/stats.h"

#define N 4 /* elements per rank block */

static int rank, size, verbose;
static int ibuf[N * 66], obuf[N * 66]; /* up to 64 blocks, and one past them */
static double dbuf[N * 64], dout[N * 64];
static MPI_Datatype uncommitted; /* two ints, never committed */

/* The call through strata (MPI_X) or straight to the host (PMPI_X). */
#define CALL(fn, ...) (pmpi ? P##fn(__VA_ARGS__) : fn(__VA_ARGS__))

enum { ANY = 0, NOT_OPENMPI = 1, NOT_MPICH = 2 };
#ifdef OPEN_MPI
#define THIS_HOST NOT_OPENMPI
#else
#define THIS_HOST NOT_MPICH
#endif

struct bad_case {
    const char *name;
    enum strata_coll coll;
    int (*call)(int pmpi, MPI_Comm c);
    unsigned skip;   /* hosts this case cannot run on */
    const char *why; /* ... and why */
    unsigned accepted; /* hosts that accept the call (strata must hand it over all the same) */
};

/* MPICH 5 fails an assertion and ends the job on a reduction with
 * MPI_DATATYPE_NULL (mpir_datatype.h: dt_ptr); MPICH 4.0.2, Open MPI and
 * Intel MPI 2021.19 return MPI_ERR_TYPE.  From the library's version string,
 * which the standard ABI build also has. */
static int host_ends_job_on_null_reduction(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0;
    PMPI_Get_library_version(v, &len);
    const char *at = strstr(v, "MPICH Version:");
    return at && !strstr(v, "Intel") && sscanf(at, "MPICH Version: %d", &major) == 1 &&
           major >= 5;
}

/* ---- the erroneous calls (every rank passes the same error) ---- */
static int bcast_root_neg(int pmpi, MPI_Comm c) { return CALL(MPI_Bcast, ibuf, N, MPI_INT, -1, c); }
static int bcast_root_big(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Bcast, ibuf, N, MPI_INT, size, c);
}
static int bcast_count_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Bcast, ibuf, -1, MPI_INT, 0, c);
}
static int bcast_type_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Bcast, ibuf, N, MPI_DATATYPE_NULL, 0, c);
}
static int bcast_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Bcast, ibuf, N, uncommitted, 0, c);
}
static int bcast_null_buf(int pmpi, MPI_Comm c) { return CALL(MPI_Bcast, NULL, N, MPI_INT, 0, c); }
static int bcast_comm_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Bcast, ibuf, N, MPI_INT, 0, MPI_COMM_NULL);
}

static int reduce_root_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce, ibuf, obuf, N, MPI_INT, MPI_SUM, -1, c);
}
static int reduce_root_big(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce, ibuf, obuf, N, MPI_INT, MPI_SUM, size, c);
}
static int reduce_op_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce, ibuf, obuf, N, MPI_INT, MPI_OP_NULL, 0, c);
}
static int reduce_band_double(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce, dbuf, dout, N, MPI_DOUBLE, MPI_BAND, 0, c);
}
static int reduce_in_place_everywhere(int pmpi, MPI_Comm c)
{
    /* In place is for the root's send buffer only: the root's receive
     * buffer and the others' send buffers may not be MPI_IN_PLACE. */
    return rank == 0 ? CALL(MPI_Reduce, ibuf, MPI_IN_PLACE, N, MPI_INT, MPI_SUM, 0, c)
                     : CALL(MPI_Reduce, MPI_IN_PLACE, obuf, N, MPI_INT, MPI_SUM, 0, c);
}

static int allreduce_count_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, -1, MPI_INT, MPI_SUM, c);
}
static int allreduce_type_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, N, MPI_DATATYPE_NULL, MPI_SUM, c);
}
static int reduce_type_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce, ibuf, obuf, N, MPI_DATATYPE_NULL, MPI_SUM, 0, c);
}
static int scan_type_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Scan, ibuf, obuf, N, MPI_DATATYPE_NULL, MPI_SUM, c);
}
static int reduce_scatter_block_type_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Reduce_scatter_block, ibuf, obuf, 1, MPI_DATATYPE_NULL, MPI_SUM, c);
}
static int allreduce_op_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, N, MPI_INT, MPI_OP_NULL, c);
}
static int allreduce_band_double(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, dbuf, dout, N, MPI_DOUBLE, MPI_BAND, c);
}
static int allreduce_maxloc_int(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, N, MPI_INT, MPI_MAXLOC, c);
}
static int allreduce_sum_pair(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, dbuf, dout, N, MPI_DOUBLE_INT, MPI_SUM, c);
}
static int allreduce_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, N, uncommitted, MPI_SUM, c);
}
static int allreduce_recv_in_place(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, MPI_IN_PLACE, MPI_IN_PLACE, N, MPI_INT, MPI_SUM, c);
}
static int allreduce_aliased(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, ibuf, N, MPI_INT, MPI_SUM, c);
}
static int allreduce_overlapping(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, ibuf + N / 2, N, MPI_INT, MPI_SUM, c);
}
static int allreduce_null_send(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, NULL, obuf, N, MPI_INT, MPI_SUM, c);
}
static int allreduce_null_recv(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, NULL, N, MPI_INT, MPI_SUM, c);
}
static int allreduce_comm_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allreduce, ibuf, obuf, N, MPI_INT, MPI_SUM, MPI_COMM_NULL);
}

static int gather_root_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Gather, ibuf, N, MPI_INT, obuf, N, MPI_INT, -1, c);
}
static int gather_scount_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Gather, ibuf, -1, MPI_INT, obuf, N, MPI_INT, 0, c);
}
static int gather_stype_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Gather, ibuf, N, MPI_DATATYPE_NULL, obuf, N, MPI_INT, 0, c);
}
static int gather_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Gather, ibuf, N / 2, uncommitted, obuf, N / 2, uncommitted, 0, c);
}
static int gather_null_send(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Gather, NULL, N, MPI_INT, obuf, N, MPI_INT, 0, c);
}

static int scatter_root_big(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Scatter, ibuf, N, MPI_INT, obuf, N, MPI_INT, size, c);
}
static int scatter_rcount_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Scatter, ibuf, N, MPI_INT, obuf, -1, MPI_INT, 0, c);
}
static int scatter_rtype_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Scatter, ibuf, N, MPI_INT, obuf, N, MPI_DATATYPE_NULL, 0, c);
}
static int scatter_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Scatter, ibuf, N / 2, uncommitted, obuf, N / 2, uncommitted, 0, c);
}

static int allgather_scount_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, -1, MPI_INT, obuf, N, MPI_INT, c);
}
static int allgather_rcount_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, N, MPI_INT, obuf, -1, MPI_INT, c);
}
static int allgather_stype_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, N, MPI_DATATYPE_NULL, obuf, N, MPI_INT, c);
}
static int allgather_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, N / 2, uncommitted, obuf, N / 2, uncommitted, c);
}
static int allgather_null_recv(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, N, MPI_INT, NULL, N, MPI_INT, c);
}
static int allgather_aliased(int pmpi, MPI_Comm c)
{
    /* Each rank sends from its own block of the receive buffer (what
     * MPI_IN_PLACE is for): MPICH checks exactly that overlap. */
    return CALL(MPI_Allgather, obuf + rank * N, N, MPI_INT, obuf, N, MPI_INT, c);
}
static int allgather_comm_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Allgather, ibuf, N, MPI_INT, obuf, N, MPI_INT, MPI_COMM_NULL);
}

static int alltoall_rcount_neg(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Alltoall, ibuf, N, MPI_INT, obuf, -1, MPI_INT, c);
}
static int alltoall_rtype_null(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Alltoall, ibuf, N, MPI_INT, obuf, N, MPI_DATATYPE_NULL, c);
}
static int alltoall_uncommitted(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Alltoall, ibuf, N / 2, uncommitted, obuf, N / 2, uncommitted, c);
}
static int alltoall_null_send(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Alltoall, NULL, N, MPI_INT, obuf, N, MPI_INT, c);
}
static int alltoall_recv_in_place(int pmpi, MPI_Comm c)
{
    return CALL(MPI_Alltoall, ibuf, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, c);
}

static int barrier_comm_null(int pmpi, MPI_Comm c) { return CALL(MPI_Barrier, MPI_COMM_NULL); }

#define OMPI_NULL_CRASH NOT_OPENMPI, "Open MPI 4.1 segfaults on this null buffer itself"
static const struct bad_case cases[] = {
    {"Bcast root -1", STRATA_COLL_BCAST, bcast_root_neg, ANY, NULL, 0},
    {"Bcast root = size", STRATA_COLL_BCAST, bcast_root_big, ANY, NULL, 0},
    {"Bcast count -1", STRATA_COLL_BCAST, bcast_count_neg, ANY, NULL, 0},
    {"Bcast MPI_DATATYPE_NULL", STRATA_COLL_BCAST, bcast_type_null, ANY, NULL, 0},
    {"Bcast uncommitted type", STRATA_COLL_BCAST, bcast_uncommitted, ANY, NULL, 0},
    {"Bcast NULL buffer", STRATA_COLL_BCAST, bcast_null_buf, OMPI_NULL_CRASH, 0},
    {"Bcast MPI_COMM_NULL", STRATA_COLL_BCAST, bcast_comm_null, ANY, NULL, 0},
    {"Reduce root -1", STRATA_COLL_REDUCE, reduce_root_neg, ANY, NULL, 0},
    {"Reduce root = size", STRATA_COLL_REDUCE, reduce_root_big, ANY, NULL, 0},
    {"Reduce MPI_OP_NULL", STRATA_COLL_REDUCE, reduce_op_null, ANY, NULL, 0},
    {"Reduce MPI_BAND on MPI_DOUBLE", STRATA_COLL_REDUCE, reduce_band_double, ANY, NULL, 0},
    {"Reduce MPI_IN_PLACE on the wrong side", STRATA_COLL_REDUCE, reduce_in_place_everywhere,
     NOT_MPICH, "MPICH 4.0.2 dereferences the misplaced MPI_IN_PLACE itself", 0},
    {"Allreduce count -1", STRATA_COLL_ALLREDUCE, allreduce_count_neg, NOT_MPICH,
     "MPICH 4.0.2 segfaults on a negative Allreduce count itself", 0},
    {"Allreduce MPI_DATATYPE_NULL", STRATA_COLL_ALLREDUCE, allreduce_type_null, ANY, NULL, 0},
    {"Reduce MPI_DATATYPE_NULL", STRATA_COLL_REDUCE, reduce_type_null, ANY, NULL, 0},
    {"Scan MPI_DATATYPE_NULL", STRATA_COLL_SCAN, scan_type_null, ANY, NULL, 0},
    {"Reduce_scatter_block MPI_DATATYPE_NULL", STRATA_COLL_REDUCE_SCATTER_BLOCK,
     reduce_scatter_block_type_null, ANY, NULL, 0},
    {"Allreduce MPI_OP_NULL", STRATA_COLL_ALLREDUCE, allreduce_op_null, ANY, NULL, 0},
    {"Allreduce MPI_BAND on MPI_DOUBLE", STRATA_COLL_ALLREDUCE, allreduce_band_double, ANY, NULL,
     0},
    {"Allreduce MPI_MAXLOC on MPI_INT", STRATA_COLL_ALLREDUCE, allreduce_maxloc_int, ANY, NULL, 0},
    {"Allreduce MPI_SUM on MPI_DOUBLE_INT", STRATA_COLL_ALLREDUCE, allreduce_sum_pair, ANY, NULL,
     0},
    {"Allreduce uncommitted type", STRATA_COLL_ALLREDUCE, allreduce_uncommitted, ANY, NULL, 0},
    {"Allreduce both buffers MPI_IN_PLACE", STRATA_COLL_ALLREDUCE, allreduce_recv_in_place, ANY,
     NULL, 0},
    {"Allreduce send buffer = receive buffer", STRATA_COLL_ALLREDUCE, allreduce_aliased, ANY,
     NULL, 0},
    /* Open MPI 4.1 does not check for overlap; MPICH 4.0.2 stops the job
     * ("memcpy argument memory ranges overlap").  strata hands it over. */
    {"Allreduce overlapping buffers", STRATA_COLL_ALLREDUCE, allreduce_overlapping, NOT_MPICH,
     "MPICH 4.0.2 ends the job on it", NOT_OPENMPI},
    {"Allreduce NULL send buffer", STRATA_COLL_ALLREDUCE, allreduce_null_send, OMPI_NULL_CRASH, 0},
    {"Allreduce NULL receive buffer", STRATA_COLL_ALLREDUCE, allreduce_null_recv,
     OMPI_NULL_CRASH, 0},
    {"Allreduce MPI_COMM_NULL", STRATA_COLL_ALLREDUCE, allreduce_comm_null, ANY, NULL, 0},
    {"Gather root -1", STRATA_COLL_GATHER, gather_root_neg, ANY, NULL, 0},
    {"Gather send count -1", STRATA_COLL_GATHER, gather_scount_neg, ANY, NULL, 0},
    {"Gather send MPI_DATATYPE_NULL", STRATA_COLL_GATHER, gather_stype_null, ANY, NULL, 0},
    {"Gather uncommitted types", STRATA_COLL_GATHER, gather_uncommitted, ANY, NULL, 0},
    {"Gather NULL send buffer", STRATA_COLL_GATHER, gather_null_send, OMPI_NULL_CRASH, 0},
    {"Scatter root = size", STRATA_COLL_SCATTER, scatter_root_big, ANY, NULL, 0},
    {"Scatter receive count -1", STRATA_COLL_SCATTER, scatter_rcount_neg, ANY, NULL, 0},
    {"Scatter receive MPI_DATATYPE_NULL", STRATA_COLL_SCATTER, scatter_rtype_null, ANY, NULL, 0},
    /* Open MPI 4.1 does not check that Scatter's types are committed. */
    {"Scatter uncommitted types", STRATA_COLL_SCATTER, scatter_uncommitted, ANY, NULL,
     NOT_OPENMPI},
    {"Allgather send count -1", STRATA_COLL_ALLGATHER, allgather_scount_neg, ANY, NULL, 0},
    {"Allgather receive count -1", STRATA_COLL_ALLGATHER, allgather_rcount_neg, ANY, NULL, 0},
    {"Allgather send MPI_DATATYPE_NULL", STRATA_COLL_ALLGATHER, allgather_stype_null, ANY, NULL, 0},
    {"Allgather uncommitted types", STRATA_COLL_ALLGATHER, allgather_uncommitted, ANY, NULL, 0},
    {"Allgather NULL receive buffer", STRATA_COLL_ALLGATHER, allgather_null_recv,
     OMPI_NULL_CRASH, 0},
    /* Open MPI 4.1 does not check Allgather's buffers for aliasing. */
    {"Allgather send buffer inside the receive buffer", STRATA_COLL_ALLGATHER, allgather_aliased,
     ANY, NULL, NOT_OPENMPI},
    {"Allgather MPI_COMM_NULL", STRATA_COLL_ALLGATHER, allgather_comm_null, NOT_OPENMPI,
     "Open MPI 4.1 segfaults on Allgather's MPI_COMM_NULL itself", 0},
    {"Alltoall receive count -1", STRATA_COLL_ALLTOALL, alltoall_rcount_neg, ANY, NULL, 0},
    {"Alltoall receive MPI_DATATYPE_NULL", STRATA_COLL_ALLTOALL, alltoall_rtype_null, ANY, NULL, 0},
    {"Alltoall uncommitted types", STRATA_COLL_ALLTOALL, alltoall_uncommitted, ANY, NULL, 0},
    {"Alltoall NULL send buffer", STRATA_COLL_ALLTOALL, alltoall_null_send, OMPI_NULL_CRASH, 0},
    {"Alltoall receive buffer MPI_IN_PLACE", STRATA_COLL_ALLTOALL, alltoall_recv_in_place, ANY,
     NULL, 0},
    {"Barrier MPI_COMM_NULL", STRATA_COLL_BARRIER, barrier_comm_null, ANY, NULL, 0},
};

/* Whether strata answers the case itself (MPI_ERR_TYPE, counted as
 * served): a reduction with MPI_DATATYPE_NULL. */
static int answered_by_strata(const struct bad_case *k)
{
    return k->call == allreduce_type_null || k->call == reduce_type_null ||
           k->call == scan_type_null || k->call == reduce_scatter_block_type_null;
}

static void run_bad_cases(MPI_Comm c)
{
    int tried = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bad_case *k = &cases[i];
        if (k->skip & THIS_HOST) {
            if (rank == 0) printf("skip: %s: %s\n", k->name, k->why);
            continue;
        }
        if (verbose && rank == 0) printf("case: %s\n", k->name), fflush(stdout);
        unsigned long long served = route_calls(k->coll, 1), handed = route_calls(k->coll, 0);
        int through_strata = k->call(0, c);
        if (answered_by_strata(k)) {
            /* strata's own answer: the same class everywhere, whether or
             * not the host could be asked. */
            CHECK(route_error_class(through_strata) == MPI_ERR_TYPE,
                  "%s: strata returned error class %d, not MPI_ERR_TYPE", k->name,
                  route_error_class(through_strata));
            CHECK(route_calls(k->coll, 1) == served + 1 && route_calls(k->coll, 0) == handed,
                  "%s: not answered by strata (served %llu -> %llu, handed %llu -> %llu)",
                  k->name, served, route_calls(k->coll, 1), handed, route_calls(k->coll, 0));
            if (host_ends_job_on_null_reduction()) {
                if (rank == 0) printf("no host reference: %s (MPICH 5 ends the job on it)\n", k->name);
            } else {
                /* An error too, not always of the same class: Open MPI 4.1
                 * checks the op against the type first (MPI_ERR_OP). */
                int host = k->call(1, c);
                CHECK(host != MPI_SUCCESS, "%s: the host MPI accepts it", k->name);
            }
            route_check_still_served(c, k->name);
            tried++;
            continue;
        }
        int through_host = k->call(1, c);
        CHECK(through_host != MPI_SUCCESS || (k->accepted & THIS_HOST),
              "%s: the host MPI accepts it here; the case is wrong", k->name);
        CHECK(route_error_class(through_strata) == route_error_class(through_host),
              "%s: strata returned error class %d, the host MPI %d", k->name,
              route_error_class(through_strata), route_error_class(through_host));
        CHECK(route_calls(k->coll, 1) == served && route_calls(k->coll, 0) == handed + 1,
              "%s: not handed to the host MPI (served %llu -> %llu, handed %llu -> %llu)",
              k->name, served, route_calls(k->coll, 1), handed, route_calls(k->coll, 0));
        route_check_still_served(c, k->name);
        tried++;
    }
    if (rank == 0) printf("ok: %d erroneous calls return the host MPI's error class\n", tried);
}

/* ---- valid calls that look odd: strata must still serve them ---- */

/* Runs `what` (a valid call of coll) and checks strata served it. */
#define SERVED(coll, what, call)                                                          \
    do {                                                                                  \
        unsigned long long before_ = route_calls((coll), 1);                                    \
        int rc_ = (call);                                                                 \
        CHECK(rc_ == MPI_SUCCESS, "%s: rc %d", (what), rc_);                              \
        CHECK(route_calls((coll), 1) == before_ + 1, "%s: strata did not serve it", (what));    \
    } while (0)

static void run_valid_cases(MPI_Comm c)
{
    /* Zero-size calls with null buffers. */
    SERVED(STRATA_COLL_BCAST, "Bcast of 0 from NULL", MPI_Bcast(NULL, 0, MPI_INT, 0, c));
    SERVED(STRATA_COLL_ALLREDUCE, "Allreduce of 0 on NULL",
           MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, c));
    SERVED(STRATA_COLL_ALLGATHER, "Allgather of 0 on NULL",
           MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, c));

    /* Null buffers where they are not significant. */
    for (int i = 0; i < N * size; i++) ibuf[i] = 1000 * rank + i;
    memset(obuf, 0, sizeof obuf);
    SERVED(STRATA_COLL_GATHER, "Gather, NULL receive buffer off the root",
           MPI_Gather(ibuf, N, MPI_INT, rank == 0 ? obuf : NULL, N, MPI_INT, 0, c));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++)
                CHECK(obuf[r * N + i] == 1000 * r + i, "Gather: element %d of rank %d is %d", i,
                      r, obuf[r * N + i]);
    memset(obuf, 0, sizeof obuf);
    SERVED(STRATA_COLL_SCATTER, "Scatter, NULL send buffer off the root",
           MPI_Scatter(rank == 0 ? ibuf : NULL, N, MPI_INT, obuf, N, MPI_INT, 0, c));
    for (int i = 0; i < N; i++)
        CHECK(obuf[i] == rank * N + i, "Scatter: element %d is %d, expected %d", i, obuf[i],
              rank * N + i);
    memset(obuf, 0, sizeof obuf);
    SERVED(STRATA_COLL_REDUCE, "Reduce, NULL receive buffer off the root",
           MPI_Reduce(ibuf, rank == 0 ? obuf : NULL, N, MPI_INT, MPI_SUM, 0, c));
    if (rank == 0)
        for (int i = 0; i < N; i++)
            CHECK(obuf[i] == 1000 * size * (size - 1) / 2 + size * i, "Reduce: element %d is %d",
                  i, obuf[i]);
    /* Root's send buffer equal to the others' receive buffer is no
     * aliasing: only the root's two buffers must differ. */
    for (int i = 0; i < N; i++) obuf[i] = rank == 0 ? 0 : i;
    for (int i = 0; i < N; i++) ibuf[i] = 5;
    SERVED(STRATA_COLL_REDUCE, "Reduce, one buffer for both off the root",
           MPI_Reduce(rank == 0 ? ibuf : obuf, obuf, N, MPI_INT, MPI_SUM, 0, c));
    if (rank == 0)
        for (int i = 0; i < N; i++)
            CHECK(obuf[i] == 5 + (size - 1) * i, "Reduce: element %d is %d", i, obuf[i]);

    /* Buffers that touch but do not overlap are no aliasing. */
    for (int i = 0; i < N; i++) obuf[size * N + i] = rank * 10 + i;
    SERVED(STRATA_COLL_ALLGATHER, "Allgather from just past the receive buffer",
           MPI_Allgather(obuf + size * N, N, MPI_INT, obuf, N, MPI_INT, c));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(obuf[r * N + i] == r * 10 + i, "Allgather: element %d of rank %d is %d", i, r,
                  obuf[r * N + i]);
    for (int i = 0; i < N; i++) obuf[N + i] = rank + i;
    SERVED(STRATA_COLL_ALLREDUCE, "Allreduce into just before the send buffer",
           MPI_Allreduce(obuf + N, obuf, N, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < N; i++)
        CHECK(obuf[i] == size * (size - 1) / 2 + size * i, "Allreduce: element %d is %d", i,
              obuf[i]);

    /* MPI_BOTTOM with a datatype holding the absolute address. */
    MPI_Aint at;
    MPI_Get_address(obuf, &at);
    int len = N;
    MPI_Datatype absolute;
    MPI_Type_create_hindexed(1, &len, &at, MPI_INT, &absolute);
    MPI_Type_commit(&absolute);
    for (int i = 0; i < N; i++) obuf[i] = rank == 1 ? 77 + i : -1;
    SERVED(STRATA_COLL_BCAST, "Bcast from MPI_BOTTOM", MPI_Bcast(MPI_BOTTOM, 1, absolute, 1, c));
    for (int i = 0; i < N; i++)
        CHECK(obuf[i] == 77 + i, "Bcast from MPI_BOTTOM: element %d is %d", i, obuf[i]);
    MPI_Type_free(&absolute);

    /* A committed derived type (the uncommitted one's twin). */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int i = 0; i < N; i++) ibuf[i] = rank * 10 + i;
    memset(obuf, 0, sizeof obuf);
    SERVED(STRATA_COLL_ALLGATHER, "Allgather of a committed derived type",
           MPI_Allgather(ibuf, N / 2, pair, obuf, N / 2, pair, c));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(obuf[r * N + i] == r * 10 + i, "Allgather: element %d of rank %d is %d", i, r,
                  obuf[r * N + i]);
    MPI_Type_free(&pair);
    if (rank == 0) printf("ok: valid calls with null, MPI_BOTTOM or derived buffers are served\n");
}

int main(int argc, char **argv)
{
    /* Counting routes needs STRATA_STATS; /dev/null discards the report. */
    setenv("STRATA_STATS", "/dev/null", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    verbose = argc > 1 && !strcmp(argv[1], "--verbose"); /* names each case as it starts */
    CHECK(size >= 2 && size <= 64, "run with 2 to 64 ranks");
    /* Errors on MPI_COMM_NULL are raised on MPI_COMM_WORLD (MPI-3) or
     * MPI_COMM_SELF (MPI-4): both return them. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);

    struct strata_ctx *ctx;
    MPI_Comm c = route_served_dup(&ctx);
    run_bad_cases(c);
    run_valid_cases(c);

    MPI_Type_free(&uncommitted);
    MPI_Comm_free(&c);
    test_pass("bad-input");
    MPI_Finalize();
    return 0;
}
