/* Device (GPU) buffers in the eight newer collectives: Reduce_scatter_block,
 * Reduce_scatter, Scan, Exscan, Gatherv, Scatterv, Allgatherv, Alltoallv.
 *
 * As device_calls.c does for Gather and its kin: each rank looks at the
 * buffers it uses, and those in device memory are staged whole through the
 * communicator's pinned host buffers (transport/device.h) before the host
 * path (strata_serve_*: strata's algorithms or the host MPI) runs on the host
 * copies, then the receive side is copied back.  Neither strata's algorithms
 * nor the host MPI see a device pointer.
 *
 * Agreement: staging is local and whole (no pieces), so every rank makes the
 * same host call whatever the others hold; a job with device buffers on some
 * ranks and host buffers on others takes one path.  The region staged for a
 * buffer is every byte the call may read or write in it: from the lowest to
 * the highest byte of its blocks (v-collectives: over every count and
 * displacement), so holes between blocks and inside derived types are
 * copied in first and come back unchanged.  The receive side is always
 * copied in for that reason (and because in place it is the input).
 *
 * Reductions here (Reduce_scatter, Scan) run on the staged host copies, on
 * the CPU, like those of device_calls.c. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "config/config.h"
#include "context/runtime.h"
#include "device/calls.h"
#include "serve/collectives.h"
#include "serve/null_type.h"
#include "device/device_comm.h"
#include "serve/rs_scan_calls.h"
#include "transport/device.h"
#include "util/colls.h"
#include "util/log.h"

/* One buffer argument: the bytes the call may touch, relative to user. */
struct region {
    char *user;
    int used;        /* some block has data */
    int bad;         /* device memory with a layout strata cannot stage */
    MPI_Aint lo, hi; /* [lo, hi) bytes from user */
    int device;
    char *host;      /* staged: the copy of byte lo */
};

struct layout {
    MPI_Aint extent, true_lb, true_extent;
    int ok;
};

static struct layout layout_of(MPI_Datatype type)
{
    struct layout l = {0};
    MPI_Aint lb;
    int size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0 ||
        PMPI_Type_get_extent(type, &lb, &l.extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &l.true_lb, &l.true_extent) != MPI_SUCCESS)
        return l; /* nothing to move, or a bad type the host MPI reports */
    l.ok = 1;
    return l;
}

/* Adds `count` elements starting `displ` elements from the buffer. */
static void region_add(struct region *r, const struct layout *l, long long displ, long long count)
{
    if (!l->ok || count <= 0) return;
    if (l->extent <= 0 || l->true_extent < 0) {
        r->bad = 1; /* only a problem if the buffer is device memory */
        return;
    }
    MPI_Aint lo = (MPI_Aint)displ * l->extent + l->true_lb;
    MPI_Aint hi = lo + (MPI_Aint)(count - 1) * l->extent + l->true_extent;
    if (!r->used || lo < r->lo) r->lo = lo;
    if (!r->used || hi > r->hi) r->hi = hi;
    r->used = 1;
}

static void region_start(struct region *r, const void *buf)
{
    memset(r, 0, sizeof *r);
    r->user = (char *)buf;
}

/* Whether the region's memory is on a device (known once it has blocks). */
static void region_settle(struct region *r)
{
    if (r->user && r->user != MPI_IN_PLACE && r->used && r->hi > r->lo)
        r->device = strata_device_is_device(r->user + r->lo);
    if (!r->device) r->bad = 0;
}

/* The v-layout of counts/displs (int, or MPI_Count/MPI_Aint when large). */
static void region_v(struct region *r, const struct layout *l, const void *counts,
                     const void *displs, int n, int large)
{
    if (!counts || !displs) return;
    for (int q = 0; q < n; q++) {
        long long c = large ? (long long)((const MPI_Count *)counts)[q]
                            : (long long)((const int *)counts)[q];
        long long d = large ? (long long)((const MPI_Aint *)displs)[q]
                            : (long long)((const int *)displs)[q];
        region_add(r, l, d, c);
    }
}

