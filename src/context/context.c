/* Communicator contexts: lazy creation, agreement, caching, release; the
 * node view of a communicator that spans several nodes. */
#include "context/context.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "context/runtime.h"
#include "context/topo.h"
#include "net/net.h"
#include "transport/registry.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

static int ctx_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
/* The registry is process-wide while contexts are per communicator, so
 * threads creating contexts on different communicators must serialise here. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strata_ctx *registry;
static int live_count;
static unsigned long next_serial;

void (*strata_ctx_before_free)(struct strata_ctx *ctx);

/* What a context owns: its plane, its view across nodes (whose node and
 * leader communicators are strata's own), its hierarchy. */
static void ctx_free_owned(struct strata_ctx *ctx)
{
    strata_ctx_channels_free(ctx); /* before the plane their slots are in */
    if (ctx->plane) {
        strata_plane_fini(ctx->plane);
        free(ctx->plane);
    }
    strata_net_free(ctx->net);
    strata_hier_free(&ctx->hier);
    strata_topo_free(ctx->topo);
    free(ctx->world_rank);
    free(ctx);
}

/* The last context each thread looked up (strata_ctx_get): a collective's
 * lookup through the host's attribute table took about 185 instructions
 * on Open MPI, an eighth of an 8-byte MPI_Bcast (issue 31).  A handle may
 * name another communicator once its own was freed, so every context's
 * end bumps ctx_generation first, and an entry of an older generation is
 * never used. */
static atomic_ulong ctx_generation;
static _Thread_local struct {
    MPI_Comm comm;
    struct strata_ctx *ctx;
    unsigned long generation;
} last_ctx;

static void ctx_destroy(struct strata_ctx *ctx)
{
    /* Before anything is freed: no thread's cached entry is used again. */
    atomic_fetch_add_explicit(&ctx_generation, 1, memory_order_acq_rel);
    /* Acquire, as strata_nb_drain's read (nonblocking.c). */
    if (__atomic_load_n(&ctx->nb_tail, __ATOMIC_ACQUIRE) && strata_ctx_before_free)
        strata_ctx_before_free(ctx);
    pthread_mutex_lock(&registry_lock);
    if (ctx->prev) ctx->prev->next = ctx->next;
    else registry = ctx->next;
    if (ctx->next) ctx->next->prev = ctx->prev;
    live_count--;
    int held = ctx->holds > 0;
    ctx->gone = held;
    pthread_mutex_unlock(&registry_lock);
    if (!held) ctx_free_owned(ctx);
}

void strata_ctx_hold(struct strata_ctx *ctx)
{
    pthread_mutex_lock(&registry_lock);
    ctx->holds++;
    pthread_mutex_unlock(&registry_lock);
}

void strata_ctx_drop(struct strata_ctx *ctx)
{
    pthread_mutex_lock(&registry_lock);
    int last = --ctx->holds == 0 && ctx->gone;
    pthread_mutex_unlock(&registry_lock);
    if (last) ctx_free_owned(ctx);
}

static int ctx_delete_attr(MPI_Comm comm, int keyval, void *value, void *extra)
{
    ctx_destroy(value);
    return MPI_SUCCESS;
}

/* A duplicated communicator gets a context of its own on its first
 * collective, so the attribute is not copied. */
static void create_keyval(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete_attr, &ctx_keyval, NULL);
    /* Contexts never freed by the application go at MPI_Finalize. */
    strata_runtime_at_finalize(strata_ctx_release_all);
}

static const char *capability_failure(unsigned bits)
{
    if (!(bits & STRATA_CAP_RUNTIME)) return "strata is not set up on every rank";
    if (!(bits & STRATA_CAP_IN_WORLD))
        return "the communicator holds processes outside MPI_COMM_WORLD";
    if (!(bits & STRATA_CAP_HIERARCHY)) return "the hierarchy could not be built";
    if (!(bits & STRATA_CAP_NOT_REFUSED)) return "STRATA_TEST_REFUSE_RANK refused it";
    return "";
}

