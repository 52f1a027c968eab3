/* Builds the hierarchy of groups and leaders from rank locations. */
#include "topology/hierarchy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A candidate level: which level of the stack (or node) it refines by. */
struct candidate {
    char name[16];
    int hw_type;
    int stack_pos;   /* position in lv, or -1 for node */
};

static void note_dropped(struct strata_hier *h, const char *name, const char *why)
{
    size_t len = strlen(h->dropped);
    snprintf(h->dropped + len, sizeof h->dropped - len, "%s%s (%s)", len ? "; " : "",
             name, why);
}

/* Group keys of every rank at the candidate levels kept so far plus `pos`:
 * two ranks share a group iff same node and same index at every used stack
 * position coarser than or equal to pos, which makes the levels nest. */
static int same_group(const struct strata_location *a, const struct strata_location *b,
                      const int *used, int nused)
{
    if (a->node != b->node) return 0;
    for (int i = 0; i < nused; i++)
        if (a->idx[used[i]] != b->idx[used[i]]) return 0;
    return 1;
}

/* Assigns group numbers (in order of each group's lowest rank); returns count. */
static int partition(const struct strata_location *loc, int size, const int *used, int nused,
                     int *group_of)
{
    int ngroups = 0;
    for (int r = 0; r < size; r++) {
        group_of[r] = -1;
        for (int q = 0; q < r; q++) {
            if (same_group(&loc[r], &loc[q], used, nused)) {
                group_of[r] = group_of[q];
                break;
            }
        }
        if (group_of[r] < 0) group_of[r] = ngroups++;
    }
    return ngroups;
}

/* Fills leaders and participants of a level from group_of, given which ranks
 * participate (leaders of the level below, or everyone at level 0). */
static int fill_level(struct strata_hier_level *L, int size, const int *participates)
{
    L->leader = malloc(sizeof(int) * (size_t)L->ngroups);
    L->member_start = calloc((size_t)L->ngroups + 1, sizeof(int));
    L->members = malloc(sizeof(int) * (size_t)size);
    if (!L->leader || !L->member_start || !L->members) return -1;
    for (int g = 0; g < L->ngroups; g++) L->leader[g] = -1;
    for (int r = 0; r < size; r++) {
        if (!participates[r]) continue;
        L->member_start[L->group_of[r] + 1]++;
        if (L->leader[L->group_of[r]] < 0) L->leader[L->group_of[r]] = r;
    }
    for (int g = 0; g < L->ngroups; g++) L->member_start[g + 1] += L->member_start[g];
    int *fill = calloc((size_t)L->ngroups, sizeof(int));
    if (!fill) return -1;
    for (int r = 0; r < size; r++) {
        if (!participates[r]) continue;
        int g = L->group_of[r];
        L->members[L->member_start[g] + fill[g]++] = r;
    }
    free(fill);
    return 0;
}

/* Parses the hint into candidates ordered fine to coarse; node is implied. */
static int parse_hint(const struct strata_levels *lv, const char *hint, struct strata_hier *h,
                      struct candidate *cand)
{
    int n = 0, have_pos[STRATA_MAX_LEVELS] = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", hint ? hint : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int type = strata_hw_type_parse(tok);
        if (type == STRATA_HW_MACHINE || type == STRATA_HW_CLUSTER) continue;
        int pos = type >= 0 ? strata_levels_find(lv, type) : -1;
        if (pos < 0) {
            note_dropped(h, tok, "this machine has no such level");
            continue;
        }
        if (have_pos[pos]) continue;
        have_pos[pos] = 1;
        struct candidate c = {.hw_type = type, .stack_pos = pos};
        snprintf(c.name, sizeof c.name, "%s", tok);
        for (char *p = c.name; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        /* Insert so that finer stack positions come first. */
        int at = n;
        while (at > 0 && cand[at - 1].stack_pos < pos) {
            cand[at] = cand[at - 1];
            at--;
        }
        cand[at] = c;
        n++;
    }
    return n;
}

