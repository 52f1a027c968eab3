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

/* The parsers of the variables whose values have parts (below the table). */
static strata_config_parse_fn parse_hierarchy, parse_topology, parse_map, parse_transport,
    parse_chunks, parse_net_tree;

/* A row's parse fields: the member it sets and how (config.h). */
#define MEMBER(m)                                                                            \
    .member = offsetof(struct strata_config, m),                                             \
    .member_size = sizeof(((struct strata_config *)0)->m)
#define INT_IN(m, lo, hi) .kind = STRATA_VAR_INT, MEMBER(m), .min = (lo), .max = (hi)
#define WORD_OF(m) .kind = STRATA_VAR_WORD, MEMBER(m)
#define WORDS(...) .words = (const struct strata_config_word[]){__VA_ARGS__, {NULL, 0}}
#define SIZE_IN(m, lo, hi) .kind = STRATA_VAR_SIZE, MEMBER(m), .least = (lo), .most = (hi)
#define TEXT_IN(m) .kind = STRATA_VAR_TEXT, MEMBER(m)
#define OWN(fn) .kind = STRATA_VAR_OWN, .parse = (fn)
#define EMPTY_UNSET .flags = STRATA_VAR_EMPTY_UNSET

/* Every variable: its documentation and how it is parsed.  strata_config_parse
 * reads them in this order, so a row may look at the members of rows above
 * it (STRATA_MAP's default depends on STRATA_TOPOLOGY). */