/* Checks made by this rank alone; the agreement combines them. */
static unsigned local_capabilities(struct strata_ctx *ctx, const struct strata_runtime *rt)
{
    unsigned bits = STRATA_CAP_CONTEXT;
    char why[128];
    if (!rt || !rt->transport->unchanged || rt->transport->unchanged(why, sizeof why))
        bits |= STRATA_CAP_TRANSPORT;
    if (!rt) return bits & ~(unsigned)STRATA_CAP_RUNTIME & ~(unsigned)STRATA_CAP_IN_WORLD &
                    ~(unsigned)STRATA_CAP_HIERARCHY;
    MPI_Group group, world_group;
    PMPI_Comm_group(ctx->comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int *ranks = malloc(sizeof(int) * (size_t)ctx->size);
    ctx->world_rank = malloc(sizeof(int) * (size_t)ctx->size);
    if (!ranks || !ctx->world_rank) {
        free(ranks);
        PMPI_Group_free(&group);
        PMPI_Group_free(&world_group);
        return bits & ~(unsigned)STRATA_CAP_HIERARCHY;
    }
    for (int i = 0; i < ctx->size; i++) ranks[i] = i;
    PMPI_Group_translate_ranks(group, ctx->size, ranks, world_group, ctx->world_rank);
    free(ranks);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    for (int i = 0; i < ctx->size; i++)
        if (ctx->world_rank[i] == MPI_UNDEFINED) bits &= ~(unsigned)STRATA_CAP_IN_WORLD;

    if (bits & STRATA_CAP_IN_WORLD) {
        struct strata_location *loc = malloc(sizeof *loc * (size_t)ctx->size);
        if (!loc) return bits & ~(unsigned)STRATA_CAP_HIERARCHY;
        for (int i = 0; i < ctx->size; i++) loc[i] = rt->world_loc[ctx->world_rank[i]];
        if (strata_hier_build(&rt->levels, loc, ctx->size, strata_config()->hierarchy,
                              &ctx->hier))
            bits &= ~(unsigned)STRATA_CAP_HIERARCHY;
        free(loc);
    }
    if (strata_config()->test_refuse_rank == rt->world_rank)
        bits &= ~(unsigned)STRATA_CAP_NOT_REFUSED;
    return bits;
}

static void announce(const struct strata_ctx *ctx)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 1 || ctx->rank != 0) return;
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(ctx->comm, name, &len);
    if (!ctx->served) {
        strata_verbose(1, "communicator #%lu%s%s (size %d): host MPI for every collective: %s",
                       ctx->serial, len ? " " : "", name, ctx->size, ctx->reason);
        return;
    }
    if (ctx->size == 1) {
        strata_verbose(1, "communicator #%lu%s%s (size 1): strata serves every collective "
                       "locally (a copy, or nothing)", ctx->serial, len ? " " : "", name);
        return;
    }
    if (ctx->size > 1 && !ctx->plane && !ctx->net) {
        strata_verbose(1, "communicator #%lu%s%s (size %d): host MPI for every collective: %s",
                       ctx->serial, len ? " " : "", name, ctx->size, ctx->plane_why);
        return;
    }
    char desc[4096];
    strata_hier_describe(&ctx->hier, desc, sizeof desc);
    strata_verbose(1, "communicator #%lu%s%s (size %d, %d node%s): strata context, hierarchy:\n%s",
                   ctx->serial, len ? " " : "", name, ctx->size, ctx->hier.nnodes,
                   ctx->hier.nnodes == 1 ? "" : "s", desc);
}

/* What rank 0 tells the others: how the communicator's collectives will
 * run (one node's segment, or the node view across nodes) or why not. */
enum plane_mode { MODE_NONE, MODE_SEGMENT, MODE_NET };

struct segment_offer {
    int ok;
    int mode;
    char name[STRATA_SEGMENT_NAME_MAX];
    char why[256];
};

/* Across nodes: every rank builds the node view (collective), and counts as
 * ready once its node's own context is. */
static void offer_net(struct strata_ctx *ctx, unsigned *mine)
{
    char why[256] = "";
    if (strata_net_create(ctx, why, sizeof why)) {
        strata_verbose(1, "communicator #%lu: %s", ctx->serial, why);
    } else if (strata_net_node_ready(ctx->net)) {
        *mine |= STRATA_CAP_SEGMENT;
        return;
    }
}

