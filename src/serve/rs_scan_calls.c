/* The host-memory paths of MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Scan and MPI_Exscan (strata_serve_*: C, large-count and Fortran forms
 * all come here, through device_vcalls.c's staging; the C entry points are
 * generated in entry_points.c).
 *
 * The route depends only on what every rank passes alike: the op and the
 * datatype handle (the standard requires them to match), and Reduce_scatter's
 * counts (the same array on every rank), whose total gives the signature's
 * bytes that STRATA_CHECK_ARGS compares.  A rank's own buffers (in place,
 * address 0, overlap) can only make that rank's arguments the host's to
 * judge, which STRATA_CHECK_ARGS turns into a common hand-off. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "config/config.h"
#include "context/context.h"
#include "serve/check.h"
#include "serve/host_call.h"
#include "serve/entry.h"
#include "request/nonblocking.h"
#include "route/reasons.h"
#include "route/reduce_op.h"
#include "route/route.h"
#include "serve/rs_scan_calls.h"
#include "net/net.h"
#include "util/log.h"

/* A call strata leaves (serve/host_call.h), by the host's nonblocking
 * form of each collective named here. */
#define HOST_CALL(build, large, name, ...) STRATA_HOST_CALL_NAMED(build, large, name, __VA_ARGS__)
#define HOST_NB_Reduce_scatter_block PMPI_Ireduce_scatter_block
#define HOST_NB_Scan PMPI_Iscan
#define HOST_NB_Exscan PMPI_Iexscan

static void served_as(struct strata_ctx *ctx, enum strata_coll coll, const char *what,
                      size_t bytes, const struct strata_build *build)
{
    strata_entry_count(coll, what, build);
    strata_route_served(ctx, strata_build_call_id(build, coll), what, bytes);
}

/* ---- Reduce_scatter and Reduce_scatter_block ---- */

/* Reduce_scatter's arguments into a (counts already read), or why strata
 * leaves the call. */
static const char *rs_args(const struct strata_ctx *ctx, struct strata_reduce_args *a,
                           struct strata_reduce_how *r, char *why, size_t whylen,
                           const void *sendbuf, void *recvbuf, long long total, long long mine,
                           MPI_Datatype type, MPI_Op op)
{
    if (op == MPI_OP_NULL) return "op is MPI_OP_NULL";
    if (type == MPI_DATATYPE_NULL)
        return strata_reason_bad_args(0, 0, 0, STRATA_SIDE_RECV, NULL, 0, MPI_DATATYPE_NULL,
                                      recvbuf, mine, type, -1);
    const char *no_op = strata_reduce_op_choose(ctx, op, type, total, a, r, why, whylen);
    if (no_op) return no_op;
    if (r->staged) {
        /* The staging of reduce_op.c copies one vector both ways; here the
         * two sides differ in length. */
        snprintf(why, whylen, "a user-defined op on a datatype with holes: strata stages such "
                 "data for Reduce and Allreduce only");
        return why;
    }
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if (true_lb != 0 || extent <= 0 || true_extent > extent)
        return "the datatype does not start at its address or its elements overlap";
    if (recvbuf == MPI_IN_PLACE) return "recvbuf is MPI_IN_PLACE (it is for sendbuf)";
    int in_place = sendbuf == MPI_IN_PLACE;
    size_t span_all = total ? (size_t)(total - 1) * (size_t)extent + (size_t)true_extent : 0;
    size_t span_mine = mine ? (size_t)(mine - 1) * (size_t)extent + (size_t)true_extent : 0;
    if ((in_place ? total : mine) && recvbuf == MPI_BOTTOM) return "recvbuf is address 0 (MPI_BOTTOM)";
    if (!in_place && total && sendbuf == MPI_BOTTOM) return "sendbuf is address 0 (MPI_BOTTOM)";
    uintptr_t s = (uintptr_t)sendbuf, d = (uintptr_t)recvbuf;
    if (!in_place && span_all && span_mine && s < d + span_mine && d < s + span_all)
        return "sendbuf and recvbuf overlap";
    a->sendbuf = in_place ? NULL : sendbuf;
    a->recvbuf = recvbuf;
    a->count = (size_t)total;
    a->extent = (size_t)extent;
    a->true_extent = (size_t)true_extent;
    a->root = -1;
    return NULL;
}