static const struct strata_config_var vars[] = {
    {"STRATA_DISABLE", "0", "0 or 1",
     "1 makes strata a pure pass-through to the host MPI",
     INT_IN(disable, 0, 1)},
    {"STRATA_VERBOSE", "0", "0, 1 or 2",
     "1: one line per communicator saying what strata decided and why; "
     "2: also one line per collective call",
     INT_IN(verbose, 0, 2)},
    {"STRATA_HIERARCHY", "l3,numa,socket,node",
     "comma list of l1,l2,l3,core,numa,socket (or package),node",
     "levels to build, finest first; a hint: levels that do not exist or do "
     "not split the ranks are dropped",
     OWN(parse_hierarchy)},
    {"STRATA_TOPOLOGY", "(real machine)",
     "an hwloc synthetic description or the path of an hwloc XML file",
     "impose a fake machine instead of the one hwloc discovers",
     OWN(parse_topology), EMPTY_UNSET},
    {"STRATA_MAP", "actual (core with STRATA_TOPOLOGY)",
     "actual, core, numa, socket, none, or a list type:index,... per local rank",
     "where local ranks are taken to run: their real binding, by core, "
     "round-robin over NUMA nodes or sockets, unbound, or explicitly",
     OWN(parse_map), EMPTY_UNSET},
    {"STRATA_VIRTUAL_NODES", "1", "an integer from 1 to 4096",
     "split the ranks of each machine into this many virtual nodes",
     INT_IN(virtual_nodes, 1, 4096)},
    {"STRATA_VIRTUAL_LAYOUT", "block", "block or cyclic",
     "how local ranks are dealt to virtual nodes",
     WORD_OF(vnode_layout), WORDS({"block", STRATA_VNODE_BLOCK}, {"cyclic", STRATA_VNODE_CYCLIC})},
    {"STRATA_TEST_REFUSE_RANK", "-1", "-1 or a rank of MPI_COMM_WORLD",
     "testing only: that rank refuses every communicator context, so the "
     "agreement must send all ranks to the host MPI",
     INT_IN(test_refuse_rank, -1, 1L << 30)},
    {"STRATA_TEST_HOST_TIME_PERCENT", "100", "an integer from 1 to 100000",
     "testing only: selection takes the host MPI's measured time at this "
     "percentage (1: the host seems 100 times faster, so selection settles on it)",
     INT_IN(test_host_time_percent, 1, 100000)},
    {"STRATA_CMA", "1", "0 or 1",
     "0: never use Cross-Memory Attach (everything goes through the shared "
     "segment, as STRATA_TRANSPORT=segment); 1: use it when the start-up probe says it works",
     INT_IN(cma, 0, 1)},
    /* The names of util/transports.def, the registry's. */
    {"STRATA_TRANSPORT", "auto", "auto" STRATA_TRANSPORTS(TRANSPORT_TEXT),
     "the transport that moves data between the ranks of a node: auto (map where the cost "
     "model says a mapped copy beats CMA, else cma), cma (single copy, when "
     "the start-up probe says it works), map (peers' arenas mapped: MPI_Alloc_mem and "
     "shared-heap buffers copied with memcpy, others by CMA) or segment (copy in, copy out)",
     OWN(parse_transport)},
    {"STRATA_SHARED_HEAP", "0", "0 or 1",
     "1: allocations of the malloc family of STRATA_SHARED_HEAP_MIN bytes or more come from "
     "memory the node's ranks map (collectives on them copy with memcpy; implies "
     "STRATA_TRANSPORT=map unless set; refused under sanitizers and valgrind)",
     INT_IN(shared_heap, 0, 1)},
    {"STRATA_SHARED_HEAP_MIN", "64K", "a size, 4K to 1G",
     "the smallest allocation the shared heap serves",
     SIZE_IN(shared_heap_min, 4096, 1UL << 30)},
    {"STRATA_CICO_MAX", "16K", "a size in bytes (suffix K, M or G), 64 to 16M",
     "payloads up to this size are copied through the shared segment rather "
     "than with CMA; also the size of each rank's copy regions",
     SIZE_IN(cico_max, 64, 16UL << 20)},
    {"STRATA_CHUNK", "256K", "a size, or a comma list of sizes per level (finest first)",
     "pipeline chunk of the broadcast: each level moves data in pieces this big",
     OWN(parse_chunks)},
    {"STRATA_REDUCE_CHUNK", "256K", "a size, 4K to 1G",
     "pipeline chunk of Reduce and Allreduce",
     SIZE_IN(reduce_chunk, 4096, 1UL << 30)},
    {"STRATA_REDUCE_MIN_SLICE", "16K", "a size, 8 to 1G",
     "smallest share of a chunk one reducer takes (fewer reducers for small data)",
     SIZE_IN(min_slice, 8, 1UL << 30)},
    {"STRATA_THROTTLE", "4", "an integer from 0 to 4096 (0: unlimited)",
     "at most this many ranks read the same source chunk at once (contention)",
     INT_IN(throttle, 0, 4096)},
    {"STRATA_SPIN", "auto", "auto, or an integer from 0 to 100000000",
     "polls a waiting rank spins before it starts yielding the CPU; auto: "
     "16384 (about 400 us), or 4 when a machine runs more ranks than it has cores",
     INT_IN(spin, 0, 100000000), WORDS({"auto", -1})},
    {"STRATA_WAIT", "adaptive", "adaptive or spin",
     "how a rank waits for another: adaptive spins while the machine has a core for every "
     "runnable task and the awaited rank is not itself waiting, then yields and blocks in the "
     "kernel (futex) until the writer wakes it; spin: spin STRATA_SPIN polls, then yield, "
     "never block (rank 0's value applies to every rank)",
     WORD_OF(wait_adaptive), WORDS({"adaptive", 1}, {"spin", 0})},
    {"STRATA_PROGRESS", "off", "off or thread",
     "thread: one progress thread per process advances outstanding nonblocking and persistent "
     "collectives while the application computes (needs MPI_THREAD_MULTIPLE; it sleeps while "
     "none is outstanding and takes a core, or a share of one, while some are)",
     WORD_OF(progress_thread), WORDS({"off", 0}, {"thread", 1})},
    {"STRATA_BLOCK_AFTER", "1000", "microseconds, 0 to 10000000",
     "adaptive waits on a quiet machine: a wait this long blocks in the kernel (a busy "
     "machine or a waiting peer makes it block after a few yields)",
     INT_IN(block_after_us, 0, 10000000)},
    {"STRATA_NET_SEGMENT", "128K", "a size, 1K to 64M",
     "across nodes: node leaders move data in messages this big, pipelined",
     SIZE_IN(net_segment, 1024, 64UL << 20)},
    {"STRATA_NET_SENDS", "2", "an integer from 1 to 64",
     "across nodes: segments a leader keeps in flight to each peer",
     INT_IN(net_sends, 1, 64)},
    {"STRATA_NET_RECVS", "4", "an integer from 1 to 64",
     "across nodes: receives a leader posts ahead of the data from each peer",
     INT_IN(net_recvs, 1, 64)},
    {"STRATA_NET_REDUCE_LEADERS", "2", "1 or 2",
     "across nodes: Reduce and Allreduce use two leaders on nodes of three ranks or more "
     "(one reduces inside the node, the other talks to other nodes); 1: one does both",
     INT_IN(net_reduce_leaders, 1, 2)},
    {"STRATA_CHECK_ARGS", "auto", "auto, 0 or 1",
     "what strata does about ranks that disagree on a call (an erroneous program: counts, root "
     "or collective differ).  auto: every rank publishes what it brings; a call that exposes "
     "user buffers to peers (single copy) or runs several plane operations starts only once "
     "all agree, a small one reads its sources' after its one operation; a disagreement moves "
     "no byte outside a buffer and gives the rank whose receive differs MPI_ERR_TRUNCATE (or "
     "another error).  1: every call waits for every rank's agreement first.  0: trust the "
     "program (faster small calls; a wrong program may hang or overrun a buffer)",
     INT_IN(check_args, 0, 1), WORDS({"auto", STRATA_CHECK_AUTO})},
    {"STRATA_NET_TREE", "auto", "auto, chain, binomial or knomial:k (k from 1 to 64)",
     "across nodes: the tree among node leaders (auto: the cost model chooses)",
     OWN(parse_net_tree)},
    {"STRATA_SHM_MAX", "1G", "a size",
     "shared memory strata's segments may take per machine (all the job's "
     "ranks there together); past it, a new communicator goes to the host MPI",
     SIZE_IN(shm_max, 0, ~(size_t)0)},
    {"STRATA_CMA_MAX_PER_CALL", "1G", "a size, 1 to 1G",
     "bytes one process_vm_readv/writev call is asked to move (tests lower it)",
     SIZE_IN(cma_max_per_call, 1, 1UL << 30)},
    {"STRATA_STATS", "(off)", "stderr, or the path of a file to write",
     "at MPI_Finalize, rank 0 reports the calls strata served and the bytes it "
     "moved per collective, split by hardware distance (JSON to a file)",
     TEXT_IN(stats), EMPTY_UNSET},
    {"STRATA_MODEL", "(this machine's calibration)", "the path of a model file",
     "the cost model's parameters; unset: $XDG_CACHE_HOME/strata/model-<host>.conf "
     "(or ~/.cache/...), calibrated at first use, else built-in figures",
     TEXT_IN(model), EMPTY_UNSET},
    {"STRATA_CALIBRATE", "auto", "auto or 0",
     "auto: if this machine has no model file yet, world rank 0 runs strata-calibrate "
     "(a few seconds) at MPI_Init and keeps the result; 0: never (built-in figures)",
     WORD_OF(calibrate), WORDS({"auto", 1}, {"0", 0})},
    {"STRATA_LEARN", "1", "1 or 0",
     "1: strata times the calls past one region whose algorithm the cost model chose and, "
     "when one measures worse than the next candidate's prediction, every rank switches at "
     "the same call to try it, keeping the fastest measured (needs STRATA_CHECK_ARGS auto or "
     "1; what was learned goes into the model cache); 0: the model's choice stands",
     WORD_OF(learn), WORDS({"1", 1}, {"0", 0}), EMPTY_UNSET},
    {"STRATA_TUNING_FILE", "(none)", "the path of a JSON tuning file",
     "rules that choose an algorithm by collective, size and ranks; the first "
     "matching rule wins over the cost model",
     TEXT_IN(tuning_file), EMPTY_UNSET},
    {"STRATA_BCAST_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Bcast's algorithm: pipelined, direct-read, direct-write, knomial[:k], "
     "scatter-allgather, segment-pipeline",
     TEXT_IN(algorithm[STRATA_COLL_BCAST]), EMPTY_UNSET},
    {"STRATA_GATHER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Gather's algorithm: copy-in-copy-out, parallel-write, sequential-read, "
     "throttled-write[:k]",
     TEXT_IN(algorithm[STRATA_COLL_GATHER]), EMPTY_UNSET},
    {"STRATA_SCATTER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Scatter's algorithm: copy-in-copy-out, parallel-read, sequential-write, "
     "throttled-read[:k]",
     TEXT_IN(algorithm[STRATA_COLL_SCATTER]), EMPTY_UNSET},
    {"STRATA_ALLGATHER_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Allgather's algorithm: copy-in-copy-out, ring-neighbour[:j], "
     "ring-source-read, ring-source-write, recursive-doubling, bruck, hier-leader, hier-ring",
     TEXT_IN(algorithm[STRATA_COLL_ALLGATHER]), EMPTY_UNSET},
    {"STRATA_ALLTOALL_ALGORITHM", "(cost model)", "an algorithm name, or name:k",
     "force MPI_Alltoall's algorithm: copy-in-copy-out, pairwise",
     TEXT_IN(algorithm[STRATA_COLL_ALLTOALL]), EMPTY_UNSET},
    {"STRATA_CUDA", "1", "0 or 1",
     "1: when the CUDA driver loads and sees a device, collectives on device buffers are "
     "staged through pinned host memory (device memory never reaches the host MPI); "
     "0: strata never loads CUDA",
     INT_IN(cuda, 0, 1)},
    {"STRATA_CUDA_LIB", "libcuda.so.1",
     "the path or name of a CUDA driver library (not empty, at most 511 characters)",
     "the driver strata loads (tests point it at tests/fake_cuda's libfakecuda.so)",
     TEXT_IN(cuda_lib)},
    {"STRATA_CUDA_PLUGIN", "(libstrata_cuda.so beside libstrata)",
     "a path, or none (not empty, at most 511 characters)",
     "the GPU reduction plugin strata loads when the CUDA driver is a real one with a device; "
     "none: reductions of device data run on the CPU",
     TEXT_IN(cuda_plugin)},
    {"STRATA_CUDA_CHUNK", "1M", "a size, 4K to 1G",
     "device buffers are staged in pieces this big, each piece's copy overlapping the "
     "collective on the previous one (same value on every rank)",
     SIZE_IN(cuda_chunk, 4096, 1UL << 30)},
    {.name = NULL},
};

