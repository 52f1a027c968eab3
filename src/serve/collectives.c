/* The collective entry points strata defines in place of the host MPI's.
 * Each finds (or creates) the communicator's context, asks the router, and
 * either runs strata's algorithm or calls the PMPI_ function unchanged, so
 * the host MPI still checks arguments and reports errors as it always does.
 *
 * Every per-call check uses only what every rank passes identically: the
 * root, the op and datatype of a reduction (the standard requires them to
 * match), and the byte count of the type signature; never whether a rank's
 * own datatype happens to be contiguous. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <stdio.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/learn.h"
#include "coll/select.h"
#include "coll/ops.h"
#include "config/config.h"
#include "context/context.h"
#include "context/runtime.h"
#include "serve/check.h"
#include "serve/host_call.h"
#include "serve/collectives.h"
#include "request/nonblocking.h"
#include "route/reasons.h"
#include "route/reduce_op.h"
#include "route/route.h"
#include "route/run_view.h"
#include "net/net.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

/* Every function here takes the call's build (route/build.h): NULL for a
 * blocking call, which runs its algorithm at once; a nonblocking or
 * persistent call's, which takes the same decisions and records the
 * algorithm in the build instead of running it.  strata_build_call_id
 * names the call for STRATA_STATS and verbose output (MPI_Bcast,
 * MPI_Ibcast or MPI_Bcast_init). */

/* Whether this call is counted: a persistent operation counts its
 * MPI_<coll>_init once, not every start. */
STRATA_HOT static int counted(const struct strata_build *build)
{
    return strata_stats_enabled() && strata_build_counts(build);
}

/* The context if strata serves this collective on comm, else NULL (and the
 * hand-off is reported).  Every collective entry point progresses the
 * outstanding nonblocking operations; a blocking one completes those of its
 * communicator before it starts (they come first in MPI's order). */
STRATA_HOT static struct strata_ctx *served_ctx(MPI_Comm comm, enum strata_coll coll,
                                                struct strata_build *build)
{
    strata_runtime_start_late(comm);
    /* The checks inline: with nothing outstanding (nearly always) a call
     * costs a load, not two calls (issue 14).  A build does not queue this
     * thread's held-back persistent starts: it may be one of them, whose
     * batch must stay whole (its entry point queues them, strata_nb_end). */
    if (strata_nb_outstanding()) {
        if (build) strata_nb_progress_queued();
        else strata_nb_progress();
    }
    struct strata_ctx *ctx = strata_ctx_get(comm);
    const char *refusal = ctx ? strata_route_refusal(ctx, coll) : strata_reason_no_context(comm);
    if (!refusal) {
        if (counted(build)) strata_stats_call(strata_build_call_id(build, coll), 1);
        if (build) build->ctx = ctx;
        else if (strata_nb_outstanding()) strata_nb_drain(ctx);
        return ctx;
    }
    strata_route_to_host(ctx, strata_build_call_id(build, coll), refusal);
    if (counted(build)) {
        strata_stats_call(strata_build_call_id(build, coll), 0);
        strata_stats_host_reason(strata_build_call_id(build, coll), refusal);
    }
    return NULL;
}

/* A call on a served communicator that strata leaves after all. */
static struct strata_ctx *refuse(struct strata_ctx *ctx, enum strata_coll coll, const char *why,
                                 const struct strata_build *build)
{
    strata_route_to_host(ctx, strata_build_call_id(build, coll), why);
    if (counted(build)) {
        strata_stats_call(strata_build_call_id(build, coll), 0);
        strata_stats_call_unserve(strata_build_call_id(build, coll));
        strata_stats_host_reason(strata_build_call_id(build, coll), why);
    }
    return NULL;
}

/* The verdict on a call once this rank has read its own arguments: why
 * (NULL: nothing) this rank leaves it to the host MPI, and what it brings
 * (in, out: bytes per block it receives and sends, STRATA_SIG_UNUSED for a
 * side it does not use).  With STRATA_CHECK_ARGS on (the default) the
 * ranks' signatures meet first (check.h): a call that is not the same on
 * every rank is refused with an error where a receive differs (NULL is
 * returned and HOST_CALL returns that error), and a call some rank leaves
 * to the host goes there on every rank.  `bytes`: the most this rank
 * streams through the plane; `one_task`: the collective's node path for such
 * a call is one plane operation through the segment. */
STRATA_HOT static struct strata_ctx *settle_sig(struct strata_ctx *ctx,
                                                struct strata_sig_args *sig, size_t bytes,
                                                int one_task, const char *why,
                                                struct strata_build *build)
{
    enum strata_coll coll = (enum strata_coll)sig->coll;
    if (!strata_check_enabled()) return why ? refuse(ctx, coll, why, build) : ctx;
    char disagreement[240];
    sig->host = why != NULL;
    switch (strata_check_begin(ctx, strata_build_call_id(build, coll), sig, bytes, one_task,
                               disagreement, sizeof disagreement, build)) {
    case STRATA_CHECK_RUN:
        return ctx;
    case STRATA_CHECK_TO_HOST:
        return refuse(ctx, coll, why ? why : disagreement, build);
    case STRATA_CHECK_REFUSED:
        break;
    }
    return NULL; /* HOST_CALL returns the refusal's error */
}

STRATA_HOT static struct strata_ctx *settle(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                            long long in, long long out, size_t bytes,
                                            int one_task, const char *why,
                                            struct strata_build *build)
{
    struct strata_sig_args sig = {in, out, (int)coll, root, 0, STRATA_SIG_UNUSED,
                                  STRATA_SIG_UNUSED};
    return settle_sig(ctx, &sig, bytes, one_task, why, build);
}

