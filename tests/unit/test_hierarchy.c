/* Unit tests of the level stack, rank locations and the hierarchy builder on
 * fake (hwloc synthetic) machines.  No MPI: everything here is computed from
 * hwloc alone.  Every expected value is written out by hand from the
 * machine's description (the drawings in the comments), so a change of
 * behaviour shows up as a named mismatch.  Prints every failure, then
 * "N passed, N failed"; exits non-zero if anything failed. */
#include <hwloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "topology/hierarchy.h"
#include "topology/location.h"

static int passed, failed;

static void report(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define EXPECT_INT(what, got, want)                                                   \
    do {                                                                              \
        long got_ = (long)(got), want_ = (long)(want);                                \
        report(got_ == want_, __FILE__, __LINE__, "%s: got %ld, expected %ld", what, \
               got_, want_);                                                          \
    } while (0)

#define EXPECT_STR(what, got, want)                                                   \
    do {                                                                              \
        const char *got_ = (got), *want_ = (want);                                    \
        report(got_ && !strcmp(got_, want_), __FILE__, __LINE__,                      \
               "%s: got \"%s\", expected \"%s\"", what, got_ ? got_ : "(null)", want_); \
    } while (0)

#define EXPECT_CONTAINS(what, got, needle)                                            \
    do {                                                                              \
        const char *got_ = (got), *needle_ = (needle);                                \
        report(strstr(got_, needle_) != NULL, __FILE__, __LINE__,                     \
               "%s: \"%s\" does not contain \"%s\"", what, got_, needle_);            \
    } while (0)

/* ---------------------------------------------------------------- machines */

/* The machines, drawn as hwloc lays them out.  hwloc inserts one NUMA node
 * under the machine when the description has none. */

/* The hsplit paper's node (Figure 1): 2 x (NUMANode + Package + L3), each
 * with 2 L2 of 2 cores; PU = core.  Cores 0-3 in package 0, L2 i = cores
 * 2i, 2i+1. */
#define PAPER_NODE "pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
/* 2 packages of 2 NUMA nodes; one L3 per NUMA node; 4 cores per L3, no L2.
 * NUMA i = L3 i = cores 4i..4i+3; package p = cores 8p..8p+7. */
#define TWO_NUMA_PER_SOCKET "pack:2 numa:2 l3:1 core:4 pu:1"
/* 4 cores straight under the machine (no package, no cache). */
#define FLAT "core:4 pu:1"
/* Like the machine these tests run on: one socket, one L3, 2 L2 of one core. */
#define ONE_SOCKET "pack:1 l3:1 l2:2 core:1 pu:1"
/* One socket, 4 cores of 2 hyperthreads: core i = PUs 2i, 2i+1. */
#define SMT "pack:1 core:4 pu:2"

struct machine {
    const char *desc;
    hwloc_topology_t topo;
    struct strata_levels lv;
};

static struct machine load(const char *desc)
{
    struct machine m = {.desc = desc};
    struct strata_config cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.topology, sizeof cfg.topology, "%s", desc);
    char err[512] = "";
    if (strata_topology_load(&cfg, &m.topo, err, sizeof err)) {
        fprintf(stderr, "FATAL: cannot load \"%s\": %s\n", desc, err);
        exit(2);
    }
    strata_levels_from_topology(m.topo, &m.lv);
    return m;
}

static void unload(struct machine *m) { hwloc_topology_destroy(m->topo); }

/* ------------------------------------------------------------- formatting */

/* "a b c" from n ints: compact, and a mismatch shows the whole vector. */
static const char *ints(char *buf, size_t len, const int *v, int n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, i ? " %d" : "%d", v[i]);
    return buf;
}

/* Level types of a stack by name: "NUMANode Package L3Cache ...". */
static const char *type_names(char *buf, size_t len, const struct strata_levels *lv)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < lv->nlevels && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, i ? " %s" : "%s",
                               strata_hw_type_name(lv->type[i]));
    return buf;
}

/* ----------------------------------------------------------- level stacks */

static void check_stack(const struct machine *m, const char *types, const char *counts,
                        const char *same, const char *class_names)
{
    char what[128], buf[256];
    snprintf(what, sizeof what, "[%s] level types", m->desc);
    EXPECT_STR(what, type_names(buf, sizeof buf, &m->lv), types);
    snprintf(what, sizeof what, "[%s] level counts", m->desc);
    EXPECT_STR(what, ints(buf, sizeof buf, m->lv.count, m->lv.nlevels), counts);
    snprintf(what, sizeof what, "[%s] same_as_coarser", m->desc);
    EXPECT_STR(what, ints(buf, sizeof buf, m->lv.same_as_coarser, m->lv.nlevels), same);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < m->lv.nlevels && at < sizeof buf; i++)
        at += (size_t)snprintf(buf + at, sizeof buf - at, i ? " %s" : "%s",
                               strata_levels_class_name(&m->lv, i));
    snprintf(what, sizeof what, "[%s] class names", m->desc);
    EXPECT_STR(what, buf, class_names);
    snprintf(what, sizeof what, "[%s] class name of level -1", m->desc);
    EXPECT_STR(what, strata_levels_class_name(&m->lv, -1), "Machine");
}

