/* One side of a call whose blocks each have their own peer, datatype and
 * place (Alltoallw, the neighbourhood collectives), laid out as Alltoallv's
 * engine (vblock.c) wants it: one byte stream per peer (struct
 * strata_vlayout: a length and an offset per rank in one run of memory). */
#ifndef STRATA_COLL_WLAYOUT_H
#define STRATA_COLL_WLAYOUT_H

#include <stddef.h>

/* A block: len bytes to or from rank `peer` (< 0: none, e.g. MPI_PROC_NULL);
 * `at` where they lie when they are one run of memory (NULL: they are not,
 * and must be packed).  A pair's blocks form its stream in the order of
 * their keys, ties in list order.  pos is set by strata_wlayout: the
 * block's offset in the side's run. */
struct strata_wpiece {
    int peer;
    int key;
    size_t len;
    const unsigned char *at;
    size_t pos;
};

/* Where a receive side's streams land when they are not one run each
 * (block.h's struct strata_vpieces, writable): first[size + 1], len[n],
 * at[n] the caller's; used set when the layout took this way. */
struct strata_wpieces {
    size_t *first, *len, *at;
    int used;
};

/* Lays out n pieces over `size` ranks: len[r] and off[r] (this side's
 * stream with rank r, in the run) and each piece's pos.  Returns the run's
 * start when every stream is already one run of the caller's memory (its
 * pieces adjacent, in stream order): nothing to pack.  Else, with lands
 * (a receive side the engine can land in pieces) and every block one run of
 * memory: the run's start too, lands->used set and filled (off unused).
 * Otherwise NULL: the run is a packed buffer of *packed bytes, streams in
 * rank order, which the caller allocates and fills (or empties) piece by
 * piece at pos.  order[n] is scratch. */
const unsigned char *strata_wlayout(struct strata_wpiece *pc, int n, int *order, int size,
                                    size_t *len, size_t *off, size_t *packed,
                                    struct strata_wpieces *lands);

#endif