/* What a one-rank communicator's collectives do (STRATA_STATS, verbose). */
static const char one_rank_copy[] = "one rank: local copy";
static const char one_rank_nothing[] = "one rank: nothing to move";

/* STRATA_STATS: one served call of coll, run by `algorithm`. */
STRATA_HOT static void count_algorithm(enum strata_coll coll, const char *algorithm,
                                       const struct strata_build *build)
{
    if (counted(build)) strata_stats_algorithm(strata_build_call_id(build, coll), algorithm);
}

/* Bytes of the type signature of count elements, or -1 if strata leaves the
 * arguments to the host MPI to judge. */
STRATA_HOT static long long signature_bytes(long long count, MPI_Datatype type)
{
    int size;
    if (count < 0 || type == MPI_DATATYPE_NULL) return -1;
    if (strata_type_size(type, &size) != MPI_SUCCESS || size < 0) return -1;
    if (size > 0 && count > LLONG_MAX / size) return -1;
    return count * size;
}

/* signature_bytes for a reduction's signature, read only with
 * STRATA_CHECK_ARGS on: a reduction needs it for nothing else, and
 * MPI_Type_size is a fair share of a small call's cost (issue 14). */
STRATA_HOT static long long checked_bytes(long long count, MPI_Datatype type)
{
    return strata_check_enabled() ? signature_bytes(count, type) : -1;
}

/* A call strata leaves (serve/host_call.h), by the host's nonblocking
 * form of each collective named here. */
#define HOST_CALL(build, large, name, ...) STRATA_HOST_CALL_NAMED(build, large, name, __VA_ARGS__)
#define HOST_NB_Bcast PMPI_Ibcast
#define HOST_NB_Reduce PMPI_Ireduce
#define HOST_NB_Allreduce PMPI_Iallreduce
#define HOST_NB_Gather PMPI_Igather
#define HOST_NB_Scatter PMPI_Iscatter
#define HOST_NB_Allgather PMPI_Iallgather
#define HOST_NB_Alltoall PMPI_Ialltoall

/* What STRATA_STATS and the verbose report call a choice: its algorithm,
 * or the host MPI's collective that selection ran instead. */
static const char *choice_name(const struct strata_choice *ch)
{
    switch (ch->host) {
    case STRATA_CHOICE_HOST_TIMED: return STRATA_STATS_HOST_SAMPLE;
    case STRATA_CHOICE_HOST_CHOSEN: return STRATA_STATS_HOST_CHOSEN;
    case STRATA_CHOICE_STRATA: break;
    }
    return ch->al->name;
}

/* Picks the algorithm for a call and reports it at STRATA_VERBOSE=2.
 * Returns 0, or 1 when the ranks disagree on the call after all (an
 * algorithm exposing user buffers waits for their agreement first:
 * check.h), with the error to return in *rc. */
STRATA_HOT static int choose(struct strata_ctx *ctx, enum strata_coll coll, size_t block,
                             struct strata_choice *ch, int *rc, struct strata_build *build)
{
    /* A persistent operation decides once, at its first start. */
    if (build && build->have_choice) {
        *ch = build->choice;
        return 0;
    }
    /* A blocking call may correct the model by measurement (coll/learn.h). */
    if (build) strata_select(ctx->plane, coll, block, ch);
    else strata_select_blocking(ctx->plane, coll, block, ctx->comm, ch);
    int single_copy = strata_algo_single_copy(ch->al, ctx->plane, block);
    if (strata_check_algorithm(ctx, strata_build_call_id(build, coll), single_copy, rc, build) ==
        STRATA_CHECK_REFUSED)
        return 1;
    if (build) {
        build->choice = *ch;
        build->have_choice = 1;
    }
    count_algorithm(coll, choice_name(ch), build);
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 2) return 0; /* formatting costs more than a tiny call */
    char k[32] = "", why[96];
    if (ch->al->k_meaning) snprintf(k, sizeof k, ", k=%d", ch->k);
    if (ch->rule) snprintf(why, sizeof why, "%s%d", ch->why, ch->rule);
    else if (ch->predicted_us >= 0) snprintf(why, sizeof why, "%s, %.1f us predicted", ch->why, ch->predicted_us);
    else snprintf(why, sizeof why, "%s", ch->why);
    /* The plane's transport, and whether the model priced the call as copies
     * through mappings (strata_select: agreed heap threshold). */
    const struct strata_transport *t = ctx->plane->xport;
    size_t mapped_min = strata_select_mapped();
    int mapped = mapped_min && block >= mapped_min && (t->features & STRATA_XPORT_MAP_PEER);
    char desc[320];
    snprintf(desc, sizeof desc, "%s%s (%s), transport %s%s",
             choice_name(ch), k, why, t->name,
             mapped ? ", priced as copies through mappings" : "");
    strata_route_served(ctx, strata_build_call_id(build, coll), desc, block);
    return 0;
}

/* Runs the chosen algorithm. */
STRATA_HOT static int run_choice(struct strata_ctx *ctx, const struct strata_choice *ch,
                                 const unsigned char *send, unsigned char *recv, size_t block,
                                 int root)
{
    struct strata_block_args a = {send, recv, block, root, ch->k, NULL};
    return strata_learn_run(ctx->plane, ch, &a);
}

