/* The v-collectives' host-memory paths (strata_serve_*): MPI_Gatherv,
 * MPI_Scatterv, MPI_Allgatherv and MPI_Alltoallv, reached through
 * device_vcalls.c's staging from every C entry point (entry_points.c, from
 * calls.def) and the Fortran ones (fortran/calls.def).
 *
 * The route of a call depends only on what every rank passes alike (the
 * communicator, the root) and on this rank's own arguments being valid, as
 * for the block collectives (collectives.c): never on counts a rank does
 * not share.  With STRATA_CHECK_ARGS the ranks agree on the route first.
 * The algorithm is chosen later, inside the node operation (coll/vblock.c),
 * from the largest block, which the ranks learn from each other's layouts.
 *
 * Datatypes as for the block collectives: a side whose type lists its bytes
 * in memory order with extent equal to its size is used in place (byte
 * offsets = displacement x extent); any other side (holes, a resized or
 * reordered type, a negative displacement) is packed into private memory,
 * block after block, and unpacked from it at the end, on this rank alone. */
#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/block.h"
#include "coll/ops.h"
#include "coll/select.h"
#include "config/config.h"
#include "context/context.h"
#include "route/run_view.h"
#include "serve/check.h"
#include "serve/host_call.h"
#include "serve/entry.h"
#include "serve/collectives.h"
#include "request/nonblocking.h"
#include "route/reasons.h"
#include "route/route.h"
#include "net/net.h"
#include "util/colls.h"
#include "util/log.h"

/* The host's large-count v-collective, for a call that came through it. */
#ifdef STRATA_HAVE_LARGE_COUNT
#define HOST_LARGE(name, ...) PMPI_##name##_c(__VA_ARGS__)
#else
#define HOST_LARGE(name, ...) MPI_ERR_INTERN /* no _c entry point without them */
#endif
/* A call strata leaves (serve/host_call.h). */
#define HOST_CALL(build, large, call, nb_call) STRATA_HOST_CALL(build, large, call, nb_call)

/* One side (send or receive) of this rank: n blocks of count[j] elements
 * of type at user + displ[j] * extent, seen as byte runs len[j] at
 * run + off[j]. */
struct vside {
    const void *user;
    MPI_Datatype type;
    int n;
    const long long *count, *displ;
    MPI_Aint extent;
    unsigned char *run;
    void *tmp;       /* packed copy (NULL: the user's memory is used) */
    size_t *len, *off;
};

static void *xmalloc(MPI_Comm comm, size_t bytes)
{
    void *m = malloc(bytes ? bytes : 1);
    if (!m) {
        strata_error("out of memory for a v-collective's %zu bytes", bytes);
        PMPI_Abort(comm, 1);
    }
    return m;
}

/* A side's datatype, looked up once per call: the checks, the pairs and
 * the side's byte runs all need its size (each looking it up again, and
 * the host's extent, was a tenth of a small Gatherv's instructions).
 * size < 0: the host MPI could not say (the checks send the call there). */
struct vtype {
    MPI_Datatype type;
    int size;
    int plain; /* strata_type_plain: extent = size, no holes, no host query needed */
};

static struct vtype vtype_of(MPI_Datatype type)
{
    struct vtype t = {type, -1, 0};
    if (type == MPI_DATATYPE_NULL || strata_type_size_plain(type, &t.size, &t.plain) != MPI_SUCCESS)
        t.size = -1, t.plain = 0;
    return t;
}

/* Bytes of count elements of t (-1 where strata leaves the arguments to
 * the host MPI, as strata_entry_signature says). */
static long long vtype_bytes(const struct vtype *t, long long count)
{
    if (count < 0 || t->size < 0 || (t->size > 0 && count > LLONG_MAX / t->size)) return -1;
    return count * t->size;
}

/* Opens a side (its arguments passed side_bad): len and off ([n], the
 * caller's) filled; packed if needed. */
static void side_open(struct vside *s, MPI_Comm comm, const void *buf, const struct vtype *t, int n,
                      const long long *count, const long long *displ, size_t *len, size_t *off,
                      int pack_in)
{
    int tsize = t->size;
    MPI_Datatype type = t->type;
    *s = (struct vside){buf, type, n, count, displ, tsize, NULL, NULL, len, off};
    int negative = 0;
    for (int j = 0; j < n; j++) {
        len[j] = (size_t)count[j] * (size_t)tsize;
        negative |= count[j] && displ[j] < 0;
    }
    if (t->plain) {
        s->run = (unsigned char *)buf;
    } else {
        MPI_Aint lb;
        PMPI_Type_get_extent(type, &lb, &s->extent);
        s->run = strata_contiguous_run((void *)buf, 1, type, (size_t)tsize);
    }
    if (s->run && !negative && s->extent == tsize) {
        for (int j = 0; j < n; j++) off[j] = (size_t)displ[j] * (size_t)s->extent;
        return;
    }
    /* Packed: block after block, in rank order. */
    size_t total = 0;
    for (int j = 0; j < n; j++) off[j] = total, total += len[j];
    s->tmp = xmalloc(comm, total);
    s->run = s->tmp;
    for (int j = 0; pack_in && j < n; j++)
        if (count[j])
            strata_pack_user((const char *)buf + displ[j] * s->extent, count[j], type,
                             s->run + off[j], comm, 0);
}