const struct strata_config_var *strata_config_vars(void) { return vars; }

/* The process's configuration: written only inside MPI_Init (one thread,
 * before any collective), read-only afterwards, so readers need no lock. */
static struct strata_config process_cfg;
static int process_parsed;

struct strata_config *strata_config_process(void) { return &process_cfg; }

void strata_config_set_parsed(void) { process_parsed = 1; }

STRATA_HOT const struct strata_config *strata_config(void) { return process_parsed ? &process_cfg : NULL; }

/* The table row of a variable (for its "accepts" text). */
static const struct strata_config_var *var_row(const char *name)
{
    for (const struct strata_config_var *v = vars; v->name; v++)
        if (!strcmp(v->name, name)) return v;
    return NULL;
}

/* The message for a value the row does not accept; returns -1. */
static int reject(const struct strata_config_var *row, const char *value, char *err,
                  size_t errlen)
{
    snprintf(err, errlen, "%s=\"%s\" is not valid: it accepts %s", row->name, value,
             row->accepts);
    return -1;
}

/* A decimal integer in [lo, hi] (blanks around it allowed). */
static int parse_int(const char *value, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    while (*end && isspace((unsigned char)*end)) end++;
    if (errno || end == value || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
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

/* Stores a parsed value into the row's member, whose size must be the
 * kind's: a row that does not match its member is refused, not written
 * past. */
static int store(struct strata_config *cfg, const struct strata_config_var *row,
                 const void *value, size_t size, char *err, size_t errlen)
{
    if (row->member_size != size) {
        snprintf(err, errlen, "%s: its table row does not match its member (%zu bytes, "
                 "not %zu)", row->name, row->member_size, size);
        return -1;
    }
    memcpy((char *)cfg + row->member, value, size);
    return 0;
}

/* STRATA_VAR_INT and STRATA_VAR_WORD: a word of the row, else (INT) a number. */
static int parse_number(struct strata_config *cfg, const struct strata_config_var *row,
                        const char *value, char *err, size_t errlen)
{
    for (const struct strata_config_word *w = row->words; w && w->word; w++)
        if (!strcasecmp(value, w->word))
            return store(cfg, row, &w->value, sizeof w->value, err, errlen);
    long v;
    if (row->kind != STRATA_VAR_INT || parse_int(value, row->min, row->max, &v))
        return reject(row, value, err, errlen);
    int n = (int)v;
    return store(cfg, row, &n, sizeof n, err, errlen);
}

static int parse_size(struct strata_config *cfg, const struct strata_config_var *row,
                      const char *value, char *err, size_t errlen)
{
    size_t v;
    if (parse_size_text(value, &v) || v < row->least || v > row->most)
        return reject(row, value, err, errlen);
    return store(cfg, row, &v, sizeof v, err, errlen);
}

/* A value kept as text in dst, an array of dstlen bytes. */
static int copy_text(const struct strata_config_var *row, const char *value, char *dst,
                     size_t dstlen, char *err, size_t errlen)
{
    size_t n = strlen(value);
    if (!n) return reject(row, value, err, errlen);
    if (n >= dstlen) {
        snprintf(err, errlen, "%s is too long (%zu characters, at most %zu): it accepts %s",
                 row->name, n, dstlen - 1, row->accepts);
        return -1;
    }
    memcpy(dst, value, n + 1);
    return 0;
}

/* One variable: its value from the environment, else its default. */
static int parse_row(struct strata_config *cfg, const struct strata_config_var *row, char *err,
                     size_t errlen)
{
    const char *value = getenv(row->name);
    if (value && !*value && (row->flags & STRATA_VAR_EMPTY_UNSET)) value = NULL;
    if (row->kind == STRATA_VAR_OWN) return row->parse(cfg, value, row, err, errlen);
    if (!value) {
        if (row->default_value[0] == '(') return 0; /* a described default: the zero */
        value = row->default_value;
    }
    switch (row->kind) {
    case STRATA_VAR_INT:
    case STRATA_VAR_WORD: return parse_number(cfg, row, value, err, errlen);
    case STRATA_VAR_SIZE: return parse_size(cfg, row, value, err, errlen);
    case STRATA_VAR_TEXT:
        return copy_text(row, value, (char *)cfg + row->member, row->member_size, err, errlen);
    case STRATA_VAR_OWN: break;
    }
    return 0;
}

/* STRATA_HIERARCHY: each name of the list a level strata knows. */
static int parse_hierarchy(struct strata_config *cfg, const char *value,
                           const struct strata_config_var *row, char *err, size_t errlen)
{
    static const char *known[] = {"l1", "l2", "l3", "core", "numa", "socket",
                                  "package", "node", NULL};
    if (!value) value = row->default_value;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", value);
    int count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int ok = 0;
        for (int i = 0; known[i]; i++) ok |= !strcasecmp(tok, known[i]);
        if (!ok) {
            snprintf(err, errlen,
                     "%s=\"%s\" is not valid: \"%s\" is not a level; it accepts %s",
                     row->name, value, tok, row->accepts); /* it says "comma list of" */
            return -1;
        }
        count++;
    }
    if (!count) {
        snprintf(err, errlen, "%s is empty: it accepts %s", row->name, row->accepts);
        return -1;
    }
    return copy_text(row, value, cfg->hierarchy, sizeof cfg->hierarchy, err, errlen);
}

/* STRATA_TOPOLOGY: a readable file (hwloc XML, read when the topology is
 * loaded) or a synthetic description hwloc parses. */
static int parse_topology(struct strata_config *cfg, const char *value,
                          const struct strata_config_var *row, char *err, size_t errlen)
{
    if (!value) return 0; /* the real machine */
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
    if (!ok) return reject(row, value, err, errlen);
    return copy_text(row, value, cfg->topology, sizeof cfg->topology, err, errlen);
}

/* Each entry of an explicit STRATA_MAP list is type:index, with a type a
 * rank can be placed on (strata_hw_type_parse's names but cluster) and an
 * index of 0 or more.  (The list holds a ':', so it has an entry.) */
static int check_map_list(const struct strata_config_var *row, const char *value, char *err,
                          size_t errlen)
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
                     "%s=\"%s\" is not valid: entry \"%s\" is not type:index (type one "
                     "of machine, package, numa, l3, l2, l1, core, pu; index 0 or more); it "
                     "accepts %s", row->name, value, tok, row->accepts);
            return -1;
        }
    }
    return 0;
}

