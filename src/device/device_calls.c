/* Collectives on device (GPU) buffers over an MPI that does not know GPUs.
 *
 * Every intercepted collective enters here first (strata_call_*).  With no
 * device anywhere in the job (runtime's device_world, agreed at set-up) it
 * goes straight to strata_serve_* (collectives.c): exactly the behaviour
 * without device support.  Otherwise each rank looks at its own buffers and
 * stages the ones in device memory through pinned host memory, on its
 * communicator's lane (a CUDA stream and pinned buffers, transport/device.h),
 * then runs the host path on the host copies: neither strata's algorithms nor
 * the host MPI ever see a device pointer.
 *
 * Ranks need not agree whether a buffer is on a device: staging is local, and
 * every rank then makes the same host call.  What must be the same on every
 * rank is the cutting into pieces: Bcast, Reduce and Allreduce above
 * STRATA_CUDA_CHUNK bytes run as one host call per piece (host ranks too),
 * so that a device rank's copy of piece i+1 overlaps the collective on piece
 * i and the copy back of piece i-1 (the ADAPT paper's staging pipeline).
 * The cut depends only on device_world, the byte count of the type
 * signature (Bcast) or the count and type every rank passes alike
 * (reductions), and STRATA_CUDA_CHUNK; alike, that is, in a correct
 * program.  Where counts differ across the cut, the ranks above it would
 * make more calls than the others (or the CUDA IPC path's host reduction),
 * so a rank about to cut first takes the agreement of the whole call
 * (collectives.h, strata_serve_agree_whole). */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "context/runtime.h"
#include "device/calls.h"
#include "route/run_view.h"
#include "serve/collectives.h"
#include "serve/null_type.h"
#include "device/device_comm.h"
#include "transport/device.h"
#include "util/log.h"
#include "util/hot.h"

/* comm's lane, entered for device buffer p. */
static struct strata_device_lane *enter(MPI_Comm comm, const void *p)
{
    return strata_device_comm_enter(comm, p);
}

/* ---- one buffer argument ---- */

struct side {
    char *user;         /* as passed */
    long long count;    /* elements of type */
    MPI_Datatype type;
    int device;         /* in device memory: staged */
    MPI_Aint true_lb, extent, true_extent;
    int size;           /* bytes of one element's signature */
    size_t span;        /* bytes from the first to the last byte */
    char *host;         /* staged: where user's first byte lies in host memory */
};

/* Reads a buffer argument.  Returns 0, or -1 when it lies in device memory
 * but its layout cannot be staged (a negative extent). */
