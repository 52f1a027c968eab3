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

/* Whether every stream is one run of memory already; *base the lowest. */
static int direct(const struct strata_wpiece *pc, int n, const int *order,
                  const unsigned char **base)
{
    const unsigned char *lo = NULL, *next = NULL;
    int peer = -1;
    for (int i = 0; i < n; i++) {
        const struct strata_wpiece *x = &pc[order[i]];
        if (x->peer < 0 || !x->len) continue;
        if (!x->at) return 0;
        if (x->peer == peer && x->at != next) return 0;
        peer = x->peer;
        next = x->at + x->len;
        if (!lo || (uintptr_t)x->at < (uintptr_t)lo) lo = x->at;
    }
    *base = lo;
    return 1;
}

const unsigned char *strata_wlayout(struct strata_wpiece *pc, int n, int *order, int size,
                                    size_t *len, size_t *off, size_t *packed)
{
    for (int r = 0; r < size; r++) len[r] = off[r] = 0;
    sort_pieces(pc, n, order);
    const unsigned char *base = NULL;
    int in_place = direct(pc, n, order, &base);
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