static void test_level_stacks(void)
{
    /* Ties in object count keep NUMANode before Package before L3: the
     * paper names the NumaNode/Package/L3 level "NumaNode". */
    struct machine m = load(PAPER_NODE);
    check_stack(&m, "NUMANode Package L3Cache L2Cache Core PU", "2 2 2 4 8 8", "0 1 1 0 0 1",
                "NUMANode NUMANode NUMANode L2Cache Core Core");
    EXPECT_INT("[paper] find NUMANode", strata_levels_find(&m.lv, STRATA_HW_NUMA), 0);
    EXPECT_INT("[paper] find Package", strata_levels_find(&m.lv, STRATA_HW_PACKAGE), 1);
    EXPECT_INT("[paper] find L1 (absent)", strata_levels_find(&m.lv, STRATA_HW_L1), -1);
    unload(&m);

    /* NUMA and L3 coincide (4 each), packages are coarser (2). */
    m = load(TWO_NUMA_PER_SOCKET);
    check_stack(&m, "Package NUMANode L3Cache Core PU", "2 4 4 16 16", "0 0 1 0 1",
                "Package NUMANode NUMANode Core Core");
    unload(&m);

    /* The inserted NUMA node is the whole machine. */
    m = load(FLAT);
    check_stack(&m, "NUMANode Core PU", "1 4 4", "1 0 1", "Machine Core Core");
    EXPECT_INT("[flat] find Package (absent)", strata_levels_find(&m.lv, STRATA_HW_PACKAGE), -1);
    unload(&m);

    m = load(ONE_SOCKET);
    check_stack(&m, "NUMANode Package L3Cache L2Cache Core PU", "1 1 1 2 2 2", "1 1 1 0 1 1",
                "Machine Machine Machine L2Cache L2Cache L2Cache");
    unload(&m);

    m = load(SMT);
    check_stack(&m, "NUMANode Package Core PU", "1 1 4 8", "1 1 0 0",
                "Machine Machine Core PU");
    unload(&m);

    /* Loading with hwloc directly gives the same stack as strata_topology_load. */
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_set_synthetic(topo, PAPER_NODE);
    hwloc_topology_load(topo);
    struct strata_levels direct;
    strata_levels_from_topology(topo, &direct);
    char buf[256];
    EXPECT_STR("[paper, hwloc direct] level types", type_names(buf, sizeof buf, &direct),
               "NUMANode Package L3Cache L2Cache Core PU");
    hwloc_topology_destroy(topo);

    /* A description hwloc rejects is an error that names the variable. */
    struct strata_config cfg;
    memset(&cfg, 0, sizeof cfg);
    snprintf(cfg.topology, sizeof cfg.topology, "pack:two core:1");
    char err[512] = "";
    EXPECT_INT("bad synthetic rejected", strata_topology_load(&cfg, &topo, err, sizeof err), -1);
    EXPECT_CONTAINS("bad synthetic message", err, "STRATA_TOPOLOGY");
}

static void test_type_names(void)
{
    EXPECT_INT("parse node", strata_hw_type_parse("node"), STRATA_HW_MACHINE);
    EXPECT_INT("parse Machine", strata_hw_type_parse("Machine"), STRATA_HW_MACHINE);
    EXPECT_INT("parse SOCKET", strata_hw_type_parse("SOCKET"), STRATA_HW_PACKAGE);
    EXPECT_INT("parse Package", strata_hw_type_parse("Package"), STRATA_HW_PACKAGE);
    EXPECT_INT("parse NUMANode", strata_hw_type_parse("NUMANode"), STRATA_HW_NUMA);
    EXPECT_INT("parse numa", strata_hw_type_parse("numa"), STRATA_HW_NUMA);
    EXPECT_INT("parse L3Cache", strata_hw_type_parse("L3Cache"), STRATA_HW_L3);
    EXPECT_INT("parse l2", strata_hw_type_parse("l2"), STRATA_HW_L2);
    EXPECT_INT("parse L1", strata_hw_type_parse("L1"), STRATA_HW_L1);
    EXPECT_INT("parse Core", strata_hw_type_parse("Core"), STRATA_HW_CORE);
    EXPECT_INT("parse pu", strata_hw_type_parse("pu"), STRATA_HW_PU);
    EXPECT_INT("parse cluster", strata_hw_type_parse("cluster"), STRATA_HW_CLUSTER);
    EXPECT_INT("parse l4", strata_hw_type_parse("l4"), STRATA_HW_UNKNOWN);
    EXPECT_INT("parse empty", strata_hw_type_parse(""), STRATA_HW_UNKNOWN);
    EXPECT_INT("parse NULL", strata_hw_type_parse(NULL), STRATA_HW_UNKNOWN);
    EXPECT_STR("name NUMA", strata_hw_type_name(STRATA_HW_NUMA), "NUMANode");
    EXPECT_STR("name Machine", strata_hw_type_name(STRATA_HW_MACHINE), "Machine");
    EXPECT_STR("name Cluster", strata_hw_type_name(STRATA_HW_CLUSTER), "Cluster");
    EXPECT_STR("name Unknown", strata_hw_type_name(STRATA_HW_UNKNOWN), "Unknown");
}

/* --------------------------------------------------- bindings, locations */

