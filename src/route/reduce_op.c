/* Kernels, user-defined ops and datatypes with holes in strata's
 * reductions. */
#include "route/reduce_op.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/ops.h"
#include "route/route.h"
#include "util/log.h"
#include "util/mpi_names.h"
#include "util/hot.h"

/* "#2, user-defined": the op's creation order, the same on every rank
 * that creates its ops alike (the handle is an address in Open MPI), so
 * that STRATA_STATS sums the ranks' reasons into one. */
static const char *user_op_name(const struct strata_user_op *u, char *out, size_t len)
{
    snprintf(out, len, "#%lu (the %lu%s MPI_Op_create of this process)", u->serial, u->serial,
             u->serial % 10 == 1 && u->serial % 100 != 11   ? "st"
             : u->serial % 10 == 2 && u->serial % 100 != 12 ? "nd"
             : u->serial % 10 == 3 && u->serial % 100 != 13 ? "rd"
                                                            : "th");
    return out;
}

STRATA_HOT const char *strata_reduce_op_choose(const struct strata_ctx *ctx, MPI_Op op, MPI_Datatype type,
                                    long long count, struct strata_reduce_args *a,
                                    struct strata_reduce_how *r, char *why, size_t len)
{
    *r = (struct strata_reduce_how){.count = count, .type = type, .comm = ctx->comm};
    a->user = NULL;
    a->fn = strata_reduce_kernel(op, type);
    if (a->fn) return NULL;

    char opn[96], tn[192];
    const char *predefined = strata_predefined_op_name(op);
    if (predefined && strata_reduce_host_rejects(op, type)) {
        snprintf(why, len, "the host MPI rejects %s on datatype %s (asked at MPI_Init): the "
                 "call and its error are the host's", predefined,
                 strata_type_name(type, tn, sizeof tn));
        return why;
    }
    if (predefined) {
        snprintf(why, len, "datatype %s has no reduction kernel for %s",
                 strata_type_name(type, tn, sizeof tn), predefined);
        return why;
    }
    struct strata_user_op u;
    if (!strata_user_op_find(op, &u)) {
        snprintf(why, len, "op %s is user-defined and strata did not see it created "
                 "(created through PMPI_Op_create: a library linked to the host's PMPI_ "
                 "symbols)", strata_op_name(op, opn, sizeof opn));
        return why;
    }
    user_op_name(&u, opn, sizeof opn);
    if (count > INT_MAX) {
        snprintf(why, len, "count %lld is more than op %s's function takes (an int len)", count,
                 opn);
        return why;
    }
    if (!u.commute && ctx->net) {
        snprintf(why, len, "op %s is user-defined and non-commutative, and across nodes strata combines the "
                 "nodes' results in tree order, not rank order", opn);
        return why;
    }
    if (!u.commute && !strata_user_op_rank_ordered(&ctx->hier)) {
        snprintf(why, len, "op %s is user-defined and non-commutative, and the communicator's groups of ranks "
                 "sharing a cache or socket are not runs of consecutive ranks, so strata "
                 "cannot combine in rank order", opn);
        return why;
    }
    /* The datatype: committed (the host MPI reports it otherwise), with
     * elements that follow each other in memory. */
    static char some_data;
    if (strata_route_bad_data(&some_data, count, type)) {
        snprintf(why, len, "datatype %s is not committed (the host MPI reports it)",
                 strata_type_name(type, tn, sizeof tn));
        return why;
    }
    MPI_Aint lb, extent, true_lb, true_extent;
    int size;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    strata_type_size(type, &size);
    if (extent <= 0 || true_extent > extent) {
        snprintf(why, len, "datatype %s has elements that overlap or run backwards (extent "
                 "%ld, true extent %ld): strata moves whole elements one after another",
                 strata_type_name(type, tn, sizeof tn), (long)extent, (long)true_extent);
        return why;
    }
    /* Holes (padding, gaps, a lower bound) must not be written in the
     * application's buffers: such data moves through a private copy. */
    r->staged = !(true_lb == 0 && true_extent == size && extent == size);
    if (r->staged && (long long)count * size > INT_MAX) {
        snprintf(why, len, "datatype %s has holes, and %lld elements of it hold more than 2 GiB "
                 "(strata copies them element by element through MPI_Pack)",
                 strata_type_name(type, tn, sizeof tn), count);
        return why;
    }
    r->user = (struct strata_user_op_call){u, type, (size_t)extent, (ptrdiff_t)true_lb, NULL, 0};
    a->user = &r->user;
    return NULL;
}

/* Copies count elements of type from the buffer at origin `from` to the one
 * at `to`, touching only the bytes the datatype names. */
static void copy_elements(const void *from, void *to, const struct strata_reduce_how *r)
{
    int size, in = 0, out = 0;
    strata_type_size(r->type, &size);
    int bytes = (int)r->count * size; /* at most INT_MAX: see strata_reduce_op_choose */
    void *packed = malloc(bytes ? (size_t)bytes : 1);
    if (!packed) {
        strata_error("out of memory copying a %d-byte reduction operand", bytes);
        PMPI_Abort(r->comm, 1);
    }
    if (PMPI_Pack(from, (int)r->count, r->type, packed, bytes, &in, r->comm) != MPI_SUCCESS ||
        PMPI_Unpack(packed, bytes, &out, to, (int)r->count, r->type, r->comm) != MPI_SUCCESS) {
        strata_error("MPI_Pack or MPI_Unpack failed on a reduction's datatype");
        PMPI_Abort(r->comm, 1);
    }
    free(packed);
}

STRATA_HOT void strata_reduce_op_begin(struct strata_reduce_args *a, struct strata_reduce_how *r,
                            int receives)
{
    if (!a->user) return;
    a->true_extent = a->extent; /* whole elements everywhere (below) */
    if (!r->staged || r->count == 0) return;
    /* Zeroed: the holes are moved along with the data, never read by the
     * op's function nor written back. */
    r->stage = calloc(a->count, a->extent);
    if (!r->stage) {
        strata_error("out of memory for a %zu-byte reduction buffer", a->count * a->extent);
        PMPI_Abort(r->comm, 1);
    }
    char *origin = (char *)r->stage - r->user.shift;
    copy_elements(a->sendbuf ? a->sendbuf : a->recvbuf, origin, r);
    if (receives) {
        r->user_recv = a->recvbuf;
        a->sendbuf = NULL; /* in place in the stage */
        a->recvbuf = r->stage;
    } else {
        a->sendbuf = r->stage;
        a->recvbuf = NULL;
    }
}

STRATA_HOT void strata_reduce_op_end(struct strata_reduce_how *r)
{
    /* Nothing staged, no scratch: every reduction with a predefined op
     * passes here, and three calls that do nothing add up (issue 14). */
    if (!r->stage && !r->user.tmp) return;
    if (r->user_recv) copy_elements((char *)r->stage - r->user.shift, r->user_recv, r);
    free(r->stage);
    r->stage = r->user_recv = NULL;
    strata_user_op_call_end(&r->user);
}
