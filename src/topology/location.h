/* Where a rank runs, described without hwloc pointers so it can be gathered
 * over MPI and reasoned about in unit tests.
 *
 * A machine is a stack of hardware levels (Package, NUMANode, L3, L2, L1,
 * Core, PU).  The stack is ordered from coarse to fine by object count, ties
 * broken by the priority above (so NUMANode comes before an identical Package
 * level, as in the hsplit paper).  A rank's location is its node and, for each
 * level of the stack, the logical index of the object of that level that
 * contains the rank's whole binding, or -1 if no single object does (the rank
 * may move across several, or the level is absent). */
#ifndef STRATA_LOCATION_H
#define STRATA_LOCATION_H

#include <hwloc.h>
#include <stddef.h>

#include "config/config.h"
#include "util/hw_types.h"
#include "util/stats.h"

/* enum strata_hw_type: src/util/hw_types.h */
#define STRATA_MAX_LEVELS STRATA_HW_NTYPES

/* The level stack of a machine (the same on every rank of a job). */
struct strata_levels {
    int nlevels;
    int type[STRATA_MAX_LEVELS];      /* enum strata_hw_type, coarse to fine */
    int count[STRATA_MAX_LEVELS];     /* objects of that type on the machine */
    /* 1 when the level partitions the machine exactly like the level above it
     * (or like the whole machine for the first level): a redundant level. */
    int same_as_coarser[STRATA_MAX_LEVELS];
};

struct strata_location {
    int node;                         /* node index (virtual nodes count) */
    int idx[STRATA_MAX_LEVELS];       /* per level of the stack, or -1 */
};

/* Position of a type in the stack, or -1 if the machine lacks it. */
int strata_levels_find(const struct strata_levels *lv, int type);

/* The name a level goes by: the first (coarsest) type of the run of identical
 * levels it belongs to; "Machine" if identical to the whole machine. */
const char *strata_levels_class_name(const struct strata_levels *lv, int level);

/* Loads the real machine, or the fake one cfg->topology describes (an hwloc
 * synthetic string, or the path of an XML file). */
int strata_topology_load(const struct strata_config *cfg, hwloc_topology_t *out,
                         char *err, size_t errlen);

/* Loads a topology another rank exported as XML (so hwloc discovers the node
 * once per node, not once per rank). */
int strata_topology_load_xml(const char *xml, int len, int is_this_system,
                             hwloc_topology_t *out, char *err, size_t errlen);

/* Builds the level stack of a loaded topology. */
void strata_levels_from_topology(hwloc_topology_t topo, struct strata_levels *lv);

/* The cpuset where local rank `local_rank` of `local_size` runs, following
 * cfg->map (its real binding, by core, by NUMA node, by socket, unbound, or an
 * explicit list).  Returns -1 with a message for a bad explicit list. */
int strata_binding(hwloc_topology_t topo, const struct strata_config *cfg,
                   int local_rank, hwloc_bitmap_t set, char *err, size_t errlen);

/* Fills loc->idx from a binding (loc->node is left to the caller). */
void strata_location_from_binding(hwloc_topology_t topo,
                                  const struct strata_levels *lv,
                                  hwloc_const_bitmap_t set,
                                  struct strata_location *loc);

/* Deepest level of the stack at which all n locations share one object, -1
 * if none does (they share only the machine), -2 if they span nodes.
 * n must be >= 1. */
int strata_locations_common_level(const struct strata_levels *lv,
                                  const struct strata_location *const *locs, int n);

/* The distance class between two ranks' locations. */
enum strata_distance strata_distance(const struct strata_levels *lv,
                                     const struct strata_location *a,
                                     const struct strata_location *b);

#endif