static struct strata_config map_config(enum strata_map_kind map, const char *list)
{
    struct strata_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.map = map;
    if (list) snprintf(cfg.map_list, sizeof cfg.map_list, "%s", list);
    return cfg;
}

/* Where local rank `local` runs under the mapping, as an hwloc cpuset list
 * ("2-3"), and its location vector ("0 0 0 1 -1 -1", in stack order). */
static void place(const struct machine *m, const struct strata_config *cfg, int local,
                  char *cpus, size_t cpuslen, char *where, size_t wherelen)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char err[512] = "";
    if (strata_binding(m->topo, cfg, local, set, err, sizeof err)) {
        snprintf(cpus, cpuslen, "error: %s", err);
        snprintf(where, wherelen, "error");
    } else {
        hwloc_bitmap_list_snprintf(cpus, cpuslen, set);
        struct strata_location loc;
        strata_location_from_binding(m->topo, &m->lv, set, &loc);
        ints(where, wherelen, loc.idx, m->lv.nlevels);
    }
    hwloc_bitmap_free(set);
}

static void check_place(const struct machine *m, enum strata_map_kind map, const char *list,
                        int local, const char *want_cpus, const char *want_where)
{
    struct strata_config cfg = map_config(map, list);
    char cpus[256], where[128], what[256];
    place(m, &cfg, local, cpus, sizeof cpus, where, sizeof where);
    snprintf(what, sizeof what, "[%s] map %d%s%s local rank %d: cpus", m->desc, (int)map,
             list ? " " : "", list ? list : "", local);
    EXPECT_STR(what, cpus, want_cpus);
    snprintf(what, sizeof what, "[%s] map %d%s%s local rank %d: location", m->desc, (int)map,
             list ? " " : "", list ? list : "", local);
    EXPECT_STR(what, where, want_where);
}

static void check_bad_list(const struct machine *m, const char *list, const char *needle)
{
    struct strata_config cfg = map_config(STRATA_MAP_LIST, list);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    char err[512] = "", what[256];
    snprintf(what, sizeof what, "[%s] bad list \"%s\" rejected", m->desc, list);
    EXPECT_INT(what, strata_binding(m->topo, &cfg, 0, set, err, sizeof err), -1);
    snprintf(what, sizeof what, "[%s] bad list \"%s\" message", m->desc, list);
    EXPECT_CONTAINS(what, err, needle);
    hwloc_bitmap_free(set);
}

/* The hsplit paper's Figure 2 binding: ranks 0, 1 on cores 0, 1; ranks 2, 3
 * on L2 number 1; ranks 4-7 on NUMA node 1. */
#define PAPER_52_MAP "core:0,core:1,l2:1,l2:1,numa:1,numa:1,numa:1,numa:1"

