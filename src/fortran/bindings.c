/* strata's Fortran entry points, generated from calls.def.  Open MPI's
 * Fortran bindings call PMPI_ directly (mpif.h, use mpi and mpi_f08), and
 * MPICH's mpi_f08 does for calls without a buffer: strata defines the
 * Fortran symbols itself, as PMPI tools do, so that a Fortran program
 * preloading libstrata reaches strata's MPI_ functions.  Each converts
 * handles and sentinels, calls the C function and sets ierror. */
#include <mpi.h>
#include <stddef.h>

#include "fortran/sentinels.h"
#include "fortran/user_ops.h"
#include "fortran/wtypes.h"

#define BUF(x) strata_fortran_buffer(x)
#define TYPE(x) MPI_Type_f2c(*(x))
#define OP(x) MPI_Op_f2c(*(x))
#define COMM(x) MPI_Comm_f2c(*(x))

/* MPI_Reduce_scatter's Fortran counts array is passed on as the C int
 * array: the same layout where INTEGER is int, as on both MPIs here. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int arrays");

/* MPI_Init and MPI_Init_thread from Fortran: no command line (the MPIs'
 * own Fortran MPI_Init passes none either). */
static int strata_fortran_init(const MPI_Fint *required, MPI_Fint *provided)
{
    if (!required) return MPI_Init(NULL, NULL);
    int granted = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &granted);
    if (provided) *provided = (MPI_Fint)granted;
    return rc;
}

/* MPI_Comm_split_type from Fortran: the new communicator back as a handle. */
static inline int strata_fortran_split_type(MPI_Fint *comm, MPI_Fint *split_type, MPI_Fint *key,
                                            MPI_Fint *info, MPI_Fint *newcomm)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(COMM(comm), (int)*split_type, (int)*key, MPI_Info_f2c(*info),
                                 &c);
    if (rc == MPI_SUCCESS) *newcomm = MPI_Comm_c2f(c);
    return rc;
}

/* One more exported name for a function of this file. */
#define ALIAS(target, name) \
    extern __typeof__(target) name __attribute__((alias(#target), visibility("default")));

#define F08_ALL(lower) ALIAS(strata_f_##lower, mpi_##lower##_f08_)
#ifdef OPEN_MPI
#define F08_OMPI(lower) F08_ALL(lower)
#else
#define F08_OMPI(lower)
#endif

/* Every name a row's function is exported under. */
#define EXPORTS(lower, upper, f08)                                             \
    ALIAS(strata_f_##lower, mpi_##lower##_)                                    \
    ALIAS(strata_f_##lower, mpi_##lower##__)                                   \
    ALIAS(strata_f_##lower, mpi_##lower)                                       \
    ALIAS(strata_f_##lower, MPI_##upper)                                       \
    f08(lower)

#define STRATA_FCALL(lower, upper, f08, params, call)                          \
    static void strata_f_##lower params                                        \
    {                                                                          \
        int rc_ = call;                                                        \
        if (ierror) *ierror = (MPI_Fint)rc_;                                   \
    }                                                                          \
    EXPORTS(lower, upper, f08)

/* A nonblocking row: the C call writes its request into req_ (REQ), which
 * goes back to Fortran as a handle where the call succeeded. */
#define REQ (&req_)
#define STRATA_FCALL_REQ(lower, upper, f08, params, call)                      \
    static void strata_f_##lower params                                        \
    {                                                                          \
        MPI_Request req_ = MPI_REQUEST_NULL;                                   \
        int rc_ = call;                                                        \
        if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(req_);              \
        if (ierror) *ierror = (MPI_Fint)rc_;                                   \
    }                                                                          \
    EXPORTS(lower, upper, f08)

/* A row with datatype arrays (Alltoallw, Neighbor_alltoallw, every form):
 * the arguments sendbuf, sendtypes, recvtypes and comm converted first
 * (fortran/wtypes.c; STYPES and RTYPES in the call), the C arrays freed
 * once it returns; neighbor: the arrays are as long as the degrees.  A
 * request, where the row has one, comes back as for STRATA_FCALL_REQ. */
#define STYPES (wt_.send)
#define RTYPES (wt_.recv)
#define W_CONVERTED_CALL(neighbor, call)                                       \
    struct strata_fortran_wtypes wt_;                                          \
    int rc_ = strata_fortran_wtypes_get(&wt_, COMM(comm), neighbor, BUF(sendbuf), \
                                        sendtypes, recvtypes);                 \
    if (rc_ == MPI_SUCCESS) rc_ = call;                                        \
    strata_fortran_wtypes_free(&wt_);
#define STRATA_FCALL_W(lower, upper, f08, neighbor, params, call)              \
    static void strata_f_##lower params                                        \
    {                                                                          \
        W_CONVERTED_CALL(neighbor, call)                                       \
        if (ierror) *ierror = (MPI_Fint)rc_;                                   \
    }                                                                          \
    EXPORTS(lower, upper, f08)
#define STRATA_FCALL_WREQ(lower, upper, f08, neighbor, params, call)           \
    static void strata_f_##lower params                                        \
    {                                                                          \
        MPI_Request req_ = MPI_REQUEST_NULL;                                   \
        W_CONVERTED_CALL(neighbor, call)                                       \
        if (rc_ == MPI_SUCCESS) *request = MPI_Request_c2f(req_);              \
        if (ierror) *ierror = (MPI_Fint)rc_;                                   \
    }                                                                          \
    EXPORTS(lower, upper, f08)

#include "fortran/calls.def"