/* ---- The nonblocking and persistent forms (a build, route/build.h): the
 * call's state, kept by the build's operation from its posting to its end. */
struct rs_owned {
    int scan, exclusive;
    struct strata_rs_args rs;       /* Reduce_scatter(_block) */
    struct strata_reduce_args a;    /* Scan, Exscan */
    size_t *counts;                 /* rs.counts, owned */
    union {
        struct strata_task op;
        struct strata_rs_task rs;
        struct strata_scan_task scan;
        struct strata_net_rs_task net_rs;
        struct strata_net_scan_task net_scan;
    } u;
};

/* At the head of its communicator's queue: the algorithm the blocking form
 * runs (node plane, or the composition across nodes), started. */
static void rs_owned_start(struct strata_build *build)
{
    struct rs_owned *s = build->owned;
    struct strata_ctx *ctx = build->ctx;
    char *desc = build->has_desc ? build->desc : NULL;
    if (s->scan && ctx->net)
        strata_net_scan_start(&s->u.net_scan, ctx->net, &s->a, s->exclusive, desc,
                              sizeof build->desc);
    else if (s->scan)
        strata_scan_start(&s->u.scan, ctx->plane, &s->a, s->exclusive);
    else if (ctx->net)
        strata_net_reduce_scatter_start(&s->u.net_rs, ctx->net, &s->rs, desc, sizeof build->desc);
    else
        strata_reduce_scatter_start(&s->u.rs, ctx->plane, &s->rs);
    build->owned_task = &s->u.op;
}

static void rs_owned_finish(struct strata_build *build, int finished)
{
    struct rs_owned *s = build->owned;
    (void)finished; /* the results are in place; reduce_op's end (build->how) unpacks */
    if (build->owned_task && build->ctx->net) {
        /* An operation that failed midway still holds its requests' array
         * (its end frees it and leaves NULL). */
        free(s->scan ? s->u.net_scan.reqs : s->u.net_rs.reqs);
    }
    free(s->counts);
    free(s);
    build->owned = NULL;
}

/* Records a call in its build instead of running it: rs
 * (Reduce_scatter; counts handed over) or a (Scan, Exscan). */
static int rs_defer(struct strata_build *build, struct strata_ctx *ctx,
                    const struct strata_rs_args *rs, const struct strata_reduce_args *a,
                    int exclusive, size_t bytes)
{
    struct rs_owned *s = calloc(1, sizeof *s);
    if (!s) {
        strata_error("out of memory recording a %s", strata_call_name(build->call));
        PMPI_Abort(ctx->comm, 1);
    }
    if (rs) {
        s->rs = *rs;
        s->counts = (size_t *)rs->counts;
    } else {
        s->scan = 1;
        s->exclusive = exclusive;
        s->a = *a;
    }
    build->kind = STRATA_BUILD_OWNED;
    build->owned = s;
    build->owned_start = rs_owned_start;
    build->owned_finish = rs_owned_finish;
    build->bytes = bytes;
    enum strata_coll coll = rs ? (enum strata_coll)rs->coll
                               : exclusive ? STRATA_COLL_EXSCAN : STRATA_COLL_SCAN;
    if (ctx->net) build->has_desc = strata_entry_across_start(coll, build->desc, build) != NULL;
    else served_as(ctx, coll, strata_rs_scan_path(ctx->plane, coll, bytes), bytes, build);
    return MPI_SUCCESS;
}

/* One Reduce_scatter (block: every count is counts[0]): served here, or
 * handed to the host by the caller when this returns -1 with ctx cleared. */