static void test_bindings(void)
{
    /* Paper node; stack NUMANode Package L3Cache L2Cache Core PU. */
    struct machine m = load(PAPER_NODE);
    check_place(&m, STRATA_MAP_CORE, NULL, 0, "0", "0 0 0 0 0 0");
    check_place(&m, STRATA_MAP_CORE, NULL, 3, "3", "0 0 0 1 3 3");
    check_place(&m, STRATA_MAP_CORE, NULL, 5, "5", "1 1 1 2 5 5");
    check_place(&m, STRATA_MAP_CORE, NULL, 9, "1", "0 0 0 0 1 1"); /* wraps */
    /* Round-robin over the 2 NUMA nodes, then by core inside. */
    check_place(&m, STRATA_MAP_NUMA, NULL, 0, "0", "0 0 0 0 0 0");
    check_place(&m, STRATA_MAP_NUMA, NULL, 1, "4", "1 1 1 2 4 4");
    check_place(&m, STRATA_MAP_NUMA, NULL, 2, "1", "0 0 0 0 1 1");
    check_place(&m, STRATA_MAP_NUMA, NULL, 7, "7", "1 1 1 3 7 7");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 3, "5", "1 1 1 2 5 5");
    /* Unbound: the whole machine, inside no object of any level. */
    check_place(&m, STRATA_MAP_NONE, NULL, 0, "0-7", "-1 -1 -1 -1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 0, "0", "0 0 0 0 0 0");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 1, "1", "0 0 0 0 1 1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 2, "2-3", "0 0 0 1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 3, "2-3", "0 0 0 1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 4, "4-7", "1 1 1 -1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 7, "4-7", "1 1 1 -1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, PAPER_52_MAP, 9, "1", "0 0 0 0 1 1"); /* wraps */
    check_place(&m, STRATA_MAP_LIST, "socket:1,l3:0,pu:6,machine:0", 0, "4-7",
                "1 1 1 -1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, "socket:1,l3:0,pu:6,machine:0", 1, "0-3",
                "0 0 0 -1 -1 -1");
    check_place(&m, STRATA_MAP_LIST, "socket:1,l3:0,pu:6,machine:0", 2, "6", "1 1 1 3 6 6");
    check_place(&m, STRATA_MAP_LIST, "socket:1,l3:0,pu:6,machine:0", 3, "0-7",
                "-1 -1 -1 -1 -1 -1");
    check_bad_list(&m, "core:8", "names an object this machine does not have");
    check_bad_list(&m, "l1:0", "names an object this machine does not have");
    check_bad_list(&m, "core:x", "is not valid");
    check_bad_list(&m, "core", "is not valid");
    check_bad_list(&m, "disk:0", "is not valid");
    check_bad_list(&m, "core:-1", "is not valid");
    /* An empty binding lies in no object. */
    struct strata_location loc;
    hwloc_bitmap_t empty = hwloc_bitmap_alloc();
    strata_location_from_binding(m.topo, &m.lv, empty, &loc);
    char buf[64];
    EXPECT_STR("[paper] empty binding location", ints(buf, sizeof buf, loc.idx, m.lv.nlevels),
               "-1 -1 -1 -1 -1 -1");
    hwloc_bitmap_free(empty);
    unload(&m);

    /* Stack Package NUMANode L3Cache Core PU; NUMA i = cores 4i..4i+3. */
    m = load(TWO_NUMA_PER_SOCKET);
    check_place(&m, STRATA_MAP_NUMA, NULL, 0, "0", "0 0 0 0 0");
    check_place(&m, STRATA_MAP_NUMA, NULL, 1, "4", "0 1 1 4 4");
    check_place(&m, STRATA_MAP_NUMA, NULL, 2, "8", "1 2 2 8 8");
    check_place(&m, STRATA_MAP_NUMA, NULL, 3, "12", "1 3 3 12 12");
    check_place(&m, STRATA_MAP_NUMA, NULL, 5, "5", "0 1 1 5 5");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 1, "8", "1 2 2 8 8");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 2, "1", "0 0 0 1 1");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 5, "10", "1 2 2 10 10");
    check_place(&m, STRATA_MAP_LIST, "numa:3", 0, "12-15", "1 3 3 -1 -1");
    unload(&m);

    /* Stack NUMANode Core PU; there is no package to map by socket, so such
     * ranks are unbound, though still inside the machine-wide NUMA node. */
    m = load(FLAT);
    check_place(&m, STRATA_MAP_CORE, NULL, 2, "2", "0 2 2");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 1, "0-3", "0 -1 -1");
    check_place(&m, STRATA_MAP_NONE, NULL, 0, "0-3", "0 -1 -1");
    check_bad_list(&m, "socket:0", "names an object this machine does not have");
    unload(&m);

    /* Stack NUMANode Package L3Cache L2Cache Core PU: an unbound rank is
     * still inside the only NUMA node, package and L3. */
    m = load(ONE_SOCKET);
    check_place(&m, STRATA_MAP_CORE, NULL, 1, "1", "0 0 0 1 1 1");
    check_place(&m, STRATA_MAP_NONE, NULL, 0, "0-1", "0 0 0 -1 -1 -1");
    check_place(&m, STRATA_MAP_SOCKET, NULL, 1, "1", "0 0 0 1 1 1");
    unload(&m);

    /* Stack NUMANode Package Core PU: a core binding spans two PUs. */
    m = load(SMT);
    check_place(&m, STRATA_MAP_CORE, NULL, 0, "0-1", "0 0 0 -1");
    check_place(&m, STRATA_MAP_CORE, NULL, 3, "6-7", "0 0 3 -1");
    check_place(&m, STRATA_MAP_LIST, "pu:3,pu:4", 0, "3", "0 0 1 3");
    check_place(&m, STRATA_MAP_LIST, "pu:3,pu:4", 1, "4", "0 0 2 4");
    unload(&m);
}

/* ------------------------------------------------------ common level */

/* Locations of n ranks of one machine: rank r is local rank local[r] of
 * node node[r] (node NULL: all on node 0; local NULL: local rank r). */
static void locate(const struct machine *m, enum strata_map_kind map, const char *list, int n,
                   const int *node, const int *local, struct strata_location *loc)
{
    struct strata_config cfg = map_config(map, list);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int r = 0; r < n; r++) {
        char err[512] = "";
        if (strata_binding(m->topo, &cfg, local ? local[r] : r, set, err, sizeof err)) {
            fprintf(stderr, "FATAL: binding of rank %d on %s: %s\n", r, m->desc, err);
            exit(2);
        }
        strata_location_from_binding(m->topo, &m->lv, set, &loc[r]);
        loc[r].node = node ? node[r] : 0;
    }
    hwloc_bitmap_free(set);
}

/* Common level of the listed ranks (-1-terminated) among loc. */
static int common_of(const struct machine *m, const struct strata_location *loc,
                     const int *ranks)
{
    const struct strata_location *sel[16];
    int n = 0;
    while (ranks[n] >= 0) {
        sel[n] = &loc[ranks[n]];
        n++;
    }
    return strata_locations_common_level(&m->lv, sel, n);
}

