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
    int once; /* block.h's strata_vpieces.once (strata_wlayout_once_recv) */
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

/* The neighbourhood allgathers inside a node (wlayout_once.c): each rank
 * sends its one block once, whatever its edges, and reads each writer's
 * block into every place an edge from it names (block.h,
 * strata_vpieces.once).
 *
 * The send side: len[r] the block's bytes for every peer r of a piece
 * (itself included: a self-loop), off[r] 0 (the run is the block).
 * Returns the block's bytes, 0 when nothing is sent; *first the first
 * piece that sends (-1: none): where the block lies, or what to pack. */
size_t strata_wlayout_once_send(const struct strata_wpiece *pc, int n, int size, size_t *len,
                                size_t *off, int *first);

/* The receive side: len[r] the longest piece from r (off[r] 0: unused),
 * lands filled with every piece, grouped by writer, lands->once set.
 * Returns 1 when every piece is one run of the caller's memory: *base the
 * lowest, each piece's pos its offset from there.  Else 0: the pieces are
 * packed, each at pos in a buffer of *packed bytes that the caller
 * allocates and unpacks from. */
int strata_wlayout_once_recv(struct strata_wpiece *pc, int n, int size, size_t *len,
                             size_t *off, const unsigned char **base, size_t *packed,
                             struct strata_wpieces *lands);

#endif
