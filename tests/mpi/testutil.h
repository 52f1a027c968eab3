/* Small assertion helpers for strata's MPI tests.  A failed check prints
 * where and why and makes the test exit non-zero on every rank (through
 * MPI_Abort), so a failure can never pass unnoticed. */
#ifndef STRATA_TESTUTIL_H
#define STRATA_TESTUTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            int r_ = -1;                                                        \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                 \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", r_, __FILE__, __LINE__, \
                    #cond);                                                     \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, "\n");                                              \
            fflush(stderr);                                                     \
            MPI_Abort(MPI_COMM_WORLD, 3);                                       \
        }                                                                       \
    } while (0)

/* strata segments process `pid` has mapped, -1 if its maps cannot be read.
 * Named segments stay mapped as "/dev/shm/strata-... (deleted)" once
 * unlinked; anonymous ones map as "/memfd:strata-segment (deleted)". */
static inline int test_segment_mappings(int pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) return -1;
    int n = 0;
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "/dev/shm/strata-") || strstr(line, "/memfd:strata-segment")) n++;
    fclose(maps);
    return n;
}

/* Prints "PASS name" once (rank 0) after every rank got there. */
static inline void test_pass(const char *name)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("PASS %s\n", name);
}

/* Whether the host MPI is Intel MPI: from its mpi.h, or, in the standard
 * ABI build (whose runtime is whichever libmpi_abi.so.1 was loaded), from
 * its library version string. */
static inline int test_host_is_intel(void)
{
#ifdef I_MPI_VERSION
    return 1;
#else
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(v, &len);
    return strstr(v, "Intel") != NULL;
#endif
}

/* Whether MPI_ERRORS_RETURN set on a communicator makes the host return
 * its errors.  Intel MPI 2021.19's standard-ABI library (libmpi_abi.so.1)
 * aborts on every error whatever the handler, and passes an error code
 * given to MPI_Comm_call_errhandler on untranslated (the ABI's
 * MPI_ERR_REQUEST, 7, aborts as MPICH's "Invalid root"): reproduced
 * without strata (docs/TESTING.md, "Intel MPI").  Tests of erroneous
 * arguments are skipped there, saying so (test_skip_errors). */
static inline int test_errors_return(void)
{
#ifdef MPI_ABI_VERSION
    return !test_host_is_intel();
#else
    return 1;
#endif
}

/* Says on rank 0 that the erroneous-argument checks `what` did not run. */
static inline void test_skip_errors(const char *what)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("skipped: %s (this host aborts on errors under MPI_ERRORS_RETURN: Intel MPI's "
               "standard-ABI library)\n", what);
}

#endif
