/* Per-communicator context: created on a communicator's first collective,
 * cached as an attribute, released by the attribute's delete callback when
 * the communicator is freed, or at MPI_Finalize for those never freed.
 *
 * The verdict "strata serves this communicator" is agreed by every rank at
 * creation with one collective, so that no rank takes strata's path while
 * another hands the same call to the host MPI. */
#ifndef STRATA_CONTEXT_H
#define STRATA_CONTEXT_H

#include <mpi.h>

#include "coll/plane.h"
#include "topology/hierarchy.h"

struct strata_topo;

/* What each rank checks on its own before the agreement; a bit per check so
 * the agreement can say which check failed. */
/* If you add a check here, also update: STRATA_CAP_CONTEXT (or the bits
 * after it), capability_failure in src/context/context.c (the reason a user
 * reads when the check fails), and what sets the bit there (local_capabilities). */
enum strata_capability {
    STRATA_CAP_RUNTIME = 1 << 0,   /* strata set up on this rank */
    STRATA_CAP_IN_WORLD = 1 << 1,  /* every member is a rank of MPI_COMM_WORLD */
    STRATA_CAP_HIERARCHY = 1 << 2, /* the hierarchy could be built */
    STRATA_CAP_NOT_REFUSED = 1 << 3, /* not refused by STRATA_TEST_REFUSE_RANK */
    STRATA_CAP_CONTEXT = (1 << 4) - 1, /* all of the above: strata serves the communicator */
    STRATA_CAP_SEGMENT = 1 << 4,   /* attached the node's control segment (across
                                      nodes: this rank's node context is ready) */
    STRATA_CAP_TRANSPORT = 1 << 5, /* the runtime's transport still works here as its
                                      probe found at MPI_Init (its unchanged call) */
};

struct strata_ctx {
    MPI_Comm comm;
    int rank, size;
    int *world_rank;              /* [size] world rank of each member */
    struct strata_hier hier;
    int served;                   /* the agreed verdict */
    char reason[256];             /* why not served (same on every rank) */
    struct strata_plane *plane;   /* node data plane, NULL if none (agreed) */
    struct strata_net *net;       /* across nodes: the node view, NULL if none (agreed) */
    char plane_why[320];          /* why there is none (same on every rank) */
    unsigned long serial;         /* creation order, for messages */
    void *nb_tail;                /* request/nonblocking.c: the last nonblocking
                                     operation queued on it, NULL if none (under its lock) */
    int holds;                    /* operations kept for persistent requests that use it
                                     (strata_ctx_hold; under the registry's lock) */
    int gone;                     /* its communicator was freed while held: it goes with
                                     the last hold */
    struct strata_ctx *prev, *next; /* registry of live contexts */
    /* Persistent requests' planes (strata_ctx_channel).  In a communicator's
     * context: how many requests asked for one, and those made (freed with
     * it).  In a channel: the context it belongs to and its slot. */
    int channels_given;
    struct strata_ctx *channels[STRATA_PLANE_CHANNELS];
    struct strata_ctx *channel_of;
    int channel;
    /* The communicator's process topology (topo.h), read by its first
     * neighbourhood collective; NULL until then. */
    struct strata_topo *topo;
};

/* The context of an intracommunicator, creating it (collectively) if this is
 * its first collective.  NULL means "pass through without a context": strata
 * is off, the communicator is an intercommunicator or MPI_COMM_NULL.  All
 * ranks of a communicator get the same answer. */
struct strata_ctx *strata_ctx_get(MPI_Comm comm);

/* Set by request/nonblocking.c: completes the nonblocking operations
 * still queued on a context before it is destroyed (a communicator freed
 * while they are pending, which MPI allows). */
extern void (*strata_ctx_before_free)(struct strata_ctx *ctx);

/* A persistent request may be started after its communicator was freed
 * (MPI keeps a communicator while requests refer to it): an operation kept
 * for such a request holds its context, which then outlives the
 * communicator's MPI_Comm_free (its plane and node communicators with it)
 * and goes at the last drop. */
void strata_ctx_hold(struct strata_ctx *ctx);
void strata_ctx_drop(struct strata_ctx *ctx);

/* A plane of its own for a persistent request, so that its starts run in
 * no queue but its own (docs/DESIGN.md, "Order of persistent starts"): a
 * channel, a context that shares ctx's communicator, ranks and hierarchy
 * and has a plane and an operation queue of its own.  Called at the
 * request's _init, which every rank makes in the same order: the k-th call
 * on ctx gets channel k % STRATA_PLANE_CHANNELS on every rank (requests
 * that many apart share one).  NULL (the request shares ctx's queue)
 * across nodes, where segments cannot be opened by descriptor (no
 * single-copy transport), or out of memory.  Local: the communicator's rank 0 creates the segment now and
 * publishes it in its control lines; the others attach in
 * strata_ctx_channel_ready.  Freed with ctx. */
struct strata_ctx *strata_ctx_channel(struct strata_ctx *ctx);

/* Whether a channel's plane can run: 1 (attached), 0 (rank 0 has not
 * published it yet: ask again), -1 (it could not be made: why says it).
 * 1 at once for any other context. */
int strata_ctx_channel_ready(struct strata_ctx *ctx, char *why, size_t whylen);

/* Frees ctx's channels (context.c, with ctx itself). */
void strata_ctx_channels_free(struct strata_ctx *ctx);

/* Releases every live context (MPI_Finalize). */
void strata_ctx_release_all(void);

/* Number of live contexts in this process (tests and strata-info). */
int strata_ctx_live_count(void);

/* The node view of a communicator that spans several nodes (struct
 * strata_net, net/net.h), built and freed with its context: it holds a
 * context for the rank's node. */
/* Builds the node view of ctx (collective over ctx->comm).  0, or -1 with
 * the reason in why (then nothing is left allocated). */
int strata_net_create(struct strata_ctx *ctx, char *why, size_t whylen);

/* Whether this rank's node can run its part (its data plane is set up, or
 * it holds one rank). */
int strata_net_node_ready(const struct strata_net *net);

void strata_net_free(struct strata_net *net);

#endif
