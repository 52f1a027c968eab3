/* Parsing and validation of the STRATA_ environment variables. */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "util/hw_types.h"
#include "util/transports.h"
#include "util/stats.h"
#include "util/hot.h"

/* The transports' names (util/transports.h): ", segment, cma, map" for the
 * table, and each for the check. */
#define TRANSPORT_TEXT(name) ", " #name
#define TRANSPORT_NAME(name) #name,
static const char *const transport_names[] = {STRATA_TRANSPORTS(TRANSPORT_NAME)};
static const struct strata_config_var vars[] = {
    {"STRATA_DISABLE", "0", "0 or 1",
     "1 makes strata a pure pass-through to the host MPI"},
    {"STRATA_VERBOSE", "0", "0, 1 or 2",
     "1: one line per communicator saying what strata decided and why; "
     "2: also one line per collective call"},
    {"STRATA_HIERARCHY", "l3,numa,socket,node",
     "comma list of l1,l2,l3,core,numa,socket (or package),node",
     "levels to build, finest first; a hint: levels that do not exist or do "
     "not split the ranks are dropped"},
    {"STRATA_TOPOLOGY", "(real machine)",
     "an hwloc synthetic description or the path of an hwloc XML file",
     "impose a fake machine instead of the one hwloc discovers"},
    {"STRATA_MAP", "actual (core with STRATA_TOPOLOGY)",
     "actual, core, numa, socket, none, or a list type:index,... per local rank",
     "where local ranks are taken to run: their real binding, by core, "
     "round-robin over NUMA nodes or sockets, unbound, or explicitly"},
    {"STRATA_VIRTUAL_NODES", "1", "an integer from 1 to 4096",
     "split the ranks of each machine into this many virtual nodes"},
    {"STRATA_VIRTUAL_LAYOUT", "block", "block or cyclic",
     "how local ranks are dealt to virtual nodes"},
    {"STRATA_TEST_REFUSE_RANK", "-1", "-1 or a rank of MPI_COMM_WORLD",
     "testing only: that rank refuses every communicator context, so the "
     "agreement must send all ranks to the host MPI"},
    {"STRATA_CMA", "1", "0 or 1",
     "0: never use Cross-Memory Attach (everything goes through the shared "
     "segment, as STRATA_TRANSPORT=segment); 1: use it when the start-up probe says it works"},
    /* The names of util/transports.def, the registry's. */
    {"STRATA_TRANSPORT", "auto", "auto" STRATA_TRANSPORTS(TRANSPORT_TEXT),
     "the transport that moves data between the ranks of a node: auto (map where the cost "
     "model says a mapped copy beats CMA, else cma), cma (single copy, when "
     "the start-up probe says it works), map (peers' arenas mapped: MPI_Alloc_mem and "
     "shared-heap buffers copied with memcpy, others by CMA) or segment (copy in, copy out)"},
    {"STRATA_SHARED_HEAP", "0", "0 or 1",
     "1: allocations of the malloc family of STRATA_SHARED_HEAP_MIN bytes or more come from "
     "memory the node's ranks map (collectives on them copy with memcpy; implies "
     "STRATA_TRANSPORT=map unless set; refused under sanitizers and valgrind)"},
    {"STRATA_SHARED_HEAP_MIN", "64K", "a size, 4K to 1G",
     "the smallest allocation the shared heap serves"},
    {"STRATA_CICO_MAX", "16K", "a size in bytes (suffix K, M or G), 64 to 16M",
     "payloads up to this size are copied through the shared segment rather "
     "than with CMA; also the size of each rank's copy regions"},
    {"STRATA_CHUNK", "256K", "a size, or a comma list of sizes per level (finest first)",
     "pipeline chunk of the broadcast: each level moves data in pieces this big"},
    {"STRATA_REDUCE_CHUNK", "256K", "a size, 4K to 1G",
     "pipeline chunk of Reduce and Allreduce"},
    {"STRATA_REDUCE_MIN_SLICE", "16K", "a size, 8 to 1G",
     "smallest share of a chunk one reducer takes (fewer reducers for small data)"},
    {"STRATA_THROTTLE", "4", "an integer from 0 to 4096 (0: unlimited)",
     "at most this many ranks read the same source chunk at once (contention)"},
    {"STRATA_SPIN", "auto", "auto, or an integer from 0 to 100000000",
     "polls a waiting rank spins before it starts yielding the CPU; auto: "
     "16384 (about 400 us), or 4 when a machine runs more ranks than it has cores"},
    {"STRATA_WAIT", "adaptive", "adaptive or spin",
     "how a rank waits for another: adaptive spins while the machine has a core for every "
     "runnable task and the awaited rank is not itself waiting, then yields and blocks in the "
     "kernel (futex) until the writer wakes it; spin: spin STRATA_SPIN polls, then yield, "
     "never block (rank 0's value applies to every rank)"},
    {"STRATA_PROGRESS", "off", "off or thread",
     "thread: one progress thread per process advances outstanding nonblocking and persistent "
     "collectives while the application computes (needs MPI_THREAD_MULTIPLE; it sleeps while "
     "none is outstanding and takes a core, or a share of one, while some are)"},
    {"STRATA_BLOCK_AFTER", "1000", "microseconds, 0 to 10000000",
     "adaptive waits on a quiet machine: a wait this long blocks in the kernel (a busy "
     "machine or a waiting peer makes it block after a few yields)"},
    {"STRATA_NET_SEGMENT", "128K", "a size, 1K to 64M",
     "across nodes: node leaders move data in messages this big, pipelined"},
    {"STRATA_NET_SENDS", "2", "an integer from 1 to 64",
     "across nodes: segments a leader keeps in flight to each peer"},
    {"STRATA_NET_RECVS", "4", "an integer from 1 to 64",
     "across nodes: receives a leader posts ahead of the data from each peer"},
    {"STRATA_NET_REDUCE_LEADERS", "2", "1 or 2",
     "across nodes: Reduce and Allreduce use two leaders on nodes of three ranks or more "
     "(one reduces inside the node, the other talks to other nodes); 1: one does both"},
    {"STRATA_CHECK_ARGS", "auto", "auto, 0 or 1",
     "what strata does about ranks that disagree on a call (an erroneous program: counts, root "
     "or collective differ).  auto: every rank publishes what it brings; a call that exposes "
     "user buffers to peers (single copy) or runs several plane operations starts only once "
     "all agree, a small one reads its sources' after its one operation; a disagreement moves "
     "no byte outside a buffer and gives the rank whose receive differs MPI_ERR_TRUNCATE (or "
     "another error).  1: every call waits for every rank's agreement first.  0: trust the "
     "program (faster small calls; a wrong program may hang or overrun a buffer)"},
    {"STRATA_NET_TREE", "auto", "auto, chain, binomial or knomial:k (k from 1 to 64)",
     "across nodes: the tree among node leaders (auto: the cost model chooses)"},
    {"STRATA_SHM_MAX", "1G", "a size",
     "shared memory strata's segments may take per machine (all the job's "
     "ranks there together); past it, a new communicator goes to the host MPI"},
    {"STRATA_CMA_MAX_PER_CALL", "1G", "a size, 1 to 1G",
     "bytes one process_vm_readv/writev call is asked to move (tests lower it)"},
    {"STRATA_STATS", "(off)", "stderr, or the path of a file to write",
     "at MPI_Finalize, rank 0 reports the calls strata served and the bytes it "
     "moved per collective, split by hardware distance (JSON to a file)"},
    {"STRATA_MODEL", "(this machine's calibration)", "the path of a model file",
     "the cost model's parameters; unset: $XDG_CACHE_HOME/strata/model-<host>.conf "
     "(or ~/.cache/...), calibrated at first use, else built-in figures"},
    {"STRATA_CALIBRATE", "auto", "auto or 0",
     "auto: if this machine has no model file yet, world rank 0 runs strata-calibrate "
     "(a few seconds) at MPI_Init and keeps the result; 0: never (built-in figures)"},
    {"STRATA_LEARN", "1", "1 or 0",
     "1: strata times the calls past one region whose algorithm the cost model chose and, "
     "when one measures worse than the next candidate's prediction, every rank switches at "
     "the same call to try it, keeping the fastest measured (needs STRATA_CHECK_ARGS auto or "
     "1; what was learned goes into the model cache); 0: the model's choice stands"},
    {"STRATA_TUNING_FILE", "(none)", "the path of a JSON tuning file",
     "rules that choose an algorithm by collective, size and ranks; the first "
     "matching rule wins over the cost model"},
    {"STRATA_BCAST_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Bcast's algorithm: pipelined, direct-read, direct-write, knomial[:k], "
     "scatter-allgather, segment-pipeline"},
    {"STRATA_GATHER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Gather's algorithm: copy-in-copy-out, parallel-write, sequential-read, "
     "throttled-write[:k]"},
    {"STRATA_SCATTER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Scatter's algorithm: copy-in-copy-out, parallel-read, sequential-write, "
     "throttled-read[:k]"},
    {"STRATA_ALLGATHER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Allgather's algorithm: copy-in-copy-out, ring-neighbour[:j], "
     "ring-source-read, ring-source-write, recursive-doubling, bruck, hier-leader, hier-ring"},
    {"STRATA_ALLTOALL_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Alltoall's algorithm: copy-in-copy-out, pairwise"},
    {"STRATA_CUDA", "1", "0 or 1",
     "1: when the CUDA driver loads and sees a device, collectives on device buffers are "
     "staged through pinned host memory (device memory never reaches the host MPI); "
     "0: strata never loads CUDA"},
    {"STRATA_CUDA_LIB", "libcuda.so.1",
     "the path or name of a CUDA driver library (not empty, at most 511 characters)",
     "the driver strata loads (tests point it at tests/fake_cuda's libfakecuda.so)"},
    {"STRATA_CUDA_PLUGIN", "(libstrata_cuda.so beside libstrata)",
     "a path, or none (not empty, at most 511 characters)",
     "the GPU reduction plugin strata loads when the CUDA driver is a real one with a device; "
     "none: reductions of device data run on the CPU"},
    {"STRATA_CUDA_CHUNK", "1M", "a size, 4K to 1G",
     "device buffers are staged in pieces this big, each piece's copy overlapping the "
     "collective on the previous one (same value on every rank)"},
    {NULL, NULL, NULL, NULL},
};