/* STRATA_MAP: a placement's name or an explicit list.  Unset, a fake
 * machine (STRATA_TOPOLOGY, the row above) has no real binding to read, so
 * it places by core. */
static int parse_map(struct strata_config *cfg, const char *value,
                     const struct strata_config_var *row, char *err, size_t errlen)
{
    static const struct { const char *name; enum strata_map_kind kind; } kinds[] = {
        {"core", STRATA_MAP_CORE},     {"numa", STRATA_MAP_NUMA},
        {"socket", STRATA_MAP_SOCKET}, {"package", STRATA_MAP_SOCKET},
        {"none", STRATA_MAP_NONE},     {"actual", STRATA_MAP_ACTUAL},
    };
    if (!value) {
        cfg->map = cfg->topology[0] ? STRATA_MAP_CORE : STRATA_MAP_ACTUAL;
        return 0;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!strcasecmp(value, kinds[i].name)) {
            cfg->map = kinds[i].kind;
            return 0;
        }
    }
    if (!strchr(value, ':')) return reject(row, value, err, errlen);
    /* The form of each entry is checked here; whether the object it names
     * exists, once the machine is known (strata_binding). */
    cfg->map = STRATA_MAP_LIST;
    if (copy_text(row, value, cfg->map_list, sizeof cfg->map_list, err, errlen)) return -1;
    return check_map_list(row, value, err, errlen);
}