/* Rank 0 of a one-node communicator creates the segment; the others attach.
 * Across nodes, every rank builds the node view instead.  Collective
 * whenever strata runs and the communicator has several ranks (the same on
 * every rank), whatever each rank's own checks said; rank 0's hierarchy
 * decides the mode for all. */
static void offer_segment(struct strata_ctx *ctx, unsigned *mine, struct strata_segment *seg)
{
    struct segment_offer offer = {0};
    size_t bytes = strata_plane_segment_bytes(ctx->size, ctx->hier.nlevels,
                                              strata_tuning()->cico_max);
    if (ctx->rank == 0) {
        if ((*mine & STRATA_CAP_CONTEXT) != STRATA_CAP_CONTEXT)
            snprintf(offer.why, sizeof offer.why, "the communicator is not served");
        else if (ctx->hier.nnodes > 1 && ctx->hier.nnodes == ctx->size)
            snprintf(offer.why, sizeof offer.why, "every node holds one rank of the "
                     "communicator: no node level for strata to add (%d nodes)", ctx->size);
        else if (ctx->hier.nnodes > 1)
            offer.mode = MODE_NET;
        else if (!strata_segment_create(seg, bytes,
                                        strata_transport_single_copy(strata_runtime()->transport) &&
                                            (*mine & STRATA_CAP_TRANSPORT),
                                        ctx->serial, offer.why, sizeof offer.why)) {
            offer.ok = 1;
            offer.mode = MODE_SEGMENT;
            snprintf(offer.name, sizeof offer.name, "%s", seg->name);
        }
    }
    PMPI_Bcast(&offer, sizeof offer, MPI_BYTE, 0, ctx->comm);
    snprintf(ctx->plane_why, sizeof ctx->plane_why, "%s", offer.why);
    if (offer.mode == MODE_NET) {
        offer_net(ctx, mine);
        return;
    }
    if (!offer.ok) return;
    char why[256] = "";
    if (ctx->rank == 0 || !strata_segment_attach(seg, offer.name, bytes, why, sizeof why)) {
        *mine |= STRATA_CAP_SEGMENT;
    } else {
        strata_verbose(1, "communicator #%lu: %s", ctx->serial, why);
        snprintf(ctx->plane_why, sizeof ctx->plane_why, "a rank could not attach the node's "
                 "shared segment (STRATA_VERBOSE=1 names it)");
    }
}

/* Once per process, from the communicator's rank 0: the transport stopped
 * working after MPI_Init's probe (for CMA: a rank made itself non-dumpable,
 * dropped CAP_SYS_PTRACE or changed credentials), so new communicators copy
 * through the segment; those set up before keep it and stop the job with a
 * message if a copy is refused. */
static void warn_transport_lost(const struct strata_ctx *ctx, unsigned agreed)
{
    static int warned;
    const struct strata_transport *t = strata_runtime()->transport;
    if (!t->unchanged || (agreed & STRATA_CAP_TRANSPORT) || ctx->rank != 0 || warned) return;
    warned = 1;
    char why[128] = "a rank was made non-dumpable, dropped CAP_SYS_PTRACE or changed its ids";
    t->unchanged(why, sizeof why); /* this rank's own change, if it is one */
    strata_warn("transport %s may be refused since MPI_Init (%s): communicator #%lu and "
                "later ones copy through the segment instead", t->name, why, ctx->serial);
}