/* What the host path gets for the region: its staged copy, or as passed. */
static void *view(const struct region *r)
{
    return r->device ? r->host - r->lo : r->user;
}

static int failed_call(MPI_Comm comm, const char *coll, const char *why)
{
    strata_error("%s on device memory: %s; strata cannot stage it and will not hand a device "
                 "pointer to the host MPI",
                 coll, why);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
    return MPI_ERR_BUFFER;
}

/* A call with device buffers: 1 when it must go to the host path as it is
 * (no device buffer, or no device in the job); 0 when the regions are staged
 * and the lane entered (finish with stage_end); an MPI error in *rc when
 * it is refused. */
static int stage_begin(MPI_Comm comm, enum strata_coll coll, struct region *s, struct region *r,
                       struct strata_device_lane **lane, int *rc,
                       const struct strata_build *build)
{
    const char *name = strata_call_name(strata_call_id(coll, STRATA_FORM_BLOCKING));
    region_settle(s);
    region_settle(r);
    if (!s->device && !r->device) return 1;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        *rc = failed_call(comm, name, "device buffers on intercommunicators are not supported");
        return 0;
    }
    if (build) {
        *rc = failed_call(comm, strata_call_name(strata_build_call_id(build, coll)),
                          "nonblocking and persistent collectives on device buffers are not "
                          "supported yet");
        return 0;
    }
    if (s->bad || r->bad) {
        *rc = failed_call(comm, name, "a datatype with a negative or zero extent");
        return 0;
    }
    *lane = strata_device_comm_enter(comm, s->device ? s->user + s->lo : r->user + r->lo);
    if (s->device) {
        s->host = strata_device_pinned(*lane, 0, (size_t)(s->hi - s->lo));
        strata_device_to_host(*lane, s->host, s->user + s->lo, (size_t)(s->hi - s->lo));
    }
    if (r->device) {
        r->host = strata_device_pinned(*lane, 1, (size_t)(r->hi - r->lo));
        strata_device_to_host(*lane, r->host, r->user + r->lo, (size_t)(r->hi - r->lo));
    }
    strata_device_sync(*lane);
    strata_verbose(2, "%s: device buffers staged through host memory (%zd + %zd bytes)", name,
                   s->device ? (ssize_t)(s->hi - s->lo) : (ssize_t)0,
                   r->device ? (ssize_t)(r->hi - r->lo) : (ssize_t)0);
    return 0;
}

static int stage_end(struct strata_device_lane *lane, const struct region *r, int rc)
{
    if (rc == MPI_SUCCESS && r->device)
        strata_device_from_host(lane, r->user + r->lo, r->host, (size_t)(r->hi - r->lo));
    strata_device_sync(lane);
    strata_device_leave(lane);
    return rc;
}

/* The job has device memory somewhere (runtime's device_world), else the
 * host path straight away: exactly the behaviour without device support. */
static int device_job(MPI_Comm comm)
{
    strata_runtime_start_late(comm);
    const struct strata_runtime *rt = strata_runtime();
    return rt && rt->device_world;
}

static int comm_rank_size(MPI_Comm comm, int *rank)
{
    int size = 0, inter = 0;
    PMPI_Comm_rank(comm, rank);
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &size);
    else PMPI_Comm_size(comm, &size);
    return size;
}

/* A buffer this rank does not use may still be a device pointer: the host
 * MPI gets NULL instead (it reads nothing there). */
static const void *unused(const void *p)
{
    return p && p != MPI_IN_PLACE && strata_device_is_device(p) ? NULL : p;
}

/* ---- Reduce_scatter(_block), Scan, Exscan ---- */

/* recvcounts NULL: Reduce_scatter_block with blockcount per rank.  Inlined
 * into each of its two entries, as it was one function before them (a call
 * more cost 6 instructions per Scan). */