const struct strata_config_var *strata_config_vars(void) { return vars; }

/* The process's configuration: written only inside MPI_Init (one thread,
 * before any collective), read-only afterwards, so readers need no lock. */
static struct strata_config process_cfg;
static int process_parsed;

struct strata_config *strata_config_process(void) { return &process_cfg; }

void strata_config_set_parsed(void) { process_parsed = 1; }

STRATA_HOT const struct strata_config *strata_config(void) { return process_parsed ? &process_cfg : NULL; }

static int parse_int(const char *name, const char *value, long lo, long hi,
                     const char *accepts, long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    while (*end && isspace((unsigned char)*end)) end++;
    if (errno || end == value || *end || v < lo || v > hi) {
        snprintf(err, errlen, "%s=\"%s\" is not valid: it accepts %s", name,
                 value, accepts);
        return -1;
    }
    *out = v;
    return 0;
}

static int copy_string(const char *name, const char *value, char *dst,
                       size_t dstlen, char *err, size_t errlen)
{
    if (strlen(value) >= dstlen) {
        snprintf(err, errlen, "%s is too long (%zu characters, at most %zu)",
                 name, strlen(value), dstlen - 1);
        return -1;
    }
    strcpy(dst, value);
    return 0;
}

/* STRATA_TOPOLOGY: a readable file (hwloc XML, read when the topology is
 * loaded) or a synthetic description hwloc parses. */
