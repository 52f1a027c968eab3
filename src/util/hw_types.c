/* Names of the hardware levels. */
#include "util/hw_types.h"

#include <stddef.h>
#include <strings.h>

/* hwloc's names, by enum strata_hw_type. */
static const char *const names[] = {
    [STRATA_HW_PACKAGE] = "Package", [STRATA_HW_NUMA] = "NUMANode",
    [STRATA_HW_L3] = "L3Cache",      [STRATA_HW_L2] = "L2Cache",
    [STRATA_HW_L1] = "L1Cache",      [STRATA_HW_CORE] = "Core",
    [STRATA_HW_PU] = "PU",
};
_Static_assert(sizeof names / sizeof names[0] == STRATA_HW_NTYPES,
               "every level of enum strata_hw_type needs its name here");

const char *strata_hw_type_name(int type)
{
    if (type >= 0 && type < STRATA_HW_NTYPES) return names[type];
    if (type == STRATA_HW_MACHINE) return "Machine";
    if (type == STRATA_HW_CLUSTER) return "Cluster";
    return "Unknown";
}

int strata_hw_type_parse(const char *name)
{
    static const struct { const char *name; int type; } aliases[] = {
        {"node", STRATA_HW_MACHINE},     {"machine", STRATA_HW_MACHINE},
        {"cluster", STRATA_HW_CLUSTER},  {"socket", STRATA_HW_PACKAGE},
        {"package", STRATA_HW_PACKAGE},  {"numa", STRATA_HW_NUMA},
        {"numanode", STRATA_HW_NUMA},    {"l3", STRATA_HW_L3},
        {"l3cache", STRATA_HW_L3},       {"l2", STRATA_HW_L2},
        {"l2cache", STRATA_HW_L2},       {"l1", STRATA_HW_L1},
        {"l1cache", STRATA_HW_L1},       {"l1d", STRATA_HW_L1},
        {"core", STRATA_HW_CORE},        {"pu", STRATA_HW_PU},
    };
    if (!name) return STRATA_HW_UNKNOWN;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcasecmp(name, aliases[i].name)) return aliases[i].type;
    return STRATA_HW_UNKNOWN;
}