static int describe(struct side *s, const void *buf, long long count, MPI_Datatype type)
{
    memset(s, 0, sizeof *s);
    s->user = (char *)buf;
    s->count = count;
    s->type = type;
    if (!buf || buf == MPI_IN_PLACE || count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    MPI_Aint lb;
    if (PMPI_Type_size(type, &s->size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &s->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &s->true_lb, &s->true_extent) != MPI_SUCCESS)
        return 0; /* the host MPI reports the bad type */
    if (s->size == 0) return 0;
    s->device = strata_device_is_device(s->user + s->true_lb);
    if (!s->device) return 0;
    if (s->extent < 0 || s->true_extent < 0) return -1;
    s->span = (size_t)(count - 1) * (size_t)s->extent + (size_t)s->true_extent;
    return 0;
}

/* The address to hand the host path for s: the staged copy, shifted back by
 * true_lb as the user's pointer is. */
static void *host_view(const struct side *s)
{
    return s->device ? s->host - s->true_lb : s->user;
}

/* Whether staging s must first copy its device contents in even though the
 * call only writes it: its layout has holes the copy back would clobber. */
static int has_holes(const struct side *s)
{
    return s->span != (size_t)s->count * (size_t)s->size;
}

/* Stages s into pinned buffer `which`; copy_in: with its contents. */
static void stage_in(struct strata_device_lane *lane, struct side *s, int which, int copy_in)
{
    if (!s->device) return;
    s->host = strata_device_pinned(lane, which, s->span);
    if (copy_in || has_holes(s)) strata_device_to_host(lane, s->host, s->user + s->true_lb, s->span);
}

static void stage_out(struct strata_device_lane *lane, const struct side *s)
{
    if (s->device) strata_device_from_host(lane, s->user + s->true_lb, s->host, s->span);
}

/* A device buffer strata cannot stage: the host MPI must not see it, so the
 * call fails through the communicator's error handler, naming why. */
static int unstageable(MPI_Comm comm, const char *coll, const char *why)
{
    strata_error("%s on device memory: %s; strata cannot stage it and will not hand a device "
                 "pointer to the host MPI",
                 coll, why);
    PMPI_Comm_call_errhandler(comm, MPI_ERR_BUFFER);
    return MPI_ERR_BUFFER;
}

/* Nonblocking and persistent forms record the blocking form's decision and
 * run it later, while staging copies back when the call returns: device
 * buffers there are refused (never staged wrongly), host buffers take the
 * unstaged path whole (no pieces: one recorded operation per call). */
#define NB_DEVICE_WHY "nonblocking and persistent collectives on device buffers are not supported yet"

/* The refusal, under the name the application called (MPI_Ibcast,
 * MPI_Bcast_init, ...), not the blocking form's. */
static int refuse_nonblocking(MPI_Comm comm, enum strata_coll coll,
                              const struct strata_build *build)
{
    return unstageable(comm, strata_call_name(strata_build_call_id(build, coll)), NB_DEVICE_WHY);
}

/* The runtime when device buffers may take part in this call, else NULL
 * (no device anywhere in the job, or strata off). */
STRATA_HOT static const struct strata_runtime *device_job(MPI_Comm comm)
{
    strata_runtime_start_late(comm);
    const struct strata_runtime *rt = strata_runtime();
    return rt && rt->device_world ? rt : NULL;
}

static int is_inter(MPI_Comm comm)
{
    int inter = 0;
    if (comm != MPI_COMM_NULL) PMPI_Comm_test_inter(comm, &inter);
    return inter;
}

static size_t chunk_bytes(void)
{
    const struct strata_config *cfg = strata_config();
    return cfg ? cfg->cuda_chunk : (1u << 20);
}

/* Verbose line once per process: what device data goes through. */
static void say_staging(void)
{
    static atomic_int said;
    /* Once per process, whichever thread comes first: nothing else is
     * published with it. */
    if (atomic_exchange_explicit(&said, 1, memory_order_relaxed)) return;
    strata_verbose(1, "device buffers: staged through pinned host memory in pieces of %zu "
                      "bytes; reductions of staged data run on the CPU; a large Allreduce with "
                      "device buffers on every rank is reduced on the device through CUDA IPC",
                   chunk_bytes());
}

/* ---- Bcast ---- */

/* A broadcast above one piece: every rank moves the signature's bytes as
 * MPI_BYTE pieces; a contiguous device buffer is staged piece by piece,
 * anything else as one packed run. */
static int bcast_pieces(void *buffer, long long count, MPI_Datatype type, int root, MPI_Comm comm,
                        int large, size_t bytes)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    struct side s;
    if (describe(&s, buffer, count, type)) return unstageable(comm, "MPI_Bcast", "negative extent");
    size_t chunk = chunk_bytes(), pieces = (bytes + chunk - 1) / chunk;
    unsigned char *dev_run = NULL, *view, *tmp = NULL;
    struct strata_device_lane *lane = NULL;
    if (s.device) {
        say_staging();
        lane = enter(comm, s.user + s.true_lb);
        dev_run = strata_contiguous_run(buffer, count, type, bytes);
        view = strata_device_pinned(lane, 0, bytes);
        if (!dev_run) {
            /* Holes or disorder: the whole span through host memory (copied
             * in on every rank, so the copy back keeps the holes), packed. */
            stage_in(lane, &s, 1, 1);
            strata_device_sync(lane);
            if (rank == root) strata_pack_user(host_view(&s), count, type, view, comm, 0);
        }
    } else if (!(view = strata_contiguous_run(buffer, count, type, bytes))) {
        if (!(tmp = malloc(bytes))) {
            strata_error("out of memory packing a %zu-byte broadcast", bytes);
            PMPI_Abort(comm, 1);
        }
        view = tmp;
        if (rank == root) strata_pack_user(buffer, count, type, view, comm, 0);
    }
    strata_verbose(2, "MPI_Bcast: %zu bytes in %zu pieces%s", bytes, pieces,
                   s.device ? " staged from device memory" : " (device job: same cut as device ranks)");
    int rc = MPI_SUCCESS;
    size_t issued = 0;
    for (size_t i = 0; i < pieces && rc == MPI_SUCCESS; i++) {
        size_t off = i * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        if (dev_run && rank == root) {
            /* Keep copies of the next pieces in flight, as many as events. */
            for (; issued < pieces && issued < i + STRATA_DEVICE_EVENTS; issued++) {
                size_t o = issued * chunk, l = bytes - o < chunk ? bytes - o : chunk;
                strata_device_to_host(lane, view + o, dev_run + o, l);
                strata_device_mark(lane, (int)(issued % STRATA_DEVICE_EVENTS));
            }
            strata_device_wait(lane, (int)(i % STRATA_DEVICE_EVENTS));
        }
        rc = strata_serve_bcast(view + off, (long long)len, MPI_BYTE, root, comm, large, NULL);
        if (dev_run && rank != root) strata_device_from_host(lane, dev_run + off, view + off, len);
    }
    if (rank != root && rc == MPI_SUCCESS) {
        if (s.device && !dev_run) {
            strata_pack_user(host_view(&s), count, type, view, comm, 1);
            stage_out(lane, &s);
        } else if (tmp) {
            strata_pack_user(buffer, count, type, view, comm, 1);
        }
    }
    if (lane) {
        strata_device_sync(lane);
        strata_device_leave(lane);
    }
    free(tmp);
    return rc;
}