/* With the agreed capabilities and every rank's pid, sets up the plane. */
static void adopt_plane(struct strata_ctx *ctx, unsigned agreed, struct strata_segment *seg,
                        const pid_t *pids)
{
    strata_segment_seal(seg); /* everyone has attached (or failed to) */
    if (!(agreed & STRATA_CAP_SEGMENT) || !(ctx->plane = calloc(1, sizeof *ctx->plane))) {
        strata_segment_release(seg);
        return;
    }
    ctx->plane->seg = *seg;
    warn_transport_lost(ctx, agreed);
    if (strata_plane_init(ctx->plane, &ctx->hier, ctx->rank, ctx->size, pids,
                          (agreed & STRATA_CAP_TRANSPORT) ? strata_runtime()->transport
                                                          : strata_transport_at(0),
                          strata_tuning()->cico_max)) {
        /* Out of memory on this rank alone: the job cannot agree any more. */
        strata_error("out of memory setting up communicator #%lu", ctx->serial);
        PMPI_Abort(ctx->comm, 1);
    }
    const struct strata_runtime *rt = strata_runtime();
    const struct strata_location *mine = &rt->world_loc[ctx->world_rank[ctx->rank]];
    for (int r = 0; r < ctx->size; r++)
        ctx->plane->dist[r] = (unsigned char)strata_distance(
            &rt->levels, mine, &rt->world_loc[ctx->world_rank[r]]);
    ctx->plane->stats = strata_stats_enabled();
}

static struct strata_ctx *ctx_create(MPI_Comm comm, const struct strata_runtime *rt)
{
    struct strata_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;  /* every rank then passes through: see strata_ctx_get */
    ctx->comm = comm;
    PMPI_Comm_rank(comm, &ctx->rank);
    PMPI_Comm_size(comm, &ctx->size);
    pthread_mutex_lock(&registry_lock);
    ctx->serial = next_serial++;
    pthread_mutex_unlock(&registry_lock);

    unsigned mine = local_capabilities(ctx, rt);
    struct strata_segment seg = {0};
    if (rt && ctx->size > 1) offer_segment(ctx, &mine, &seg);
    else if (ctx->size > 1) snprintf(ctx->plane_why, sizeof ctx->plane_why, "strata is off");

    /* The agreement: every rank learns which checks failed anywhere (so all
     * reach the same verdict) and every rank's pid (for CMA). */
    struct { unsigned caps; int pid; } me = {mine, (int)getpid()}, *all;
    all = malloc(sizeof *all * (size_t)ctx->size);
    pid_t *pids = malloc(sizeof *pids * (size_t)ctx->size);
    if (!all || !pids) {
        strata_error("out of memory creating a communicator context");
        PMPI_Abort(comm, 1);
    }
    PMPI_Allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, comm);
    unsigned agreed = ~0u;
    for (int r = 0; r < ctx->size; r++) {
        agreed &= all[r].caps;
        pids[r] = all[r].pid;
    }
    free(all);
    ctx->served = (agreed & STRATA_CAP_CONTEXT) == STRATA_CAP_CONTEXT;
    if (!ctx->served) snprintf(ctx->reason, sizeof ctx->reason, "%s", capability_failure(agreed));
    if (ctx->net) {
        /* Across nodes, no plane of its own: the nodes' contexts have them. */
        if (!ctx->served || !(agreed & STRATA_CAP_SEGMENT)) {
            snprintf(ctx->plane_why, sizeof ctx->plane_why, "a node's ranks could not set up "
                     "their data plane (STRATA_VERBOSE=1 names the problem)");
            strata_net_free(ctx->net);
            ctx->net = NULL;
        }
    } else if (ctx->size > 1 && rt) {
        adopt_plane(ctx, ctx->served ? agreed : 0, &seg, pids);
    }
    free(pids);

    pthread_mutex_lock(&registry_lock);
    ctx->next = registry;
    if (registry) registry->prev = ctx;
    registry = ctx;
    live_count++;
    pthread_mutex_unlock(&registry_lock);
    PMPI_Comm_set_attr(comm, ctx_keyval, ctx);
    announce(ctx);
    return ctx;
}