/* The same, recorded in the build. */
static int defer_choice(struct strata_ctx *ctx, struct strata_build *build,
                        const struct strata_choice *ch, const unsigned char *send,
                        unsigned char *recv, size_t block, int root)
{
    build->kind = STRATA_BUILD_NODE_BLOCK;
    build->block_start = strata_block_starter(ch->al->id);
    build->ba = (struct strata_block_args){send, recv, block, root, ch->k, NULL};
    build->bytes = block;
    return MPI_SUCCESS;
}

/* Verbose output of a composition across nodes: the description is
 * formatted only when it will be printed. */
static char *net_desc(char *buf)
{
    const struct strata_config *cfg = strata_config();
    return cfg && cfg->verbose >= 2 ? buf : NULL;
}

/* A call across nodes, before its composition runs: counted, and the
 * buffer for the verbose description handed out (NULL when nothing will be
 * printed).  across_done reports it once the composition has filled it. */
static char *across_start(enum strata_coll coll, char *desc, const struct strata_build *build)
{
    count_algorithm(coll, STRATA_STATS_ACROSS_NODES, build);
    return net_desc(desc);
}

static int across_done(struct strata_ctx *ctx, enum strata_coll coll, size_t bytes,
                       const char *desc, int rc, const struct strata_build *build)
{
    if (desc) strata_route_served(ctx, strata_build_call_id(build, coll), desc, bytes);
    return rc;
}

/* A broadcast's `bytes` in one run at data: across nodes, or on the node's
 * plane with the algorithm chosen for them.  The only place a broadcast
 * decides between the two. */
STRATA_HOT static int bcast_run(struct strata_ctx *ctx, void *data, size_t bytes, int root,
                                struct strata_build *build)
{
    if (ctx->net && build) {
        build->has_desc = across_start(STRATA_COLL_BCAST, build->desc, build) != NULL;
        build->kind = STRATA_BUILD_NET_BCAST;
        build->data = data;
        build->bytes = bytes;
        build->root = root;
        return MPI_SUCCESS;
    }
    if (ctx->net) {
        char buf[320], *desc = across_start(STRATA_COLL_BCAST, buf, build);
        int rc = strata_net_bcast(ctx->net, data, bytes, root, desc, sizeof buf);
        return across_done(ctx, STRATA_COLL_BCAST, bytes, desc, rc, build);
    }
    struct strata_choice ch;
    int rc;
    if (choose(ctx, STRATA_COLL_BCAST, bytes, &ch, &rc, build)) return rc;
    if (build) return defer_choice(ctx, build, &ch, data, data, bytes, root);
    return run_choice(ctx, &ch, data, data, bytes, root);
}

static int bcast_served(struct strata_ctx *ctx, void *buffer, long long count,
                        MPI_Datatype datatype, int root, MPI_Comm comm, long long bytes,
                        struct strata_build *build);

STRATA_HOT int strata_serve_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                                  MPI_Comm comm, int large, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_BCAST, build);
    long long bytes = ctx ? signature_bytes(count, datatype) : -1;
    if (ctx)
        ctx = settle(ctx, STRATA_COLL_BCAST, root, ctx->rank == root ? STRATA_SIG_UNUSED : bytes,
                     ctx->rank == root ? bytes : STRATA_SIG_UNUSED, bytes < 0 ? 0 : (size_t)bytes,
                     1,
                     bytes < 0 || root < 0 || root >= ctx->size ||
                             strata_route_bad_data(buffer, count, datatype)
                         ? strata_reason_bad_args(1, root, ctx->size, STRATA_SIDE_RECV, NULL, 0,
                                                  MPI_DATATYPE_NULL, buffer, count, datatype, -1)
                         : NULL,
                     build);
    if (!ctx) return HOST_CALL(build, large, Bcast, buffer, count, datatype, root, comm);
    return strata_check_end(ctx, strata_build_call_id(build, STRATA_COLL_BCAST),
                            bcast_served(ctx, buffer, count, datatype, root, comm, bytes, build),
                            build);
}

/* A broadcast strata serves, once settled. */
STRATA_HOT static int bcast_served(struct strata_ctx *ctx, void *buffer, long long count,
                                   MPI_Datatype datatype, int root, MPI_Comm comm, long long bytes,
                                   struct strata_build *build)
{
    if (bytes == 0 || ctx->size == 1) {
        const char *what = bytes == 0 ? "nothing to move" : one_rank_nothing;
        count_algorithm(STRATA_COLL_BCAST, what, build);
        strata_route_served(ctx, strata_build_call_id(build, STRATA_COLL_BCAST), what,
                            (size_t)bytes);
        return MPI_SUCCESS;
    }
    void *run = strata_contiguous_run(buffer, count, datatype, (size_t)bytes);
    if (run) return bcast_run(ctx, run, (size_t)bytes, root, build);
    if (build) {
        /* Packed at the root now, unpacked elsewhere when it completes. */
        strata_view_open(&build->view[0], comm, buffer, count, datatype, (size_t)bytes,
                         ctx->rank == root, ctx->rank != root, 1);
        return bcast_run(ctx, build->view[0].run, (size_t)bytes, root, build);
    }
    /* A layout with holes is packed on this rank alone: the others never
     * need to know, since only the byte count decides the path. */
    void *packed = malloc((size_t)bytes);
    if (!packed) {
        strata_error("out of memory packing a %lld-byte broadcast", bytes);
        PMPI_Abort(comm, 1);
    }
    if (ctx->rank == root) strata_pack_user(buffer, count, datatype, packed, comm, 0);
    int rc = bcast_run(ctx, packed, (size_t)bytes, root, build);
    if (ctx->rank != root) strata_pack_user(buffer, count, datatype, packed, comm, 1);
    free(packed);
    return rc;
}