/* One blocking broadcast on host memory: strata's, or the host MPI's alone
 * (host_only). */
static int bcast_one(void *buffer, long long count, MPI_Datatype datatype, int root,
                     MPI_Comm comm, int large, int host_only)
{
    return host_only ? strata_host_mpi_bcast(buffer, count, datatype, root, comm, large)
                     : strata_serve_bcast(buffer, count, datatype, root, comm, large, NULL);
}

/* The whole broadcast in one call, its device buffer staged whole: through
 * strata (host_only 0), or to the host MPI alone (1: another rank left the
 * call there, strata_serve_agree_whole). */
static int bcast_whole(struct side *s, int bad, void *buffer, long long count,
                       MPI_Datatype datatype, int root, MPI_Comm comm, int large, int host_only)
{
    if (!s->device) return bcast_one(buffer, count, datatype, root, comm, large, host_only);
    if (bad) return unstageable(comm, "MPI_Bcast", "negative extent");
    say_staging();
    int rank;
    PMPI_Comm_rank(comm, &rank);
    struct strata_device_lane *lane = enter(comm, s->user + s->true_lb);
    stage_in(lane, s, 0, rank == root);
    strata_device_sync(lane);
    int rc = bcast_one(host_view(s), count, datatype, root, comm, large, host_only);
    if (rank != root && rc == MPI_SUCCESS) stage_out(lane, s);
    strata_device_sync(lane);
    strata_device_leave(lane);
    return rc;
}

