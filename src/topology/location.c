/* hwloc discovery, fake machines, rank placement, and location vectors. */
#include "topology/location.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static const struct {
    int type;
    hwloc_obj_type_t hwloc;
} hw_types[STRATA_HW_NTYPES] = {
    {STRATA_HW_PACKAGE, HWLOC_OBJ_PACKAGE},
    {STRATA_HW_NUMA, HWLOC_OBJ_NUMANODE},
    {STRATA_HW_L3, HWLOC_OBJ_L3CACHE},
    {STRATA_HW_L2, HWLOC_OBJ_L2CACHE},
    {STRATA_HW_L1, HWLOC_OBJ_L1CACHE},
    {STRATA_HW_CORE, HWLOC_OBJ_CORE},
    {STRATA_HW_PU, HWLOC_OBJ_PU},
};

int strata_levels_find(const struct strata_levels *lv, int type)
{
    for (int i = 0; i < lv->nlevels; i++)
        if (lv->type[i] == type) return i;
    return -1;
}

const char *strata_levels_class_name(const struct strata_levels *lv, int level)
{
    while (level >= 0 && lv->same_as_coarser[level]) level--;
    return level < 0 ? "Machine" : strata_hw_type_name(lv->type[level]);
}

int strata_topology_load(const struct strata_config *cfg, hwloc_topology_t *out,
                         char *err, size_t errlen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo)) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        return -1;
    }
    const char *fake = cfg->topology;
    if (fake[0]) {
        struct stat st;
        int rc = stat(fake, &st) == 0 ? hwloc_topology_set_xml(topo, fake)
                                      : hwloc_topology_set_synthetic(topo, fake);
        if (rc) {
            snprintf(err, errlen,
                     "STRATA_TOPOLOGY=\"%s\" is not valid: it accepts an hwloc "
                     "synthetic description (e.g. \"pack:2 numa:2 l3:1 core:4 "
                     "pu:1\") or the path of an hwloc XML file", fake);
            hwloc_topology_destroy(topo);
            return -1;
        }
    }
    if (hwloc_topology_load(topo)) {
        snprintf(err, errlen, "hwloc could not load the topology%s%s",
                 fake[0] ? " of STRATA_TOPOLOGY=" : "", fake);
        hwloc_topology_destroy(topo);
        return -1;
    }
    *out = topo;
    return 0;
}

int strata_topology_load_xml(const char *xml, int len, int is_this_system,
                             hwloc_topology_t *out, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo)) {
        snprintf(err, errlen, "hwloc_topology_init failed");
        return -1;
    }
    /* The node leader discovered this very machine, so binding queries made
     * through this copy are valid for this process too. */
    if (is_this_system) hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    if (hwloc_topology_set_xmlbuffer(topo, xml, len) || hwloc_topology_load(topo)) {
        snprintf(err, errlen, "hwloc could not load the node leader's topology");
        hwloc_topology_destroy(topo);
        return -1;
    }
    *out = topo;
    return 0;
}

/* 1 if every object of type a has an object of type b with the same cpuset,
 * and both have as many objects: the two levels partition alike. */
static int same_partition(hwloc_topology_t topo, hwloc_obj_type_t a, hwloc_obj_type_t b)
{
    int na = hwloc_get_nbobjs_by_type(topo, a), nb = hwloc_get_nbobjs_by_type(topo, b);
    if (na != nb) return 0;
    for (int i = 0; i < na; i++) {
        hwloc_obj_t oa = hwloc_get_obj_by_type(topo, a, (unsigned)i);
        int found = 0;
        for (int j = 0; j < nb && !found; j++)
            found = hwloc_bitmap_isequal(oa->cpuset,
                                         hwloc_get_obj_by_type(topo, b, (unsigned)j)->cpuset);
        if (!found) return 0;
    }
    return 1;
}