static int check_topology(const char *value, char *err, size_t errlen)
{
    struct stat st;
    int ok;
    if (stat(value, &st) == 0) {
        ok = S_ISREG(st.st_mode) && access(value, R_OK) == 0;
    } else {
        hwloc_topology_t topo;
        ok = hwloc_topology_init(&topo) == 0;
        if (ok) {
            ok = hwloc_topology_set_synthetic(topo, value) == 0;
            hwloc_topology_destroy(topo);
        }
    }
    if (ok) return 0;
    snprintf(err, errlen, "STRATA_TOPOLOGY=\"%s\" is not valid: it accepts %s", value,
             vars[3].accepts);
    return -1;
}

/* Checks each name of the hierarchy list against the level names strata knows. */
static int check_hierarchy(const char *value, char *err, size_t errlen)
{
    static const char *known[] = {"l1", "l2", "l3", "core", "numa", "socket",
                                  "package", "node", NULL};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", value);
    int count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int ok = 0;
        for (int i = 0; known[i]; i++) ok |= !strcasecmp(tok, known[i]);
        if (!ok) {
            snprintf(err, errlen,
                     "STRATA_HIERARCHY=\"%s\" is not valid: \"%s\" is not a "
                     "level; it accepts %s", value, tok,
                     vars[2].accepts); /* the accepts text says "comma list of" */
            return -1;
        }
        count++;
    }
    if (!count) {
        snprintf(err, errlen, "STRATA_HIERARCHY is empty: it accepts %s",
                 vars[2].accepts);
        return -1;
    }
    return 0;
}