STRATA_HOT int strata_call_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm, int large, struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_bcast(buffer, count, datatype, root, comm, large, build);
    struct side s;
    int bad = describe(&s, buffer, count, datatype);
    if (is_inter(comm)) {
        if (s.device)
            return unstageable(comm, "MPI_Bcast", "device buffers on intercommunicators are not "
                                                  "supported");
        return strata_serve_bcast(buffer, count, datatype, root, comm, large, build);
    }
    if (build)
        return s.device ? refuse_nonblocking(comm, STRATA_COLL_BCAST, build)
                        : strata_serve_bcast(buffer, count, datatype, root, comm, large, build);
    int size;
    long long bytes = count;
    if (count < 0 || datatype == MPI_DATATYPE_NULL || PMPI_Type_size(datatype, &size) ||
        (bytes *= size) <= (long long)chunk_bytes())
        return bcast_whole(&s, bad, buffer, count, datatype, root, comm, large, 0);
    /* Above one piece on this rank's count: agreed first (collectives.h),
     * before the IPC path's host reduction or a second piece. */
    int rc;
    switch (strata_serve_agree_whole(STRATA_COLL_BCAST, count, datatype, root, comm, &rc)) {
    case STRATA_WHOLE_REFUSED: return rc;
    case STRATA_WHOLE_TO_HOST:
        return bcast_whole(&s, bad, buffer, count, datatype, root, comm, large, 1);
    case STRATA_WHOLE_GO_ON: break;
    }
    if (strata_device_bcast_ipc(buffer, count, datatype, root, comm, (size_t)bytes, &rc)) return rc;
    return bcast_pieces(buffer, count, datatype, root, comm, large, (size_t)bytes);
}

/* ---- Reduce and Allreduce ---- */

/* One blocking call of a reduction (or of a piece): strata's, or the host
 * MPI's alone (host_only: another rank left the call there). */
static int reduce_one(int all, int host_only, const void *s, void *r, long long n,
                      MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, int large)
{
    if (host_only)
        return all ? strata_host_mpi_allreduce(s, r, n, type, op, comm, large)
                   : strata_host_mpi_reduce(s, r, n, type, op, root, comm, large);
    return all ? strata_serve_allreduce(s, r, n, type, op, comm, large, NULL)
               : strata_serve_reduce(s, r, n, type, op, root, comm, large, NULL);
}

/* Whether the whole-call agreement (collectives.h) was taken before
 * reduce_staged, and what it said. */
enum asked { NOT_ASKED, AGREED, HOST_ONLY };

/* One reduction: sendbuf (MPI_IN_PLACE: recvbuf is both), recvbuf used on
 * this rank when has_recv.  Cut into pieces of whole elements when the call
 * is above one piece (same on every rank once the whole call is agreed:
 * same count and type everywhere). */