void strata_levels_from_topology(hwloc_topology_t topo, struct strata_levels *lv)
{
    /* Ties in object count are broken in this order, NUMANode first: the
     * hsplit paper (section 5.1) names the coinciding NumaNode/Package/L3
     * level "NumaNode", and strata_levels_class_name names a run of identical
     * levels after its first one.  (Walking enum order put Package first.) */
    static const int tie_order[STRATA_HW_NTYPES] = {
        STRATA_HW_NUMA, STRATA_HW_PACKAGE, STRATA_HW_L3, STRATA_HW_L2,
        STRATA_HW_L1,   STRATA_HW_CORE,    STRATA_HW_PU,
    };
    memset(lv, 0, sizeof *lv);
    for (int k = 0; k < STRATA_HW_NTYPES; k++) {
        int t = tie_order[k];
        int n = hwloc_get_nbobjs_by_type(topo, hw_types[t].hwloc);
        if (n <= 0) continue;
        /* Insertion by count keeps ties in priority order (stable). */
        int pos = lv->nlevels;
        while (pos > 0 && lv->count[pos - 1] > n) {
            lv->type[pos] = lv->type[pos - 1];
            lv->count[pos] = lv->count[pos - 1];
            pos--;
        }
        lv->type[pos] = t;
        lv->count[pos] = n;
        lv->nlevels++;
    }
    for (int i = 0; i < lv->nlevels; i++) {
        lv->same_as_coarser[i] =
            i == 0 ? lv->count[0] == 1
                   : same_partition(topo, hw_types[lv->type[i]].hwloc,
                                    hw_types[lv->type[i - 1]].hwloc);
    }
}

/* The k-th core (or PU when the machine reports no cores) inside `within`. */
static hwloc_obj_t nth_core_inside(hwloc_topology_t topo, hwloc_const_cpuset_t within, int k)
{
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0
                                ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, within, type);
    if (n <= 0) return NULL;
    return hwloc_get_obj_inside_cpuset_by_type(topo, within, type, (unsigned)(k % n));
}

/* Round-robin over the objects of `type`, then by core inside each. */
static int bind_round_robin(hwloc_topology_t topo, hwloc_obj_type_t type, int local_rank,
                            hwloc_bitmap_t set)
{
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n <= 0) return -1;
    hwloc_obj_t dom = hwloc_get_obj_by_type(topo, type, (unsigned)(local_rank % n));
    hwloc_obj_t core = nth_core_inside(topo, dom->cpuset, local_rank / n);
    if (!core) return -1;
    hwloc_bitmap_copy(set, core->cpuset);
    return 0;
}

/* What STRATA_MAP accepts, as strata-info --config documents it. */
static const char *map_accepts(void)
{
    for (const struct strata_config_var *v = strata_config_vars(); v->name; v++)
        if (!strcmp(v->name, "STRATA_MAP")) return v->accepts;
    return "";
}

/* The object one entry "type:index" of a STRATA_MAP list names, in *obj
 * (the machine's root for machine:0).  -1 with a message naming the list,
 * the entry and what is accepted when the entry is malformed or names an
 * object this machine does not have. */
static int map_entry_object(hwloc_topology_t topo, const char *list, const char *entry,
                            hwloc_obj_t *obj, char *err, size_t errlen)
{
    char type_name[32];
    const char *colon = strchr(entry, ':');
    size_t type_len = colon ? (size_t)(colon - entry) : 0;
    char *end = NULL;
    long index = colon ? strtol(colon + 1, &end, 10) : -1;
    int type = STRATA_HW_UNKNOWN;
    if (colon && type_len < sizeof type_name) {
        memcpy(type_name, entry, type_len);
        type_name[type_len] = '\0';
        type = strata_hw_type_parse(type_name);
    }
    if (!colon || end == colon + 1 || *end || index < 0 ||
        !(type == STRATA_HW_MACHINE || (type >= 0 && type < STRATA_HW_NTYPES))) {
        snprintf(err, errlen, "STRATA_MAP=\"%s\" is not valid: entry \"%s\" is not type:index "
                 "(type one of machine, package, numa, l3, l2, l1, core, pu; index 0 or "
                 "more); it accepts %s", list, entry, map_accepts());
        return -1;
    }
    /* hwloc counts -1 objects for a type found at several depths: none
     * addressable by one index. */
    int count = type == STRATA_HW_MACHINE
                    ? 1
                    : hwloc_get_nbobjs_by_type(topo, hw_types[type].hwloc);
    if (index >= (count > 0 ? count : 0)) {
        char range[64];
        if (count > 0) snprintf(range, sizeof range, "%s 0 to %d", type_name, count - 1);
        else snprintf(range, sizeof range, "it has no %s", type_name);
        snprintf(err, errlen, "STRATA_MAP=\"%s\" is not valid: entry \"%s\" names an object "
                 "this machine does not have (%s); it accepts %s", list, entry, range,
                 map_accepts());
        return -1;
    }
    *obj = type == STRATA_HW_MACHINE
               ? hwloc_get_root_obj(topo)
               : hwloc_get_obj_by_type(topo, hw_types[type].hwloc, (unsigned)index);
    return 0;
}

/* Entry number `local_rank` (wrapping) of a list "type:index,type:index".
 * Every entry is checked, not only this rank's, so that every rank of the
 * machine judges the list alike whatever its local rank. */