/* Closes a side: unpacks its first `unpack` blocks back into the user's
 * memory. */
static void side_close(struct vside *s, MPI_Comm comm, int unpack)
{
    if (s->tmp)
        for (int j = 0; j < unpack && j < s->n; j++)
            if (s->count[j])
                strata_pack_user((const char *)s->user + s->displ[j] * s->extent, s->count[j],
                                 s->type, s->run + s->off[j], comm, 1);
    if (s->tmp) free(s->tmp); /* free(NULL) still runs strata's free (heap.c) */
}

/* A call's counts and displacements as long long: int arrays (large 0) or
 * MPI_Count counts and MPI_Aint displacements (large 1). */
static void widen(long long *to, const void *from, int n, int is_count, int large)
{
    for (int j = 0; j < n; j++) {
#ifdef STRATA_HAVE_LARGE_COUNT
        if (large) {
            to[j] = is_count ? (long long)((const MPI_Count *)from)[j]
                             : (long long)((const MPI_Aint *)from)[j];
            continue;
        }
#else
        (void)is_count;
        (void)large;
#endif
        to[j] = ((const int *)from)[j];
    }
}

/* Why one side is for the host MPI: a missing array, a negative count, a
 * bad type or buffer; NULL if none.  n blocks of counts (NULL arrays: the
 * single `one` count).  Passed, every count times the type's size fits a
 * long long (vtype_bytes). */
static const char *side_bad(const char *side, const void *buf, const void *counts,
                            const void *displs, const long long *count, int n,
                            const struct vtype *t)
{
    static _Thread_local char why[200];
    MPI_Datatype type = t->type;
    if (!counts || !displs) {
        snprintf(why, sizeof why, "%scounts or its displacements are NULL", side);
        return why;
    }
    long long total = 0;
    int tsize = t->size;
    for (int j = 0; j < n; j++) {
        if (count[j] < 0) {
            snprintf(why, sizeof why, "%scounts[%d] = %lld is negative", side, j, count[j]);
            return why;
        }
        if (total > LLONG_MAX - count[j]) return "counts add up beyond what strata can address";
        total += count[j];
    }
    if (tsize > 0 && total > LLONG_MAX / tsize)
        return "counts add up beyond what strata can address";
    /* A plain type is named and committed (strata_route_bad_data's first
     * question); only a special buffer is left to ask about. */
    if ((!t->plain || buf == MPI_BOTTOM || buf == MPI_IN_PLACE) &&
        strata_route_bad_data(buf, total, type))
        return strata_reason_bad_args(0, 0, 0,
                                      side[0] == 's' ? STRATA_SIDE_SEND : STRATA_SIDE_RECV, buf,
                                      total, type, buf, total, type, -1);
    return NULL;
}

/* Calls on up to this many ranks keep their arrays inside the call: a
 * blocking call then allocates nothing (malloc and free were 40% of a
 * small Gatherv's instructions). */
enum { VCALL_INLINE = 16 };

/* One v-collective call after its arguments were read.  On the stack of a
 * blocking call; on the heap when a nonblocking or persistent start keeps
 * it until the operation ends. */
struct vcall {
    enum strata_coll coll;
    int root;
    int in_place;
    struct vside send, recv;
    int send_used, recv_used;
    int unpack_n;                   /* receive blocks to unpack at the end */
    struct strata_vlayout v;        /* views of the four arrays below */
    size_t *out_len, *out_off, *in_len, *in_off;
    size_t *arrays; /* [8 * size]: the layout and the sides' byte runs (small or owned) */
    long long *w;   /* owned widened counts and displacements the sides read (NULL: the
                     * caller's stack holds them) */
    long long one[2]; /* a one-block side's count and displacement (0) */
    MPI_Comm comm;
    int heap;       /* the call itself was allocated */
    /* A call whose layout its caller built (strata_vcall_bytes): called at
     * its end, finished or not (NULL: none). */
    void (*end)(void *arg, int finished);
    void *end_arg;
    /* Set by vargs and the operations' start functions, not zeroed. */
    struct strata_block_args a;     /* the node operation's */
    struct strata_block_task o;
    struct strata_net_v_task net;     /* a nonblocking start's composition across nodes */
    size_t small[8 * VCALL_INLINE];
};