static inline __attribute__((always_inline)) int call_reduce_scatter(const void *sendbuf, void *recvbuf, const void *recvcounts,
                               long long blockcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, int large, struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_reduce_scatter(sendbuf, recvbuf, recvcounts, blockcount, datatype, op,
                                           comm, large, build);
    int rank, n = comm_rank_size(comm, &rank);
    long long total = 0, mine = 0;
    for (int q = 0; q < n; q++) {
        long long c = !recvcounts ? blockcount
                      : large     ? (long long)((const MPI_Count *)recvcounts)[q]
                                  : (long long)((const int *)recvcounts)[q];
        if (c > 0) total += c;
        if (q == rank) mine = c;
    }
    struct layout l = layout_of(datatype);
    struct region s, r;
    region_start(&s, sendbuf);
    region_start(&r, recvbuf);
    if (sendbuf != MPI_IN_PLACE) region_add(&s, &l, 0, total);
    region_add(&r, &l, 0, sendbuf == MPI_IN_PLACE ? total : mine);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    enum strata_coll coll = recvcounts ? STRATA_COLL_REDUCE_SCATTER
                                       : STRATA_COLL_REDUCE_SCATTER_BLOCK;
    if (stage_begin(comm, coll, &s, &r, &lane, &rc, build))
        return strata_serve_reduce_scatter(sendbuf, recvbuf, recvcounts, blockcount, datatype, op,
                                           comm, large, build);
    if (!lane) return rc;
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&s);
    rc = strata_serve_reduce_scatter(sb, view(&r), recvcounts, blockcount, datatype, op, comm,
                                     large, build);
    return stage_end(lane, &r, rc);
}

/* exclusive: Exscan.  Inlined as call_reduce_scatter. */
static inline __attribute__((always_inline)) int call_scan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, int exclusive, int large,
                     struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_scan(sendbuf, recvbuf, count, datatype, op, comm, exclusive, large,
                                 build);
    struct layout l = layout_of(datatype);
    struct region s, r;
    region_start(&s, sendbuf);
    region_start(&r, recvbuf);
    if (sendbuf != MPI_IN_PLACE) region_add(&s, &l, 0, count);
    region_add(&r, &l, 0, count);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    enum strata_coll coll = exclusive ? STRATA_COLL_EXSCAN : STRATA_COLL_SCAN;
    if (stage_begin(comm, coll, &s, &r, &lane, &rc, build))
        return strata_serve_scan(sendbuf, recvbuf, count, datatype, op, comm, exclusive, large,
                                 build);
    if (!lane) return rc;
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&s);
    rc = strata_serve_scan(sb, view(&r), count, datatype, op, comm, exclusive, large, build);
    return stage_end(lane, &r, rc);
}

int strata_call_reduce_scatter_block(const void *sendbuf, void *recvbuf, long long recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                                     struct strata_build *build)
{
    int rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_REDUCE_SCATTER_BLOCK, build, &rc)) return rc;
    return call_reduce_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, large, build);
}

int strata_call_reduce_scatter(const void *sendbuf, void *recvbuf, const void *recvcounts,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                               struct strata_build *build)
{
    int rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_REDUCE_SCATTER, build, &rc)) return rc;
    return call_reduce_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, large, build);
}

int strata_call_scan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, int large,
                     struct strata_build *build)
{
    int rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_SCAN, build, &rc)) return rc;
    return call_scan(sendbuf, recvbuf, count, datatype, op, comm, 0, large, build);
}

int strata_call_exscan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, int large,
                       struct strata_build *build)
{
    int rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_EXSCAN, build, &rc)) return rc;
    return call_scan(sendbuf, recvbuf, count, datatype, op, comm, 1, large, build);
}

/* ---- the v-collectives ---- */