static int rs_run(struct strata_ctx *ctx, enum strata_coll coll, struct strata_reduce_args *a,
                  const size_t *counts, struct strata_build *build)
{
    size_t bytes = a->count * a->extent;
    if (bytes == 0) {
        served_as(ctx, coll, "nothing to move", 0, build);
        return MPI_SUCCESS;
    }
    if (ctx->size == 1) {
        /* The block is the whole vector, already in place or copied. */
        const char *what = a->sendbuf ? "one rank: local copy" : "one rank: nothing to move";
        if (a->sendbuf) memcpy(a->recvbuf, a->sendbuf, (a->count - 1) * a->extent + a->true_extent);
        served_as(ctx, coll, what, bytes, build);
        return MPI_SUCCESS;
    }
    struct strata_rs_args rs = {*a, counts, (int)coll};
    if (build) return rs_defer(build, ctx, &rs, NULL, 0, bytes);
    if (ctx->net) {
        char buf[320], *desc = strata_entry_across_start(coll, buf, build);
        int rc = strata_net_reduce_scatter(ctx->net, &rs, desc, sizeof buf);
        return strata_entry_across_done(ctx, coll, bytes, desc, rc, build);
    }
    served_as(ctx, coll, strata_rs_scan_path(ctx->plane, coll, bytes), bytes, build);
    return strata_reduce_scatter(ctx->plane, &rs);
}

int strata_serve_reduce_scatter(const void *sendbuf, void *recvbuf, const void *recvcounts,
                                long long blockcount, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, int large, struct strata_build *build)
{
    int block = recvcounts == NULL;
    enum strata_coll coll = block ? STRATA_COLL_REDUCE_SCATTER_BLOCK : STRATA_COLL_REDUCE_SCATTER;
    struct strata_ctx *ctx = strata_entry_served(comm, coll, build);
    struct strata_reduce_args a;
    /* An operation's reduce_how outlives the call (ended when it completes). */
    struct strata_reduce_how own_how = {0}, *rp = build ? &build->how : &own_how;
    size_t *counts = NULL;
    char reason[400];
    long long total = 0, mine = 0;
    if (ctx) {
        const char *why = NULL;
        /* Every rank reads the same counts (the standard), so a bad one is
         * every rank's verdict alike. */
        counts = malloc(sizeof *counts * (size_t)ctx->size);
        if (!counts) {
            strata_error("out of memory reading %d counts of a Reduce_scatter", ctx->size);
            PMPI_Abort(comm, 1);
        }
        for (int q = 0; q < ctx->size && !why; q++) {
            long long c = block ? blockcount
                          : large     ? (long long)((const MPI_Count *)recvcounts)[q]
                                      : (long long)((const int *)recvcounts)[q];
            if (c < 0) why = "a count is negative (the host MPI reports it)";
            else if (total > LLONG_MAX / 2 - c) why = "the counts add up to more than strata counts";
            else {
                counts[q] = (size_t)c;
                total += c;
            }
        }
        if (!why) {
            mine = (long long)counts[ctx->rank];
            why = rs_args(ctx, &a, rp, reason, sizeof reason, sendbuf, recvbuf, total, mine,
                          datatype, op);
        }
        if (!why && ctx->net && total * (long long)a.extent > INT_MAX)
            why = "across nodes strata's leaders send a Reduce_scatter vector in one message of "
                  "at most 2 GiB";
        if (!why && strata_entry_signature(total, datatype) < 0)
            why = strata_reason_bad_args(0, 0, 0, STRATA_SIDE_RECV, NULL, 0, MPI_DATATYPE_NULL,
                                         recvbuf, total, datatype, -1);
        ctx = strata_entry_settle(ctx, coll, -1, why ? -1 : strata_entry_signature(total, datatype),
                                  why, build);
    }
    if (!ctx) {
        free(counts);
        strata_user_op_call_end(&rp->user);
        if (strata_check_refused) return strata_check_take_refused();
        if (block)
            return HOST_CALL(build, large, Reduce_scatter_block, sendbuf, recvbuf, blockcount,
                             datatype, op, comm);
        if (build) return strata_build_to_host(build);
#ifdef STRATA_HAVE_LARGE_COUNT
        if (large)
            return PMPI_Reduce_scatter_c(sendbuf, recvbuf, (const MPI_Count *)recvcounts, datatype,
                                         op, comm);
#endif
        if (strata_nb_outstanding())
            return strata_nb_host_wait(PMPI_Ireduce_scatter(sendbuf, recvbuf,
                                                            (const int *)recvcounts, datatype, op,
                                                            comm, strata_nb_host_request()));
        return PMPI_Reduce_scatter(sendbuf, recvbuf, (const int *)recvcounts, datatype, op, comm);
    }
    strata_reduce_op_begin(&a, rp, 1); /* user ops: whole elements (nothing staged here) */
    int rc = strata_check_end(ctx, strata_build_call_id(build, coll),
                              rs_run(ctx, coll, &a, counts, build), build);
    if (build) {
        build->has_how = 1;
        if (build->kind != STRATA_BUILD_OWNED) free(counts); /* done at posting */
        return rc;
    }
    strata_reduce_op_end(rp);
    free(counts);
    return rc;
}