STRATA_HOT struct strata_ctx *strata_ctx_get(MPI_Comm comm)
{
    const struct strata_runtime *rt = strata_runtime_state();
    if (!rt->ready || rt->disabled || comm == MPI_COMM_NULL) return NULL;
    pthread_once(&keyval_once, create_keyval);
    /* The thread's last context, if no context ended since (read before
     * the lookup below, so an end during it makes its entry stale). */
    unsigned long generation = atomic_load_explicit(&ctx_generation, memory_order_acquire);
    if (last_ctx.ctx && last_ctx.comm == comm && last_ctx.generation == generation)
        return last_ctx.ctx;
    /* The cached context first: the common case costs one lookup, and only
     * intracommunicators ever get a context. */
    void *value = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, ctx_keyval, &value, &found) != MPI_SUCCESS) return NULL;
    if (found) {
        last_ctx.comm = comm;
        last_ctx.ctx = value;
        last_ctx.generation = generation;
        return value;
    }
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return NULL;
    /* If allocation failed on one rank the others still joined the agreement
     * above inside ctx_create; a NULL here only happens before it, where no
     * rank has communicated yet, so the job is out of memory anyway. */
    return ctx_create(comm, strata_runtime());
}

void strata_ctx_release_all(void)
{
    /* Deleting the attribute runs ctx_delete_attr, which unlinks the context,
     * and keeps MPI from calling it again on a communicator freed later. */
    for (;;) {
        pthread_mutex_lock(&registry_lock);
        struct strata_ctx *ctx = registry;
        pthread_mutex_unlock(&registry_lock);
        if (!ctx) break;
        PMPI_Comm_delete_attr(ctx->comm, ctx_keyval);
    }
    if (ctx_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&ctx_keyval);
}

int strata_ctx_live_count(void)
{
    pthread_mutex_lock(&registry_lock);
    int n = live_count;
    pthread_mutex_unlock(&registry_lock);
    return n;
}

/* The node view of a communicator that spans several nodes (net/net.h):
 * built here because it creates a context for each node. */

/* Numbers the nodes of ctx's ranks by their lowest rank and lists each
 * node's ranks in ascending order. */
static int map_nodes(struct strata_net *net, const struct strata_ctx *ctx)
{
    const struct strata_runtime *rt = strata_runtime();
    int size = ctx->size;
    int *machine_node = malloc(sizeof(int) * (size_t)size);
    net->node_of = malloc(sizeof(int) * (size_t)size);
    net->node_rank = malloc(sizeof(int) * (size_t)size);
    net->members = malloc(sizeof(int) * (size_t)size);
    net->node_start = calloc((size_t)size + 1, sizeof(int));
    if (!machine_node || !net->node_of || !net->node_rank || !net->members || !net->node_start) {
        free(machine_node);
        return -1;
    }
    net->nnodes = 0;
    for (int r = 0; r < size; r++) {
        machine_node[r] = rt->world_loc[ctx->world_rank[r]].node;
        int n = 0;
        while (n < net->nnodes && machine_node[net->members[net->node_start[n]]] != machine_node[r])
            n++;
        if (n == net->nnodes) {
            /* A new node: remember its first rank where its list will start. */
            net->node_start[n] = r;
            net->members[r] = r;
            net->nnodes++;
        }
        net->node_of[r] = n;
    }
    free(machine_node);
    /* Counting sort by node keeps ranks ascending inside each node. */
    int *count = calloc((size_t)net->nnodes + 1, sizeof(int));
    net->contiguous = malloc((size_t)net->nnodes);
    net->tree_buf = malloc(sizeof(int) * (size_t)net->nnodes);
    if (!count || !net->contiguous || !net->tree_buf) {
        free(count);
        return -1;
    }
    for (int r = 0; r < size; r++) count[net->node_of[r] + 1]++;
    for (int n = 0; n < net->nnodes; n++) count[n + 1] += count[n];
    memcpy(net->node_start, count, sizeof(int) * ((size_t)net->nnodes + 1));
    net->max_node_size = 0;
    for (int r = 0; r < size; r++) {
        int n = net->node_of[r];
        net->node_rank[r] = count[n] - net->node_start[n];
        net->members[count[n]++] = r;
    }
    free(count);
    for (int n = 0; n < net->nnodes; n++) {
        int first = net->members[net->node_start[n]], len = strata_net_node_size(net, n);
        net->contiguous[n] = net->members[net->node_start[n] + len - 1] == first + len - 1;
        if (len > net->max_node_size) net->max_node_size = len;
    }
    net->my_node = net->node_of[ctx->rank];
    net->peer_pid = malloc(sizeof(pid_t) * (size_t)size);
    if (!net->peer_pid) return -1;
    for (int r = 0; r < size; r++) net->peer_pid[r] = rt->world_pid[ctx->world_rank[r]];
    net->engine.peer_pid = net->peer_pid;
    return 0;
}

