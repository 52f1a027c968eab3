/* Per-call argument agreement from the entry layer (check.h): inside a node
 * through the plane's signatures (coll/agree.h), across nodes with one host
 * MPI reduction. */
#include "serve/check.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/task.h"
#include "coll/plane.h"
#include "config/config.h"
#include "net/net.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

_Thread_local int strata_check_refused;
static _Thread_local int refused_rc;

int strata_check_take_refused(void)
{
    strata_check_refused = 0;
    return refused_rc;
}

STRATA_HOT static int mode(void)
{
    const struct strata_config *cfg = strata_config();
    return cfg ? cfg->check_args : STRATA_CHECK_OFF;
}

STRATA_HOT int strata_check_enabled(void) { return mode() != STRATA_CHECK_OFF; }

/* The plane's open call is this blocking call's: not a build's (build
 * non-NULL: the plane's open call may then be an earlier operation's
 * agreement, nonblocking.c). */
static struct strata_plane *open_call(const struct strata_ctx *ctx,
                                      const struct strata_build *build)
{
    struct strata_plane *p = ctx && !ctx->net ? ctx->plane : NULL;
    return p && p->call.open && !build ? p : NULL;
}

/* Across nodes (STRATA_CHECK_ARGS=1 only): one reduction of each field and
 * its negation gives every rank the minimum and maximum of each; a call
 * whose fields differ goes to the host MPI on every rank. */
static int net_agrees(struct strata_ctx *ctx, const struct strata_sig_args *s, char *why,
                      size_t whylen)
{
    long long bytes = s->host ? -1 : s->in >= 0 ? s->in : s->out >= 0 ? s->out : 0;
    long long in[6] = {bytes, -bytes, s->coll, -(long long)s->coll, s->root, -(long long)s->root};
    long long out[6];
    if (PMPI_Allreduce(in, out, 6, MPI_LONG_LONG, MPI_MAX, ctx->net->dup) != MPI_SUCCESS) {
        snprintf(why, whylen, "the host MPI failed the argument check across nodes");
        return 0;
    }
    if (out[2] != -out[3])
        snprintf(why, whylen, "ranks disagree on the call: %s and %s",
                 strata_coll_name((enum strata_coll)-out[3]),
                 strata_coll_name((enum strata_coll)out[2]));
    else if (-out[1] < 0)
        snprintf(why, whylen, "a rank leaves its arguments to the host MPI to check");
    else if (out[4] != -out[5])
        snprintf(why, whylen, "ranks disagree on the root: %lld to %lld", -out[5], out[4]);
    else if (out[0] != -out[1])
        snprintf(why, whylen, "type signatures differ across ranks: %lld to %lld bytes",
                 -out[1], out[0]);
    else
        return 1;
    return 0;
}

/* A disagreement, reported on this rank: its error class (MPI_SUCCESS for
 * a rank that only sends), with a message, through the communicator's
 * error handler.  `gave_up`: the call moved nothing. */
static int report(struct strata_ctx *ctx, int call, const struct strata_agree_verdict *v,
                  int gave_up)
{
    int rc = v->error;
    /* A rank that receives got nothing, even if what it was sent matched. */
    if (gave_up && rc == MPI_SUCCESS && ctx->plane &&
        (ctx->plane->call.mine.in >= 0 || ctx->plane->call.mine.vrecvd > 0))
        rc = MPI_ERR_OTHER;
    if (strata_stats_enabled()) strata_stats_algorithm(call, STRATA_STATS_DISAGREED);
    if (rc == MPI_SUCCESS) {
        strata_verbose(1, "%s on communicator #%lu: %s; this rank's receive is whole",
                       strata_call_name(call), ctx->serial, v->why);
        return rc;
    }
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(ctx->comm, &eh);
    int fatal = eh == MPI_ERRORS_ARE_FATAL;
    if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(rc, text, &len);
    /* A fatal handler ends the job: say why first, whatever the verbosity. */
    (fatal ? strata_error : strata_warn)("%s on communicator #%lu: %s; %s (%s)",
                                         strata_call_name(call), ctx->serial, v->why,
                                         gave_up ? "nothing was moved"
                                                 : "no byte was written outside a buffer",
                                         text);
    PMPI_Comm_call_errhandler(ctx->comm, rc);
    return rc;
}