int strata_call_gatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const void *recvcounts, const void *displs,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                        struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                    recvtype, root, comm, large, build);
    int rank, n = comm_rank_size(comm, &rank), is_root = rank == root;
    struct layout sl = layout_of(sendtype), rl = layout_of(recvtype);
    struct region s, r;
    region_start(&s, sendbuf);
    region_start(&r, is_root ? recvbuf : NULL);
    if (sendbuf != MPI_IN_PLACE) region_add(&s, &sl, 0, sendcount);
    if (is_root) region_v(&r, &rl, recvcounts, displs, n, large);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    void *rb = is_root ? recvbuf : (void *)unused(recvbuf);
    if (stage_begin(comm, STRATA_COLL_GATHERV, &s, &r, &lane, &rc, build))
        return strata_serve_gatherv(sendbuf, sendcount, sendtype, rb, recvcounts, displs,
                                    recvtype, root, comm, large, build);
    if (!lane) return rc;
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&s);
    rc = strata_serve_gatherv(sb, sendcount, sendtype, is_root ? view(&r) : rb, recvcounts, displs,
                              recvtype, root, comm, large, build);
    return stage_end(lane, &r, rc);
}

int strata_call_scatterv(const void *sendbuf, const void *sendcounts, const void *displs,
                         MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                         struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                     recvtype, root, comm, large, build);
    int rank, n = comm_rank_size(comm, &rank), is_root = rank == root;
    struct layout sl = layout_of(sendtype), rl = layout_of(recvtype);
    struct region s, r;
    region_start(&s, is_root ? sendbuf : NULL);
    region_start(&r, recvbuf);
    if (is_root) region_v(&s, &sl, sendcounts, displs, n, large);
    if (recvbuf != MPI_IN_PLACE) region_add(&r, &rl, 0, recvcount);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    const void *sb = is_root ? sendbuf : unused(sendbuf);
    if (stage_begin(comm, STRATA_COLL_SCATTERV, &s, &r, &lane, &rc, build))
        return strata_serve_scatterv(sb, sendcounts, displs, sendtype, recvbuf, recvcount,
                                     recvtype, root, comm, large, build);
    if (!lane) return rc;
    void *rb = recvbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&r);
    rc = strata_serve_scatterv(is_root ? view(&s) : sb, sendcounts, displs, sendtype, rb,
                               recvcount, recvtype, root, comm, large, build);
    return stage_end(lane, &r, rc);
}

int strata_call_allgatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const void *recvcounts, const void *displs,
                           MPI_Datatype recvtype, MPI_Comm comm, int large,
                           struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm, large, build);
    int rank, n = comm_rank_size(comm, &rank);
    struct layout sl = layout_of(sendtype), rl = layout_of(recvtype);
    struct region s, r;
    region_start(&s, sendbuf);
    region_start(&r, recvbuf);
    if (sendbuf != MPI_IN_PLACE) region_add(&s, &sl, 0, sendcount);
    region_v(&r, &rl, recvcounts, displs, n, large);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    if (stage_begin(comm, STRATA_COLL_ALLGATHERV, &s, &r, &lane, &rc, build))
        return strata_serve_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                       recvtype, comm, large, build);
    if (!lane) return rc;
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&s);
    rc = strata_serve_allgatherv(sb, sendcount, sendtype, view(&r), recvcounts, displs, recvtype,
                                 comm, large, build);
    return stage_end(lane, &r, rc);
}

int strata_call_alltoallv(const void *sendbuf, const void *sendcounts, const void *sdispls,
                          MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                          const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int large,
                          struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                      rdispls, recvtype, comm, large, build);
    int rank, n = comm_rank_size(comm, &rank);
    struct layout sl = layout_of(sendtype), rl = layout_of(recvtype);
    struct region s, r;
    region_start(&s, sendbuf);
    region_start(&r, recvbuf);
    if (sendbuf != MPI_IN_PLACE) region_v(&s, &sl, sendcounts, sdispls, n, large);
    region_v(&r, &rl, recvcounts, rdispls, n, large);
    struct strata_device_lane *lane = NULL;
    int rc = MPI_SUCCESS;
    if (stage_begin(comm, STRATA_COLL_ALLTOALLV, &s, &r, &lane, &rc, build))
        return strata_serve_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                      rdispls, recvtype, comm, large, build);
    if (!lane) return rc;
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : view(&s);
    rc = strata_serve_alltoallv(sb, sendcounts, sdispls, sendtype, view(&r), recvcounts, rdispls,
                                recvtype, comm, large, build);
    return stage_end(lane, &r, rc);
}