/* Each entry of an explicit STRATA_MAP list is type:index, with a type a
 * rank can be placed on (strata_hw_type_parse's names but cluster) and an
 * index of 0 or more.  (The list holds a ':', so it has an entry.) */
static int check_map_list(const char *value, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':'), *end = NULL;
        long index = -1;
        int type = STRATA_HW_UNKNOWN;
        if (colon) {
            *colon = '\0';
            type = strata_hw_type_parse(tok);
            errno = 0;
            index = strtol(colon + 1, &end, 10);
            if (errno || end == colon + 1 || *end) index = -1;
            *colon = ':';
        }
        int placeable = type == STRATA_HW_MACHINE || (type >= 0 && type < STRATA_HW_NTYPES);
        if (!placeable || index < 0) {
            snprintf(err, errlen,
                     "STRATA_MAP=\"%s\" is not valid: entry \"%s\" is not type:index (type one "
                     "of machine, package, numa, l3, l2, l1, core, pu; index 0 or more); it "
                     "accepts %s", value, tok, vars[4].accepts);
            return -1;
        }
    }
    return 0;
}

static int parse_map(struct strata_config *cfg, const char *value, char *err,
                     size_t errlen)
{
    static const struct { const char *name; enum strata_map_kind kind; } kinds[] = {
        {"core", STRATA_MAP_CORE},     {"numa", STRATA_MAP_NUMA},
        {"socket", STRATA_MAP_SOCKET}, {"package", STRATA_MAP_SOCKET},
        {"none", STRATA_MAP_NONE},     {"actual", STRATA_MAP_ACTUAL},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!strcasecmp(value, kinds[i].name)) {
            cfg->map = kinds[i].kind;
            return 0;
        }
    }
    if (strchr(value, ':')) {
        /* The form of each entry is checked here; whether the object it
         * names exists, once the machine is known (strata_binding). */
        cfg->map = STRATA_MAP_LIST;
        if (copy_string("STRATA_MAP", value, cfg->map_list, sizeof cfg->map_list, err,
                        errlen))
            return -1;
        return check_map_list(value, err, errlen);
    }
    snprintf(err, errlen, "STRATA_MAP=\"%s\" is not valid: it accepts %s",
             value, vars[4].accepts);
    return -1;
}

/* The table row of a variable (for its "accepts" text). */
static const struct strata_config_var *var_row(const char *name)
{
    for (const struct strata_config_var *v = vars; v->name; v++)
        if (!strcmp(v->name, name)) return v;
    return NULL;
}

/* Parses "64", "16K", "4M", "1G" (case-insensitive suffix). */
static int parse_size_text(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *text == '-') return -1;
    unsigned long long mult = 1;
    if (*end == 'k' || *end == 'K') mult = 1ULL << 10, end++;
    else if (*end == 'm' || *end == 'M') mult = 1ULL << 20, end++;
    else if (*end == 'g' || *end == 'G') mult = 1ULL << 30, end++;
    if (*end || v > (~0ULL) / mult) return -1;
    *out = (size_t)(v * mult);
    return 0;
}

