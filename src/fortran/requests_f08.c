/* MPICH's mpi_f08 completion calls (mpi_wait_f08_, ...), which call PMPI_
 * directly: its nonblocking collectives reach strata's C functions (through
 * its descriptor wrappers, as its blocking ones do), so their waits must
 * reach strata's completion calls, which progress strata's operations, or a
 * rank waiting in the host alone would never finish them.  Open MPI's
 * Fortran bindings call PMPI_ for the nonblocking collectives too, so both
 * the operation and its wait stay with the host there: nothing to do.
 *
 * MPICH's f08 handles are the C handles (int), its f08 MPI_Status has the
 * C layout, and MPI_STATUS_IGNORE is MPI_F08_STATUS_IGNORE; Fortran
 * indices count from 1. */
#include <mpi.h>

#ifndef OPEN_MPI
_Static_assert(sizeof(MPI_Request) == sizeof(MPI_Fint), "MPICH's f08 request is the C handle");

#define EXPORT __attribute__((visibility("default")))
#define ST(s) ((void *)(s) == (void *)MPI_F08_STATUS_IGNORE ? MPI_STATUS_IGNORE : (s))
#define STS(s) ((void *)(s) == (void *)MPI_F08_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : (s))
#define RET(rc)                       \
    do {                              \
        if (ierror) *ierror = (rc);   \
    } while (0)

static int one_based(int i) { return i == MPI_UNDEFINED ? i : i + 1; }

EXPORT void mpi_wait_f08_(MPI_Fint *request, MPI_Status *status, MPI_Fint *ierror)
{
    RET(MPI_Wait((MPI_Request *)request, ST(status)));
}

EXPORT void mpi_test_f08_(MPI_Fint *request, MPI_Fint *flag, MPI_Status *status, MPI_Fint *ierror)
{
    int f = 0, rc = MPI_Test((MPI_Request *)request, &f, ST(status));
    *flag = f;
    RET(rc);
}

/* It completes nothing, but a persistent start strata runs has no host
 * receive behind it (persistent.c), so the host alone would call it done. */
EXPORT void mpi_request_get_status_f08_(MPI_Fint *request, MPI_Fint *flag, MPI_Status *status,
                                        MPI_Fint *ierror)
{
    int f = 0, rc = MPI_Request_get_status(*(MPI_Request *)request, &f, ST(status));
    *flag = f;
    RET(rc);
}

EXPORT void mpi_waitall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Status *statuses,
                             MPI_Fint *ierror)
{
    RET(MPI_Waitall(*count, (MPI_Request *)requests, STS(statuses)));
}

EXPORT void mpi_testall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag,
                             MPI_Status *statuses, MPI_Fint *ierror)
{
    int f = 0, rc = MPI_Testall(*count, (MPI_Request *)requests, &f, STS(statuses));
    *flag = f;
    RET(rc);
}

EXPORT void mpi_waitany_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                             MPI_Status *status, MPI_Fint *ierror)
{
    int i = MPI_UNDEFINED, rc = MPI_Waitany(*count, (MPI_Request *)requests, &i, ST(status));
    *index = one_based(i);
    RET(rc);
}

EXPORT void mpi_testany_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                             MPI_Fint *flag, MPI_Status *status, MPI_Fint *ierror)
{
    int i = MPI_UNDEFINED, f = 0;
    int rc = MPI_Testany(*count, (MPI_Request *)requests, &i, &f, ST(status));
    *index = one_based(i);
    *flag = f;
    RET(rc);
}

EXPORT void mpi_waitsome_f08_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                              MPI_Fint *indices, MPI_Status *statuses, MPI_Fint *ierror)
{
    int out = 0, rc = MPI_Waitsome(*incount, (MPI_Request *)requests, &out, indices, STS(statuses));
    for (int i = 0; out != MPI_UNDEFINED && i < out; i++) indices[i]++;
    *outcount = out;
    RET(rc);
}

EXPORT void mpi_testsome_f08_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                              MPI_Fint *indices, MPI_Status *statuses, MPI_Fint *ierror)
{
    int out = 0, rc = MPI_Testsome(*incount, (MPI_Request *)requests, &out, indices, STS(statuses));
    for (int i = 0; out != MPI_UNDEFINED && i < out; i++) indices[i]++;
    *outcount = out;
    RET(rc);
}

EXPORT void mpi_start_f08_(MPI_Fint *request, MPI_Fint *ierror)
{
    RET(MPI_Start((MPI_Request *)request));
}

EXPORT void mpi_startall_f08_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierror)
{
    RET(MPI_Startall(*count, (MPI_Request *)requests));
}

EXPORT void mpi_request_free_f08_(MPI_Fint *request, MPI_Fint *ierror)
{
    RET(MPI_Request_free((MPI_Request *)request));
}

EXPORT void mpi_cancel_f08_(MPI_Fint *request, MPI_Fint *ierror)
{
    RET(MPI_Cancel((MPI_Request *)request));
}
#endif