/* The name of the transport called s (case-insensitive), or NULL. */
static const char *known_transport(const char *s)
{
    for (size_t i = 0; i < sizeof transport_names / sizeof transport_names[0]; i++)
        if (!strcasecmp(s, transport_names[i])) return transport_names[i];
    return NULL;
}

/* STRATA_TRANSPORT: auto or a transport's name, as asked ("" unset);
 * settle_transport decides what applies. */
static int parse_transport(struct strata_config *cfg, const char *value,
                           const struct strata_config_var *row, char *err, size_t errlen)
{
    if (!value) return 0;
    const char *name = !strcasecmp(value, "auto") ? "auto" : known_transport(value);
    if (!name) return reject(row, value, err, errlen);
    snprintf(cfg->transport, sizeof cfg->transport, "%s", name);
    return 0;
}

/* The transport that applies: STRATA_CMA=0 forbids CMA (which map falls
 * back to) whatever was asked; unset, the shared heap's memory helps only
 * where peers map it, and auto lets the runtime ask the cost model (map or
 * cma) at MPI_Init. */
static void settle_transport(struct strata_config *cfg)
{
    if (!cfg->cma)
        snprintf(cfg->transport, sizeof cfg->transport, "segment");
    else if (!cfg->transport[0])
        snprintf(cfg->transport, sizeof cfg->transport, "%s", cfg->shared_heap ? "map" : "auto");
}