/* The workers of a node with three ranks or more: every rank but the
 * node's first, with a data plane of their own.  Collective over the node;
 * the node uses two leaders only if every one of its ranks can. */
static void setup_double_leader(struct strata_net *net)
{
    int node_size = strata_net_node_size(net, net->my_node);
    if (strata_tuning()->net_reduce_leaders < 2 || node_size < 3) return;
    int node_rank;
    PMPI_Comm_rank(net->node_comm, &node_rank);
    int first = node_rank == 0;
    PMPI_Comm_split(net->node_comm, first ? MPI_UNDEFINED : 0, node_rank, &net->workers_comm);
    int able = 1;
    if (!first) {
        char name[MPI_MAX_OBJECT_NAME];
        snprintf(name, sizeof name, "strata workers of node %d", net->my_node);
        PMPI_Comm_set_name(net->workers_comm, name);
        net->workers = strata_ctx_get(net->workers_comm);
        able = net->workers && net->workers->served && net->workers->plane;
        if (able) net->workers_plane = net->workers->plane;
    }
    PMPI_Allreduce(&able, &net->double_leader, 1, MPI_INT, MPI_MIN, net->node_comm);
}

int strata_net_create(struct strata_ctx *ctx, char *why, size_t whylen)
{
    struct strata_net *net = calloc(1, sizeof *net);
    if (net) net->node_comm = net->dup = net->workers_comm = MPI_COMM_NULL;
    int ok = net && !map_nodes(net, ctx);
    /* The communicators are made whatever happened on this rank: the calls
     * are collective, and the agreement that follows settles the verdict. */
    MPI_Comm node_comm, dup;
    PMPI_Comm_split(ctx->comm, ok ? net->my_node : 0, ctx->rank, &node_comm);
    PMPI_Comm_dup(ctx->comm, &dup);
    if (!ok) {
        snprintf(why, whylen, "out of memory mapping the communicator's nodes");
        PMPI_Comm_free(&dup);
        PMPI_Comm_free(&node_comm);
        if (net) strata_net_free(net);
        return -1;
    }
    net->node_comm = node_comm;
    net->dup = dup;
    net->comm = ctx->comm;
    net->rank = ctx->rank;
    net->size = ctx->size;
    char name[MPI_MAX_OBJECT_NAME];
    snprintf(name, sizeof name, "strata node %d of communicator #%lu", net->my_node, ctx->serial);
    PMPI_Comm_set_name(net->node_comm, name);
    snprintf(name, sizeof name, "strata leaders of communicator #%lu", ctx->serial);
    PMPI_Comm_set_name(net->dup, name);
    /* The node's own context: its data plane, agreed among its ranks. */
    net->node = strata_ctx_get(net->node_comm);
    if (net->node) net->node_plane = net->node->plane;
    setup_double_leader(net);
    ctx->net = net;
    return 0;
}

int strata_net_node_ready(const struct strata_net *net)
{
    if (!net->node || !net->node->served) return 0;
    return net->node->size == 1 || net->node->plane != NULL;
}

void strata_net_free(struct strata_net *net)
{
    if (!net) return;
    /* Freeing the node communicator releases its context (attribute
     * callback), unless MPI_Finalize released it first. */
    if (net->workers_comm != MPI_COMM_NULL) PMPI_Comm_free(&net->workers_comm);
    if (net->node_comm != MPI_COMM_NULL) PMPI_Comm_free(&net->node_comm);
    if (net->dup != MPI_COMM_NULL) PMPI_Comm_free(&net->dup);
    strata_engine_free(&net->engine);
    free(net->node_of);
    free(net->node_rank);
    free(net->node_start);
    free(net->members);
    free(net->contiguous);
    free(net->tree_buf);
    free(net->peer_pid);
    free(net->staging[0]);
    free(net->staging[1]);
    free(net);
}
