/* Alltoallw and the neighbourhood collectives (wcollectives.c): the
 * blocking form's decisions and run, which the nonblocking and persistent
 * forms write into their operation's build instead (route/build.h), and
 * their persistent requests' arguments (wpersist.c). */
#ifndef STRATA_INTERPOSE_WCOLLECTIVES_H
#define STRATA_INTERPOSE_WCOLLECTIVES_H

#include <mpi.h>

#include "route/build.h"
#include "util/colls.h"

int strata_call_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          struct strata_build *build);
int strata_call_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm,
                                   struct strata_build *build);
int strata_call_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm,
                                    struct strata_build *build);
int strata_call_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm,
                                  struct strata_build *build);
int strata_call_neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm,
                                   struct strata_build *build);
int strata_call_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm,
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
    int scount, rcount;
    MPI_Datatype stype, rtype;
    const int *scounts, *rcounts;
    const int *sdispls, *rdispls;          /* the v forms, Alltoallw (bytes) */
    const MPI_Aint *sdispls_a, *rdispls_a; /* Neighbor_alltoallw (bytes) */
    const MPI_Datatype *stypes, *rtypes;
    MPI_Comm comm;
};
int strata_wpersist_init(const struct strata_wpersist_args *a, MPI_Request *request, int *host);

#endif