/* STRATA_CHUNK: a size per level, finest first (the last repeats). */
static int parse_chunks(struct strata_config *cfg, const char *value,
                        const struct strata_config_var *row, char *err, size_t errlen)
{
    if (!value) value = row->default_value;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", value);
    cfg->nchunk = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t v;
        if (cfg->nchunk == 8 || parse_size_text(tok, &v) || v < 64 || v > (1UL << 30)) {
            snprintf(err, errlen, "%s=\"%s\" is not valid: it accepts %s (each 64 to 1G, at "
                     "most 8)", row->name, value, row->accepts);
            return -1;
        }
        cfg->chunk[cfg->nchunk++] = v;
    }
    if (!cfg->nchunk) {
        snprintf(err, errlen, "%s is empty: it accepts %s", row->name, row->accepts);
        return -1;
    }
    return 0;
}

/* STRATA_NET_TREE: 0 auto (also unset), 1 chain, 2 k-nomial (config.h). */
static int parse_net_tree(struct strata_config *cfg, const char *value,
                          const struct strata_config_var *row, char *err, size_t errlen)
{
    if (!value) return 0;
    long k = 1;
    cfg->net_tree = -1;
    if (!strcasecmp(value, "auto")) cfg->net_tree = 0;
    else if (!strcasecmp(value, "chain")) cfg->net_tree = 1;
    else if (!strcasecmp(value, "binomial")) cfg->net_tree = 2;
    else if (!strncasecmp(value, "knomial:", 8)) {
        char *end;
        errno = 0;
        k = strtol(value + 8, &end, 10);
        if (!errno && end != value + 8 && !*end && k >= 1 && k <= 64) cfg->net_tree = 2;
    } else if (!strcasecmp(value, "knomial")) {
        k = 2;
        cfg->net_tree = 2;
    }
    if (cfg->net_tree < 0) return reject(row, value, err, errlen);
    cfg->net_tree_k = (int)k;
    return 0;
}

/* STRATA_<COLL>_ALGORITHM of the collectives the table has no row for
 * (none with algorithms to choose from): read like the others, so that
 * selection can refuse them saying so (coll/select.c). */
static int parse_unlisted_algorithms(struct strata_config *cfg, char *err, size_t errlen)
{
    struct strata_config_var row = *var_row("STRATA_BCAST_ALGORITHM");
    char var[64];
    row.name = var;
    row.accepts = "no value (the collective has no algorithms to choose from)";
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        strata_coll_algorithm_variable(c, var, sizeof var);
        if (var_row(var)) continue;
        row.member = offsetof(struct strata_config, algorithm) + (size_t)c * sizeof *cfg->algorithm;
        if (parse_row(cfg, &row, err, errlen)) return -1;
    }
    return 0;
}

int strata_config_parse(struct strata_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (const struct strata_config_var *row = vars; row->name; row++)
        if (parse_row(cfg, row, err, errlen)) return -1;
    settle_transport(cfg);
    return parse_unlisted_algorithms(cfg, err, errlen);
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