/* The widened arrays of a call (n long longs): in `stack` (the caller's,
 * 4 * VCALL_INLINE of them) when they fit and the call ends before its
 * entry point returns, else allocated; w_free frees what was allocated. */
static long long *w_alloc(MPI_Comm comm, size_t n, long long *stack,
                          const struct strata_build *build)
{
    if (n <= 4 * VCALL_INLINE && !build) return stack;
    return xmalloc(comm, n * sizeof(long long));
}

static void w_free(long long *w, const long long *stack)
{
    if (w != stack) free(w);
}

/* The v-collectives' choice, once the ranks agree on the largest block
 * (coll/vblock.c calls it back). */
static void choose(struct strata_block_task *o)
{
    struct strata_choice ch;
    strata_select(o->op.p, o->v.coll, o->v.agreed, &ch);
    o->v.al = ch.al;
    o->v.single_copy = strata_vblock_path(ch.al);
    o->k = ch.k;
    o->v.predicted_us = ch.predicted_us;
    o->v.why = ch.why;
    o->v.rule = ch.rule;
}

/* Reports the algorithm a finished node operation ran: STRATA_STATS under
 * `call` (counted 0: the entry point's count is not wanted, a persistent
 * start after the first) and, at STRATA_VERBOSE=2, its choice. */
static void report(struct strata_ctx *ctx, int call, const struct strata_block_task *o, int counted)
{
    const struct strata_algorithm *al = o->v.al;
    /* Copy-in/copy-out that ran with the layout, in one operation (vblock.c). */
    const char *name = o->v.fused ? STRATA_VBLOCK_FUSED_NAME : al->name;
    const char *fused = o->v.fused ? "; every stream fit beside its layout record" : "";
    if (counted && strata_stats_enabled()) strata_stats_algorithm(call, name);
    const struct strata_config *cfg = strata_config();
    if (cfg && cfg->verbose >= 2) {
        char desc[320], k[32] = "";
        if (al->k_meaning) snprintf(k, sizeof k, ", k=%d", o->k);
        if (o->v.rule)
            snprintf(desc, sizeof desc, "%s%s (%s%d, largest block %zu bytes%s)", name, k,
                     o->v.why, o->v.rule, o->v.agreed, fused);
        else if (o->v.predicted_us >= 0)
            snprintf(desc, sizeof desc, "%s%s (%s, %.1f us predicted for the largest block, %zu "
                     "bytes%s)", name, k, o->v.why, o->v.predicted_us, o->v.agreed, fused);
        else
            snprintf(desc, sizeof desc, "%s%s (%s, largest block %zu bytes%s)", name, k,
                     o->v.why, o->v.agreed, fused);
        strata_route_served(ctx, call, desc, o->v.agreed);
    }
}

/* The node operation's arguments, set once the sides are open. */
static void vargs(struct vcall *c)
{
    const unsigned char *send = c->send_used && !c->in_place ? c->send.run : NULL;
    unsigned char *recv = c->recv_used ? c->recv.run : NULL;
    c->a = (struct strata_block_args){send, recv, 0, c->root, 1, &c->v};
}

/* The largest block this rank moves (across nodes: verbose output's size). */
static size_t largest_block(const struct strata_ctx *ctx, const struct vcall *c)
{
    size_t largest = 0;
    for (int r = 0; r < ctx->size; r++) {
        if (c->v.in_len[r] > largest) largest = c->v.in_len[r];
        if (c->v.out_len[r] > largest) largest = c->v.out_len[r];
    }
    return largest;
}

