/* Per-call trees over the hierarchy, with the root as leader everywhere. */
#include "coll/tree.h"
#include "util/hot.h"

STRATA_HOT int strata_tree_leader(const struct strata_hier *h, int root, int l, int g)
{
    const struct strata_hier_level *L = &h->level[l];
    return L->group_of[root] == g ? root : L->leader[g];
}

/* The rank standing for rank m's level-(l-1) group at level l. */
static int stand_in(const struct strata_hier *h, int root, int l, int m)
{
    if (l == 0) return m;
    return strata_tree_leader(h, root, l - 1, h->level[l - 1].group_of[m]);
}

STRATA_HOT int strata_tree_participants(const struct strata_hier *h, int root, int l, int r, int *out)
{
    const struct strata_hier_level *L = &h->level[l];
    int g = L->group_of[r], n = 0;
    for (int i = L->member_start[g]; i < L->member_start[g + 1]; i++)
        out[n++] = stand_in(h, root, l, L->members[i]);
    return n;
}

STRATA_HOT int strata_tree_levels_of(const struct strata_hier *h, int root, int r)
{
    int l = 0;
    while (l < h->nlevels && stand_in(h, root, l, r) == r) {
        /* r takes part at level l; it goes on only if it leads its group. */
        if (strata_tree_leader(h, root, l, h->level[l].group_of[r]) != r) return l + 1;
        l++;
    }
    return l;
}

STRATA_HOT int strata_tree_links(const struct strata_hier *h, int root, int r, int *parent, int *children)
{
    int nlev = strata_tree_levels_of(h, root, r), n = 0;
    *parent = -1;
    if (nlev > 0) {
        int top = nlev - 1;
        int lead = strata_tree_leader(h, root, top, h->level[top].group_of[r]);
        if (lead != r) {
            *parent = lead;
            nlev--; /* r leads only the levels below its top one */
        }
    }
    /* Children at the highest level first: they feed the most ranks. */
    for (int l = nlev - 1; l >= 0; l--) {
        const struct strata_hier_level *L = &h->level[l];
        int g = L->group_of[r];
        for (int i = L->member_start[g]; i < L->member_start[g + 1]; i++) {
            int c = stand_in(h, root, l, L->members[i]);
            if (c != r) children[n++] = c;
        }
    }
    return n;
}