static int parse_size(const char *name, size_t lo, size_t hi, size_t *out, char *err,
                      size_t errlen)
{
    const char *s = getenv(name);
    if (!s) return 0;
    size_t v;
    if (parse_size_text(s, &v) || v < lo || v > hi) {
        snprintf(err, errlen, "%s=\"%s\" is not valid: it accepts %s", name, s,
                 var_row(name)->accepts);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_chunks(struct strata_config *cfg, char *err, size_t errlen)
{
    const char *s = getenv("STRATA_CHUNK");
    if (!s) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    cfg->nchunk = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t v;
        if (cfg->nchunk == 8 || parse_size_text(tok, &v) || v < 64 || v > (1UL << 30)) {
            snprintf(err, errlen, "STRATA_CHUNK=\"%s\" is not valid: it accepts %s (each "
                     "64 to 1G, at most 8)", s, var_row("STRATA_CHUNK")->accepts);
            return -1;
        }
        cfg->chunk[cfg->nchunk++] = v;
    }
    if (!cfg->nchunk) {
        snprintf(err, errlen, "STRATA_CHUNK is empty: it accepts %s",
                 var_row("STRATA_CHUNK")->accepts);
        return -1;
    }
    return 0;
}

/* STRATA_NET_TREE: 0 auto, 1 chain, 2 k-nomial (config.h). */
static int parse_net_tree(struct strata_config *cfg, const char *s, char *err, size_t errlen)
{
    long k = 1;
    cfg->net_tree = -1;
    if (!strcasecmp(s, "auto")) cfg->net_tree = 0;
    else if (!strcasecmp(s, "chain")) cfg->net_tree = 1;
    else if (!strcasecmp(s, "binomial")) cfg->net_tree = 2;
    else if (!strncasecmp(s, "knomial:", 8)) {
        char *end;
        errno = 0;
        k = strtol(s + 8, &end, 10);
        if (!errno && end != s + 8 && !*end && k >= 1 && k <= 64) cfg->net_tree = 2;
    } else if (!strcasecmp(s, "knomial")) {
        k = 2;
        cfg->net_tree = 2;
    }
    if (cfg->net_tree < 0) {
        snprintf(err, errlen, "STRATA_NET_TREE=\"%s\" is not valid: it accepts %s", s,
                 var_row("STRATA_NET_TREE")->accepts);
        return -1;
    }
    cfg->net_tree_k = (int)k;
    return 0;
}

/* The name of the transport called s (case-insensitive), or NULL. */
static const char *known_transport(const char *s)
{
    for (size_t i = 0; i < sizeof transport_names / sizeof transport_names[0]; i++)
        if (!strcasecmp(s, transport_names[i])) return transport_names[i];
    return NULL;
}

static int parse_data_plane(struct strata_config *cfg, char *err, size_t errlen)
{
    long v;
    const char *s;
    cfg->cma = 1;
    cfg->cico_max = 16 << 10;
    cfg->check_args = STRATA_CHECK_AUTO;
    cfg->chunk[0] = 256 << 10;
    cfg->nchunk = 1;
    cfg->reduce_chunk = 256 << 10;
    cfg->min_slice = 16 << 10;
    cfg->throttle = 4;
    cfg->spin = -1;
    cfg->wait_adaptive = 1;
    cfg->block_after_us = 1000;
    cfg->shm_max = 1UL << 30;
    cfg->cma_max_per_call = 1UL << 30;
    cfg->calibrate = 1;
    cfg->learn = 1;
    cfg->net_segment = 128 << 10;
    cfg->net_sends = 2;
    cfg->net_recvs = 4;
    cfg->net_reduce_leaders = 2;
    cfg->cuda = 1;
    cfg->cuda_chunk = 1 << 20;
    snprintf(cfg->cuda_lib, sizeof cfg->cuda_lib, "libcuda.so.1");
    if ((s = getenv("STRATA_CUDA"))) {
        if (parse_int("STRATA_CUDA", s, 0, 1, var_row("STRATA_CUDA")->accepts, &v, err, errlen))
            return -1;
        cfg->cuda = (int)v;
    }
    if ((s = getenv("STRATA_CUDA_LIB"))) {
        if (!*s || strlen(s) >= sizeof cfg->cuda_lib) {
            snprintf(err, errlen, "STRATA_CUDA_LIB=\"%.600s\" is not valid: it accepts %s", s,
                     var_row("STRATA_CUDA_LIB")->accepts);
            return -1;
        }
        snprintf(cfg->cuda_lib, sizeof cfg->cuda_lib, "%s", s);
    }
    cfg->cuda_plugin[0] = '\0'; /* empty: beside libstrata */
    if ((s = getenv("STRATA_CUDA_PLUGIN"))) {
        if (!*s || strlen(s) >= sizeof cfg->cuda_plugin) {
            snprintf(err, errlen, "STRATA_CUDA_PLUGIN=\"%.600s\" is not valid: it accepts %s", s,
                     var_row("STRATA_CUDA_PLUGIN")->accepts);
            return -1;
        }
        snprintf(cfg->cuda_plugin, sizeof cfg->cuda_plugin, "%s", s);
    }
    if ((s = getenv("STRATA_CMA"))) {
        if (parse_int("STRATA_CMA", s, 0, 1, var_row("STRATA_CMA")->accepts, &v, err, errlen))
            return -1;
        cfg->cma = (int)v;
    }
    /* auto: the runtime asks the cost model (map or cma) at MPI_Init. */
    snprintf(cfg->transport, sizeof cfg->transport, "%s", cfg->cma ? "auto" : "segment");
    cfg->shared_heap_min = 64 << 10;
    if ((s = getenv("STRATA_SHARED_HEAP"))) {
        if (parse_int("STRATA_SHARED_HEAP", s, 0, 1, var_row("STRATA_SHARED_HEAP")->accepts, &v,
                      err, errlen))
            return -1;
        cfg->shared_heap = (int)v;
        /* The heap's memory helps only where peers map it. */
        if (cfg->shared_heap && cfg->cma) snprintf(cfg->transport, sizeof cfg->transport, "map");
    }
    if (parse_size("STRATA_SHARED_HEAP_MIN", 4096, 1UL << 30, &cfg->shared_heap_min, err, errlen))
        return -1;
    if ((s = getenv("STRATA_TRANSPORT"))) {
        const char *name = !strcasecmp(s, "auto") ? "auto" : known_transport(s);
        if (!name) {
            snprintf(err, errlen, "STRATA_TRANSPORT=\"%s\" is not valid: it accepts %s", s,
                     var_row("STRATA_TRANSPORT")->accepts);
            return -1;
        }
        /* STRATA_CMA=0 forbids CMA (which map falls back to) whatever the
         * transport asked for. */
        if (cfg->cma || !strcmp(name, "segment"))
            snprintf(cfg->transport, sizeof cfg->transport, "%s", name);
    }
    if ((s = getenv("STRATA_THROTTLE"))) {
        if (parse_int("STRATA_THROTTLE", s, 0, 4096, var_row("STRATA_THROTTLE")->accepts, &v,
                      err, errlen))
            return -1;
        cfg->throttle = (int)v;
    }
    if ((s = getenv("STRATA_NET_SENDS"))) {
        if (parse_int("STRATA_NET_SENDS", s, 1, 64, var_row("STRATA_NET_SENDS")->accepts, &v,
                      err, errlen))
            return -1;
        cfg->net_sends = (int)v;
    }
    if ((s = getenv("STRATA_NET_RECVS"))) {
        if (parse_int("STRATA_NET_RECVS", s, 1, 64, var_row("STRATA_NET_RECVS")->accepts, &v,
                      err, errlen))
            return -1;
        cfg->net_recvs = (int)v;
    }
    if ((s = getenv("STRATA_NET_REDUCE_LEADERS"))) {
        if (parse_int("STRATA_NET_REDUCE_LEADERS", s, 1, 2,
                      var_row("STRATA_NET_REDUCE_LEADERS")->accepts, &v, err, errlen))
            return -1;
        cfg->net_reduce_leaders = (int)v;
    }
    if ((s = getenv("STRATA_CHECK_ARGS"))) {
        if (!strcasecmp(s, "auto")) v = STRATA_CHECK_AUTO;
        else if (parse_int("STRATA_CHECK_ARGS", s, 0, 1, var_row("STRATA_CHECK_ARGS")->accepts,
                           &v, err, errlen))
            return -1;
        cfg->check_args = (int)v;
    }
    if ((s = getenv("STRATA_NET_TREE")) && parse_net_tree(cfg, s, err, errlen)) return -1;
    if ((s = getenv("STRATA_SPIN")) && strcasecmp(s, "auto")) {
        if (parse_int("STRATA_SPIN", s, 0, 100000000, var_row("STRATA_SPIN")->accepts, &v, err,
                      errlen))
            return -1;
        cfg->spin = (int)v;
    }
    if ((s = getenv("STRATA_WAIT"))) {
        if (!strcasecmp(s, "adaptive")) cfg->wait_adaptive = 1;
        else if (!strcasecmp(s, "spin")) cfg->wait_adaptive = 0;
        else {
            snprintf(err, errlen, "STRATA_WAIT=\"%s\" is not valid: it accepts %s", s,
                     var_row("STRATA_WAIT")->accepts);
            return -1;
        }
    }
    if ((s = getenv("STRATA_PROGRESS"))) {
        if (!strcasecmp(s, "off")) cfg->progress_thread = 0;
        else if (!strcasecmp(s, "thread")) cfg->progress_thread = 1;
        else {
            snprintf(err, errlen, "STRATA_PROGRESS=\"%s\" is not valid: it accepts %s", s,
                     var_row("STRATA_PROGRESS")->accepts);
            return -1;
        }
    }
    if ((s = getenv("STRATA_BLOCK_AFTER"))) {
        if (parse_int("STRATA_BLOCK_AFTER", s, 0, 10000000,
                      var_row("STRATA_BLOCK_AFTER")->accepts, &v, err, errlen))
            return -1;
        cfg->block_after_us = (int)v;
    }
    if (parse_size("STRATA_CICO_MAX", 64, 16UL << 20, &cfg->cico_max, err, errlen) ||
        parse_size("STRATA_REDUCE_CHUNK", 4096, 1UL << 30, &cfg->reduce_chunk, err, errlen) ||
        parse_size("STRATA_REDUCE_MIN_SLICE", 8, 1UL << 30, &cfg->min_slice, err, errlen) ||
        parse_size("STRATA_SHM_MAX", 0, ~(size_t)0, &cfg->shm_max, err, errlen) ||
        parse_size("STRATA_NET_SEGMENT", 1024, 64UL << 20, &cfg->net_segment, err, errlen) ||
        parse_size("STRATA_CMA_MAX_PER_CALL", 1, 1UL << 30, &cfg->cma_max_per_call, err, errlen) ||
        parse_size("STRATA_CUDA_CHUNK", 4096, 1UL << 30, &cfg->cuda_chunk, err, errlen))
        return -1;
    if ((s = getenv("STRATA_CALIBRATE"))) {
        if (!strcasecmp(s, "auto")) cfg->calibrate = 1;
        else if (!strcmp(s, "0")) cfg->calibrate = 0;
        else {
            snprintf(err, errlen, "STRATA_CALIBRATE=\"%s\" is not valid: it accepts %s", s,
                     var_row("STRATA_CALIBRATE")->accepts);
            return -1;
        }
    }
    if ((s = getenv("STRATA_LEARN")) && *s) {
        if (!strcmp(s, "1") || !strcmp(s, "0")) cfg->learn = s[0] == '1';
        else {
            snprintf(err, errlen, "STRATA_LEARN=\"%s\" is not valid: it accepts %s", s,
                     var_row("STRATA_LEARN")->accepts);
            return -1;
        }
    }
    if ((s = getenv("STRATA_STATS")) && *s &&
        copy_string("STRATA_STATS", s, cfg->stats, sizeof cfg->stats, err, errlen))
        return -1;
    /* Loaded by selection (coll/select.c, world rank 0) at MPI_Init. */
    if ((s = getenv("STRATA_MODEL")) && *s &&
        copy_string("STRATA_MODEL", s, cfg->model, sizeof cfg->model, err, errlen))
        return -1;
    if ((s = getenv("STRATA_TUNING_FILE")) && *s &&
        copy_string("STRATA_TUNING_FILE", s, cfg->tuning_file, sizeof cfg->tuning_file, err,
                    errlen))
        return -1;
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        char var[64];
        strata_coll_algorithm_variable(c, var, sizeof var);
        if ((s = getenv(var)) && *s &&
            copy_string(var, s, cfg->algorithm[c], sizeof cfg->algorithm[c], err, errlen))
            return -1;
    }
    return parse_chunks(cfg, err, errlen);
}