/* Fills a reduction's arguments, or returns why strata leaves the call. */
STRATA_HOT static const char *reduce_args(const struct strata_ctx *ctx,
                                          struct strata_reduce_args *a, struct strata_reduce_how *r,
                                          char *why, size_t whylen, const void *sendbuf,
                                          void *recvbuf, long long count, MPI_Datatype type,
                                          MPI_Op op, int recv_used)
{
    if (op == MPI_OP_NULL) return "op is MPI_OP_NULL";
    if (count < 0 || type == MPI_DATATYPE_NULL)
        return strata_reason_bad_args(0, 0, 0, STRATA_SIDE_SEND, sendbuf, count, type, NULL, 0,
                                      MPI_DATATYPE_NULL, -1);
    const char *no_op = strata_reduce_op_choose(ctx, op, type, count, a, r, why, whylen);
    if (no_op) return no_op;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    /* A predefined type: address 0 is no buffer.  In place is for the
     * receiving side only, and the two buffers may not overlap: with the
     * same type on both sides, overlapping spans share data. */
    uintptr_t from = (uintptr_t)sendbuf, to = (uintptr_t)recvbuf;
    size_t span = count ? (size_t)(count - 1) * (size_t)extent + (size_t)true_extent : 0;
    if (recv_used && recvbuf == MPI_IN_PLACE) return "recvbuf is MPI_IN_PLACE (it is for sendbuf)";
    if (recv_used && count && recvbuf == MPI_BOTTOM) return "recvbuf is address 0 (MPI_BOTTOM)";
    if (recv_used && sendbuf != MPI_IN_PLACE && (from > to ? from - to : to - from) < span)
        return "sendbuf and recvbuf overlap";
    if (!recv_used && sendbuf == MPI_IN_PLACE)
        return "sendbuf is MPI_IN_PLACE on a rank other than the root";
    if (count && sendbuf == MPI_BOTTOM) return "sendbuf is address 0 (MPI_BOTTOM)";
    a->sendbuf = sendbuf == MPI_IN_PLACE ? NULL : sendbuf;
    a->recvbuf = recvbuf;
    a->count = (size_t)count;
    a->extent = (size_t)extent;
    a->true_extent = (size_t)true_extent;
    return NULL;
}

/* A Reduce or Allreduce (coll) across nodes, or on the node's plane: the only
 * place a reduction decides between the two. */
STRATA_HOT static int reduce_run(struct strata_ctx *ctx, enum strata_coll coll,
                                 const struct strata_reduce_args *a, struct strata_build *build)
{
    size_t bytes = a->count * a->extent;
    if (ctx->size == 1) {
        /* The result is the operand: copied unless in place.  (A datatype
         * with holes was staged: the copy back writes only its data.) */
        const char *what = a->sendbuf && a->count ? one_rank_copy : one_rank_nothing;
        if (a->sendbuf && a->count)
            memcpy(a->recvbuf, a->sendbuf, (a->count - 1) * a->extent + a->true_extent);
        count_algorithm(coll, what, build);
        strata_route_served(ctx, strata_build_call_id(build, coll), what, bytes);
        return MPI_SUCCESS;
    }
    if (build) {
        build->ra = *a;
        build->bytes = bytes;
        if (ctx->net) {
            build->has_desc = across_start(coll, build->desc, build) != NULL;
            build->kind = STRATA_BUILD_NET_REDUCE;
            return MPI_SUCCESS;
        }
        const char *path = strata_route_path(ctx->plane, bytes);
        count_algorithm(coll, path, build);
        strata_route_served(ctx, strata_build_call_id(build, coll), path, bytes);
        build->kind = STRATA_BUILD_NODE_REDUCE;
        return MPI_SUCCESS;
    }
    if (ctx->net) {
        char buf[320], *desc = across_start(coll, buf, build);
        int rc = coll == STRATA_COLL_REDUCE
                     ? strata_net_reduce(ctx->net, a, desc, sizeof buf)
                     : strata_net_allreduce(ctx->net, a, desc, sizeof buf);
        return across_done(ctx, coll, bytes, desc, rc, build);
    }
    const char *path = strata_route_path(ctx->plane, bytes);
    count_algorithm(coll, path, build);
    strata_route_served(ctx, strata_build_call_id(build, coll), path, bytes);
    return strata_reduce(ctx->plane, a);
}

STRATA_HOT int strata_serve_reduce(const void *sendbuf, void *recvbuf, long long count,
                                   MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                   int large, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_REDUCE, build);
    struct strata_reduce_args a;
    /* An operation's outlives the call. */
    struct strata_reduce_how mine, *r = build ? &build->how : &mine;
    char reason[400];
    if (ctx) {
        const char *why = root < 0 || root >= ctx->size
                              ? strata_reason_bad_args(1, root, ctx->size, 0, NULL, 0,
                                                       MPI_DATATYPE_NULL, NULL, 0,
                                                       MPI_DATATYPE_NULL, -1)
                              : reduce_args(ctx, &a, r, reason, sizeof reason, sendbuf, recvbuf,
                                            count, datatype, op, ctx->rank == root);
        long long b = checked_bytes(count, datatype);
        ctx = settle(ctx, STRATA_COLL_REDUCE, root, ctx->rank == root ? b : STRATA_SIG_UNUSED, b,
                     why ? 0 : a.count * a.extent, 1, why, build);
    }
    if (!ctx)
        return HOST_CALL(build, large, Reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
    a.root = root;
    strata_reduce_op_begin(&a, r, ctx->rank == root);
    int rc = strata_check_end(ctx, strata_build_call_id(build, STRATA_COLL_REDUCE),
                              reduce_run(ctx, STRATA_COLL_REDUCE, &a, build), build);
    if (build) build->has_how = 1; /* ended when the operation completes */
    else strata_reduce_op_end(r);
    return rc;
}

