/* The transports strata knows, in order of preference (the first always
 * works: ranks that cannot agree on another fall back to it).  Each
 * X(name) names the transport's struct strata_transport_<name> (its file
 * in transport/) and the value STRATA_TRANSPORT accepts for it.  Read by
 * transport/registry.c (the registry) and config/config.c (the names),
 * which lies below transport in the layer order and so cannot ask the
 * registry: both read this one list at the bottom.  A new transport is its
 * file and its name here. */
#ifndef STRATA_TRANSPORTS_H
#define STRATA_TRANSPORTS_H

#define STRATA_TRANSPORTS(X) X(segment) X(cma) X(map)

#endif
