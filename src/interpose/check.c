/* Per-call argument agreement: inside a node through the plane's signature
 * lines, across nodes with one host MPI reduction. */
#include "interpose/check.h"

#include <stdint.h>
#include <stdio.h>

#include "coll/plane.h"
#include "config/config.h"
#include "net/net.h"
#include "shm/flags.h"
#include "util/hot.h"

STRATA_HOT int strata_check_enabled(void)
{
    const struct strata_config *cfg = strata_config();
    return cfg && cfg->check_args;
}

/* What one rank brought, in the order the verdict compares it. */
struct brought {
    long long bytes;
    int coll, root;
};

static void describe(const struct brought *first, int first_rank, const struct brought *other,
                     int other_rank, char *why, size_t whylen)
{
    if (first->coll != other->coll)
        snprintf(why, whylen, "ranks disagree on the call: rank %d calls %s, rank %d %s",
                 first_rank, strata_coll_name((enum strata_coll)first->coll), other_rank,
                 strata_coll_name((enum strata_coll)other->coll));
    else if (first->bytes < 0 || other->bytes < 0)
        snprintf(why, whylen, "rank %d leaves its arguments to the host MPI to check",
                 first->bytes < 0 ? first_rank : other_rank);
    else if (first->root != other->root)
        snprintf(why, whylen, "ranks disagree on the root: rank %d names %d, rank %d names %d",
                 first_rank, first->root, other_rank, other->root);
    else
        snprintf(why, whylen,
                 "type signatures differ across ranks: rank %d brings %lld bytes, rank %d %lld",
                 first_rank, first->bytes, other_rank, other->bytes);
}

static int same(const struct brought *a, const struct brought *b)
{
    return a->coll == b->coll && a->root == b->root && a->bytes == b->bytes && a->bytes >= 0;
}

/* Inside a node: publish, then read every other rank's line.  Each rank's
 * two slots alternate by call parity; a rank writes a slot again two calls
 * later, after every rank has published the call in between, which each
 * does only once it has finished reading this call's slots: no slot is
 * overwritten while a reader still needs it. */
static int check_plane(struct strata_plane *p, const struct brought *mine, char *why,
                       size_t whylen)
{
    uint64_t call = ++p->checks;
    struct strata_call_sig *slot = &p->ctl[p->rank].sig[call & 1];
    slot->bytes = mine->bytes;
    slot->coll = mine->coll;
    slot->root = mine->root;
    strata_plane_publish(p, &slot->stamp, call); /* the fields above go with it */
    /* Rank 0's call is the reference, so every rank names the same pair. */
    struct brought ref = *mine;
    int agreed = 1;
    for (int r = 0; r < p->size; r++) {
        struct strata_call_sig *s = &p->ctl[r].sig[call & 1];
        if (r != p->rank) strata_plane_wait_ge(p, &s->stamp, call, p->pid[r]);
        struct brought b = {s->bytes, s->coll, s->root};
        if (r == 0) ref = b;
        if (agreed && !same(&ref, &b)) {
            describe(&ref, 0, &b, r, why, whylen);
            agreed = 0;
        }
    }
    return agreed;
}

/* Across nodes: one reduction of each field and its negation gives every
 * rank the minimum and maximum of each. */
static int check_net(struct strata_ctx *ctx, const struct brought *mine, char *why, size_t whylen)
{
    long long in[6] = {mine->bytes, -mine->bytes, mine->coll, -(long long)mine->coll,
                       mine->root, -(long long)mine->root};
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

int strata_check_call(struct strata_ctx *ctx, enum strata_coll coll, int root, long long bytes,
                      char *why, size_t whylen)
{
    struct brought mine = {bytes < 0 ? -1 : bytes, (int)coll, root};
    if (ctx->net) return check_net(ctx, &mine, why, whylen);
    if (ctx->plane) return check_plane(ctx->plane, &mine, why, whylen);
    return mine.bytes >= 0; /* a communicator of one rank */
}
