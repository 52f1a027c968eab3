/* Traffic accounting (STRATA_STATS): how many bytes strata moved for each
 * collective, split by the hardware distance between the rank that held
 * them and the rank that received them, and how many calls strata served
 * or handed to the host MPI.  Each rank counts what it copies in (pulls)
 * or pushes out itself, so summing over ranks counts every transfer once. */
#ifndef STRATA_STATS_H
#define STRATA_STATS_H

#include <stddef.h>

#include "topology/location.h"

enum strata_distance {
    STRATA_DIST_L3,       /* same L3 cache (or same core) */
    STRATA_DIST_NUMA,     /* same NUMA node, another L3 */
    STRATA_DIST_SOCKET,   /* same package, another NUMA node */
    STRATA_DIST_MACHINE,  /* same machine, another package */
    STRATA_DIST_NODE,     /* another node */
    STRATA_NDIST
};

/* The distance class between two ranks' locations. */
enum strata_distance strata_distance(const struct strata_levels *lv,
                                     const struct strata_location *a,
                                     const struct strata_location *b);

/* Counts bytes moved for collective `coll` (enum strata_coll) at a distance. */
void strata_stats_bytes(int coll, enum strata_distance d, size_t bytes);

/* Counts one call of `coll`, served by strata or not. */
void strata_stats_call(int coll, int served);

/* Takes back one served call of `coll` (the router counted it before the
 * per-call checks sent it to the host MPI after all). */
void strata_stats_call_unserve(int coll);

/* Whether counting is on (STRATA_STATS set). */
int strata_stats_enabled(void);

/* At finalize: sums every rank's counters and has world rank 0 write them
 * (JSON to the file STRATA_STATS names, or a table on stderr for "stderr"). */
void strata_stats_report(void);

/* This process's counters (tests): bytes of coll at distance d. */
unsigned long long strata_stats_local_bytes(int coll, enum strata_distance d);

#endif
