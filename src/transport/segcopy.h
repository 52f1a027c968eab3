/* The "segment" transport: copies through memory every rank of the node
 * maps (the communicator's shared segment).  Only the transport folder
 * includes this header; the registry lists the transport. */
#ifndef STRATA_SEGCOPY_H
#define STRATA_SEGCOPY_H

#include "transport/transport.h"

extern const struct strata_transport strata_transport_segment;

#endif