int strata_config_parse(struct strata_config *cfg, char *err, size_t errlen)
{
    long v;
    const char *s;

    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->hierarchy, "l3,numa,socket,node");
    cfg->virtual_nodes = 1;
    cfg->test_refuse_rank = -1;

    if ((s = getenv("STRATA_DISABLE"))) {
        if (parse_int("STRATA_DISABLE", s, 0, 1, vars[0].accepts, &v, err, errlen))
            return -1;
        cfg->disable = (int)v;
    }
    if ((s = getenv("STRATA_VERBOSE"))) {
        if (parse_int("STRATA_VERBOSE", s, 0, 2, vars[1].accepts, &v, err, errlen))
            return -1;
        cfg->verbose = (int)v;
    }
    if ((s = getenv("STRATA_HIERARCHY"))) {
        if (check_hierarchy(s, err, errlen) ||
            copy_string("STRATA_HIERARCHY", s, cfg->hierarchy,
                        sizeof cfg->hierarchy, err, errlen))
            return -1;
    }
    if ((s = getenv("STRATA_TOPOLOGY")) && *s) {
        if (check_topology(s, err, errlen) ||
            copy_string("STRATA_TOPOLOGY", s, cfg->topology, sizeof cfg->topology,
                        err, errlen))
            return -1;
    }
    /* A fake machine has no real binding to read, so it defaults to by-core. */
    cfg->map = cfg->topology[0] ? STRATA_MAP_CORE : STRATA_MAP_ACTUAL;
    if ((s = getenv("STRATA_MAP")) && *s) {
        if (parse_map(cfg, s, err, errlen)) return -1;
    }
    if ((s = getenv("STRATA_VIRTUAL_NODES"))) {
        if (parse_int("STRATA_VIRTUAL_NODES", s, 1, 4096, vars[5].accepts, &v,
                      err, errlen))
            return -1;
        cfg->virtual_nodes = (int)v;
    }
    if ((s = getenv("STRATA_VIRTUAL_LAYOUT"))) {
        if (!strcasecmp(s, "block")) cfg->vnode_layout = STRATA_VNODE_BLOCK;
        else if (!strcasecmp(s, "cyclic")) cfg->vnode_layout = STRATA_VNODE_CYCLIC;
        else {
            snprintf(err, errlen, "STRATA_VIRTUAL_LAYOUT=\"%s\" is not valid: "
                     "it accepts %s", s, vars[6].accepts);
            return -1;
        }
    }
    if ((s = getenv("STRATA_TEST_REFUSE_RANK"))) {
        if (parse_int("STRATA_TEST_REFUSE_RANK", s, -1, 1L << 30, vars[7].accepts,
                      &v, err, errlen))
            return -1;
        cfg->test_refuse_rank = (int)v;
    }
    return parse_data_plane(cfg, err, errlen);
}

