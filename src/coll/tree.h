/* One call's view of the hierarchy: the root of the operation replaces the
 * leader of every group it belongs to, so data leaves the root directly and
 * the traffic pattern does not depend on which rank is root.
 *
 * Participants of a group at level l are, for each group of level l-1 inside
 * it, that group's effective leader (at level 0: the ranks themselves).  They
 * are listed in the order of those lower groups, which does not depend on
 * the root, so reductions combine operands in the same order for any root. */
#ifndef STRATA_TREE_H
#define STRATA_TREE_H

#include "topology/hierarchy.h"

/* The effective leader of group g of level l when `root` is the root. */
int strata_tree_leader(const struct strata_hier *h, int root, int l, int g);

/* Fills out[] with the participants of rank r's group at level l (r's
 * ancestor group) and returns how many there are. */
int strata_tree_participants(const struct strata_hier *h, int root, int l, int r, int *out);

/* The levels at which rank r takes part: 0 .. (returned value - 1). */
int strata_tree_levels_of(const struct strata_hier *h, int root, int r);

/* Rank r's parent in the broadcast tree rooted at root (-1 for the root);
 * fills children[] (highest level first) and returns their number. */
int strata_tree_links(const struct strata_hier *h, int root, int r, int *parent, int *children);

#endif
