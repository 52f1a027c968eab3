/* Process-wide set-up: configuration, node layout, topology, locations. */
#include "context/runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/ops.h"
#include "coll/select.h"
#include "shm/flags.h"
#include "shm/segment.h"
#include "shm/wait.h"
#include "transport/device.h"
#include "transport/registry.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

static struct strata_runtime rt;
static struct strata_segment accounting; /* the machine's STRATA_SHM_MAX counter */
/* The process's configuration (config.c holds it), filled in at init. */
static struct strata_config *cfg;
static int self_keyval = MPI_KEYVAL_INVALID;
/* Every rank registered for the asymmetric wake barrier (shm/wait.h). */
static int wait_asymmetric;

STRATA_HOT const struct strata_runtime *strata_runtime(void)
{
    return rt.ready && !rt.disabled ? &rt : NULL;
}

STRATA_HOT const struct strata_runtime *strata_runtime_state(void) { return &rt; }

/* What the layer above releases at MPI_Finalize, after the STRATA_STATS
 * report and before the runtime goes: the contexts never freed (context.c
 * registers it once, from its first context, before any finalize). */
static void (*release_above)(void);

void strata_runtime_at_finalize(void (*release)(void)) { release_above = release; }

static void disable(const char *why)
{
    rt.disabled = 1;
    snprintf(rt.why_disabled, sizeof rt.why_disabled, "%s", why);
}

/* The host's progress while strata waits (shm/wait.h): a probe that finds
 * nothing turns the progress engine of both host MPIs.  On a duplicate of
 * MPI_COMM_WORLD made at start-up: nothing is ever sent on it, so the probe
 * finds nothing and breaks no assertion the application made about its own
 * communicators (mpi_assert_no_any_source); MPICH's probe on MPI_COMM_SELF
 * does not progress other ranks' traffic, one on a world-sized
 * communicator does. */
static MPI_Comm progress_comm = MPI_COMM_NULL;

static void host_progress(void)
{
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress_comm, &flag, MPI_STATUS_IGNORE);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI is still
 * usable: the place to release what the application never freed. */
static int self_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    strata_runtime_finalize();
    return MPI_SUCCESS;
}

/* Splits the ranks of one machine into cfg->virtual_nodes virtual nodes. */
static int virtual_node_of(int host_rank, int host_size)
{
    int v = cfg->virtual_nodes < host_size ? cfg->virtual_nodes : host_size;
    if (v <= 1) return 0;
    if (cfg->vnode_layout == STRATA_VNODE_CYCLIC) return host_rank % v;
    return (int)((long)host_rank * v / host_size);
}

/* Once per process: which transport moves data between the ranks of a
 * node?  The one STRATA_TRANSPORT names if every rank asks for it and its
 * probe passes between every pair of ranks of every machine, else the
 * segment (which always works).  Agreed over the world, so every
 * communicator sees one answer. */