static int bind_from_list(hwloc_topology_t topo, const char *list, int local_rank,
                          hwloc_bitmap_t set, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    hwloc_obj_t objs[256];
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == 256) {
            snprintf(err, errlen, "STRATA_MAP=\"%s\" is not valid: more than 256 entries; it "
                     "accepts %s", list, map_accepts());
            return -1;
        }
        if (map_entry_object(topo, list, tok, &objs[n], err, errlen)) return -1;
        n++;
    }
    if (n == 0) {
        snprintf(err, errlen, "STRATA_MAP=\"%s\" is not valid: the list has no entry; it "
                 "accepts %s", list, map_accepts());
        return -1;
    }
    hwloc_bitmap_copy(set, objs[local_rank % n]->cpuset);
    return 0;
}

int strata_binding(hwloc_topology_t topo, const struct strata_config *cfg,
                   int local_rank, hwloc_bitmap_t set, char *err, size_t errlen)
{
    switch (cfg->map) {
    case STRATA_MAP_CORE: {
        hwloc_obj_t core = nth_core_inside(topo, hwloc_topology_get_topology_cpuset(topo),
                                           local_rank);
        if (core) {
            hwloc_bitmap_copy(set, core->cpuset);
            return 0;
        }
        break;
    }
    case STRATA_MAP_NUMA:
        if (!bind_round_robin(topo, HWLOC_OBJ_NUMANODE, local_rank, set)) return 0;
        break;
    case STRATA_MAP_SOCKET:
        if (!bind_round_robin(topo, HWLOC_OBJ_PACKAGE, local_rank, set)) return 0;
        break;
    case STRATA_MAP_LIST:
        return bind_from_list(topo, cfg->map_list, local_rank, set, err, errlen);
    case STRATA_MAP_ACTUAL:
        if (!hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) && !hwloc_bitmap_iszero(set))
            return 0;
        break;
    case STRATA_MAP_NONE:
        break;
    }
    /* Unbound: the process may run anywhere on the machine. */
    hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(topo));
    return 0;
}

void strata_location_from_binding(hwloc_topology_t topo, const struct strata_levels *lv,
                                  hwloc_const_bitmap_t set, struct strata_location *loc)
{
    for (int i = 0; i < STRATA_MAX_LEVELS; i++) loc->idx[i] = -1;
    if (hwloc_bitmap_iszero(set)) return;
    for (int i = 0; i < lv->nlevels; i++) {
        hwloc_obj_type_t type = hw_types[lv->type[i]].hwloc;
        for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topo, type, NULL); obj;
             obj = hwloc_get_next_obj_by_type(topo, type, obj)) {
            if (hwloc_bitmap_isincluded(set, obj->cpuset)) {
                loc->idx[i] = (int)obj->logical_index;
                break;
            }
        }
    }
}

int strata_locations_common_level(const struct strata_levels *lv,
                                  const struct strata_location *const *locs, int n)
{
    for (int r = 1; r < n; r++)
        if (locs[r]->node != locs[0]->node) return -2;
    int deepest = -1;
    for (int i = 0; i < lv->nlevels; i++) {
        int shared = locs[0]->idx[i] >= 0;
        for (int r = 1; r < n && shared; r++) shared = locs[r]->idx[i] == locs[0]->idx[i];
        if (shared) deepest = i;
    }
    return deepest;
}

static int same_object(const struct strata_levels *lv, int type, const struct strata_location *a,
                       const struct strata_location *b)
{
    int pos = strata_levels_find(lv, type);
    /* The machine's only object of a type holds every rank on it, bound or
     * not (an unbound rank has no index at any level). */
    if (pos >= 0 && lv->count[pos] == 1) return 1;
    return pos >= 0 && a->idx[pos] >= 0 && a->idx[pos] == b->idx[pos];
}

enum strata_distance strata_distance(const struct strata_levels *lv,
                                     const struct strata_location *a,
                                     const struct strata_location *b)
{
    if (a->node != b->node) return STRATA_DIST_NODE;
    if (same_object(lv, STRATA_HW_L3, a, b)) return STRATA_DIST_L3;
    if (same_object(lv, STRATA_HW_NUMA, a, b)) return STRATA_DIST_NUMA;
    if (same_object(lv, STRATA_HW_PACKAGE, a, b)) return STRATA_DIST_SOCKET;
    /* A machine without NUMA or package objects is one domain. */
    if (strata_levels_find(lv, STRATA_HW_PACKAGE) < 0 && strata_levels_find(lv, STRATA_HW_NUMA) < 0)
        return STRATA_DIST_NUMA;
    return STRATA_DIST_MACHINE;
}
