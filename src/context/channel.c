/* Persistent requests' planes (context.h, strata_ctx_channel).
 *
 * MPI-4 matches persistent collectives by their _init calls, and lets ranks
 * start them in any order, among themselves and among the communicator's
 * other collectives.  A plane runs its operations in one order, the same on
 * every rank; so a request whose starts must not wait behind anything gets
 * a plane of its own.  _init is local (it may not wait for another rank),
 * so the plane is not set up with a host collective: the communicator's
 * rank 0 creates the segment at its own _init and writes how to attach it
 * into a slot of its control lines in the communicator's plane; the other
 * ranks attach when their first start of the request runs, polling the slot
 * as any wait polls (rank 0 must have called _init before that start can
 * complete anyway).  The segment is opened through rank 0's descriptor
 * (anonymous memfd), so nothing is ever named in /dev/shm; where segments
 * cannot be opened that way (no single-copy transport), no channel is made. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "shm/flags.h"
#include "util/log.h"

static struct strata_channel_slot *slot_of(const struct strata_ctx *parent, int k)
{
    return &parent->plane->ctl[0].channel[k];
}

static size_t channel_bytes(const struct strata_ctx *parent)
{
    return strata_plane_segment_bytes(parent->size, parent->hier.nlevels, parent->plane->region);
}

/* The channel's plane over its segment, as the communicator's own (the
 * same ranks, transport, region size and distances).  0, or -1. */
static int plane_over(struct strata_ctx *ch, const struct strata_segment *seg)
{
    const struct strata_plane *pp = ch->channel_of->plane;
    struct strata_plane *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->seg = *seg;
    if (strata_plane_init(p, &ch->hier, ch->rank, ch->size, pp->pid, pp->xport, pp->region)) {
        strata_plane_fini(p); /* releases the segment too */
        free(p);
        return -1;
    }
    memcpy(p->dist, pp->dist, (size_t)ch->size);
    p->stats = pp->stats;
    ch->plane = p;
    return 0;
}

/* Rank 0: the segment, created and published (or the reason it failed). */
static void publish(struct strata_ctx *ch)
{
    struct strata_channel_slot *s = slot_of(ch->channel_of, ch->channel);
    struct strata_segment seg = {0};
    char why[sizeof s->name] = "";
    size_t bytes = channel_bytes(ch->channel_of);
    int ok = !strata_segment_create(&seg, bytes, 1, ch->serial, why, sizeof why);
    if (ok && plane_over(ch, &seg)) {
        snprintf(why, sizeof why, "out of memory for a persistent request's plane");
        ok = 0; /* plane_over released the segment */
    }
    snprintf(s->name, sizeof s->name, "%s", ok ? seg.name : why);
    s->bytes = bytes;
    /* Release: name and bytes go with the stamp. */
    strata_plane_publish(ch->channel_of->plane, &s->stamp,
                         ok ? STRATA_CHANNEL_READY : STRATA_CHANNEL_FAILED);
}

struct strata_ctx *strata_ctx_channel(struct strata_ctx *ctx)
{
    /* Every rank reaches the same verdict: the plane, the transport and the
     * count of requests are agreed or counted alike. */
    if (!ctx || ctx->channel_of || !ctx->plane || ctx->net ||
        !strata_plane_single_copy(ctx->plane))
        return NULL;
    /* Requests STRATA_PLANE_CHANNELS apart in _init order share a channel:
     * the k-th on every rank alike.  No lock: every field here is ctx's,
     * and MPI forbids two threads collective calls on one communicator at
     * once. */
    int k = ctx->channels_given++ % STRATA_PLANE_CHANNELS;
    struct strata_ctx *ch = ctx->channels[k];
    if (ch) return ch;
    ch = malloc(sizeof *ch);
    if (!ch) {
        /* The others have a channel k: this rank's starts of the request
         * share the communicator's queue instead, which may not match
         * theirs.  Out of memory at _init: say so. */
        strata_error("out of memory for persistent request %d's plane on communicator #%lu", k,
                     ctx->serial);
        return NULL;
    }
    /* The communicator, ranks and hierarchy are the context's (borrowed:
     * freed with it, never with the channel); queue and plane its own. */
    *ch = *ctx;
    ch->plane = NULL;
    ch->nb_tail = NULL;
    ch->holds = 0;
    ch->gone = 0;
    ch->prev = ch->next = NULL;
    ch->channels_given = 0;
    memset(ch->channels, 0, sizeof ch->channels);
    ch->channel_of = ctx;
    ch->channel = k;
    ctx->channels[k] = ch;
    if (ctx->rank == 0) publish(ch);
    return ch;
}

int strata_ctx_channel_ready(struct strata_ctx *ch, char *why, size_t whylen)
{
    if (!ch->channel_of || ch->plane) return 1;
    struct strata_channel_slot *s = slot_of(ch->channel_of, ch->channel);
    /* Acquire: name and bytes are rank 0's for that stamp. */
    uint64_t stamp = strata_flag_read(&s->stamp);
    if (stamp == 0) return 0;
    if (stamp == STRATA_CHANNEL_FAILED) {
        snprintf(why, whylen, "%s", s->name);
        return -1;
    }
    struct strata_segment seg;
    if (strata_segment_attach(&seg, s->name, s->bytes, why, whylen)) return -1;
    /* Relaxed: a count rank 0 reads at the channel's end, when every
     * operation on it is over; it only decides whether to keep a descriptor. */
    atomic_fetch_add_explicit(&s->attached, 1, memory_order_relaxed);
    if (plane_over(ch, &seg)) {
        snprintf(why, whylen, "out of memory for a persistent request's plane");
        return -1;
    }
    return 1;
}

void strata_ctx_channels_free(struct strata_ctx *ctx)
{
    for (int k = 0; k < STRATA_PLANE_CHANNELS; k++) {
        struct strata_ctx *ch = ctx->channels[k];
        if (!ch) continue;
        /* A rank may still attach after this rank is done with the request
         * (a Bcast root finishes before its readers start): rank 0 then
         * leaves its descriptor open, so the segment stays reachable until
         * this process ends. */
        if (ch->plane && ctx->rank == 0 && ctx->plane &&
            atomic_load_explicit(&slot_of(ctx, k)->attached, memory_order_relaxed) <
                (uint64_t)(ctx->size - 1))
            ch->plane->seg.fd = -1;
        if (ch->plane) {
            strata_plane_fini(ch->plane);
            free(ch->plane);
        }
        free(ch);
        ctx->channels[k] = NULL;
    }
}
