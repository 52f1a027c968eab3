/* Not an application: a test helper (tests/apps.cmake builds it as
 * libapp_fault_inject.so).  Preloaded into asp or train, it breaks their
 * collective on purpose, to prove that their checks catch a collective
 * that returns wrong data (tests/scripts/app_check.sh --fault):
 *
 * the third MPI_Bcast or MPI_Allreduce a rank makes returns from the host
 * MPI and then has its result zeroed on the ranks of MPI_COMM_WORLD that
 * STRATA_TEST_APP_FAULT_RANK names (a rank, or -1 for every rank).  A
 * zeroed row k makes every d[i][k]-relaxation on that rank wrong; a zeroed
 * gradient skips a step on that rank. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define FAULTY_CALL 3

static int corrupts_here(void)
{
    const char *which = getenv("STRATA_TEST_APP_FAULT_RANK");
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return which && (atoi(which) == -1 || atoi(which) == rank);
}

static void zero(void *buf, int count, MPI_Datatype type)
{
    int size;
    PMPI_Type_size(type, &size);
    memset(buf, 0, (size_t)count * (size_t)size);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    static int calls;
    int rc = PMPI_Bcast(buf, count, type, root, comm);
    if (rc == MPI_SUCCESS && ++calls == FAULTY_CALL && corrupts_here()) zero(buf, count, type);
    return rc;
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    static int calls;
    int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
    if (rc == MPI_SUCCESS && ++calls == FAULTY_CALL && corrupts_here()) zero(recv, count, type);
    return rc;
}