static int reduce_staged(int all, const void *sendbuf, void *recvbuf, long long count,
                         MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, int large,
                         enum asked asked, struct strata_build *build)
{
    int rank = 0, size = 0, has_recv = 1;
    if (!all) {
        PMPI_Comm_rank(comm, &rank);
        has_recv = rank == root;
    }
    int in_place = sendbuf == MPI_IN_PLACE;
    struct side snd, rcv;
    int bad = describe(&snd, in_place ? NULL : sendbuf, count, type);
    bad |= describe(&rcv, has_recv ? recvbuf : NULL, count, type);
    const char *name = all ? "MPI_Allreduce" : "MPI_Reduce";
    if (is_inter(comm)) {
        if (snd.device || rcv.device)
            return unstageable(comm, name, "device buffers on intercommunicators are not supported");
        return all ? strata_serve_allreduce(sendbuf, recvbuf, count, type, op, comm, large, build)
                   : strata_serve_reduce(sendbuf, recvbuf, count, type, op, root, comm, large,
                                         build);
    }
    if (build) {
        if (snd.device || rcv.device)
            return refuse_nonblocking(comm, all ? STRATA_COLL_ALLREDUCE : STRATA_COLL_REDUCE,
                                      build);
        return all ? strata_serve_allreduce(sendbuf, recvbuf, count, type, op, comm, large, build)
                   : strata_serve_reduce(sendbuf, recvbuf, count, type, op, root, comm, large,
                                         build);
    }
    MPI_Aint lb, extent = 0, true_lb = 0, true_extent = 0;
    long long per = count > 0 ? count : 1;
    if (count > 0 && type != MPI_DATATYPE_NULL && PMPI_Type_size(type, &size) == MPI_SUCCESS &&
        size > 0 && PMPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS &&
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent) == MPI_SUCCESS && extent > 0 &&
        true_extent <= extent && (size_t)count * (size_t)size > chunk_bytes()) {
        per = (long long)(chunk_bytes() / (size_t)size);
        if (per < 1) per = 1;
    }
    long long pieces = count > 0 ? (count + per - 1) / per : 1;
    /* Cut on this rank's count: agreed first (collectives.h), or a rank
     * whose count differs would wait for this one's second piece forever. */
    if (pieces > 1 && asked == NOT_ASKED) {
        int rc;
        switch (strata_serve_agree_whole(all ? STRATA_COLL_ALLREDUCE : STRATA_COLL_REDUCE, count,
                                         type, root, comm, &rc)) {
        case STRATA_WHOLE_REFUSED: return rc;
        case STRATA_WHOLE_TO_HOST: asked = HOST_ONLY; break;
        case STRATA_WHOLE_GO_ON: asked = AGREED; break;
        }
    }
    if (asked == HOST_ONLY) per = count, pieces = 1; /* the host's call is the whole call */
    int host_only = asked == HOST_ONLY;
    /* A receive buffer this rank does not use is not the host's to see. */
    if (!has_recv && strata_device_is_device(recvbuf)) recvbuf = NULL;
    if (!snd.device && !rcv.device && pieces == 1)
        return reduce_one(all, host_only, sendbuf, recvbuf, count, type, op, root, comm, large);
    if (bad) return unstageable(comm, name, "negative extent");
    struct strata_device_lane *lane = NULL;
    struct side *src = in_place ? &rcv : &snd;
    if (snd.device || rcv.device) {
        say_staging();
        lane = enter(comm, snd.device ? snd.user + snd.true_lb : rcv.user + rcv.true_lb);
        /* The receive side: copied in first when in place (it is the input,
         * piece by piece below) or when its holes must survive. */
        if (rcv.device) rcv.host = strata_device_pinned(lane, 1, rcv.span);
        if (rcv.device && !in_place && has_holes(&rcv)) {
            strata_device_to_host(lane, rcv.host, rcv.user + rcv.true_lb, rcv.span);
            strata_device_sync(lane);
        }
        if (snd.device) snd.host = strata_device_pinned(lane, 0, snd.span);
    }
    strata_verbose(2, "%s: %lld elements in %lld pieces, %s", name, count, pieces,
                   src->device || rcv.device ? "staged from device memory, reduced on the CPU"
                                             : "(device job: same cut as device ranks)");
    int rc = MPI_SUCCESS;
    long long issued = 0;
    for (long long i = 0; i < pieces && rc == MPI_SUCCESS; i++) {
        long long first = i * per, n = count - first < per ? count - first : per;
        size_t off = (size_t)first * (size_t)extent;
        size_t span = n ? (size_t)(n - 1) * (size_t)extent + (size_t)true_extent : 0;
        if (src->device) {
            for (; issued < pieces && issued < i + STRATA_DEVICE_EVENTS; issued++) {
                long long f = issued * per, m = count - f < per ? count - f : per;
                size_t o = (size_t)f * (size_t)extent;
                size_t sp = (size_t)(m - 1) * (size_t)extent + (size_t)true_extent;
                strata_device_to_host(lane, src->host + o, src->user + src->true_lb + o, sp);
                strata_device_mark(lane, (int)(issued % STRATA_DEVICE_EVENTS));
            }
            strata_device_wait(lane, (int)(i % STRATA_DEVICE_EVENTS));
        }
        const void *s = in_place ? MPI_IN_PLACE : (const char *)host_view(&snd) + off;
        void *r = has_recv ? (char *)host_view(&rcv) + off : recvbuf;
        rc = reduce_one(all, host_only, s, r, n, type, op, root, comm, large);
        if (rcv.device && rc == MPI_SUCCESS)
            strata_device_from_host(lane, rcv.user + rcv.true_lb + off, rcv.host + off, span);
    }
    if (lane) {
        strata_device_sync(lane);
        strata_device_leave(lane);
    }
    return rc;
}