STRATA_HOT int strata_serve_allreduce(const void *sendbuf, void *recvbuf, long long count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large,
                                      struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_ALLREDUCE, build);
    struct strata_reduce_args a;
    /* An operation's outlives the call. */
    struct strata_reduce_how mine, *r = build ? &build->how : &mine;
    char reason[400];
    if (ctx) {
        const char *why = reduce_args(ctx, &a, r, reason, sizeof reason, sendbuf, recvbuf, count,
                                      datatype, op, 1);
        long long b = checked_bytes(count, datatype);
        ctx = settle(ctx, STRATA_COLL_ALLREDUCE, -1, b, b, why ? 0 : a.count * a.extent, 1, why,
                     build);
    }
    if (!ctx)
        return HOST_CALL(build, large, Allreduce, sendbuf, recvbuf, count, datatype, op, comm);
    a.root = -1;
    strata_reduce_op_begin(&a, r, 1);
    int rc = strata_check_end(ctx, strata_build_call_id(build, STRATA_COLL_ALLREDUCE),
                              reduce_run(ctx, STRATA_COLL_ALLREDUCE, &a, build), build);
    if (build) build->has_how = 1; /* ended when the operation completes */
    else strata_reduce_op_end(r);
    return rc;
}

/* ---- The device layer's whole-call agreement (collectives.h) ---- */

enum strata_whole strata_serve_agree_whole(enum strata_coll coll, long long count,
                                           MPI_Datatype datatype, int root, MPI_Comm comm, int *rc)
{
    if (!strata_check_enabled()) return STRATA_WHOLE_GO_ON;
    int call = strata_build_call_id(NULL, coll); /* blocking: a build takes no pieces */
    /* What served_ctx does before a call, without counting one: the pieces
     * that follow count themselves. */
    strata_runtime_start_late(comm);
    if (strata_nb_outstanding()) strata_nb_progress();
    struct strata_ctx *ctx = strata_ctx_get(comm);
    /* Not served here: every rank's calls go to the host MPI, which meets
     * them as they come, so there is no agreement to take part in. */
    if (!ctx || strata_route_refusal(ctx, coll)) return STRATA_WHOLE_GO_ON;
    if (strata_nb_outstanding()) strata_nb_drain(ctx); /* they come first on the plane */
    long long b = signature_bytes(count, datatype);
    if (b < 0) return STRATA_WHOLE_GO_ON; /* the caller never asks then: it read the size */
    /* The signature the entry point's settle gives the whole call. */
    int me_root = ctx->rank == root;
    struct strata_sig_args sig = {b, b, (int)coll, root, 0, STRATA_SIG_UNUSED, STRATA_SIG_UNUSED};
    if (coll == STRATA_COLL_BCAST) {
        sig.in = me_root ? STRATA_SIG_UNUSED : b;
        sig.out = me_root ? b : STRATA_SIG_UNUSED;
    } else if (coll == STRATA_COLL_REDUCE) {
        sig.in = me_root ? b : STRATA_SIG_UNUSED;
    } else {
        sig.root = -1;
    }
    char why[240];
    /* one_operation 0: always the full class, which waits for every rank's
     * signature; a small one would run at once and learn nothing. */
    switch (strata_check_begin(ctx, call, &sig, (size_t)b, 0, why, sizeof why, NULL)) {
    case STRATA_CHECK_RUN:
        /* Agreed: closed having taken no plane operation, on every rank
         * alike (each of them asked, its count being the same). */
        strata_check_end(ctx, call, MPI_SUCCESS, NULL);
        return STRATA_WHOLE_GO_ON;
    case STRATA_CHECK_REFUSED:
        if (counted(NULL)) strata_stats_call(call, 1); /* as a refused call of its own */
        *rc = strata_check_take_refused();
        return STRATA_WHOLE_REFUSED;
    case STRATA_CHECK_TO_HOST:
        break;
    }
    strata_route_to_host(ctx, call, why);
    if (counted(NULL)) {
        strata_stats_call(call, 0);
        strata_stats_host_reason(call, why);
    }
    return STRATA_WHOLE_TO_HOST;
}

int strata_host_mpi_bcast(void *buffer, long long count, MPI_Datatype datatype, int root,
                          MPI_Comm comm, int large)
{
    return HOST_CALL(NULL, large, Bcast, buffer, count, datatype, root, comm);
}