static void test_common_level(void)
{
    /* Paper node, Figure 2 binding (stack positions: 0 NUMANode, 1 Package,
     * 2 L3, 3 L2, 4 Core, 5 PU). */
    struct machine m = load(PAPER_NODE);
    struct strata_location loc[8];
    locate(&m, STRATA_MAP_LIST, PAPER_52_MAP, 8, NULL, NULL, loc);
    EXPECT_INT("[5.2] common {0}", common_of(&m, loc, (int[]){0, -1}), 5);
    EXPECT_INT("[5.2] common {0,1}", common_of(&m, loc, (int[]){0, 1, -1}), 3);
    EXPECT_INT("[5.2] common {1,0}", common_of(&m, loc, (int[]){1, 0, -1}), 3);
    EXPECT_INT("[5.2] common {2,3}", common_of(&m, loc, (int[]){2, 3, -1}), 3);
    EXPECT_INT("[5.2] common {2}", common_of(&m, loc, (int[]){2, -1}), 3);
    EXPECT_INT("[5.2] common {0,2}", common_of(&m, loc, (int[]){0, 2, -1}), 2);
    EXPECT_INT("[5.2] common {4,5,6,7}", common_of(&m, loc, (int[]){4, 5, 6, 7, -1}), 2);
    EXPECT_INT("[5.2] common {0,4}", common_of(&m, loc, (int[]){0, 4, -1}), -1);
    EXPECT_INT("[5.2] common all", common_of(&m, loc, (int[]){0, 1, 2, 3, 4, 5, 6, 7, -1}), -1);
    EXPECT_STR("[5.2] class of {0,1}",
               strata_levels_class_name(&m.lv, common_of(&m, loc, (int[]){0, 1, -1})),
               "L2Cache");
    EXPECT_STR("[5.2] class of {4,5}",
               strata_levels_class_name(&m.lv, common_of(&m, loc, (int[]){4, 5, -1})),
               "NUMANode");
    EXPECT_STR("[5.2] class of {0}",
               strata_levels_class_name(&m.lv, common_of(&m, loc, (int[]){0, -1})), "Core");
    /* Other nodes: -2 whatever the indices. */
    loc[1].node = 1;
    EXPECT_INT("[5.2] common {0,1} on 2 nodes", common_of(&m, loc, (int[]){0, 1, -1}), -2);
    EXPECT_INT("[5.2] common {0,2,1} on 2 nodes", common_of(&m, loc, (int[]){0, 2, 1, -1}), -2);
    EXPECT_INT("[5.2] common {0,2} with 1 elsewhere", common_of(&m, loc, (int[]){0, 2, -1}), 2);
    /* Unbound ranks share nothing but the machine, even with themselves. */
    locate(&m, STRATA_MAP_NONE, NULL, 2, NULL, NULL, loc);
    EXPECT_INT("[paper unbound] common {0}", common_of(&m, loc, (int[]){0, -1}), -1);
    EXPECT_INT("[paper unbound] common {0,1}", common_of(&m, loc, (int[]){0, 1, -1}), -1);
    unload(&m);

    m = load(SMT);
    locate(&m, STRATA_MAP_LIST, "pu:0,pu:1,core:0,pu:2", 4, NULL, NULL, loc);
    EXPECT_INT("[smt] common {0,1} (same core)", common_of(&m, loc, (int[]){0, 1, -1}), 2);
    EXPECT_INT("[smt] common {0,2}", common_of(&m, loc, (int[]){0, 2, -1}), 2);
    EXPECT_INT("[smt] common {0,3}", common_of(&m, loc, (int[]){0, 3, -1}), 1);
    EXPECT_STR("[smt] class of {0,3}",
               strata_levels_class_name(&m.lv, common_of(&m, loc, (int[]){0, 3, -1})),
               "Machine");
    EXPECT_STR("[smt] class of {0}",
               strata_levels_class_name(&m.lv, common_of(&m, loc, (int[]){0, -1})), "PU");
    unload(&m);
}

/* ---------------------------------------------------------- hierarchies */

/* "[0 1][2]" (members of each group) and "0 2" (leaders) of a level. */
static void format_level(const struct strata_hier_level *L, char *members, size_t mlen,
                         char *leaders, size_t llen)
{
    size_t at = 0;
    members[0] = '\0';
    for (int g = 0; g < L->ngroups && at < mlen; g++) {
        at += (size_t)snprintf(members + at, mlen - at, "[");
        for (int i = L->member_start[g]; i < L->member_start[g + 1] && at < mlen; i++)
            at += (size_t)snprintf(members + at, mlen - at, i > L->member_start[g] ? " %d" : "%d",
                                   L->members[i]);
        if (at < mlen) at += (size_t)snprintf(members + at, mlen - at, "]");
    }
    ints(leaders, llen, L->leader, L->ngroups);
}

struct want_level {
    const char *name;
    int hw_type;
    int ngroups;
    const char *group_of; /* of every rank */
    const char *members;  /* participants per group: ranks at level 0, leaders above */
    const char *leaders;
};

/* Builds the hierarchy and compares every level; `dropped` lists what must
 * appear in h.dropped (NULL: nothing may be dropped). */