STRATA_HOT int strata_call_reduce(const void *sendbuf, void *recvbuf, long long count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                  int large, struct strata_build *build)
{
    int null_rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_REDUCE, build, &null_rc)) return null_rc;
    if (!device_job(comm))
        return strata_serve_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, large, build);
    return reduce_staged(0, sendbuf, recvbuf, count, datatype, op, root, comm, large, NOT_ASKED,
                         build);
}

STRATA_HOT int strata_call_allreduce(const void *sendbuf, void *recvbuf, long long count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                                     struct strata_build *build)
{
    int null_rc;
    if (strata_null_type(datatype, comm, STRATA_COLL_ALLREDUCE, build, &null_rc)) return null_rc;
    if (!device_job(comm))
        return strata_serve_allreduce(sendbuf, recvbuf, count, datatype, op, comm, large, build);
    /* Above one piece, on an intracommunicator, blocking: the reduction on
     * the device through CUDA IPC when every rank qualifies (every rank
     * passes the same count, type and form, so all of them ask: the
     * whole-call agreement makes sure of it first, collectives.h). */
    int size, rc;
    long long bytes = count;
    if (!is_inter(comm) && !build && count > 0 &&
        datatype != MPI_DATATYPE_NULL && PMPI_Type_size(datatype, &size) == MPI_SUCCESS &&
        (bytes *= size) > (long long)chunk_bytes()) {
        switch (strata_serve_agree_whole(STRATA_COLL_ALLREDUCE, count, datatype, -1, comm, &rc)) {
        case STRATA_WHOLE_REFUSED: return rc;
        case STRATA_WHOLE_TO_HOST:
            return reduce_staged(1, sendbuf, recvbuf, count, datatype, op, -1, comm, large,
                                 HOST_ONLY, NULL);
        case STRATA_WHOLE_GO_ON: break;
        }
        if (strata_device_allreduce_ipc(sendbuf, recvbuf, count, datatype, op, comm,
                                        (size_t)bytes, &rc))
            return rc;
        return reduce_staged(1, sendbuf, recvbuf, count, datatype, op, -1, comm, large, AGREED,
                             NULL);
    }
    return reduce_staged(1, sendbuf, recvbuf, count, datatype, op, -1, comm, large, NOT_ASKED,
                         build);
}

/* ---- Gather, Scatter, Allgather, Alltoall: whole buffers staged ---- */

enum block_coll { GATHER, SCATTER, ALLGATHER, ALLTOALL };
static const char *const block_names[] = {"MPI_Gather", "MPI_Scatter", "MPI_Allgather",
                                          "MPI_Alltoall"};
static const enum strata_coll block_colls[] = {STRATA_COLL_GATHER, STRATA_COLL_SCATTER,
                                               STRATA_COLL_ALLGATHER, STRATA_COLL_ALLTOALL};

STRATA_HOT static int block_host(enum block_coll c, const void *sb, long long sc, MPI_Datatype st,
                                 void *rb, long long rc, MPI_Datatype rt, int root, MPI_Comm comm,
                                 int large, struct strata_build *build)
{
    switch (c) {
    case GATHER: return strata_serve_gather(sb, sc, st, rb, rc, rt, root, comm, large, build);
    case SCATTER: return strata_serve_scatter(sb, sc, st, rb, rc, rt, root, comm, large, build);
    case ALLGATHER: return strata_serve_allgather(sb, sc, st, rb, rc, rt, comm, large, build);
    default: return strata_serve_alltoall(sb, sc, st, rb, rc, rt, comm, large, build);
    }
}

