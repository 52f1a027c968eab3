/* The neighbourhood allgathers' layout inside a node (wlayout.h): a rank
 * sends the same block to every out-neighbour, so it publishes that block
 * once, and each reader takes it straight from there into every place an
 * edge from that writer names (block.h, strata_vpieces.once).  Laid out as
 * streams per edge instead (strata_wlayout), a pair joined by k edges would
 * stream the block k times, packed k times on the sender first: that was
 * 1.3-2.3x the host's time from 64 KiB (docs/PERFORMANCE.md). */
#include "coll/wlayout.h"

#include <stdint.h>

static int active(const struct strata_wpiece *x, int size)
{
    return x->peer >= 0 && x->peer < size && x->len;
}

size_t strata_wlayout_once_send(const struct strata_wpiece *pc, int n, int size, size_t *len,
                                size_t *off, int *first)
{
    size_t block = 0;
    *first = -1;
    for (int r = 0; r < size; r++) len[r] = off[r] = 0;
    for (int i = 0; i < n; i++) {
        if (!active(&pc[i], size)) continue;
        if (*first < 0) *first = i, block = pc[i].len;
        len[pc[i].peer] = block; /* one block, one length: every edge names the same */
    }
    return block;
}

int strata_wlayout_once_recv(struct strata_wpiece *pc, int n, int size, size_t *len,
                             size_t *off, const unsigned char **base, size_t *packed,
                             struct strata_wpieces *lands)
{
    const unsigned char *lo = NULL;
    int runs = 1, k = 0;
    size_t pos = 0;
    for (int r = 0; r < size; r++) len[r] = off[r] = 0;
    for (int i = 0; i < n; i++) {
        const struct strata_wpiece *x = &pc[i];
        if (!active(x, size)) continue;
        if (!x->at) runs = 0;
        else if (!lo || (uintptr_t)x->at < (uintptr_t)lo) lo = x->at;
    }
    runs = runs && lo;
    /* Pieces grouped by writer (counting sort: first[] is its histogram),
     * each where it lies from lo, or at its place in the packed buffer. */
    for (int r = 0; r <= size; r++) lands->first[r] = 0;
    for (int i = 0; i < n; i++)
        if (active(&pc[i], size)) lands->first[pc[i].peer + 1]++;
    for (int r = 0; r < size; r++) lands->first[r + 1] += lands->first[r];
    for (int i = 0; i < n; i++) {
        struct strata_wpiece *x = &pc[i];
        if (!active(x, size)) continue;
        x->pos = runs ? (size_t)(x->at - lo) : pos;
        pos += x->len;
        /* first[peer] walks through the writer's slots, then is restored below. */
        size_t slot = lands->first[x->peer]++;
        lands->len[slot] = x->len;
        lands->at[slot] = x->pos;
        if (x->len > len[x->peer]) len[x->peer] = x->len;
        k++;
    }
    for (int r = size; r > 0; r--) lands->first[r] = lands->first[r - 1];
    lands->first[0] = 0;
    lands->used = 1;
    lands->once = 1;
    /* Nothing to receive still needs a run (NULL would read as no receive
     * buffer): an address nobody writes. */
    static unsigned char nothing;
    if (!k) runs = 1, lo = &nothing;
    *base = runs ? lo : NULL;
    *packed = runs ? 0 : pos;
    return runs;
}