/* Runs a call across nodes, on the node's plane, or locally on one rank. */
static int vrun(struct strata_ctx *ctx, struct vcall *c, const struct strata_build *build)
{
    int size = ctx->size;
    vargs(c);
    if (size == 1) {
        size_t n = c->v.in_len[0] < c->v.out_len[0] ? c->v.in_len[0] : c->v.out_len[0];
        const char *what = c->a.send && c->a.recv && n ? "one rank: local copy"
                                                       : "one rank: nothing to move";
        if (c->a.send && c->a.recv && n) memcpy(c->a.recv + c->v.in_off[0], c->a.send + c->v.out_off[0], n);
        strata_entry_count(c->coll, what, build);
        strata_route_served(ctx, strata_build_call_id(build, c->coll), what, n);
        /* More sent to itself than it receives: an erroneous program, which
         * the host reports so (a rank on a periodic grid of one is its own
         * neighbour). */
        return c->a.send && c->a.recv && c->v.out_len[0] > c->v.in_len[0] ? MPI_ERR_TRUNCATE
                                                                         : MPI_SUCCESS;
    }
    if (ctx->net) {
        char buf[320], *desc = strata_entry_across_start(c->coll, buf, build);
        int rc = strata_net_vblock(ctx->net, strata_coll_engine(c->coll), &c->a, desc, sizeof buf);
        return strata_entry_across_done(ctx, c->coll, largest_block(ctx, c), desc, rc, build);
    }
    /* The call outlives its operation, which changes only lengths and the
     * send offsets of an in-place call: side_close reads neither. */
    c->v.lent = c->arrays;
    strata_vblock_start(&c->o, ctx->plane, c->coll, &c->a, -1, choose);
    c->o.v.verify = strata_check_verifies(ctx, build);
    int rc = strata_task_run(&c->o.op);
    int call = strata_build_call_id(build, c->coll);
    report(ctx, call, &c->o, strata_build_counts(build));
    /* The counts differ (the operation compared them as it read). */
    if (rc == STRATA_VBLOCK_FOUND || (rc > MPI_SUCCESS && c->o.v.found.error == rc))
        rc = strata_check_vfound(ctx, call, &c->o.v.found);
    return rc;
}

/* A new call with its arrays (8 [size] arrays of size_t): `stack` for a
 * blocking call, allocated for a build (its operation outlives the call);
 * w (the widened arrays, from w_alloc) goes with it. */
static struct vcall *vcall_new(struct strata_ctx *ctx, enum strata_coll coll, int root,
                               struct vcall *stack, long long *w, const long long *wstack,
                               const struct strata_build *build)
{
    int size = ctx->size;
    int heap = build != NULL;
    struct vcall *c = heap ? xmalloc(ctx->comm, sizeof *c) : stack;
    memset(c, 0, offsetof(struct vcall, a)); /* the rest is set before use */
    c->heap = heap;
    c->comm = ctx->comm;
    c->coll = coll;
    c->root = root;
    c->w = w == wstack ? NULL : w;
    c->arrays = size <= VCALL_INLINE ? c->small : xmalloc(ctx->comm, 8 * (size_t)size * sizeof(size_t));
    memset(c->arrays, 0, 8 * (size_t)size * sizeof(size_t));
    c->out_len = c->arrays;
    c->out_off = c->arrays + size;
    c->in_len = c->arrays + 2 * size;
    c->in_off = c->arrays + 3 * size;
    c->v = (struct strata_vlayout){c->out_len, c->out_off, c->in_len, c->in_off, NULL, NULL};
    return c;
}

/* Unpacks (unpack: the call finished) the first unpack_n blocks of the
 * receive side and frees the call. */
static void vcall_end(struct vcall *c, int unpack)
{
    if (c->send_used) side_close(&c->send, c->comm, 0);
    if (c->recv_used) side_close(&c->recv, c->comm, unpack ? c->unpack_n : 0);
    if (c->end) c->end(c->end_arg, unpack);
    if (c->arrays != c->small) free(c->arrays);
    free(c->w);
    if (c->heap) free(c);
}

/* ---- The nonblocking and persistent forms (a build, route/build.h): the
 * call is kept by the build's operation from its posting to its end. */

/* At the head of its communicator's queue: the blocking form's operation,
 * started (the composition across nodes, or the node operation). */
static void v_owned_start(struct strata_build *build)
{
    struct vcall *c = build->owned;
    struct strata_ctx *ctx = build->ctx;
    if (ctx->net) {
        strata_net_vblock_start(&c->net, ctx->net, strata_coll_engine(c->coll), &c->a,
                                build->has_desc ? build->desc : NULL, sizeof build->desc);
        build->owned_task = &c->net.op;
        return;
    }
    c->v.lent = c->arrays; /* as in vrun: v_owned_finish ends the call after the operation */
    strata_vblock_start(&c->o, ctx->plane, c->coll, &c->a, -1, choose);
    build->owned_task = &c->o.op;
}

static void v_owned_finish(struct strata_build *build, int finished)
{
    struct vcall *c = build->owned;
    if (build->owned_task && build->ctx->net)
        free(c->net.arrays); /* NULL unless the operation ended early with an error */
    else if (finished && build->owned_task)
        report(build->ctx, build->call, &c->o, !build->replay);
    vcall_end(c, finished);
    build->owned = NULL;
}

/* Runs a call whose sides are open, then ends it; or, given a build, hands
 * the call to the build's operation. */
