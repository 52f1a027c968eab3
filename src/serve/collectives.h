/* The collectives strata intercepts, behind every entry point that leads to
 * them: the C functions (int counts), their MPI-4 large-count forms (_c,
 * MPI_Count counts) and any other binding.  Counts are long long here, so
 * that a call takes the same route whatever form it came through: the route
 * depends only on what every rank passes alike (the signature's bytes, the
 * root, the op), and ranks may legitimately mix forms, or pass a count
 * beyond int against another rank's count within int of a larger type.
 *
 * `large` is 1 for a call that came through a _c function: a call strata
 * leaves goes to the host MPI's _c function, unchanged; 0: to the int one
 * (the counts then fit in int).
 *
 * `build` (route/build.h) is NULL for a blocking call, which runs to
 * completion; a nonblocking or persistent call passes the build its
 * operation will start from, which the call fills instead of running. */
#ifndef STRATA_SERVE_COLLECTIVES_H
#define STRATA_SERVE_COLLECTIVES_H

#include <mpi.h>
#include <stddef.h>

#include "route/build.h"
#include "util/colls.h"

/* MPI_Barrier (collectives.c; no buffer, so no device staging). */
int strata_call_barrier(MPI_Comm comm, struct strata_build *build);


/* The v-collectives on host memory only (vcollectives.c), behind the
 * staging of device buffers (device_vcalls.c). */
int strata_serve_gatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const void *recvcounts, const void *displs,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                         struct strata_build *build);
int strata_serve_scatterv(const void *sendbuf, const void *sendcounts, const void *displs,
                          MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                          struct strata_build *build);
int strata_serve_allgatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const void *recvcounts, const void *displs,
                            MPI_Datatype recvtype, MPI_Comm comm, int large,
                            struct strata_build *build);
int strata_serve_alltoallv(const void *sendbuf, const void *sendcounts, const void *sdispls,
                           MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                           const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int large,
                           struct strata_build *build);
/* A call already laid out as bytes (wcollectives.c: Alltoallw and the
 * neighbourhood collectives), run as Alltoallv runs one (vcollectives.c),
 * once the route is settled: send and recv are byte runs (send NULL: in
 * place, recv holds the outgoing blocks where the incoming ones go), the
 * layout's four [size] arrays are copied; end(arg, finished) runs when the
 * call is over (finished 1: its results are in recv), also for a
 * nonblocking or persistent operation, to unpack and free what arg holds. */
struct strata_ctx;
struct strata_vlayout;
int strata_vcall_bytes(struct strata_ctx *ctx, enum strata_coll coll, const unsigned char *send,
                       unsigned char *recv, const struct strata_vlayout *layout,
                       void (*end)(void *arg, int finished), void *arg,
                       struct strata_build *build);
/* The same calls on host memory only (collectives.c): strata's algorithms or
 * the host MPI.  strata_call_* (device_calls.c) hand calls to them, staging
 * device buffers through host memory first. */
int strata_serve_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                       MPI_Comm comm, int large,
                       struct strata_build *build);
int strata_serve_reduce(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, int large,
                        struct strata_build *build);
int strata_serve_allreduce(const void *sendbuf, void *recvbuf, long long count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                           struct strata_build *build);
int strata_serve_gather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                        void *recvbuf, long long recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, int large,
                        struct strata_build *build);
int strata_serve_scatter(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                         void *recvbuf, long long recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, int large,
                         struct strata_build *build);
int strata_serve_allgather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                           void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm, int large,
                           struct strata_build *build);
int strata_serve_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                          void *recvbuf, long long recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          int large,
                          struct strata_build *build);

/* ---- The device layer's whole-call agreement (device_calls.c).
 *
 * In a job with devices, a Bcast, Reduce or Allreduce above
 * STRATA_CUDA_CHUNK is cut into one strata_serve_* call per piece, and a
 * Bcast or Allreduce may first try the CUDA IPC path, which opens with a
 * host MPI reduction over the communicator.  Both follow this rank's own
 * byte count, the same everywhere in a correct program but not in one whose
 * counts differ: then one rank sat in the IPC path's host reduction (or in
 * its second piece) while the others, below the line, waited in the
 * agreement of their one call for its signature, forever (test_mismatch on
 * a machine with a GPU: Bcast root 2 MiB, the others 1 MiB).  So a rank
 * about to cut or to try IPC first takes part in the agreement of the whole
 * call (coll/agree.h), as a call of its own: the others' one call meets it
 * there (the same call number), and every rank gets the disagreement's
 * verdict.  Agreed (every rank asked, the counts being the same), it moved
 * nothing and the pieces follow, each agreed as usual.
 *
 * The signature is the one the entry point gives the whole call (count
 * elements of datatype; root -1 for Allreduce).  GO_ON also where there is
 * nothing to agree with (no check, a communicator strata does not serve);
 * REFUSED: return *rc, nothing moved; TO_HOST: another rank leaves the call
 * to the host MPI, so this one hands its whole call there too
 * (strata_host_mpi_*, its device buffers staged whole). */
enum strata_whole { STRATA_WHOLE_GO_ON, STRATA_WHOLE_REFUSED, STRATA_WHOLE_TO_HOST };
enum strata_whole strata_serve_agree_whole(enum strata_coll coll, long long count,
                                           MPI_Datatype datatype, int root, MPI_Comm comm, int *rc);
/* The host MPI's call alone, as an entry point hands a call it leaves. */
int strata_host_mpi_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                          MPI_Comm comm, int large);
int strata_host_mpi_reduce(const void *sendbuf, void *recvbuf, long long count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, int large);
int strata_host_mpi_allreduce(const void *sendbuf, void *recvbuf, long long count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large);

#endif
