/* The shared heap (heap/heap.c): large malloc-family allocations from
 * the arena when STRATA_SHARED_HEAP=1. */
#ifndef STRATA_HEAP_H
#define STRATA_HEAP_H

#include <stddef.h>

/* Whether the shared heap is on; the threshold in *min; why it is off
 * though asked for in *why_off (NULL if it is not). */
int strata_heap_enabled(size_t *min, const char **why_off);

#endif