int strata_config_check_job(struct strata_config *cfg, int world_size, int writes_stats,
                            char *err, size_t errlen)
{
    const char *s = getenv("STRATA_TEST_REFUSE_RANK");
    if (cfg->test_refuse_rank >= world_size) {
        snprintf(err, errlen, "STRATA_TEST_REFUSE_RANK=\"%s\" is not valid: MPI_COMM_WORLD "
                 "has %d rank%s (0 to %d); it accepts %s", s ? s : "", world_size,
                 world_size == 1 ? "" : "s", world_size - 1,
                 var_row("STRATA_TEST_REFUSE_RANK")->accepts);
        return -1;
    }
    if (!writes_stats || !cfg->stats[0] || !strcmp(cfg->stats, "stderr")) return 0;
    /* The report is written at MPI_Finalize, where the application may
     * have changed directory: a relative path is taken from here, the
     * directory the path was checked in. */
    if (cfg->stats[0] != '/') {
        char cwd[sizeof cfg->stats], *at = getcwd(cwd, sizeof cwd);
        int n = at ? snprintf(cfg->stats, sizeof cfg->stats, "%s/%s", cwd,
                              getenv("STRATA_STATS"))
                   : -1;
        if (n < 0 || (size_t)n >= sizeof cfg->stats) {
            snprintf(err, errlen, "STRATA_STATS=\"%s\" is not valid: its absolute path is "
                     "too long (at most %zu characters); it accepts %s", getenv("STRATA_STATS"),
                     sizeof cfg->stats - 1, var_row("STRATA_STATS")->accepts);
            return -1;
        }
    }
    if (strata_stats_try_destination(cfg->stats)) {
        snprintf(err, errlen, "STRATA_STATS=\"%s\" is not valid: %s cannot be written (%s); "
                 "it accepts %s", getenv("STRATA_STATS"), cfg->stats, strerror(errno),
                 var_row("STRATA_STATS")->accepts);
        return -1;
    }
    return 0;
}
