/* strata's Fortran entry points under every name (src/fortran/calls.def),
 * called from C the way each compiler's code would call them: arguments
 * by reference, Fortran handles (MPI_*_c2f).  Each name must reach strata
 * (route counters), give the right values and set ierror; the mpi_f08
 * names also with ierror absent (a null pointer).  Needs STRATA_STATS.
 * The nonblocking rows (MPI_IBARRIER, MPI_IALLREDUCE) likewise, their
 * requests completed by the C MPI_Wait.
 * "split" (hosts with MPI-4's hardware split types, two virtual nodes of
 * one rank): MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED and
 * "mpi_shared_memory" under every name must give strata's answer (this
 * rank's virtual node: one rank), not the host's (the whole machine). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "route_check.h"
#include "testutil.h"

typedef void bcast_fn(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void allreduce_fn(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                          MPI_Fint *);
typedef void barrier_fn(MPI_Fint *, MPI_Fint *);

extern bcast_fn mpi_bcast, mpi_bcast_, mpi_bcast__, MPI_BCAST;
extern allreduce_fn mpi_allreduce, mpi_allreduce_, mpi_allreduce__, MPI_ALLREDUCE;
extern barrier_fn mpi_barrier, mpi_barrier_, mpi_barrier__, MPI_BARRIER, mpi_barrier_f08_;
#ifdef OPEN_MPI
extern bcast_fn mpi_bcast_f08_;
extern allreduce_fn mpi_allreduce_f08_;
#endif

/* The nonblocking rows: the request comes back as a Fortran handle. */
typedef void ibarrier_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void iallreduce_fn(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *, MPI_Fint *);
extern ibarrier_fn mpi_ibarrier, mpi_ibarrier_, mpi_ibarrier__, MPI_IBARRIER, mpi_ibarrier_f08_;
extern iallreduce_fn mpi_iallreduce, mpi_iallreduce_, mpi_iallreduce__, MPI_IALLREDUCE;
#ifdef OPEN_MPI
extern iallreduce_fn mpi_iallreduce_f08_;
#endif

/* Each nonblocking name: served (counted as MPI_Ibarrier, MPI_Iallreduce),
 * a request the C MPI_Wait (strata's) completes, values, ierror. */
static void check_nonblocking(MPI_Comm c, int rank, int size)
{
    MPI_Fint fcomm = MPI_Comm_c2f(c), fint = MPI_Type_c2f(MPI_INT), fsum = MPI_Op_c2f(MPI_SUM),
             count = 2;
    int ib = strata_call_id(STRATA_COLL_BARRIER, STRATA_FORM_NONBLOCKING),
        ia = strata_call_id(STRATA_COLL_ALLREDUCE, STRATA_FORM_NONBLOCKING);
    struct { const char *name; ibarrier_fn *ibarrier; iallreduce_fn *iallreduce; int f08; } names[] = {
        {"mpi_ix", mpi_ibarrier, mpi_iallreduce, 0},
        {"mpi_ix_", mpi_ibarrier_, mpi_iallreduce_, 0},
        {"mpi_ix__", mpi_ibarrier__, mpi_iallreduce__, 0},
        {"MPI_IX", MPI_IBARRIER, MPI_IALLREDUCE, 0},
#ifdef OPEN_MPI
        {"mpi_ix_f08_", mpi_ibarrier_f08_, mpi_iallreduce_f08_, 1},
#else
        {"mpi_ibarrier_f08_", mpi_ibarrier_f08_, NULL, 1},
#endif
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        for (int with_ierror = 0; with_ierror < 2; with_ierror++) {
            if (!with_ierror && !names[i].f08) continue;
            MPI_Fint ierr = -99, *perr = with_ierror ? &ierr : NULL, freq = -1;
            unsigned long long b0 = route_calls(ib, 1), a0 = route_calls(ia, 1);
            names[i].ibarrier(&fcomm, &freq, perr);
            CHECK(!perr || ierr == MPI_SUCCESS, "%s ibarrier ierror %d", names[i].name, (int)ierr);
            MPI_Request r = MPI_Request_f2c(freq);
            CHECK(r != MPI_REQUEST_NULL && MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "%s ibarrier request", names[i].name);
            CHECK(route_calls(ib, 1) == b0 + 1, "%s ibarrier not served", names[i].name);
            if (!names[i].iallreduce) continue;
            int in[2] = {rank, (int)i}, out[2] = {-1, -1};
            ierr = -99;
            names[i].iallreduce(in, out, &count, &fint, &fsum, &fcomm, &freq, perr);
            CHECK(!perr || ierr == MPI_SUCCESS, "%s iallreduce ierror", names[i].name);
            r = MPI_Request_f2c(freq);
            CHECK(r != MPI_REQUEST_NULL && MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS,
                  "%s iallreduce request", names[i].name);
            CHECK(out[0] == size * (size - 1) / 2 && out[1] == size * (int)i,
                  "%s iallreduce values", names[i].name);
            CHECK(route_calls(ia, 1) == a0 + 1, "%s iallreduce not served", names[i].name);
        }
    }
}

#ifdef STRATA_HAVE_HW_SPLIT_TYPES
typedef void split_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
extern split_fn mpi_comm_split_type, mpi_comm_split_type_, mpi_comm_split_type__,
    MPI_COMM_SPLIT_TYPE, mpi_comm_split_type_f08_;