static int vfinish(struct strata_ctx *ctx, struct vcall *c, struct strata_build *build)
{
    if (build && ctx->size > 1) {
        vargs(c);
        build->kind = STRATA_BUILD_OWNED;
        build->owned = c;
        build->owned_start = v_owned_start;
        build->owned_finish = v_owned_finish;
        if (ctx->net) {
            /* Counted now, reported when it starts (nonblocking.c). */
            build->has_desc = strata_entry_across_start(c->coll, build->desc, build) != NULL;
            build->bytes = largest_block(ctx, c);
        }
        return MPI_SUCCESS;
    }
    int rc = vrun(ctx, c, build);
    vcall_end(c, 1);
    return rc;
}

/* The sides' own byte runs (scratch for side_open). */
static size_t *scratch_of(struct vcall *c, int size, int which) { return c->arrays + (4 + 2 * which) * size; }

/* The checks MPI_Gatherv and MPI_Scatterv share: the root's vector side
 * (vbuf, vcounts, vdispls, vtype; the receive side of a gather, the send
 * side of a scatter) and every rank's one block (buf, *count, type), whose
 * MPI_IN_PLACE at the root means in place.  Sets *at_root, *in_place and,
 * at the root, *w (the counts then the displacements widened, w_alloc'ed
 * with wstack; the caller frees it with w_free, also when the call goes to
 * the host), and *vt and *t: the types of the sides checked (the others'
 * arguments are not significant, so not looked at).  The send side is
 * checked first either way, so a call bad on both sides names what it
 * named before this was shared.  Returns why the call goes to the host, or
 * NULL. */
static const char *rooted_bad(const struct strata_ctx *ctx, int root, MPI_Comm comm, int large,
                              int vector_is_recv, const void *vbuf, const void *vcounts,
                              const void *vdispls, MPI_Datatype vtype, const void *buf,
                              const long long *count, MPI_Datatype type, int *at_root,
                              int *in_place, long long **w, long long *wstack,
                              struct vtype *vt, struct vtype *t, const struct strata_build *build)
{
    int size = ctx->size;
    const char *vside = vector_is_recv ? "recv" : "send", *side = vector_is_recv ? "send" : "recv";
    const char *why = NULL;
    *at_root = ctx->rank == root;
    *in_place = *at_root && buf == MPI_IN_PLACE;
    if (root < 0 || root >= size)
        return strata_reason_bad_args(1, root, size, 0, NULL, 0, MPI_DATATYPE_NULL, NULL, 0,
                                      MPI_DATATYPE_NULL, -1);
    if (*at_root && vcounts && vdispls) {
        *w = w_alloc(comm, 2 * (size_t)size, wstack, build);
        widen(*w, vcounts, size, 1, large);
        widen(*w + size, vdispls, size, 0, large);
    }
    if (*at_root) *vt = vtype_of(vtype);
    if (!*in_place) *t = vtype_of(type);
    if (!vector_is_recv && *at_root) why = side_bad(vside, vbuf, vcounts, vdispls, *w, size, vt);
    if (!why && !*in_place) why = side_bad(side, buf, count, count, count, 1, t);
    if (!why && vector_is_recv && *at_root)
        why = side_bad(vside, vbuf, vcounts, vdispls, *w, size, vt);
    if (!why && !*at_root && buf == MPI_IN_PLACE)
        why = vector_is_recv ? "sendbuf is MPI_IN_PLACE on a rank other than the root"
                             : "recvbuf is MPI_IN_PLACE on a rank other than the root";
    return why;
}

/* vfinish, then the agreement's end of the call (check.h); the call id is
 * taken first: vfinish frees c. */
static int vfinish_checked(struct strata_ctx *ctx, struct vcall *c, struct strata_build *build)
{
    int call = strata_build_call_id(build, c->coll);
    return strata_check_end(ctx, call, vfinish(ctx, c, build), build);
}

/* ---- The agreement's rounds (serve/check.h): what this rank sends
 * each rank and expects from each, in bytes (-1: nothing), which the ranks
 * compare pair by pair before anything moves. */
struct vpairs {
    long long *to, *from;
    long long sent, expected; /* their totals, for the signature */
};

/* Sets every pair to "nothing" (the caller fills in what it moves). */
static void pairs_init(struct vpairs *v, long long *space, int size)
{
    v->to = space;
    v->from = space + size;
    for (int r = 0; r < 2 * size; r++) space[r] = -1;
}

/* The totals, once the pairs are filled in. */
static void pairs_total(struct vpairs *v, int size)
{
    v->sent = v->expected = 0;
    for (int r = 0; r < size; r++) {
        if (v->to[r] > 0) v->sent += v->to[r];
        if (v->from[r] > 0) v->expected += v->from[r];
    }
}

/* Bytes of counts[r] elements of t, for every rank r, of a side that
 * passed side_bad (so none overflows).  The type's size was looked up once
 * (vtype_of): per rank, it was a tenth of a small call's instructions at 2
 * ranks, and grows with them. */