/* Waits for every rank's signature: the call runs only if all agree. */
static enum strata_check_outcome all_agree(struct strata_ctx *ctx, int call, char *why,
                                           size_t whylen, int *rc)
{
    struct strata_plane *p = ctx->plane;
    struct strata_agree_verdict v;
    strata_agree_all(p, &v);
    if (v.agreed) return STRATA_CHECK_RUN;
    /* Auto: small ranks may have run their one operation; match them. */
    if (mode() == STRATA_CHECK_AUTO) strata_agree_skip(p);
    strata_agree_close(p);
    if (v.host) {
        snprintf(why, whylen, "%s", v.why);
        return STRATA_CHECK_TO_HOST;
    }
    *rc = report(ctx, call, &v, 1);
    return STRATA_CHECK_REFUSED;
}

STRATA_HOT enum strata_check_outcome strata_check_begin(struct strata_ctx *ctx, int call,
                                                        const struct strata_sig_args *sig,
                                                        size_t bytes, int one_operation,
                                                        char *why, size_t whylen,
                                                        struct strata_build *build)
{
    int m = mode();
    if (m == STRATA_CHECK_OFF || ctx->size == 1 || (!ctx->plane && !ctx->net) ||
        (ctx->net && m != STRATA_CHECK_EVERY))
        return sig->host ? STRATA_CHECK_TO_HOST : STRATA_CHECK_RUN;
    if (ctx->net)
        return net_agrees(ctx, sig, why, whylen) ? STRATA_CHECK_RUN : STRATA_CHECK_TO_HOST;
    struct strata_plane *p = ctx->plane;
    /* A rank whose own sides differ (an Allgather sending more than a
     * block) knows already: it waits for everyone. */
    int own_differs = sig->in >= 0 && sig->out >= 0 && sig->in != sig->out;
    int small = m == STRATA_CHECK_AUTO && !own_differs && !sig->host &&
                strata_agree_class(p, bytes, one_operation) == STRATA_AGREE_SMALL;
    if (build) {
        /* Its operation publishes this when it starts on the plane, in the
         * communicator's order (nonblocking.c): a wait here could deadlock
         * a legal program.  Full: it starts once everyone agrees.  Small
         * (a nonblocking call; a persistent start may run on a plane of its
         * own, not this one): it starts at once and reads the others'
         * after, as the blocking call. */
        if (sig->host) return STRATA_CHECK_TO_HOST;
        build->sig = *sig;
        build->agree = 1;
        build->agree_small = small && strata_call_form(call) == STRATA_FORM_NONBLOCKING;
        return STRATA_CHECK_RUN;
    }
    strata_agree_open(p, sig, small);
    if (sig->host) {
        if (m == STRATA_CHECK_AUTO) strata_agree_skip(p);
        strata_agree_close(p);
        return STRATA_CHECK_TO_HOST;
    }
    if (small) {
        /* Its lines carry its signature's code (plane.h), worked out at
         * the first. */
        p->call.line_tag = STRATA_LINE_TAG_LATER;
        return STRATA_CHECK_RUN;
    }
    enum strata_check_outcome o = all_agree(ctx, call, why, whylen, &refused_rc);
    if (o == STRATA_CHECK_REFUSED) strata_check_refused = 1;
    return o;
}

STRATA_HOT enum strata_check_outcome strata_check_algorithm(struct strata_ctx *ctx, int call,
                                                            int single_copy, int *rc,
                                                            struct strata_build *build)
{
    if (build) {
        /* Its agreement opens when it starts: full then. */
        if (single_copy) build->agree_small = 0;
        return STRATA_CHECK_RUN;
    }
    struct strata_plane *p = open_call(ctx, build);
    if (!p || !p->call.small || !single_copy) return STRATA_CHECK_RUN;
    p->call.small = 0;
    p->call.line_tag = 0;
    char why[240];
    enum strata_check_outcome o = all_agree(ctx, call, why, sizeof why, rc);
    if (o != STRATA_CHECK_TO_HOST) return o;
    /* Too late to join the host MPI: the others may be in strata. */
    struct strata_agree_verdict v = {0, 1, MPI_ERR_OTHER, ""};
    snprintf(v.why, sizeof v.why, "%s", why);
    *rc = report(ctx, call, &v, 1);
    return STRATA_CHECK_REFUSED;
}

