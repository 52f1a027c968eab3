/* The hardware levels a machine is described by (hwloc's object types that
 * strata uses) and their names: vocabulary the configuration parses and the
 * topology builds on. */
#ifndef STRATA_HW_TYPES_H
#define STRATA_HW_TYPES_H

/* If you add a level here, also update: the names and aliases in
 * src/util/hw_types.c, the hwloc types of src/topology/location.c, and the
 * names STRATA_MAP and STRATA_HIERARCHY accept (src/config/config.c). */
enum strata_hw_type {
    STRATA_HW_PACKAGE,
    STRATA_HW_NUMA,
    STRATA_HW_L3,
    STRATA_HW_L2,
    STRATA_HW_L1,
    STRATA_HW_CORE,
    STRATA_HW_PU,
    STRATA_HW_NTYPES,
    /* Not hwloc levels of the stack, but names a level can have. */
    STRATA_HW_MACHINE = 100,
    STRATA_HW_CLUSTER = 101,
    STRATA_HW_UNKNOWN = -1
};

/* hwloc's name of a type ("Package", "NUMANode", "L3Cache", ..., "Machine",
 * "Cluster"). */
const char *strata_hw_type_name(int type);

/* Parses a level name: strata's short names (node, socket, package, numa, l3,
 * l2, l1, core, pu, cluster) or hwloc's (Machine, Package, NUMANode, L3Cache,
 * ...), case-insensitive.  Returns STRATA_HW_UNKNOWN if not a level name. */
int strata_hw_type_parse(const char *name);

#endif