static void check_split(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Fint fworld = MPI_Comm_c2f(MPI_COMM_WORLD), finfo = MPI_Info_c2f(info),
             guided = MPI_COMM_TYPE_HW_GUIDED, key = 0;
    /* The host's own answer, for contrast: the whole machine. */
    MPI_Comm host_comm;
    int host_size;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &host_comm);
    CHECK(host_comm != MPI_COMM_NULL, "the host gives no shared-memory communicator");
    MPI_Comm_size(host_comm, &host_size);
    CHECK(host_size == size, "the host's shared-memory communicator has %d ranks", host_size);
    MPI_Comm_free(&host_comm);
    struct { const char *name; split_fn *fn; } names[] = {
        {"mpi_comm_split_type", mpi_comm_split_type},
        {"mpi_comm_split_type_", mpi_comm_split_type_},
        {"mpi_comm_split_type__", mpi_comm_split_type__},
        {"MPI_COMM_SPLIT_TYPE", MPI_COMM_SPLIT_TYPE},
        {"mpi_comm_split_type_f08_", mpi_comm_split_type_f08_},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        MPI_Fint fnew = MPI_Comm_c2f(MPI_COMM_NULL), ierr = -99;
        names[i].fn(&fworld, &guided, &key, &finfo, &fnew, &ierr);
        CHECK(ierr == MPI_SUCCESS, "%s: ierror %d", names[i].name, (int)ierr);
        MPI_Comm c = MPI_Comm_f2c(fnew);
        CHECK(c != MPI_COMM_NULL, "%s: MPI_COMM_NULL", names[i].name);
        int n;
        MPI_Comm_size(c, &n);
        CHECK(n == 1, "%s: %d ranks, not strata's virtual node of 1", names[i].name, n);
        MPI_Comm_free(&c);
    }
    MPI_Info_free(&info);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "split")) {
#ifdef STRATA_HAVE_HW_SPLIT_TYPES
        check_split();
        test_pass("fortran names: MPI_Comm_split_type");
#endif
        MPI_Finalize();
        return 0;
    }
    struct strata_ctx *ctx;
    MPI_Comm c = route_served_dup(&ctx);
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Fint fcomm = MPI_Comm_c2f(c), fint = MPI_Type_c2f(MPI_INT),
             fsum = MPI_Op_c2f(MPI_SUM), count = 3;
    struct { const char *name; bcast_fn *bcast; allreduce_fn *allreduce; barrier_fn *barrier; int f08; } names[] = {
        {"mpi_x", mpi_bcast, mpi_allreduce, mpi_barrier, 0},
        {"mpi_x_", mpi_bcast_, mpi_allreduce_, mpi_barrier_, 0},
        {"mpi_x__", mpi_bcast__, mpi_allreduce__, mpi_barrier__, 0},
        {"MPI_X", MPI_BCAST, MPI_ALLREDUCE, MPI_BARRIER, 0},
#ifdef OPEN_MPI
        {"mpi_x_f08_", mpi_bcast_f08_, mpi_allreduce_f08_, mpi_barrier_f08_, 1},
#else
        {"mpi_barrier_f08_", NULL, NULL, mpi_barrier_f08_, 1},
#endif
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        for (int with_ierror = 0; with_ierror < 2; with_ierror++) {
            if (!with_ierror && !names[i].f08) continue;
            MPI_Fint ierr = -99, *perr = with_ierror ? &ierr : NULL, root = (MPI_Fint)(i % (size_t)size);
            unsigned long long b0 = route_calls(STRATA_COLL_BCAST, 1),
                               a0 = route_calls(STRATA_COLL_ALLREDUCE, 1),
                               r0 = route_calls(STRATA_COLL_BARRIER, 1);
            if (names[i].bcast) {
                int v[3] = {-1, -1, -1};
                if (rank == root) v[0] = 10, v[1] = 20, v[2] = (int)i;
                names[i].bcast(v, &count, &fint, &root, &fcomm, perr);
                CHECK(v[0] == 10 && v[1] == 20 && v[2] == (int)i, "%s bcast values", names[i].name);
                CHECK(!perr || ierr == MPI_SUCCESS, "%s bcast ierror %d", names[i].name, (int)ierr);
                CHECK(route_calls(STRATA_COLL_BCAST, 1) == b0 + 1, "%s bcast not served", names[i].name);
                int in[3] = {rank, 1, 2 * rank}, out[3];
                ierr = -99;
                names[i].allreduce(in, out, &count, &fint, &fsum, &fcomm, perr);
                CHECK(out[0] == size * (size - 1) / 2 && out[1] == size &&
                          out[2] == size * (size - 1),
                      "%s allreduce values", names[i].name);
                CHECK(!perr || ierr == MPI_SUCCESS, "%s allreduce ierror", names[i].name);
                CHECK(route_calls(STRATA_COLL_ALLREDUCE, 1) == a0 + 1, "%s allreduce not served",
                      names[i].name);
            }
            ierr = -99;
            names[i].barrier(&fcomm, perr);
            CHECK(!perr || ierr == MPI_SUCCESS, "%s barrier ierror", names[i].name);
            CHECK(route_calls(STRATA_COLL_BARRIER, 1) == r0 + 1, "%s barrier not served",
                  names[i].name);
        }
    }
    check_nonblocking(c, rank, size);
    /* An error reaches ierror: a root out of range on a communicator that
     * returns errors (the host MPI judges it). */
    MPI_Fint bad_root = (MPI_Fint)size + 2, ierr = MPI_SUCCESS;
    int v = 0;
    MPI_Fint one = 1;
    mpi_bcast_(&v, &one, &fint, &bad_root, &fcomm, &ierr);
    CHECK(ierr != MPI_SUCCESS && route_error_class((int)ierr) == MPI_ERR_ROOT,
          "bad root: ierror %d", (int)ierr);
    MPI_Comm_free(&c);
    test_pass("fortran names");
    MPI_Finalize();
    return 0;
}