/* ---- Scan and Exscan ---- */

int strata_serve_scan(const void *sendbuf, void *recvbuf, long long count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, int exclusive, int large,
                      struct strata_build *build)
{
    enum strata_coll coll = exclusive ? STRATA_COLL_EXSCAN : STRATA_COLL_SCAN;
    struct strata_ctx *ctx = strata_entry_served(comm, coll, build);
    struct strata_reduce_args a;
    /* An operation's reduce_how outlives the call (ended when it completes). */
    struct strata_reduce_how own_how = {0}, *rp = build ? &build->how : &own_how;
    char reason[400];
    if (ctx) {
        const char *why = strata_entry_reduce_args(ctx, &a, rp, reason, sizeof reason, sendbuf,
                                                   recvbuf, count, datatype, op);
        if (!why && ctx->net && (long long)a.count * (long long)a.extent > INT_MAX)
            why = "across nodes strata sends a Scan vector in one message of at most 2 GiB";
        ctx = strata_entry_settle(ctx, coll, -1, strata_entry_signature(count, datatype), why,
                                  build);
        if (!ctx) strata_user_op_call_end(&rp->user);
    }
    if (!ctx) {
        if (exclusive)
            return HOST_CALL(build, large, Exscan, sendbuf, recvbuf, count, datatype, op, comm);
        return HOST_CALL(build, large, Scan, sendbuf, recvbuf, count, datatype, op, comm);
    }
    a.root = -1;
    size_t bytes = a.count * a.extent;
    if (bytes == 0 || ctx->size == 1) {
        /* One rank: Scan's result is the operand; Exscan's is undefined
         * (left as it is). */
        const char *what = bytes == 0 ? "nothing to move" : "one rank: nothing to move";
        strata_reduce_op_begin(&a, rp, 1);
        if (bytes && !exclusive && a.sendbuf) {
            what = "one rank: local copy";
            memcpy(a.recvbuf, a.sendbuf, (a.count - 1) * a.extent + a.true_extent);
        }
        if (build) build->has_how = 1; /* ended (unpacked) when the request completes */
        else strata_reduce_op_end(rp);
        served_as(ctx, coll, what, bytes, build);
        return MPI_SUCCESS;
    }
    strata_reduce_op_begin(&a, rp, 1);
    int rc;
    if (build) {
        build->has_how = 1;
        return rs_defer(build, ctx, NULL, &a, exclusive, bytes);
    }
    if (ctx->net) {
        char buf[320], *desc = strata_entry_across_start(coll, buf, build);
        rc = strata_entry_across_done(ctx, coll, bytes, desc,
                                      strata_net_scan(ctx->net, &a, exclusive, desc, sizeof buf),
                                      build);
    } else {
        served_as(ctx, coll, strata_rs_scan_path(ctx->plane, coll, bytes), bytes, build);
        rc = strata_check_end(ctx, strata_build_call_id(build, coll),
                              strata_scan(ctx->plane, &a, exclusive), build);
    }
    strata_reduce_op_end(rp);
    return rc;
}
