/* The hierarchy of groups a communicator's collectives follow.
 *
 * Level 0 groups all ranks of the communicator by the finest hardware level
 * kept; each higher level groups the leaders of the level below; the top
 * level has one group.  "node" is always a boundary (ranks of different nodes
 * never share a group below the top), and with several nodes the top level is
 * "cluster", whose members are the node leaders.  A group's leader is its
 * lowest rank; algorithms make the root of an operation leader of every group
 * it belongs to for that call. */
#ifndef STRATA_HIERARCHY_H
#define STRATA_HIERARCHY_H

#include <stddef.h>

#include "topology/location.h"

struct strata_hier_level {
    char name[16];      /* "l3", "numa", "socket", "l2", "l1", "core", "node", "cluster" */
    int hw_type;        /* enum strata_hw_type (STRATA_HW_MACHINE for node) */
    int ngroups;
    int *group_of;      /* [size] group of each rank's ancestor at this level */
    int *leader;        /* [ngroups] leader (a rank of the communicator) */
    int *member_start;  /* [ngroups + 1] offsets into members */
    int *members;       /* participants (ranks), grouped, ascending in a group */
};

struct strata_hier {
    int size;
    int nnodes;
    int nlevels;
    struct strata_hier_level level[STRATA_MAX_LEVELS + 2];
    char dropped[512];  /* which hinted levels were dropped, and why */
};

/* Builds the hierarchy of `size` ranks whose locations are loc[0..size-1]
 * from the hint (comma list, e.g. "l3,numa,socket,node").  Never fails for
 * valid input: levels that cannot be used are dropped and named in
 * h->dropped.  Returns -1 only if memory runs out. */
int strata_hier_build(const struct strata_levels *lv, const struct strata_location *loc,
                      int size, const char *hint, struct strata_hier *h);

void strata_hier_free(struct strata_hier *h);

/* One line per level: "l3: 4 groups [0 1 | 2 3 | ...] leaders 0 2 ...". */
void strata_hier_describe(const struct strata_hier *h, char *out, size_t outlen);

#endif