int strata_host_mpi_reduce(const void *sendbuf, void *recvbuf, long long count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, int large)
{
    return HOST_CALL(NULL, large, Reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

int strata_host_mpi_allreduce(const void *sendbuf, void *recvbuf, long long count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, int large)
{
    return HOST_CALL(NULL, large, Allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}

int strata_call_barrier(MPI_Comm comm, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_BARRIER, build);
    if (ctx)
        ctx = settle(ctx, STRATA_COLL_BARRIER, -1, STRATA_SIG_UNUSED, STRATA_SIG_UNUSED, 0, 1, NULL,
                     build);
    if (!ctx)
        return STRATA_HOST_CALL(build, 0, PMPI_Barrier(comm),
                                PMPI_Ibarrier(comm, strata_nb_host_request()));
    int call = strata_build_call_id(build, STRATA_COLL_BARRIER);
    if (ctx->size == 1) {
        count_algorithm(STRATA_COLL_BARRIER, "one rank: nothing to wait for", build);
        strata_route_served(ctx, call, "one rank: nothing to wait for", 0);
        return MPI_SUCCESS;
    }
    if (ctx->net) {
        char buf[320], *desc = across_start(STRATA_COLL_BARRIER, build ? build->desc : buf, build);
        if (desc)
            snprintf(desc, sizeof buf, "across nodes: node barrier, dissemination among %d "
                     "leaders, node barrier", ctx->net->nnodes);
        if (build) {
            build->has_desc = desc != NULL;
            build->kind = STRATA_BUILD_NET_BARRIER;
            return MPI_SUCCESS;
        }
        return across_done(ctx, STRATA_COLL_BARRIER, 0, desc, strata_net_barrier(ctx->net), build);
    }
    count_algorithm(STRATA_COLL_BARRIER, "flag waves", build);
    strata_route_served(ctx, call, "flag waves", 0);
    if (build) {
        build->kind = STRATA_BUILD_NODE_BARRIER;
        return MPI_SUCCESS;
    }
    return strata_check_end(ctx, call, strata_barrier(ctx->plane), build);
}


/* ---- Gather, Scatter, Allgather, Alltoall ---- */


/* One block collective call, after its arguments were read. */
struct block_call {
    enum strata_coll coll;
    const void *sendbuf; /* MPI_IN_PLACE handled by the caller (NULL here) */
    long long scount;    /* elements of stype in the send view */
    MPI_Datatype stype;
    void *recvbuf;       /* NULL: none on this rank (or in place) */
    long long rcount;
    MPI_Datatype rtype;
    int pack_recv_in;    /* the receive buffer holds input too (in place) */
    long long block;     /* bytes per rank, from the signature */
    int root;
};

STRATA_HOT static int run_block(struct strata_ctx *ctx, const struct block_call *c,
                                struct strata_build *build)
{
    int size = ctx->size;
    if (c->block == 0) {
        count_algorithm(c->coll, "nothing to move", build);
        strata_route_served(ctx, strata_build_call_id(build, c->coll), "nothing to move", 0);
        return MPI_SUCCESS;
    }
    struct strata_choice ch;
    struct strata_run_view own[2] = {{0}, {0}};
    /* An operation's views stay open until it completes. */
    struct strata_run_view *views = build ? build->view : own, *sv_ = &views[0], *rv_ = &views[1];
#define sv (*sv_)
#define rv (*rv_)
    size_t b = (size_t)c->block;
    if (size == 1 && !(c->sendbuf && c->recvbuf)) {
        /* In place: the data already is where it belongs. */
        count_algorithm(c->coll, one_rank_nothing, build);
        strata_route_served(ctx, strata_build_call_id(build, c->coll), one_rank_nothing, b);
        return MPI_SUCCESS;
    }
    /* Views: the send side is packed in, the receive side unpacked out. */
    if (c->sendbuf) {
        size_t sbytes = c->coll == STRATA_COLL_SCATTER || c->coll == STRATA_COLL_ALLTOALL
                     ? (size_t)size * b : b;
        strata_view_open(&sv, ctx->comm, c->sendbuf, c->scount, c->stype, sbytes, 1, 0, 0);
    }
    if (c->recvbuf) {
        size_t rbytes = c->coll == STRATA_COLL_SCATTER ? b : (size_t)size * b;
        strata_view_open(&rv, ctx->comm, c->recvbuf, c->rcount, c->rtype, rbytes,
                         c->pack_recv_in, 1, build != NULL);
    }
    int rc;
    if (size == 1) {
        /* Views in memory order on both sides: one copy of the block. */
        memcpy(rv.run, sv.run, b);
        count_algorithm(c->coll, one_rank_copy, build);
        strata_route_served(ctx, strata_build_call_id(build, c->coll), one_rank_copy, b);
        rc = MPI_SUCCESS;
    } else if (build && ctx->net) {
        build->has_desc = across_start(c->coll, build->desc, build) != NULL;
        build->kind = STRATA_BUILD_NET_BLOCK;
        build->coll = c->coll;
        build->ba = (struct strata_block_args){sv.run, rv.run, b, c->root, 1, NULL};
        build->bytes = b;
        return MPI_SUCCESS;
    } else if (build) {
        if (choose(ctx, c->coll, b, &ch, &rc, build)) return rc;
        return defer_choice(ctx, build, &ch, sv.run, rv.run, b, c->root);
    } else if (ctx->net) {
        char buf[320], *desc = across_start(c->coll, buf, build);
        struct strata_block_args a = {sv.run, rv.run, b, c->root, 1, NULL};
        rc = across_done(ctx, c->coll, b, desc,
                         strata_net_block(ctx->net, c->coll, &a, desc, sizeof buf), build);
    } else if (!choose(ctx, c->coll, b, &ch, &rc, build)) {
        rc = run_choice(ctx, &ch, sv.run, rv.run, b, c->root);
    }
    if (build) return rc; /* one rank: the views close when the operation completes */
    strata_run_view_close(&sv, ctx->comm);
    strata_run_view_close(&rv, ctx->comm);
    return rc;
#undef sv
#undef rv
}

/* Whether this rank's buffers of a block collective are for the host MPI to
 * judge: each side the call uses here (send_blocks, recv_blocks: how many
 * rank blocks it holds, 0 if unused) must be valid data, and the two sides
 * must not share memory.  Sets *sig to what the sides carry per block (in:
 * received, out: sent; STRATA_SIG_UNUSED for a side not used here).  The
 * standard makes each side's signature one block: a side that differs from
 * `block` is the agreement's to report (check.h), or, with it off, the
 * host MPI's. */
STRATA_HOT static int block_args_bad(long long block, const void *sendbuf, long long scount,
                                     MPI_Datatype stype, int send_blocks, const void *recvbuf,
                                     long long rcount, MPI_Datatype rtype, int recv_blocks,
                                     struct strata_sig_args *sig)
{
    struct strata_data_arg send, recv;
    int checked = strata_check_enabled();
    sig->in = sig->out = STRATA_SIG_UNUSED;
    if (send_blocks) {
        strata_route_data_arg(sendbuf, scount, send_blocks, stype, &send);
        if (send.bad || (!checked && send.bytes != block)) return 1;
        sig->out = send.bytes;
    }
    if (recv_blocks) {
        strata_route_data_arg(recvbuf, rcount, recv_blocks, rtype, &recv);
        if (recv.bad || (!checked && recv.bytes != block)) return 1;
        sig->in = recv.bytes;
    }
    return send_blocks && recv_blocks && strata_route_overlap(&send, &recv);
}

/* settle for a block collective: the bytes it streams, at most one block
 * per rank. */
STRATA_HOT static struct strata_ctx *settle_block(struct strata_ctx *ctx, const struct block_call *c,
                                                  const struct strata_sig_args *sig,
                                                  const char *why, struct strata_build *build)
{
    size_t stream = c->block > 0 ? (size_t)c->block * (size_t)ctx->size : 0;
    return settle(ctx, c->coll, c->root, sig->in, sig->out, stream, 1, why, build);
}

STRATA_HOT int strata_serve_gather(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                   int root, MPI_Comm comm, int large, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_GATHER, build);
    struct block_call c = {STRATA_COLL_GATHER, NULL, 0, sendtype, NULL, 0, recvtype, 0, -1, root};
    if (ctx) {
        int at_root = ctx->rank == root, in_place = at_root && sendbuf == MPI_IN_PLACE;
        c.block = at_root ? signature_bytes(recvcount, recvtype) : signature_bytes(sendcount, sendtype);
        struct strata_sig_args sig = {.in = STRATA_SIG_UNUSED, .out = STRATA_SIG_UNUSED};
        int bad = root < 0 || root >= ctx->size || c.block < 0 ||
                  (!at_root && sendbuf == MPI_IN_PLACE) ||
                  block_args_bad(c.block, sendbuf, sendcount, sendtype, !in_place, recvbuf,
                                 recvcount, recvtype, at_root ? ctx->size : 0, &sig);
        ctx = settle_block(ctx, &c, &sig,
                     bad ? strata_reason_bad_args(1, root, ctx->size,
                                                  (in_place ? 0 : STRATA_SIDE_SEND) |
                                                      (at_root ? STRATA_SIDE_RECV : 0),
                                                  sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                  recvtype, c.block)
                         : NULL,
                     build);
        c.sendbuf = in_place ? NULL : sendbuf;
        c.scount = sendcount;
        if (at_root) {
            c.recvbuf = recvbuf;
            c.rcount = (long long)recvcount * (ctx ? ctx->size : 0);
            c.pack_recv_in = in_place;
        }
    }
    if (!ctx)
        return HOST_CALL(build, large, Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root, comm);
    return strata_check_end(ctx, strata_build_call_id(build, c.coll), run_block(ctx, &c, build),
                            build);
}

STRATA_HOT int strata_serve_scatter(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                    int root, MPI_Comm comm, int large, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_SCATTER, build);
    struct block_call c = {STRATA_COLL_SCATTER, NULL, 0, sendtype, NULL, 0, recvtype, 0, -1, root};
    if (ctx) {
        int at_root = ctx->rank == root, in_place = at_root && recvbuf == MPI_IN_PLACE;
        c.block = at_root ? signature_bytes(sendcount, sendtype) : signature_bytes(recvcount, recvtype);
        struct strata_sig_args sig = {.in = STRATA_SIG_UNUSED, .out = STRATA_SIG_UNUSED};
        int bad = root < 0 || root >= ctx->size || c.block < 0 ||
                  (!at_root && recvbuf == MPI_IN_PLACE) ||
                  block_args_bad(c.block, sendbuf, sendcount, sendtype, at_root ? ctx->size : 0,
                                 recvbuf, recvcount, recvtype, !in_place, &sig);
        ctx = settle_block(ctx, &c, &sig,
                     bad ? strata_reason_bad_args(1, root, ctx->size,
                                                  (at_root ? STRATA_SIDE_SEND : 0) |
                                                      (in_place ? 0 : STRATA_SIDE_RECV),
                                                  sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                  recvtype, c.block)
                         : NULL,
                     build);
        if (at_root) {
            c.sendbuf = sendbuf;
            c.scount = (long long)sendcount * (ctx ? ctx->size : 0);
        }
        c.recvbuf = in_place ? NULL : recvbuf;
        c.rcount = recvcount;
    }
    if (!ctx)
        return HOST_CALL(build, large, Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root, comm);
    return strata_check_end(ctx, strata_build_call_id(build, c.coll), run_block(ctx, &c, build),
                            build);
}

