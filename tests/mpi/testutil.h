/* Small assertion helpers for strata's MPI tests.  A failed check prints
 * where and why and makes the test exit non-zero on every rank (through
 * MPI_Abort), so a failure can never pass unnoticed. */
#ifndef STRATA_TESTUTIL_H
#define STRATA_TESTUTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Prints "PASS name" once (rank 0) after every rank got there. */
static inline void test_pass(const char *name)
{
    int rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("PASS %s\n", name);
}

#endif