static void choose_transport(MPI_Comm host_comm, int host_size)
{
    const struct strata_transport *fallback = strata_transport_at(0);
    const struct strata_transport *asked = strata_transport_find(cfg->transport);
    const struct strata_transport *map = strata_transport_find("map");
    const struct strata_transport *cma = strata_transport_find("cma");
    /* auto: the cost model (world rank 0's, so every rank decides alike)
     * compares a copy through a mapping with a CMA copy.  map serves every
     * buffer outside an arena by CMA, so it is asked for whenever its mapped
     * copies win and its lookup costs the others little; the warning below
     * then speaks of cma, the baseline, and a map that fails its probe falls
     * back to cma with a verbose line only. */
    int automatic = !strcmp(cfg->transport, "auto");
    rt.transport_choice[0] = '\0';
    if (automatic) {
        char why[256];
        int wins = strata_model_map_wins(strata_select_model(), why, sizeof why);
        snprintf(rt.transport_choice, sizeof rt.transport_choice, "auto, by the cost model: %s (%s)",
                 wins ? "map" : "cma", why);
        asked = wins ? map : cma;
    }
    if (!asked) asked = fallback; /* config.c accepts only listed names */
    /* The probe is collective over the machine: agree first which one to
     * probe, or a rank that asked for another leaves the others waiting in
     * it forever.  Ranks that differ all take the segment. */
    int idx[2] = {strata_transport_index(asked), -strata_transport_index(asked)}, all[2];
    PMPI_Allreduce(idx, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const struct strata_transport *want = all[0] == -all[1] ? asked : fallback;
    rt.transport_why[0] = '\0';
    if (want != asked)
        snprintf(rt.transport_why, sizeof rt.transport_why,
                 "ranks asked for different transports (STRATA_TRANSPORT, STRATA_CMA)");
    /* Each transport names the one it falls back to (map: cma), the last
     * one the segment; every rank walks the same chain (all_ok is agreed),
     * so the probes stay collective. */
    int all_ok = 0;
    for (const struct strata_transport *t = want; t && !all_ok;
         t = strata_transport_find(t->falls_back_to)) {
        int ok = 1;
        char why[sizeof rt.transport_why];
        if (t->probe && host_size > 1) ok = t->probe(host_comm, why, sizeof why);
        PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all_ok) want = t;
        else if (t == asked || (automatic && t == cma) || !rt.transport_why[0])
            snprintf(rt.transport_why, sizeof rt.transport_why, "%s",
                     ok ? "it fails between other ranks of the job" : why);
    }
    rt.transport = all_ok ? want : fallback;
    if (automatic && asked == map && rt.transport == cma) {
        strata_verbose(1, "transport auto: map is not usable (%s): cma instead", rt.transport_why);
        rt.transport_why[0] = '\0';
        asked = cma;
    } else if (automatic && asked == map && rt.transport != map) {
        asked = cma; /* the warning names the baseline, as without auto */
    }
    if (rt.transport != asked && rt.world_rank == 0)
        strata_warn("transport %s is not usable (%s); strata %s %s instead", asked->name,
                    rt.transport_why, rt.transport == fallback ? "copies through the" : "uses",
                    rt.transport->name);
    strata_verbose(1, "transport: %s%s%s", rt.transport->name,
                   rt.transport_choice[0] ? "; " : "", rt.transport_choice);
    /* Calls the model prices as mapped copies: with the shared heap asked
     * for on every rank, buffers from its threshold on (the largest of the
     * ranks' thresholds) are in arenas.  Agreed here, so the per-call choice
     * is the same on every rank (coll/select.h). */
    long heap[2] = {cfg->shared_heap && rt.transport == map, -(long)cfg->shared_heap_min},
         heap_all[2];
    PMPI_Allreduce(heap, heap_all, 2, MPI_LONG, MPI_MIN, MPI_COMM_WORLD); /* the largest min */
    heap_all[1] = -heap_all[1];
    strata_select_set_mapped(heap_all[0] ? (size_t)heap_all[1] : 0);
    if (heap_all[0])
        strata_verbose(1, "cost model: calls with blocks of %ld bytes or more are priced as "
                       "copies through mappings (the shared heap is on at every rank)",
                       heap_all[1]);
    /* Device support: loads the CUDA driver only if it is installed (and
     * STRATA_CUDA allows); without it, this rank says 0 and nothing else
     * changes. */
    int device = strata_device_available();
    PMPI_Allreduce(&device, &rt.device_world, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    strata_verbose(1, "device memory: %s%s", strata_device_why(),
                   rt.device_world && !device ? " (other ranks have devices)" : "");
}

static void apply_tuning(void)
{
    struct strata_tuning t = {
        .cico_max = cfg->cico_max,
        .reduce_chunk = cfg->reduce_chunk,
        .min_slice = cfg->min_slice,
        .throttle = cfg->throttle,
        .net_segment = cfg->net_segment,
        .net_sends = cfg->net_sends,
        .net_recvs = cfg->net_recvs,
        .net_tree = cfg->net_tree,
        .net_tree_k = cfg->net_tree_k,
        .net_reduce_leaders = cfg->net_reduce_leaders,
    };
    for (int l = 0; l < STRATA_MAX_HIER; l++)
        t.chunk[l] = cfg->chunk[l < cfg->nchunk ? l : cfg->nchunk - 1];
    /* The segment's layout, the copy paths and the pipelines' chunks and
     * slices must be the same on every rank, or ranks disagree inside a
     * collective (wrong results; a bus error on a segment of another size):
     * world rank 0's settings are everyone's. */
    struct strata_tuning mine = t;
    PMPI_Bcast(&t, sizeof t, MPI_BYTE, 0, MPI_COMM_WORLD);
    int differs = mine.cico_max != t.cico_max || mine.reduce_chunk != t.reduce_chunk ||
                  mine.min_slice != t.min_slice || mine.throttle != t.throttle ||
                  mine.net_segment != t.net_segment || mine.net_sends != t.net_sends ||
                  mine.net_recvs != t.net_recvs || mine.net_tree != t.net_tree ||
                  mine.net_tree_k != t.net_tree_k ||
                  mine.net_reduce_leaders != t.net_reduce_leaders;
    for (int l = 0; l < STRATA_MAX_HIER; l++) differs |= mine.chunk[l] != t.chunk[l];
    if (differs)
        strata_warn("STRATA_CICO_MAX, STRATA_CHUNK, STRATA_REDUCE_CHUNK, STRATA_REDUCE_MIN_SLICE, "
                    "STRATA_THROTTLE or STRATA_NET_* differ from rank 0's: rank 0's apply");
    strata_tuning_set(&t);
    /* The argument check is a collective step of every call, and the
     * STRATA_STATS report a reduction at MPI_Finalize: rank 0's settings
     * are everyone's too (only rank 0 writes the report). */
    struct {
        int check_args;
        int wait_adaptive; /* writers ring only if every waiter may block */
        char stats[sizeof cfg->stats];
    } own, first;
    memset(&own, 0, sizeof own);
    own.check_args = cfg->check_args;
    own.wait_adaptive = cfg->wait_adaptive;
    memcpy(own.stats, cfg->stats, sizeof own.stats);
    first = own;
    PMPI_Bcast(&first, sizeof first, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (first.check_args != own.check_args)
        strata_warn("STRATA_CHECK_ARGS=%d differs from rank 0's (%d): rank 0's applies",
                    own.check_args, first.check_args);
    if (strcmp(first.stats, own.stats))
        strata_warn("STRATA_STATS=\"%s\" differs from rank 0's (\"%s\"): rank 0's applies",
                    own.stats, first.stats);
    if (first.wait_adaptive != own.wait_adaptive)
        strata_warn("STRATA_WAIT=%s differs from rank 0's (%s): rank 0's applies",
                    own.wait_adaptive ? "adaptive" : "spin",
                    first.wait_adaptive ? "adaptive" : "spin");
    cfg->check_args = first.check_args;
    cfg->wait_adaptive = first.wait_adaptive;
    memcpy(cfg->stats, first.stats, sizeof cfg->stats);
    strata_stats_set_enabled(cfg->stats[0] != '\0');
    strata_flag_set_spin(cfg->spin >= 0 ? (unsigned)cfg->spin : STRATA_SPIN_DEFAULT);
    /* Writers may skip their fence only if every waiter can put one into
     * them (shm/wait.h): every rank must have registered. */
    int asym = cfg->wait_adaptive && strata_wait_register_asymmetric(), all_asym = 0;
    PMPI_Allreduce(&asym, &all_asym, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    wait_asymmetric = all_asym;
    strata_wait_configure(cfg->wait_adaptive, wait_asymmetric, (unsigned)cfg->block_after_us, 0);
    if (cfg->wait_adaptive && !all_asym)
        strata_verbose(1, "membarrier's global expedited barrier is not available on every rank: "
                       "flag writers fence (shm/wait.h)");
    strata_segment_set_cap(cfg->shm_max);
    strata_transport_set_max_per_call(cfg->cma_max_per_call);
}

/* The ranks of one machine count their segments in one shared word, so
 * STRATA_SHM_MAX caps the machine, not each process.  If the word cannot be
 * shared, each process counts alone, and verbose output says so. */
static void share_accounting(MPI_Comm host_comm, int host_rank)
{
    struct { int ok; char name[STRATA_SEGMENT_NAME_MAX]; } offer = {0};
    char why[256] = "";
    /* Once per machine, before this job makes any segment: what jobs of
     * this user killed while a segment was being set up left in /dev/shm. */
    int removed = host_rank == 0 ? strata_segment_remove_stale() : 0;
    if (removed)
        strata_verbose(1, "removed %d segment(s) of killed jobs from /dev/shm (their creator "
                       "was gone)", removed);
    if (host_rank == 0 &&
        !strata_segment_create_uncounted(&accounting, 4096,
                                         strata_transport_single_copy(rt.transport), why,
                                         sizeof why)) {
        offer.ok = 1;
        snprintf(offer.name, sizeof offer.name, "%s", accounting.name);
    }
    PMPI_Bcast(&offer, sizeof offer, MPI_BYTE, 0, host_comm);
    int ok = offer.ok && (host_rank == 0 ||
                          !strata_segment_attach(&accounting, offer.name, 4096, why, sizeof why));
    int all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, host_comm);
    strata_segment_seal(&accounting); /* everyone has attached, or failed to */
    if (all_ok) {
        strata_segment_share_accounting((_Atomic uint64_t *)accounting.base);
    } else {
        if (ok) strata_segment_release(&accounting);
        if (host_rank == 0)
            strata_verbose(1, "STRATA_SHM_MAX counts per process: the machine's ranks could not "
                           "share a counter (%s)", why[0] ? why : "another rank failed");
    }
}

/* Node leader discovers the machine; the others load its XML export. */
static int share_topology(MPI_Comm host_comm, int host_rank, char *err, size_t errlen)
{
    int len = 0, rc = 0;
    char *xml = NULL;
    if (host_rank == 0) {
        rc = strata_topology_load(cfg, &rt.topo, err, errlen);
        if (!rc && hwloc_topology_export_xmlbuffer(rt.topo, &xml, &len, 0)) {
            snprintf(err, errlen, "hwloc could not export the topology");
            rc = -1;
        }
        if (rc) len = -1;
    }
    PMPI_Bcast(&len, 1, MPI_INT, 0, host_comm);
    if (len < 0) {
        if (host_rank != 0) snprintf(err, errlen, "the node leader could not load the topology");
        return -1;
    }
    char *buf = host_rank == 0 ? xml : malloc((size_t)len);
    if (!buf) return -1;
    PMPI_Bcast(buf, len, MPI_CHAR, 0, host_comm);
    if (host_rank == 0) {
        hwloc_free_xmlbuffer(rt.topo, xml);
    } else {
        rc = strata_topology_load_xml(buf, len, cfg->topology[0] == '\0', &rt.topo, err,
                                      errlen);
        free(buf);
    }
    return rc;
}

/* Which ranks' processes this one can watch for liveness (waits across
 * nodes check them): those of this machine, seen through the same PID
 * namespace, so that a pid names the same process here as there. */
static int share_pids(MPI_Comm host_comm)
{
    struct stat ns;
    long long mine[3] = {getpid(), rt.world_rank, -1};
    if (stat("/proc/self/ns/pid", &ns) == 0) mine[2] = (long long)ns.st_ino;
    PMPI_Bcast(&mine[1], 1, MPI_LONG_LONG, 0, host_comm); /* the machine: its first rank */
    long long *all = malloc(sizeof mine * (size_t)rt.world_size);
    rt.world_pid = calloc((size_t)rt.world_size, sizeof(pid_t));
    int ok = all && rt.world_pid;
    int all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok)
        PMPI_Allgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (int r = 0; all_ok && r < rt.world_size; r++)
        if (all[3 * r + 1] == mine[1] && all[3 * r + 2] == mine[2] && mine[2] != -1)
            rt.world_pid[r] = (pid_t)all[3 * r];
    free(all);
    if (all_ok) strata_log_set_world_pids(rt.world_pid, rt.world_size);
    return all_ok ? 0 : -1;
}

/* How setting up the layout and locations ended, agreed over the world: the
 * lowest wins, so one rank's bad value stops the whole job. */
enum setup_outcome {
    SETUP_BAD_VALUE = -1, /* a STRATA_ value the machine cannot honour: the job stops */
    SETUP_FAILED = 0,     /* strata cannot run here: every call goes to the host MPI */
    SETUP_DONE = 1
};

static enum setup_outcome setup_layout_and_locations(char *err, size_t errlen)
{
    MPI_Comm host_comm, node_comm, leaders;
    int host_rank, host_size;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rt.world_rank, MPI_INFO_NULL,
                         &host_comm);
    PMPI_Comm_rank(host_comm, &host_rank);
    PMPI_Comm_size(host_comm, &host_size);
    rt.host_local_size = host_size;

    PMPI_Comm_split(host_comm, virtual_node_of(host_rank, host_size), host_rank, &node_comm);
    PMPI_Comm_rank(node_comm, &rt.local_rank);
    PMPI_Comm_size(node_comm, &rt.local_size);
    PMPI_Comm_split(MPI_COMM_WORLD, rt.local_rank == 0 ? 0 : MPI_UNDEFINED, rt.world_rank,
                    &leaders);
    if (leaders != MPI_COMM_NULL) {
        PMPI_Comm_rank(leaders, &rt.node);
        PMPI_Comm_size(leaders, &rt.nnodes);
        PMPI_Comm_free(&leaders);
    }
    int pair[2] = {rt.node, rt.nnodes};
    PMPI_Bcast(pair, 2, MPI_INT, 0, node_comm);
    rt.node = pair[0];
    rt.nnodes = pair[1];

    int rc = share_topology(host_comm, host_rank, err, errlen);
    choose_transport(host_comm, host_size);
    share_accounting(host_comm, host_rank);
    if (share_pids(host_comm) && rc == 0) {
        snprintf(err, errlen, "out of memory listing the ranks' processes");
        rc = -1;
    }
    PMPI_Comm_free(&node_comm);
    PMPI_Comm_free(&host_comm);

    /* World rank 0's level stack is everyone's, so that every rank computes
     * the same hierarchy even on nodes that differ. */
    struct strata_location mine;
    memset(&mine, 0, sizeof mine);
    int outcome = rc == 0 ? SETUP_DONE : SETUP_FAILED;
    if (outcome == SETUP_DONE) {
        strata_levels_from_topology(rt.topo, &rt.levels);
        PMPI_Bcast(&rt.levels, sizeof rt.levels, MPI_BYTE, 0, MPI_COMM_WORLD);
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        /* Only an explicit STRATA_MAP list fails here: an object it names
         * that this machine lacks (or a malformed entry) is a bad value. */
        if (strata_binding(rt.topo, cfg, rt.local_rank, set, err, errlen))
            outcome = SETUP_BAD_VALUE;
        hwloc_bitmap_list_snprintf(rt.binding, sizeof rt.binding, set);
        strata_location_from_binding(rt.topo, &rt.levels, set, &mine);
        hwloc_bitmap_free(set);
    } else {
        PMPI_Bcast(&rt.levels, sizeof rt.levels, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    mine.node = rt.node;
    rt.world_loc = malloc(sizeof(struct strata_location) * (size_t)rt.world_size);
    if (!rt.world_loc) return SETUP_FAILED;
    PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, rt.world_loc, sizeof mine, MPI_BYTE,
                   MPI_COMM_WORLD);
    /* Every rank must agree that set-up worked, or nobody uses strata. */
    int mine_outcome = outcome, all_outcome;
    PMPI_Allreduce(&mine_outcome, &all_outcome, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_outcome == SETUP_FAILED && outcome == SETUP_DONE)
        snprintf(err, errlen, "another rank could not set up its topology");
    /* A job stopped by another rank's bad value: that rank says why. */
    if (all_outcome == SETUP_BAD_VALUE && outcome != SETUP_BAD_VALUE) err[0] = '\0';
    return (enum setup_outcome)all_outcome;
}

/* Whether strata_runtime_init ever ran in this process (the runtime state
 * itself is reset by each set-up and by finalize). */
static _Atomic int attempted;

int strata_runtime_attempted(void) { return attempted; }

static void strata_runtime_init(int thread_level);
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
_Atomic int strata_runtime_started;

static void start(void)
{
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    strata_runtime_init(provided);
    /* Release: a thread that sees started also sees the runtime set up
     * (pthread_once orders only the threads that call it). */
    atomic_store_explicit(&strata_runtime_started, 1, memory_order_release);
}

void strata_runtime_start(void) { pthread_once(&start_once, start); }

void strata_runtime_start_late_slow(MPI_Comm comm)
{
    /* Acquire: pairs with the release in start (checked again: the inline
     * check in runtime.h may be stale by now). */
    if (atomic_load_explicit(&strata_runtime_started, memory_order_acquire)) return;
    int initialized = 0, finalized = 0, cmp = MPI_UNEQUAL;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
    if (PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
    if (comm == MPI_COMM_NULL || PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp) != MPI_SUCCESS ||
        (cmp != MPI_IDENT && cmp != MPI_CONGRUENT))
        return;
    strata_runtime_start();
    if (rt.world_rank == 0)
        strata_verbose(1, "set up at the first collective over all ranks: MPI_Init did not "
                          "pass through strata");
}

static void strata_runtime_init(int thread_level)
{
    char err[1024] = "";
    attempted = 1;
    memset(&rt, 0, sizeof rt);
    cfg = strata_config_process();
    rt.thread_level = thread_level;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rt.world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &rt.world_size);
    strata_log_set_rank(rt.world_rank);

    /* A typo in a tuning variable must not be silently ignored: the job
     * stops with a message naming it.  Agreed, then MPI_Finalize and exit(1)
     * rather than MPI_Abort, because MPICH's launcher often drops what an
     * aborting process last wrote to stderr, message included. */
    int parsed = strata_config_parse(cfg, err, sizeof err) == 0 &&
                 strata_config_check_job(cfg, rt.world_size, rt.world_rank == 0, err,
                                         sizeof err) == 0;
    int all_parsed;
    PMPI_Allreduce(&parsed, &all_parsed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_parsed) {
        if (!parsed) strata_error("%s", err);
        PMPI_Finalize();
        exit(1);
    }
    strata_config_set_parsed();
    strata_log_set_verbose(cfg->verbose);
    strata_stats_set_enabled(cfg->stats[0] != '\0');
    rt.ready = 1;
    /* Agreed, so that a rank launched with STRATA_DISABLE=1 beside others
     * without it cannot leave them waiting in a context creation. */
    int enabled = !cfg->disable, all_enabled;
    PMPI_Allreduce(&enabled, &all_enabled, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_enabled) {
        disable(enabled ? "STRATA_DISABLE=1 on another rank" : "STRATA_DISABLE=1");
        return;
    }
    /* Which reductions on Fortran types the host accepts: asked now, while
     * no application code can be using MPI_COMM_WORLD's error handler,
     * which the question sets aside for a moment (coll/ops.h). */
    strata_reduce_probe_host();
    /* Every rank builds each communicator's hierarchy on its own: from the
     * same levels (world rank 0's, see setup_layout_and_locations) and the
     * same hint, or their algorithms' trees would not match. */
    char my_hierarchy[sizeof cfg->hierarchy];
    memcpy(my_hierarchy, cfg->hierarchy, sizeof my_hierarchy);
    PMPI_Bcast(cfg->hierarchy, sizeof cfg->hierarchy, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (strcmp(my_hierarchy, cfg->hierarchy))
        strata_warn("STRATA_HIERARCHY=%s differs from rank 0's (%s): rank 0's applies",
                    my_hierarchy, cfg->hierarchy);
    apply_tuning();
    /* The algorithm choice (model, overrides, tuning file) is world rank
     * 0's; a bad file or override stops the job like a bad variable. */
    if (strata_select_init(err, sizeof err)) {
        if (err[0]) strata_error("%s", err);
        PMPI_Finalize();
        exit(1);
    }
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
    /* Relaxed: waits read the hook as a plain function pointer (wait.c). */
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &progress_comm) == MPI_SUCCESS) {
        PMPI_Comm_set_name(progress_comm, "strata host progress");
        atomic_store_explicit(&strata_wait_host_hook, host_progress, memory_order_relaxed);
    }

    enum setup_outcome layout = setup_layout_and_locations(err, sizeof err);
    if (layout == SETUP_BAD_VALUE) {
        /* Stopped like a bad variable above.  Disabled first: finalize then
         * releases what set-up made (the shared counter's segment) without
         * writing a STRATA_STATS report of a job that never ran. */
        if (err[0]) strata_error("%s", err);
        disable("a bad STRATA_ value");
        PMPI_Finalize();
        exit(1);
    }
    /* With more ranks than cores, a spinning waiter burns the time slice the
     * rank it waits for needs: yield almost at once.  The real cores count,
     * whatever machine STRATA_TOPOLOGY imposes. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cfg->spin < 0 && cores > 0 && rt.host_local_size > cores) strata_flag_set_spin(4);
    if (cores > 0 && rt.host_local_size > cores) {
        strata_wait_configure(cfg->wait_adaptive, wait_asymmetric,
                              (unsigned)cfg->block_after_us, 1);
        strata_verbose(1, "%d ranks on this machine's %ld cores: waits yield and block early",
                       rt.host_local_size, cores);
    }
    if (layout != SETUP_DONE) {
        if (err[0]) strata_error("%s; strata passes every call to the host MPI", err);
        disable(err[0] ? err : "topology set-up failed");
        return;
    }
    if (rt.world_rank == 0) {
        strata_verbose(1, "strata %s over %s: %d ranks on %d node%s%s", STRATA_VERSION,
                       STRATA_HOST_MPI, rt.world_size, rt.nnodes, rt.nnodes == 1 ? "" : "s",
                       cfg->virtual_nodes > 1 ? " (virtual)" : "");
    }
}

void strata_runtime_finalize(void)
{
    if (!rt.ready) return;
    if (strata_runtime()) strata_stats_report(cfg->stats, rt.world_rank, rt.world_size);
    if (release_above) release_above();
    /* The planes are gone: what they measured is all kept now. */
    if (rt.world_rank == 0) strata_select_save_learned();
    /* No wait from here on may call the host: MPI_Finalize goes on. */
    atomic_store_explicit(&strata_wait_host_hook, NULL, memory_order_relaxed);
    if (progress_comm != MPI_COMM_NULL) PMPI_Comm_free(&progress_comm);
    /* Contexts returned their bytes to the shared counter: it can go now. */
    static _Atomic uint64_t after_finalize;
    strata_segment_share_accounting(&after_finalize);
    strata_segment_release(&accounting);
    if (rt.topo) hwloc_topology_destroy(rt.topo);
    rt.topo = NULL;
    free(rt.world_loc);
    rt.world_loc = NULL;
    strata_log_set_world_pids(NULL, 0);
    free(rt.world_pid);
    rt.world_pid = NULL;
    rt.ready = 0;
    if (self_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&self_keyval);
}