static void check_hier(const char *scenario, const struct machine *m,
                       const struct strata_location *loc, int size, const char *hint,
                       int nnodes, int nlevels, const struct want_level *want,
                       const char *const *dropped)
{
    struct strata_hier h;
    char what[256], buf[512], leaders[256];
    if (strata_hier_build(&m->lv, loc, size, hint, &h)) {
        report(0, __FILE__, __LINE__, "%s: strata_hier_build failed", scenario);
        return;
    }
    snprintf(what, sizeof what, "%s: nnodes", scenario);
    EXPECT_INT(what, h.nnodes, nnodes);
    snprintf(what, sizeof what, "%s: size", scenario);
    EXPECT_INT(what, h.size, size);
    snprintf(what, sizeof what, "%s: nlevels", scenario);
    EXPECT_INT(what, h.nlevels, nlevels);
    for (int l = 0; l < nlevels && l < h.nlevels; l++) {
        const struct strata_hier_level *L = &h.level[l];
        snprintf(what, sizeof what, "%s: level %d name", scenario, l);
        EXPECT_STR(what, L->name, want[l].name);
        snprintf(what, sizeof what, "%s: level %d hw_type", scenario, l);
        EXPECT_INT(what, L->hw_type, want[l].hw_type);
        snprintf(what, sizeof what, "%s: level %d ngroups", scenario, l);
        EXPECT_INT(what, L->ngroups, want[l].ngroups);
        if (L->ngroups != want[l].ngroups) continue;
        snprintf(what, sizeof what, "%s: level %d group_of", scenario, l);
        EXPECT_STR(what, ints(buf, sizeof buf, L->group_of, size), want[l].group_of);
        format_level(L, buf, sizeof buf, leaders, sizeof leaders);
        snprintf(what, sizeof what, "%s: level %d members", scenario, l);
        EXPECT_STR(what, buf, want[l].members);
        snprintf(what, sizeof what, "%s: level %d leaders", scenario, l);
        EXPECT_STR(what, leaders, want[l].leaders);
    }
    if (!dropped) {
        snprintf(what, sizeof what, "%s: nothing dropped", scenario);
        EXPECT_STR(what, h.dropped, "");
    }
    for (int i = 0; dropped && dropped[i]; i++) {
        snprintf(what, sizeof what, "%s: dropped", scenario);
        EXPECT_CONTAINS(what, h.dropped, dropped[i]);
    }
    strata_hier_free(&h);
}

#define NO_SPLIT "does not split the ranks further"

