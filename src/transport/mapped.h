/* The mapping transport: plain loads and stores into peers' arenas
 * (shm/arena.h), mapped once and extended as they grow; Cross-Memory
 * Attach for any buffer outside an arena. */
#ifndef STRATA_MAPPED_H
#define STRATA_MAPPED_H

#include <stddef.h>

#include "transport/transport.h"

extern const struct strata_transport strata_transport_map;

/* Bytes this process copied through peers' mappings, and by CMA because a
 * buffer lay outside its owner's arena (strata-info, tests). */
void strata_map_counts(unsigned long long *mapped, unsigned long long *fallback);

#endif
