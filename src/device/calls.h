/* The collectives behind every entry point (interpose/calls.def: the C
 * functions, their large-count forms; the Fortran bindings through them),
 * staging device buffers through host memory around the host-memory path
 * (serve/collectives.h, serve/rs_scan_calls.h: strata_serve_*), which gets
 * them at once in a job without devices (device_calls.c, device_vcalls.c).
 *
 * The MPI function's arguments with counts as long long, so that a call
 * takes the same route whatever form it came through (serve/collectives.h
 * says why), then `large`: 1 for a call that came through a _c function (a
 * call strata leaves goes to the host MPI's _c function, unchanged, and the
 * v-collectives' arrays are MPI_Count / MPI_Aint), 0 for the int one;
 * last the call's build (route/build.h): NULL for a blocking call, run to
 * completion, else the nonblocking or persistent call's, filled instead.
 * MPI_Barrier has no buffer: strata_call_barrier (serve/collectives.h). */
#ifndef STRATA_DEVICE_CALLS_H
#define STRATA_DEVICE_CALLS_H

#include <mpi.h>

#include "route/build.h"

/* The first seven (device_calls.c). */
int strata_call_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                      MPI_Comm comm, int large,
                      struct strata_build *build);
int strata_call_reduce(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, int large,
                       struct strata_build *build);
int strata_call_allreduce(const void *sendbuf, void *recvbuf, long long count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                          struct strata_build *build);
int strata_call_gather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                       void *recvbuf, long long recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, int large,
                       struct strata_build *build);
int strata_call_scatter(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                        void *recvbuf, long long recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, int large,
                        struct strata_build *build);
int strata_call_allgather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                          void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                          MPI_Comm comm, int large,
                          struct strata_build *build);
int strata_call_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                         void *recvbuf, long long recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         int large,
                         struct strata_build *build);

/* The v-collectives (device_vcalls.c): counts and displacements as the call
 * passed them, int arrays (large 0) or MPI_Count and MPI_Aint (large 1). */
int strata_call_gatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const void *recvcounts, const void *displs,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                        struct strata_build *build);
int strata_call_scatterv(const void *sendbuf, const void *sendcounts, const void *displs,
                         MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                         struct strata_build *build);
int strata_call_allgatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const void *recvcounts, const void *displs,
                           MPI_Datatype recvtype, MPI_Comm comm, int large,
                           struct strata_build *build);
int strata_call_alltoallv(const void *sendbuf, const void *sendcounts, const void *sdispls,
                          MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                          const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int large,
                          struct strata_build *build);

/* Reduce_scatter(_block), Scan, Exscan (device_vcalls.c). */
int strata_call_reduce_scatter_block(const void *sendbuf, void *recvbuf, long long recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                                     struct strata_build *build);
int strata_call_reduce_scatter(const void *sendbuf, void *recvbuf, const void *recvcounts,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                               struct strata_build *build);
int strata_call_scan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, int large,
                     struct strata_build *build);
int strata_call_exscan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, int large,
                       struct strata_build *build);

#endif