static void test_hierarchy_paper_node(void)
{
    struct machine m = load(PAPER_NODE);
    struct strata_location loc[16];

    /* 8 ranks by core on one node, default hint: l3 groups the two sockets;
     * numa and socket partition alike, so they add nothing. */
    locate(&m, STRATA_MAP_CORE, NULL, 8, NULL, NULL, loc);
    check_hier("paper 8 default", &m, loc, 8, "l3,numa,socket,node", 1, 2,
               (struct want_level[]){
                   {"l3", STRATA_HW_L3, 2, "0 0 0 0 1 1 1 1", "[0 1 2 3][4 5 6 7]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0", "[0 4]", "0"},
               },
               (const char *[]){"numa (" NO_SPLIT ")", "socket (" NO_SPLIT ")", NULL});

    /* Finer hint, in any order and case: l2 then l3 then node. */
    check_hier("paper 8 l2,l3", &m, loc, 8, "node,L3,l2", 1, 3,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 4, "0 0 1 1 2 2 3 3", "[0 1][2 3][4 5][6 7]",
                    "0 2 4 6"},
                   {"l3", STRATA_HW_L3, 2, "0 0 0 0 1 1 1 1", "[0 2][4 6]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0", "[0 4]", "0"},
               },
               NULL);

    /* Core level groups every rank alone: dropped; no L1 on this machine. */
    check_hier("paper 8 core,l1,l2,socket", &m, loc, 8, "core,l1,l2,socket", 1, 3,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 4, "0 0 1 1 2 2 3 3", "[0 1][2 3][4 5][6 7]",
                    "0 2 4 6"},
                   {"socket", STRATA_HW_PACKAGE, 2, "0 0 0 0 1 1 1 1", "[0 2][4 6]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0", "[0 4]", "0"},
               },
               (const char *[]){"core (" NO_SPLIT ")", "l1 (this machine has no such level)",
                                NULL});

    /* Unbound ranks: nothing below the node. */
    locate(&m, STRATA_MAP_NONE, NULL, 4, NULL, NULL, loc);
    check_hier("paper 4 unbound", &m, loc, 4, "l2,l3,numa,socket,node", 1, 1,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0", "[0 1 2 3]", "0"},
               },
               (const char *[]){"l2 (rank 0 is not bound inside one L2Cache)",
                                "l3 (rank 0 is not bound inside one L3Cache)",
                                "numa (rank 0 is not bound inside one NUMANode)",
                                "socket (rank 0 is not bound inside one Package)", NULL});

    /* Figure 2's binding: ranks 4-7 may move across L2 caches, so l2 goes. */
    locate(&m, STRATA_MAP_LIST, PAPER_52_MAP, 8, NULL, NULL, loc);
    check_hier("paper 5.2 binding", &m, loc, 8, "l2,l3,node", 1, 2,
               (struct want_level[]){
                   {"l3", STRATA_HW_L3, 2, "0 0 0 0 1 1 1 1", "[0 1 2 3][4 5 6 7]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0", "[0 4]", "0"},
               },
               (const char *[]){"l2 (rank 4 is not bound inside one L2Cache)", NULL});

    /* Two nodes of 8: the top is the cluster of node leaders. */
    int node16[16], local16[16];
    for (int r = 0; r < 16; r++) {
        node16[r] = r / 8;
        local16[r] = r % 8;
    }
    locate(&m, STRATA_MAP_CORE, NULL, 16, node16, local16, loc);
    check_hier("paper 2x8", &m, loc, 16, "l3,numa,socket,node", 2, 3,
               (struct want_level[]){
                   {"l3", STRATA_HW_L3, 4, "0 0 0 0 1 1 1 1 2 2 2 2 3 3 3 3",
                    "[0 1 2 3][4 5 6 7][8 9 10 11][12 13 14 15]", "0 4 8 12"},
                   {"node", STRATA_HW_MACHINE, 2, "0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1",
                    "[0 4][8 12]", "0 8"},
                   {"cluster", STRATA_HW_CLUSTER, 1, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
                    "[0 8]", "0"},
               },
               (const char *[]){"numa (" NO_SPLIT ")", NULL});

    /* Two nodes of unbound ranks: node and cluster only. */
    locate(&m, STRATA_MAP_NONE, NULL, 4, (int[]){0, 0, 1, 1}, (int[]){0, 1, 0, 1}, loc);
    check_hier("paper 2x2 unbound", &m, loc, 4, "l3,node", 2, 2,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 2, "0 0 1 1", "[0 1][2 3]", "0 2"},
                   {"cluster", STRATA_HW_CLUSTER, 1, "0 0 0 0", "[0 2]", "0"},
               },
               (const char *[]){"l3 (rank 0 is not bound inside one L3Cache)", NULL});

    /* 7 ranks dealt cyclically to 2 nodes (ranks 0 2 4 6 on node 0 at its
     * cores 0-3, ranks 1 3 5 on node 1 at its cores 0-2): groups are not
     * contiguous in rank order, and leaders are the lowest ranks. */
    locate(&m, STRATA_MAP_CORE, NULL, 7, (int[]){0, 1, 0, 1, 0, 1, 0}, (int[]){0, 0, 1, 1, 2, 2, 3},
           loc);
    check_hier("paper 7 cyclic on 2 nodes", &m, loc, 7, "l2,node", 2, 3,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 4, "0 1 0 1 2 3 2", "[0 2][1 3][4 6][5]", "0 1 4 5"},
                   {"node", STRATA_HW_MACHINE, 2, "0 1 0 1 0 1 0", "[0 4][1 5]", "0 1"},
                   {"cluster", STRATA_HW_CLUSTER, 1, "0 0 0 0 0 0 0", "[0 1]", "0"},
               },
               NULL);

    /* 3 ranks: cores 0-2 share one L3, so l3 does not split them. */
    locate(&m, STRATA_MAP_CORE, NULL, 3, NULL, NULL, loc);
    check_hier("paper 3", &m, loc, 3, "l2,l3,node", 1, 2,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 2, "0 0 1", "[0 1][2]", "0 2"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0", "[0 2]", "0"},
               },
               (const char *[]){"l3 (" NO_SPLIT ")", NULL});

    /* 5 ranks: the fifth is alone in its L2 and its L3. */
    locate(&m, STRATA_MAP_CORE, NULL, 5, NULL, NULL, loc);
    check_hier("paper 5", &m, loc, 5, "l2,l3,node", 1, 3,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 3, "0 0 1 1 2", "[0 1][2 3][4]", "0 2 4"},
                   {"l3", STRATA_HW_L3, 2, "0 0 0 0 1", "[0 2][4]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0", "[0 4]", "0"},
               },
               NULL);

    /* 7 ranks on one node, by NUMA round-robin: ranks 0 2 4 6 on package 0
     * (cores 0-3), ranks 1 3 5 on package 1 (cores 4-6). */
    locate(&m, STRATA_MAP_NUMA, NULL, 7, NULL, NULL, loc);
    check_hier("paper 7 by numa", &m, loc, 7, "l2,socket,node", 1, 3,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 4, "0 1 0 1 2 3 2", "[0 2][1 3][4 6][5]", "0 1 4 5"},
                   {"socket", STRATA_HW_PACKAGE, 2, "0 1 0 1 0 1 0", "[0 4][1 5]", "0 1"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0", "[0 1]", "0"},
               },
               NULL);

    /* One rank: a single one-rank node level. */
    locate(&m, STRATA_MAP_CORE, NULL, 1, NULL, NULL, loc);
    check_hier("paper 1", &m, loc, 1, "l2,l3,numa,socket,node", 1, 1,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 1, "0", "[0]", "0"},
               },
               (const char *[]){"l2 (" NO_SPLIT ")", "l3 (" NO_SPLIT ")", NULL});

    /* One rank on each of 2 nodes: only the cluster. */
    locate(&m, STRATA_MAP_CORE, NULL, 2, (int[]){0, 1}, (int[]){0, 0}, loc);
    check_hier("paper 1 per node", &m, loc, 2, "l3,node", 2, 1,
               (struct want_level[]){
                   {"cluster", STRATA_HW_CLUSTER, 1, "0 0", "[0 1]", "0"},
               },
               (const char *[]){"l3 (" NO_SPLIT ")", NULL});
    unload(&m);
}