/* The call in a job with devices (device_job): device buffers staged. */
static int block_staged(enum block_coll c, const void *sendbuf, long long scount,
                        MPI_Datatype stype, void *recvbuf, long long rcount, MPI_Datatype rtype,
                        int root, MPI_Comm comm, int large, struct strata_build *build)
{
    int rank = 0, size = 1, inter = is_inter(comm);
    PMPI_Comm_rank(comm, &rank);
    if (!inter) PMPI_Comm_size(comm, &size);
    /* Which sides this rank uses, and how many rank blocks each holds. */
    int send_used = 1, recv_used = 1;
    long long sblocks = 1, rblocks = 1;
    int in_place = sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE;
    switch (c) {
    case GATHER: recv_used = rank == root; rblocks = size; break;
    case SCATTER: send_used = rank == root; sblocks = size; break;
    case ALLGATHER: rblocks = size; break;
    case ALLTOALL: sblocks = rblocks = size; break;
    }
    struct side snd, rcv;
    int bad = describe(&snd, send_used && !inter ? sendbuf : NULL, scount * sblocks, stype);
    bad |= describe(&rcv, recv_used && !inter ? recvbuf : NULL, rcount * rblocks, rtype);
    if (inter) {
        /* Roles differ on intercommunicators; look at both buffers. */
        struct side a, b;
        describe(&a, sendbuf, scount, stype);
        describe(&b, recvbuf, rcount, rtype);
        if (a.device || b.device)
            return unstageable(comm, block_names[c], "device buffers on intercommunicators are "
                                                     "not supported");
    }
    if (!snd.device && !rcv.device) {
        /* An argument this rank does not use may still be device memory. */
        if (!send_used && strata_device_is_device(sendbuf)) sendbuf = NULL;
        if (!recv_used && strata_device_is_device(recvbuf)) recvbuf = NULL;
        return block_host(c, sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm, large,
                          build);
    }
    if (build) return refuse_nonblocking(comm, block_colls[c], build);
    if (bad) return unstageable(comm, block_names[c], "negative extent");
    say_staging();
    struct strata_device_lane *lane =
        enter(comm, snd.device ? snd.user + snd.true_lb : rcv.user + rcv.true_lb);
    stage_in(lane, &snd, 0, 1);
    /* In place, the receive buffer holds this rank's input too. */
    stage_in(lane, &rcv, 1, in_place);
    strata_device_sync(lane);
    strata_verbose(2, "%s: device buffers staged through host memory", block_names[c]);
    const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : send_used ? host_view(&snd) : NULL;
    void *rb = recvbuf == MPI_IN_PLACE ? MPI_IN_PLACE : recv_used ? host_view(&rcv) : NULL;
    if (!send_used && !strata_device_is_device(sendbuf)) sb = sendbuf;
    if (!recv_used && !strata_device_is_device(recvbuf)) rb = recvbuf;
    int rc = block_host(c, sb, scount, stype, rb, rcount, rtype, root, comm, large, NULL);
    if (rc == MPI_SUCCESS && recv_used && recvbuf != MPI_IN_PLACE) stage_out(lane, &rcv);
    strata_device_sync(lane);
    strata_device_leave(lane);
    return rc;
}

/* Without devices in the job (most jobs), straight to the host path: no
 * staging detour on a small call's entry. */
STRATA_HOT int strata_call_gather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                  int root, MPI_Comm comm, int large, struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   root, comm, large, build);
    return block_staged(GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, large, build);
}

STRATA_HOT int strata_call_scatter(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                   int root, MPI_Comm comm, int large, struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    root, comm, large, build);
    return block_staged(SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, large, build);
}

STRATA_HOT int strata_call_allgather(const void *sendbuf, long long sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, int large,
                                     struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, large, build);
    return block_staged(ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, -1,
                        comm, large, build);
}

STRATA_HOT int strata_call_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, int large, struct strata_build *build)
{
    if (!device_job(comm))
        return strata_serve_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm, large, build);
    return block_staged(ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, -1,
                        comm, large, build);
}