int strata_hier_build(const struct strata_levels *lv, const struct strata_location *loc,
                      int size, const char *hint, struct strata_hier *h)
{
    memset(h, 0, sizeof *h);
    h->size = size;
    struct candidate cand[STRATA_MAX_LEVELS];
    int ncand = parse_hint(lv, hint, h, cand);

    int *group_of = malloc(sizeof(int) * (size_t)size);
    int *participates = malloc(sizeof(int) * (size_t)size);
    if (!group_of || !participates) goto nomem;

    h->nnodes = partition(loc, size, NULL, 0, group_of);
    int prev_groups = size;  /* singletons: what the finest level must beat */

    /* Hardware levels, finest first.  A level is kept when every rank is bound
     * inside one of its objects and it groups strictly more coarsely than the
     * level below it but more finely than the node. */
    for (int c = 0; c < ncand; c++) {
        int pos = cand[c].stack_pos, unbound = -1;
        for (int r = 0; r < size && unbound < 0; r++)
            if (loc[r].idx[pos] < 0) unbound = r;
        if (unbound >= 0) {
            char why[96];
            snprintf(why, sizeof why, "rank %d is not bound inside one %s", unbound,
                     strata_hw_type_name(cand[c].hw_type));
            note_dropped(h, cand[c].name, why);
            continue;
        }
        int used[STRATA_MAX_LEVELS], nused = 0;
        for (int i = 0; i <= pos; i++) used[nused++] = i;
        int ngroups = partition(loc, size, used, nused, group_of);
        if (ngroups >= prev_groups || ngroups <= h->nnodes) {
            note_dropped(h, cand[c].name, "does not split the ranks further");
            continue;
        }
        struct strata_hier_level *L = &h->level[h->nlevels++];
        snprintf(L->name, sizeof L->name, "%.15s", cand[c].name);
        L->hw_type = cand[c].hw_type;
        L->ngroups = ngroups;
        L->group_of = malloc(sizeof(int) * (size_t)size);
        if (!L->group_of) goto nomem;
        memcpy(L->group_of, group_of, sizeof(int) * (size_t)size);
        prev_groups = ngroups;
    }

    /* The node level, unless every node holds a single rank. */
    if (h->nnodes < prev_groups) {
        struct strata_hier_level *L = &h->level[h->nlevels++];
        snprintf(L->name, sizeof L->name, "node");
        L->hw_type = STRATA_HW_MACHINE;
        L->ngroups = partition(loc, size, NULL, 0, group_of);
        L->group_of = malloc(sizeof(int) * (size_t)size);
        if (!L->group_of) goto nomem;
        memcpy(L->group_of, group_of, sizeof(int) * (size_t)size);
    }
    if (h->nnodes > 1 || h->nlevels == 0) {
        struct strata_hier_level *L = &h->level[h->nlevels++];
        snprintf(L->name, sizeof L->name, h->nnodes > 1 ? "cluster" : "node");
        L->hw_type = h->nnodes > 1 ? STRATA_HW_CLUSTER : STRATA_HW_MACHINE;
        L->ngroups = 1;
        L->group_of = calloc((size_t)size, sizeof(int));
        if (!L->group_of) goto nomem;
    }

    /* Leaders and participants, bottom up. */
    for (int r = 0; r < size; r++) participates[r] = 1;
    for (int l = 0; l < h->nlevels; l++) {
        struct strata_hier_level *L = &h->level[l];
        if (fill_level(L, size, participates)) goto nomem;
        for (int r = 0; r < size; r++) participates[r] = 0;
        for (int g = 0; g < L->ngroups; g++) participates[L->leader[g]] = 1;
    }
    free(group_of);
    free(participates);
    return 0;
nomem:
    free(group_of);
    free(participates);
    strata_hier_free(h);
    return -1;
}

void strata_hier_free(struct strata_hier *h)
{
    for (int l = 0; l < h->nlevels; l++) {
        free(h->level[l].group_of);
        free(h->level[l].leader);
        free(h->level[l].member_start);
        free(h->level[l].members);
    }
    h->nlevels = 0;
}

void strata_hier_describe(const struct strata_hier *h, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
#define EMIT(...)                                                              \
    do {                                                                       \
        if (len < outlen) {                                                    \
            int n_ = snprintf(out + len, outlen - len, __VA_ARGS__);           \
            if (n_ > 0) len += (size_t)n_;                                     \
        }                                                                      \
    } while (0)
    for (int l = 0; l < h->nlevels; l++) {
        const struct strata_hier_level *L = &h->level[l];
        EMIT("  level %d %-8s %d group%s:", l, L->name, L->ngroups, L->ngroups == 1 ? "" : "s");
        for (int g = 0; g < L->ngroups; g++) {
            EMIT(" %s[", g ? "" : "");
            for (int m = L->member_start[g]; m < L->member_start[g + 1]; m++)
                EMIT(m > L->member_start[g] ? " %d%s" : "%d%s", L->members[m],
                     L->members[m] == L->leader[g] ? "*" : "");
            EMIT("]");
        }
        EMIT("\n");
    }
    if (h->dropped[0]) EMIT("  dropped: %s\n", h->dropped);
#undef EMIT
}
