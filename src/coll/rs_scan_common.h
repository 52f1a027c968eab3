/* Pieces shared by Reduce_scatter (reduce_scatter.c) and Scan/Exscan
 * (scan.c): byte spans of padded vectors, page-matched scratch, the path
 * names. */
#ifndef STRATA_RS_SCAN_COMMON_H
#define STRATA_RS_SCAN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"

/* Bytes of elements [first, first + n) of a vector of `count`: the vector's
 * last element counts up to its true extent only (pair types such as
 * MPI_DOUBLE_INT end in padding a user buffer may not have). */
static inline size_t strata_rs_span(const struct strata_reduce_args *a, size_t first, size_t n)
{
    size_t bytes = n * a->extent;
    if (n && first + n == a->count) bytes -= a->extent - a->true_extent;
    return bytes;
}

/* Slot i of `nslots` in the plane's private scratch, each big enough for
 * `bytes` placed at any page offset (4K aliasing: see reduce.c's
 * `matching`).  Ends the job if memory runs out. */
unsigned char *strata_rs_slot(struct strata_plane *p, int i, int nslots, size_t bytes);

/* A place in `slot` at the same page offset as `peer`. */
static inline unsigned char *strata_rs_matching(unsigned char *slot, const void *peer)
{
    return slot + ((uintptr_t)peer & 4095);
}

/* The largest window of the segment path (bytes): a region, at most
 * STRATA_CICO_MAX. */
size_t strata_rs_window(const struct strata_plane *p);

#endif