STRATA_HOT int strata_serve_allgather(const void *sendbuf, long long sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm, int large,
                                      struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_ALLGATHER, build);
    struct block_call c = {STRATA_COLL_ALLGATHER, NULL, 0, sendtype, NULL, 0, recvtype, 0, -1, -1};
    if (ctx) {
        int in_place = sendbuf == MPI_IN_PLACE;
        c.block = signature_bytes(recvcount, recvtype);
        struct strata_sig_args sig = {.in = STRATA_SIG_UNUSED, .out = STRATA_SIG_UNUSED};
        int bad = c.block < 0 || block_args_bad(c.block, sendbuf, sendcount, sendtype, !in_place,
                                                recvbuf, recvcount, recvtype, ctx->size, &sig);
        if (in_place) sig.out = sig.in; /* its block goes out of the receive buffer */
        ctx = settle_block(ctx, &c, &sig,
                     bad ? strata_reason_bad_args(0, 0, 0,
                                                  (in_place ? 0 : STRATA_SIDE_SEND) | STRATA_SIDE_RECV,
                                                  sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                  recvtype, c.block)
                         : NULL,
                     build);
        c.sendbuf = in_place ? NULL : sendbuf;
        c.scount = sendcount;
        c.recvbuf = recvbuf;
        c.rcount = (long long)recvcount * (ctx ? ctx->size : 0);
        c.pack_recv_in = in_place;
    }
    if (!ctx)
        return HOST_CALL(build, large, Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
    return strata_check_end(ctx, strata_build_call_id(build, c.coll), run_block(ctx, &c, build),
                            build);
}

