/* The transports strata knows, by name (STRATA_TRANSPORT, strata-info,
 * verbose output, the agreement at start-up). */
#ifndef STRATA_REGISTRY_H
#define STRATA_REGISTRY_H

#include <stddef.h>

#include "transport/transport.h"

/* Number of transports, and the i-th (0 <= i < count), in order of
 * preference: the first is the one that always works (segment). */
int strata_transport_count(void);
const struct strata_transport *strata_transport_at(int i);

/* The transport called `name` (case-insensitive), or NULL. */
const struct strata_transport *strata_transport_find(const char *name);

/* Its index in the registry (-1 if not listed), for agreeing over MPI. */
int strata_transport_index(const struct strata_transport *t);

/* "cma, segment": the names, for messages. */
void strata_transport_names(char *out, size_t outlen);

/* "read-peer,write-peer" (or "none"): t's feature bits in words. */
void strata_transport_features(const struct strata_transport *t, char *out, size_t outlen);

#endif
