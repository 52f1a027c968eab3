/* Laying one side of Alltoallw or a neighbourhood collective out as byte
 * streams per peer (wlayout.h).
 *
 * Most calls need no copy: Alltoallw with contiguous types, a halo
 * exchange's blocks, each peer's one block somewhere in the user's buffer.
 * Then the run is the user's memory from its lowest block on, and each
 * stream's offset is its block's distance from there (blocks may lie in
 * any order, even before the buffer's start: byte displacements may be
 * negative).  A peer with several blocks (duplicate edges, a periodic
 * dimension of one or two ranks) streams them back to back: that needs
 * them adjacent in memory, else the side is packed. */
#include "coll/wlayout.h"

#include <stdint.h>

/* Whether piece a comes before piece b in its side's order. */
static int before(const struct strata_wpiece *pc, int a, int b)
{
    if (pc[a].peer != pc[b].peer) return pc[a].peer < pc[b].peer;
    if (pc[a].key != pc[b].key) return pc[a].key < pc[b].key;
    return a < b;
}

/* Insertion sort: a side has a handful of pieces per peer, and the input is
 * mostly in order already (Alltoallw: exactly). */
static void sort_pieces(const struct strata_wpiece *pc, int n, int *order)
{
    for (int i = 0; i < n; i++) {
        int x = i, j = i;
        for (; j > 0 && before(pc, x, order[j - 1]); j--) order[j] = order[j - 1];
        order[j] = x;
    }
}

/* Whether every block is one run of memory (*base the lowest), and whether
 * every stream is (*adjacent: its blocks follow each other in memory). */
static int runs(const struct strata_wpiece *pc, int n, const int *order,
                const unsigned char **base, int *adjacent)
{
    const unsigned char *lo = NULL, *next = NULL;
    int peer = -1;
    *adjacent = 1;
    for (int i = 0; i < n; i++) {
        const struct strata_wpiece *x = &pc[order[i]];
        if (x->peer < 0 || !x->len) continue;
        if (!x->at) return 0;
        if (x->peer == peer && x->at != next) *adjacent = 0;
        peer = x->peer;
        next = x->at + x->len;
        if (!lo || (uintptr_t)x->at < (uintptr_t)lo) lo = x->at;
    }
    *base = lo;
    return 1;
}

/* The pieces' landing places (every block one run, from base). */
static void land(const struct strata_wpiece *pc, int n, const int *order, int size,
                 const unsigned char *base, struct strata_wpieces *lands)
{
    int k = 0, peer = 0;
    lands->first[0] = 0;
    for (int i = 0; i < n; i++) {
        const struct strata_wpiece *x = &pc[order[i]];
        if (x->peer < 0 || x->peer >= size || !x->len) continue;
        while (peer < x->peer) lands->first[++peer] = (size_t)k;
        lands->len[k] = x->len;
        lands->at[k++] = (size_t)(x->at - base);
    }
    while (peer < size) lands->first[++peer] = (size_t)k;
    lands->used = 1;
}

const unsigned char *strata_wlayout(struct strata_wpiece *pc, int n, int *order, int size,
                                    size_t *len, size_t *off, size_t *packed,
                                    struct strata_wpieces *lands)
{
    for (int r = 0; r < size; r++) len[r] = off[r] = 0;
    sort_pieces(pc, n, order);
    const unsigned char *base = NULL;
    int adjacent, one_run = runs(pc, n, order, &base, &adjacent);
    int in_place = one_run && (adjacent || lands);
    if (in_place && !adjacent) land(pc, n, order, size, base, lands);
    size_t pos = 0;
    int peer = -1;
    for (int i = 0; i < n; i++) {
        struct strata_wpiece *x = &pc[order[i]];
        if (x->peer < 0 || x->peer >= size || !x->len) continue;
        if (in_place) x->pos = (size_t)(x->at - base);
        else x->pos = pos;
        if (x->peer != peer) off[x->peer] = x->pos;
        peer = x->peer;
        len[x->peer] += x->len;
        pos += x->len;
    }
    *packed = in_place ? 0 : pos;
    /* A side with nothing to move still needs a run (NULL would read as in
     * place): an address nobody reads. */
    static const unsigned char nothing;
    if (in_place && !base) base = &nothing;
    return in_place ? base : NULL;
}