static void pairs_bytes(long long *out, const long long *counts, int size, const struct vtype *t)
{
    for (int r = 0; r < size; r++) out[r] = vtype_bytes(t, counts[r]);
}

/* Settles a v-collective: the first round (the call and root), then, on a
 * plane, the pairs' round.  ctx, or NULL for the host MPI or a refusal
 * (the entry point's HOST_CALL returns its error). */
static struct strata_ctx *vsettle(struct strata_ctx *ctx, enum strata_coll coll, int root,
                                  struct vpairs *v, int receives, const char *why,
                                  struct strata_build *build)
{
    if (!why) pairs_total(v, ctx->size);
    ctx = strata_entry_settle_v(ctx, coll, root, why ? STRATA_SIG_UNUSED : v->sent,
                                why ? STRATA_SIG_UNUSED : v->expected, why, build);
    if (!ctx) return NULL;
    return strata_check_vcounts(ctx, strata_build_call_id(build, coll), v->to, v->from,
                                receives, build) == STRATA_CHECK_RUN
               ? ctx
               : NULL;
}

/* ---- MPI_Gatherv */

int strata_serve_gatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const void *recvcounts, const void *displs,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                         struct strata_build *build)
{
    struct strata_ctx *ctx = strata_entry_served(comm, STRATA_COLL_GATHERV, build);
    long long *w = NULL, wstack[4 * VCALL_INLINE];
    int at_root = 0, in_place = 0;
    struct vtype st = {sendtype, -1, 0}, rt = {recvtype, -1, 0};
    if (ctx) {
        const char *why = rooted_bad(ctx, root, comm, large, 1, recvbuf, recvcounts, displs,
                                     recvtype, sendbuf, &sendcount, sendtype, &at_root,
                                     &in_place, &w, wstack, &rt, &st, build);
        long long space[2 * ctx->size];
        struct vpairs v;
        pairs_init(&v, space, ctx->size);
        if (!why && !in_place) v.to[root] = vtype_bytes(&st, sendcount);
        if (!why && at_root) pairs_bytes(v.from, w, ctx->size, &rt);
        if (!why && in_place) v.from[root] = -1;
        ctx = vsettle(ctx, STRATA_COLL_GATHERV, root, &v, at_root, why, build);
    }
    if (!ctx) {
        w_free(w, wstack);
        return HOST_CALL(build, large,
                         large ? HOST_LARGE(Gatherv, sendbuf, sendcount, sendtype, recvbuf,
                                            recvcounts, displs, recvtype, root, comm)
                               : PMPI_Gatherv(sendbuf, (int)sendcount, sendtype, recvbuf,
                                              recvcounts, displs, recvtype, root, comm),
                         PMPI_Igatherv(sendbuf, (int)sendcount, sendtype, recvbuf, recvcounts,
                                       displs, recvtype, root, comm, strata_nb_host_request()));
    }
    int size = ctx->size;
    struct vcall call, *c = vcall_new(ctx, STRATA_COLL_GATHERV, root, &call, w, wstack, build);
    c->one[0] = sendcount;
    c->in_place = in_place;
    c->unpack_n = size;
    if (!in_place) {
        size_t *len = scratch_of(c, size, 0), *off = len + size;
        side_open(&c->send, comm, sendbuf, &st, 1, &c->one[0], &c->one[1], len, off, 1);
        c->send_used = 1;
        c->out_len[root] = len[0];
        c->out_off[root] = off[0];
    }
    if (at_root) {
        /* In place, the root's own block is input too: packed in with the rest. */
        side_open(&c->recv, comm, recvbuf, &rt, size, w, w + size, c->in_len, c->in_off,
                  in_place);
        c->recv_used = 1;
    }
    return vfinish_checked(ctx, c, build);
}

/* ---- MPI_Scatterv */