STRATA_HOT int strata_serve_alltoall(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, long long recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, int large, struct strata_build *build)
{
    struct strata_ctx *ctx = served_ctx(comm, STRATA_COLL_ALLTOALL, build);
    struct block_call c = {STRATA_COLL_ALLTOALL, NULL, 0, sendtype, NULL, 0, recvtype, 0, -1, -1};
    if (ctx) {
        int in_place = sendbuf == MPI_IN_PLACE;
        c.block = signature_bytes(recvcount, recvtype);
        struct strata_sig_args sig = {.in = STRATA_SIG_UNUSED, .out = STRATA_SIG_UNUSED};
        int bad = c.block < 0 || block_args_bad(c.block, sendbuf, sendcount, sendtype,
                                                in_place ? 0 : ctx->size, recvbuf, recvcount,
                                                recvtype, ctx->size, &sig);
        if (in_place) sig.out = sig.in; /* its blocks go out of the receive buffer */
        ctx = settle_block(ctx, &c, &sig,
                     bad ? strata_reason_bad_args(0, 0, 0,
                                                  (in_place ? 0 : STRATA_SIDE_SEND) | STRATA_SIDE_RECV,
                                                  sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                  recvtype, c.block)
                         : NULL,
                     build);
        c.sendbuf = in_place ? NULL : sendbuf;
        c.scount = (long long)sendcount * (ctx ? ctx->size : 0);
        c.recvbuf = recvbuf;
        c.rcount = (long long)recvcount * (ctx ? ctx->size : 0);
        c.pack_recv_in = in_place;
    }
    if (!ctx)
        return HOST_CALL(build, large, Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm);
    return strata_check_end(ctx, strata_build_call_id(build, c.coll), run_block(ctx, &c, build),
                            build);
}

/* ---- The entry points' shared steps, for the collectives written in files
 * of their own (entry.h). */

struct strata_ctx *strata_entry_served(MPI_Comm comm, enum strata_coll coll,
                                       struct strata_build *build)
{
    return served_ctx(comm, coll, build);
}

struct strata_ctx *strata_entry_settle(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                       long long bytes, const char *why,
                                       struct strata_build *build)
{
    return settle(ctx, coll, root, bytes, bytes, bytes > 0 ? (size_t)bytes : 0, 0, why, build);
}

struct strata_ctx *strata_entry_settle_v(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                         long long vsent, long long vrecvd, const char *why,
                                         struct strata_build *build)
{
    struct strata_sig_args sig = {STRATA_SIG_UNUSED, STRATA_SIG_UNUSED, (int)coll, root, 0,
                                  vsent, vrecvd};
    /* One operation, small (0 bytes): a blocking call runs at once and its
     * operation compares the pairs as it reads them (coll/agree.h, the
     * v-collectives under auto); a build agrees in full when it starts. */
    return settle_sig(ctx, &sig, 0, 1, why, build);
}

void strata_entry_count(enum strata_coll coll, const char *algorithm,
                        const struct strata_build *build)
{
    count_algorithm(coll, algorithm, build);
}

long long strata_entry_signature(long long count, MPI_Datatype type)
{
    return signature_bytes(count, type);
}

const char *strata_entry_reduce_args(const struct strata_ctx *ctx, struct strata_reduce_args *a,
                                     struct strata_reduce_how *r, char *why, size_t whylen,
                                     const void *sendbuf, void *recvbuf, long long count,
                                     MPI_Datatype type, MPI_Op op)
{
    return reduce_args(ctx, a, r, why, whylen, sendbuf, recvbuf, count, type, op, 1);
}

char *strata_entry_across_start(enum strata_coll coll, char *desc,
                                const struct strata_build *build)
{
    return across_start(coll, desc, build);
}

int strata_entry_across_done(struct strata_ctx *ctx, enum strata_coll coll, size_t bytes,
                             const char *desc, int rc, const struct strata_build *build)
{
    return across_done(ctx, coll, bytes, desc, rc, build);
}