static void test_hierarchy_other_machines(void)
{
    struct strata_location loc[16];

    /* 16 ranks round-robin over the 4 NUMA nodes: rank r on NUMA r % 4,
     * package (r % 4) / 2.  l3 (= numa) gives 4 groups; numa then adds
     * nothing; socket pairs them. */
    struct machine m = load(TWO_NUMA_PER_SOCKET);
    locate(&m, STRATA_MAP_NUMA, NULL, 16, NULL, NULL, loc);
    check_hier("2numa 16 by numa", &m, loc, 16, "l3,numa,socket,node", 1, 3,
               (struct want_level[]){
                   {"l3", STRATA_HW_L3, 4, "0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3",
                    "[0 4 8 12][1 5 9 13][2 6 10 14][3 7 11 15]", "0 1 2 3"},
                   {"socket", STRATA_HW_PACKAGE, 2, "0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1",
                    "[0 1][2 3]", "0 2"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", "[0 2]",
                    "0"},
               },
               (const char *[]){"numa (" NO_SPLIT ")", NULL});

    /* By core, 6 ranks: cores 0-3 on NUMA 0, 4-5 on NUMA 1, all package 0. */
    locate(&m, STRATA_MAP_CORE, NULL, 6, NULL, NULL, loc);
    check_hier("2numa 6 by core", &m, loc, 6, "numa,socket,node", 1, 2,
               (struct want_level[]){
                   {"numa", STRATA_HW_NUMA, 2, "0 0 0 0 1 1", "[0 1 2 3][4 5]", "0 4"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0", "[0 4]", "0"},
               },
               (const char *[]){"socket (" NO_SPLIT ")", NULL});
    unload(&m);

    /* Flat machine: nothing between core and node. */
    m = load(FLAT);
    locate(&m, STRATA_MAP_CORE, NULL, 4, NULL, NULL, loc);
    check_hier("flat 4", &m, loc, 4, "l3,numa,socket,node", 1, 1,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0", "[0 1 2 3]", "0"},
               },
               (const char *[]){"l3 (this machine has no such level)", "numa (" NO_SPLIT ")",
                                "socket (this machine has no such level)", NULL});
    unload(&m);

    /* One socket: only l2 splits (each L2 has one core). */
    m = load(ONE_SOCKET);
    locate(&m, STRATA_MAP_CORE, NULL, 2, NULL, NULL, loc);
    check_hier("one socket 2, default", &m, loc, 2, "l3,numa,socket,node", 1, 1,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 1, "0 0", "[0 1]", "0"},
               },
               (const char *[]){"l3 (" NO_SPLIT ")", "numa (" NO_SPLIT ")",
                                "socket (" NO_SPLIT ")", NULL});
    /* 4 ranks wrap onto the 2 cores: l2 pairs them. */
    locate(&m, STRATA_MAP_CORE, NULL, 4, NULL, NULL, loc);
    check_hier("one socket 4, l2", &m, loc, 4, "l2,l3,node", 1, 2,
               (struct want_level[]){
                   {"l2", STRATA_HW_L2, 2, "0 1 0 1", "[0 2][1 3]", "0 1"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0", "[0 1]", "0"},
               },
               (const char *[]){"l3 (" NO_SPLIT ")", NULL});
    /* Unbound ranks are still inside the only L3: it just does not split. */
    locate(&m, STRATA_MAP_NONE, NULL, 3, NULL, NULL, loc);
    check_hier("one socket 3 unbound", &m, loc, 3, "l2,l3,node", 1, 1,
               (struct want_level[]){
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0", "[0 1 2]", "0"},
               },
               (const char *[]){"l2 (rank 0 is not bound inside one L2Cache)",
                                "l3 (" NO_SPLIT ")", NULL});
    unload(&m);

    /* SMT: 8 ranks, one per hyperthread; core pairs the siblings. */
    m = load(SMT);
    locate(&m, STRATA_MAP_LIST, "pu:0,pu:1,pu:2,pu:3,pu:4,pu:5,pu:6,pu:7", 8, NULL, NULL, loc);
    check_hier("smt 8 by pu", &m, loc, 8, "core,l3,socket,node", 1, 2,
               (struct want_level[]){
                   {"core", STRATA_HW_CORE, 4, "0 0 1 1 2 2 3 3", "[0 1][2 3][4 5][6 7]",
                    "0 2 4 6"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0 0 0 0", "[0 2 4 6]", "0"},
               },
               (const char *[]){"l3 (this machine has no such level)",
                                "socket (" NO_SPLIT ")", NULL});
    /* By core (each rank spans 2 PUs), 5 ranks wrap: ranks 0 and 4 share core 0. */
    locate(&m, STRATA_MAP_CORE, NULL, 5, NULL, NULL, loc);
    check_hier("smt 5 by core", &m, loc, 5, "core,node", 1, 2,
               (struct want_level[]){
                   {"core", STRATA_HW_CORE, 4, "0 1 2 3 0", "[0 4][1][2][3]", "0 1 2 3"},
                   {"node", STRATA_HW_MACHINE, 1, "0 0 0 0 0", "[0 1 2 3]", "0"},
               },
               NULL);
    unload(&m);
}

int main(void)
{
    test_type_names();
    test_level_stacks();
    test_bindings();
    test_common_level();
    test_hierarchy_paper_node();
    test_hierarchy_other_machines();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