int strata_serve_scatterv(const void *sendbuf, const void *sendcounts, const void *displs,
                          MPI_Datatype sendtype, void *recvbuf, long long recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, int large,
                          struct strata_build *build)
{
    struct strata_ctx *ctx = strata_entry_served(comm, STRATA_COLL_SCATTERV, build);
    long long *w = NULL, wstack[4 * VCALL_INLINE];
    int at_root = 0, in_place = 0;
    struct vtype st = {sendtype, -1, 0}, rt = {recvtype, -1, 0};
    if (ctx) {
        const char *why = rooted_bad(ctx, root, comm, large, 0, sendbuf, sendcounts, displs,
                                     sendtype, recvbuf, &recvcount, recvtype, &at_root,
                                     &in_place, &w, wstack, &st, &rt, build);
        long long space[2 * ctx->size];
        struct vpairs v;
        pairs_init(&v, space, ctx->size);
        if (!why && at_root) pairs_bytes(v.to, w, ctx->size, &st);
        if (!why && in_place) v.to[root] = -1;
        if (!why && !in_place) v.from[root] = vtype_bytes(&rt, recvcount);
        ctx = vsettle(ctx, STRATA_COLL_SCATTERV, root, &v, !in_place, why, build);
    }
    if (!ctx) {
        w_free(w, wstack);
        return HOST_CALL(build, large,
                         large ? HOST_LARGE(Scatterv, sendbuf, sendcounts, displs, sendtype,
                                            recvbuf, recvcount, recvtype, root, comm)
                               : PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                               (int)recvcount, recvtype, root, comm),
                         PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                        (int)recvcount, recvtype, root, comm,
                                        strata_nb_host_request()));
    }
    int size = ctx->size;
    struct vcall call, *c = vcall_new(ctx, STRATA_COLL_SCATTERV, root, &call, w, wstack, build);
    c->one[0] = recvcount;
    c->in_place = 0; /* the send side is there; the root's receive side is not */
    c->unpack_n = 1;
    if (at_root) {
        side_open(&c->send, comm, sendbuf, &st, size, w, w + size, c->out_len, c->out_off, 1);
        c->send_used = 1;
    }
    if (!in_place) {
        size_t *len = scratch_of(c, size, 0), *off = len + size;
        side_open(&c->recv, comm, recvbuf, &rt, 1, &c->one[0], &c->one[1], len, off, 0);
        c->recv_used = 1;
        c->in_len[root] = len[0];
        c->in_off[root] = off[0];
    }
    return vfinish_checked(ctx, c, build);
}

/* ---- MPI_Allgatherv */

int strata_serve_allgatherv(const void *sendbuf, long long sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const void *recvcounts, const void *displs,
                            MPI_Datatype recvtype, MPI_Comm comm, int large,
                            struct strata_build *build)
{
    struct strata_ctx *ctx = strata_entry_served(comm, STRATA_COLL_ALLGATHERV, build);
    long long *w = NULL, wstack[4 * VCALL_INLINE];
    const char *why = NULL;
    int in_place = sendbuf == MPI_IN_PLACE;
    struct vtype st = {sendtype, -1, 0}, rt = {recvtype, -1, 0};
    if (ctx) {
        int size = ctx->size;
        if (recvcounts && displs) {
            w = w_alloc(comm, 2 * (size_t)size, wstack, build);
            widen(w, recvcounts, size, 1, large);
            widen(w + size, displs, size, 0, large);
        }
        if (!in_place) {
            st = vtype_of(sendtype);
            why = side_bad("send", sendbuf, &sendcount, &sendcount, &sendcount, 1, &st);
        }
        if (!why) {
            rt = vtype_of(recvtype);
            why = side_bad("recv", recvbuf, recvcounts, displs, w, size, &rt);
        }
        long long space[2 * size];
        struct vpairs v;
        pairs_init(&v, space, size);
        if (!why) {
            long long sent = in_place ? vtype_bytes(&rt, w[ctx->rank]) : vtype_bytes(&st, sendcount);
            for (int r = 0; r < size; r++) v.to[r] = sent;
            pairs_bytes(v.from, w, size, &rt);
        }
        ctx = vsettle(ctx, STRATA_COLL_ALLGATHERV, -1, &v, 1, why, build);
    }
    if (!ctx) {
        w_free(w, wstack);
        return HOST_CALL(build, large,
                         large ? HOST_LARGE(Allgatherv, sendbuf, sendcount, sendtype, recvbuf,
                                            recvcounts, displs, recvtype, comm)
                               : PMPI_Allgatherv(sendbuf, (int)sendcount, sendtype, recvbuf,
                                                 recvcounts, displs, recvtype, comm),
                         PMPI_Iallgatherv(sendbuf, (int)sendcount, sendtype, recvbuf, recvcounts,
                                          displs, recvtype, comm, strata_nb_host_request()));
    }
    int size = ctx->size;
    struct vcall call, *c = vcall_new(ctx, STRATA_COLL_ALLGATHERV, -1, &call, w, wstack, build);
    c->one[0] = sendcount;
    c->in_place = in_place;
    c->unpack_n = size;
    if (!in_place) {
        size_t *len = scratch_of(c, size, 0), *off = len + size;
        side_open(&c->send, comm, sendbuf, &st, 1, &c->one[0], &c->one[1], len, off, 1);
        c->send_used = 1;
        for (int r = 0; r < size; r++) c->out_len[r] = len[0], c->out_off[r] = off[0];
    }
    /* In place, this rank's block is input: packed in with the rest. */
    side_open(&c->recv, comm, recvbuf, &rt, size, w, w + size, c->in_len, c->in_off, in_place);
    c->recv_used = 1;
    return vfinish_checked(ctx, c, build);
}

