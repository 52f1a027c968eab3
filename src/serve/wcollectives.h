/* Alltoallw and the neighbourhood collectives (wcollectives.c): the
 * blocking form's decisions and run, which the nonblocking and persistent
 * forms write into their operation's build instead (route/build.h), and
 * their persistent requests' arguments (wpersist.c). */
#ifndef STRATA_INTERPOSE_WCOLLECTIVES_H
#define STRATA_INTERPOSE_WCOLLECTIVES_H

#include <mpi.h>

#include "route/build.h"
#include "util/colls.h"

/* Each takes its arrays as its form passed them (large 0: int counts and
 * displacements; large 1, the MPI-4 _c forms: MPI_Count counts, MPI_Aint
 * displacements), as the v-collectives do (device/calls.h).  Counts beyond
 * int are served: strata counts in long long and bytes in size_t. */
int strata_call_alltoallw(const void *sendbuf, const void *sendcounts, const void *sdispls,
                          const MPI_Datatype sendtypes[], void *recvbuf, const void *recvcounts,
                          const void *rdispls, const MPI_Datatype recvtypes[], MPI_Comm comm,
                          int large, struct strata_build *build);
int strata_call_neighbor_allgather(const void *sendbuf, long long sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                                   MPI_Datatype recvtype, MPI_Comm comm, int large,
                                   struct strata_build *build);
int strata_call_neighbor_allgatherv(const void *sendbuf, long long sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                                    const void *displs, MPI_Datatype recvtype, MPI_Comm comm,
                                    int large, struct strata_build *build);
int strata_call_neighbor_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, int large, struct strata_build *build);
int strata_call_neighbor_alltoallv(const void *sendbuf, const void *sendcounts,
                                   const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                   const void *recvcounts, const void *rdispls,
                                   MPI_Datatype recvtype, MPI_Comm comm, int large,
                                   struct strata_build *build);
int strata_call_neighbor_alltoallw(const void *sendbuf, const void *sendcounts,
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const void *recvcounts, const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, int large,
                                   struct strata_build *build);

/* A persistent request's arguments, as the _init call passed them (the
 * arrays the call's form has; the others NULL).  strata_wpersist_init makes
 * the request (persistent.h, strata_persist_init_ext) with copies of the
 * arrays and derived datatypes; *host set: the host's own _init serves the
 * call (strata is off, the arguments could not be copied, or _init left it
 * to the host). */
struct strata_wpersist_args {
    enum strata_coll coll;
    const void *sendbuf;
    void *recvbuf;
    long long scount, rcount;
    MPI_Datatype stype, rtype;
    const void *scounts, *rcounts;         /* int, or MPI_Count if large */
    const void *sdispls, *rdispls;         /* the v forms, Alltoallw (bytes): int, or
                                            * MPI_Aint if large */
    const MPI_Aint *sdispls_a, *rdispls_a; /* Neighbor_alltoallw (bytes) */
    const MPI_Datatype *stypes, *rtypes;
    MPI_Comm comm;
    int large;                             /* the _init_c form */
};
int strata_wpersist_init(const struct strata_wpersist_args *a, MPI_Request *request, int *host);

#endif