enum strata_check_outcome strata_check_vcounts(struct strata_ctx *ctx, int call,
                                               const long long *to, const long long *from,
                                               int receives, struct strata_build *build)
{
    if (build) {
        if (!build->agree) return STRATA_CHECK_RUN;
        build->agree_small = 0; /* the pairs' round comes before any data, as blocking */
        size_t n = (size_t)ctx->size;
        build->vpairs = malloc(2 * n * sizeof *build->vpairs);
        if (!build->vpairs) return STRATA_CHECK_RUN; /* the call and root are still agreed */
        memcpy(build->vpairs, to, n * sizeof *to);
        memcpy(build->vpairs + n, from, n * sizeof *from);
        build->vreceives = receives;
        return STRATA_CHECK_RUN;
    }
    struct strata_plane *p = open_call(ctx, NULL);
    /* A small (auto) call: its operation compares the pairs as it reads
     * them (coll/agree.h), without a round of its own. */
    if (!p || p->call.small) return STRATA_CHECK_RUN;
    struct strata_agree_vround v = {to, from, receives, 0, 0, 0};
    struct strata_agree_verdict verdict = {0, 0, MPI_SUCCESS, ""};
    int refused;
    strata_agree_vround_step(p, &v, 1, &verdict.error, &refused, verdict.why,
                             sizeof verdict.why);
    if (!refused) return STRATA_CHECK_RUN;
    if (mode() == STRATA_CHECK_AUTO) strata_agree_skip(p);
    strata_agree_close(p);
    refused_rc = report(ctx, call, &verdict, 0);
    strata_check_refused = 1;
    return STRATA_CHECK_REFUSED;
}

STRATA_HOT int strata_check_verifies(const struct strata_ctx *ctx,
                                    const struct strata_build *build)
{
    const struct strata_plane *p = open_call(ctx, build);
    return p && p->call.small;
}

int strata_check_vfound(struct strata_ctx *ctx, int call, const struct strata_agree_vfinding *f)
{
    struct strata_plane *p = open_call(ctx, NULL);
    struct strata_agree_verdict v = {0, 0, f->error, ""};
    int me = ctx->plane ? ctx->plane->rank : ctx->rank;
    if (f->refused && f->cut != me)
        strata_agree_describe_veto(v.why, sizeof v.why, f->finder, f->cut);
    else if (f->from == me)
        snprintf(v.why, sizeof v.why, "counts differ: rank %d sends itself %lld bytes and "
                 "receives %lld from itself", me, f->sent, f->expected);
    else if (f->sent < 0)
        snprintf(v.why, sizeof v.why, "counts differ across ranks: rank %d's data for rank %d "
                 "is not where rank %d's count of %lld bytes says", f->from, me, me, f->expected);
    else
        snprintf(v.why, sizeof v.why, "counts differ across ranks: rank %d sends %lld bytes to "
                 "rank %d, which expects %lld", f->from, f->sent, me, f->expected);
    if (p && f->refused) strata_agree_skip(p); /* as every rank does: the plane stays in step */
    if (p) strata_agree_close(p);
    return report(ctx, call, &v, f->refused);
}

STRATA_HOT int strata_check_end(struct strata_ctx *ctx, int call, int rc,
                                const struct strata_build *build)
{
    struct strata_plane *p = open_call(ctx, build);
    if (!p) return rc;
    struct strata_agree_verdict v;
    if (rc == STRATA_TASK_DISAGREE) {
        /* Every rank stamps first thing in the call: the wait ends, and
         * this rank's error is judged against all of them. */
        strata_agree_all(p, &v);
        strata_agree_skip(p);
        strata_agree_close(p);
        return report(ctx, call, &v, 1);
    }
    /* A rank that receives nothing (a Barrier, a Bcast root) either got
     * what it waited for or stalled: nothing to look at.  One that posted
     * a count of 0 looks: a peer may send it more. */
    int small = p->call.small, receives = p->call.mine.in >= 0 || p->call.mine.vrecvd > 0;
    int moved_nothing = small && p->ops == p->call.ops;
    if (moved_nothing) strata_agree_null_task(p);
    /* Having read nothing, it cannot count on its sources having stamped:
     * it waits for them (a count of 0 against peers that send more). */
    if (moved_nothing && receives && rc == MPI_SUCCESS) {
        strata_agree_all(p, &v);
        strata_agree_close(p);
        if (v.agreed) return rc;
        if (v.error == MPI_SUCCESS) v.error = MPI_ERR_OTHER;
        return report(ctx, call, &v, 0);
    }
    /* A small call's sources stamped before publishing what it read.  Any
     * difference among the stamped signatures makes what this rank
     * received suspect (a rank relaying it may have held less), so a
     * receiving rank then reports, judged against every signature. */
    /* At 2 ranks, every line it read carrying its own call's code says the
     * look would find the one other signature equal to its own (plane.h,
     * "The signature in the line"): one cache line fewer per call. */
    int seen_in_lines = p->call.lines > 0 && p->call.good == p->call.lines;
    if (small && receives && rc == MPI_SUCCESS && !seen_in_lines && !strata_agree_look(p, &v)) {
        strata_agree_all(p, &v);
        strata_agree_close(p);
        if (v.error == MPI_SUCCESS) v.error = MPI_ERR_OTHER;
        return report(ctx, call, &v, 0);
    }
    strata_agree_close(p);
    return rc;
}