/* ---- MPI_Alltoallv */

int strata_serve_alltoallv(const void *sendbuf, const void *sendcounts, const void *sdispls,
                           MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                           const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm, int large,
                           struct strata_build *build)
{
    struct strata_ctx *ctx = strata_entry_served(comm, STRATA_COLL_ALLTOALLV, build);
    long long *w = NULL, wstack[4 * VCALL_INLINE];
    const char *why = NULL;
    int in_place = sendbuf == MPI_IN_PLACE;
    struct vtype st = {sendtype, -1, 0}, rt = {recvtype, -1, 0};
    if (ctx) {
        int size = ctx->size;
        w = w_alloc(comm, 4 * (size_t)size, wstack, build);
        if (!in_place && sendcounts && sdispls) {
            widen(w, sendcounts, size, 1, large);
            widen(w + size, sdispls, size, 0, large);
        }
        if (recvcounts && rdispls) {
            widen(w + 2 * size, recvcounts, size, 1, large);
            widen(w + 3 * size, rdispls, size, 0, large);
        }
        if (!in_place) {
            st = vtype_of(sendtype);
            why = side_bad("send", sendbuf, sendcounts, sdispls, w, size, &st);
        }
        if (!why) {
            rt = vtype_of(recvtype);
            why = side_bad("recv", recvbuf, recvcounts, rdispls, w + 2 * size, size, &rt);
        }
        long long space[2 * size];
        struct vpairs v;
        pairs_init(&v, space, size);
        if (!why) {
            /* In place, the receive side holds the outgoing blocks. */
            pairs_bytes(v.to, in_place ? w + 2 * size : w, size, in_place ? &rt : &st);
            pairs_bytes(v.from, w + 2 * size, size, &rt);
        }
        ctx = vsettle(ctx, STRATA_COLL_ALLTOALLV, -1, &v, 1, why, build);
    }
    if (!ctx) {
        w_free(w, wstack);
        return HOST_CALL(build, large,
                         large ? HOST_LARGE(Alltoallv, sendbuf, sendcounts, sdispls, sendtype,
                                            recvbuf, recvcounts, rdispls, recvtype, comm)
                               : PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                recvcounts, rdispls, recvtype, comm),
                         PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm,
                                         strata_nb_host_request()));
    }
    int size = ctx->size;
    struct vcall call, *c = vcall_new(ctx, STRATA_COLL_ALLTOALLV, -1, &call, w, wstack, build);
    c->in_place = in_place;
    c->unpack_n = size;
    if (!in_place) {
        side_open(&c->send, comm, sendbuf, &st, size, w, w + size, c->out_len, c->out_off, 1);
        c->send_used = 1;
    }
    /* In place, recv holds the outgoing blocks: packed in. */
    side_open(&c->recv, comm, recvbuf, &rt, size, w + 2 * size, w + 3 * size, c->in_len,
              c->in_off, in_place);
    c->recv_used = 1;
    if (in_place) {
        /* The engine reads the outgoing blocks where the incoming ones go. */
        memcpy(c->out_len, c->in_len, (size_t)size * sizeof(size_t));
        memcpy(c->out_off, c->in_off, (size_t)size * sizeof(size_t));
    }
    return vfinish_checked(ctx, c, build);
}

/* ---- A call whose byte layout its caller built (wcollectives.c). */

int strata_vcall_bytes(struct strata_ctx *ctx, enum strata_coll coll, const unsigned char *send,
                       unsigned char *recv, const struct strata_vlayout *layout,
                       void (*end)(void *arg, int finished), void *arg,
                       struct strata_build *build)
{
    int size = ctx->size;
    struct vcall call, *c = vcall_new(ctx, coll, -1, &call, NULL, NULL, build);
    c->in_place = send == NULL;
    c->send.run = (unsigned char *)send; /* no packed copy: side_close leaves it */
    c->send_used = send != NULL;
    c->recv.run = recv;
    c->recv_used = 1;
    c->end = end;
    c->end_arg = arg;
    memcpy(c->out_len, layout->out_len, (size_t)size * sizeof(size_t));
    memcpy(c->out_off, layout->out_off, (size_t)size * sizeof(size_t));
    memcpy(c->in_len, layout->in_len, (size_t)size * sizeof(size_t));
    memcpy(c->in_off, layout->in_off, (size_t)size * sizeof(size_t));
    c->v.pieces = layout->pieces; /* the caller's: it lives until end() */
    return vfinish_checked(ctx, c, build);
}
