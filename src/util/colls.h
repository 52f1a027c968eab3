/* The collectives strata knows, by number: the vocabulary every layer shares
 * (accounting, algorithms, selection, routing, the tools), so it sits at the
 * bottom of the stack. */
#ifndef STRATA_COLLS_H
#define STRATA_COLLS_H

#include <stddef.h>

/* If you add a value here, also update: the names in src/util/colls.c (the
 * MPI name and the short name), the algorithm table of src/coll/algorithm.c
 * (its entries for the new collective) and the selection of src/coll/select.c,
 * its row in src/interpose/calls.def (every C entry point) and its path in
 * src/serve/collectives.c, the benchmarked calls of
 * tools/strata-bench.c, and the collectives listed in docs/.  Arrays sized
 * STRATA_NCOLLS (src/util/stats.c, src/coll/select.c, tools/) follow by
 * themselves. */
enum strata_coll {
    STRATA_COLL_BCAST,
    STRATA_COLL_REDUCE,
    STRATA_COLL_ALLREDUCE,
    STRATA_COLL_ALLGATHER,
    STRATA_COLL_GATHER,
    STRATA_COLL_SCATTER,
    STRATA_COLL_ALLTOALL,
    STRATA_COLL_BARRIER,
    STRATA_COLL_REDUCE_SCATTER_BLOCK,
    STRATA_COLL_REDUCE_SCATTER,
    STRATA_COLL_SCAN,
    STRATA_COLL_EXSCAN,
    STRATA_COLL_GATHERV,
    STRATA_COLL_SCATTERV,
    STRATA_COLL_ALLGATHERV,
    STRATA_COLL_ALLTOALLV,
    /* Served by Alltoallv's engine on a byte layout their entry points
     * build (interpose/wcollectives.c): no algorithms of their own. */
    STRATA_COLL_ALLTOALLW,
    STRATA_COLL_NEIGHBOR_ALLGATHER,
    STRATA_COLL_NEIGHBOR_ALLGATHERV,
    STRATA_COLL_NEIGHBOR_ALLTOALL,
    STRATA_COLL_NEIGHBOR_ALLTOALLV,
    STRATA_COLL_NEIGHBOR_ALLTOALLW,
    STRATA_NCOLLS
};

/* Whether coll is a v-collective (Gatherv, Scatterv, Allgatherv, Alltoallv). */
static inline int strata_coll_is_v(int coll)
{
    return coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV ||
           coll == STRATA_COLL_ALLGATHERV || coll == STRATA_COLL_ALLTOALLV;
}

/* Whether coll is one of the neighbourhood collectives. */
static inline int strata_coll_is_neighbor(int coll)
{
    return coll >= STRATA_COLL_NEIGHBOR_ALLGATHER && coll <= STRATA_COLL_NEIGHBOR_ALLTOALLW;
}

/* Whether every rank of coll sends one block, the same to each of its
 * neighbours (the neighbourhood allgathers): inside a node it is published
 * once and read by each neighbour (coll/wlayout.h, strata_wlayout_once_*). */
static inline int strata_coll_sends_once(int coll)
{
    return coll == STRATA_COLL_NEIGHBOR_ALLGATHER || coll == STRATA_COLL_NEIGHBOR_ALLGATHERV;
}

/* The collective whose engine, algorithms and selection serve coll:
 * Alltoallv's for Alltoallw and the neighbourhood collectives (each rank's
 * blocks, whatever their datatypes and places, become one byte stream per
 * peer), coll itself for the others. */
static inline int strata_coll_engine(int coll)
{
    return coll == STRATA_COLL_ALLTOALLW || strata_coll_is_neighbor(coll) ? STRATA_COLL_ALLTOALLV
                                                                          : coll;
}

/* "MPI_Bcast", ... */
const char *strata_coll_name(enum strata_coll coll);

/* "STRATA_SCATTER_ALGORITHM" for scatter: the variable that overrides the
 * cost model's choice of algorithm (config/ reads it, coll/select.c names
 * it in messages). */
void strata_coll_algorithm_variable(enum strata_coll coll, char *out, size_t outlen);

/* "bcast", ...: the short name, as the tools and the tuning file write it. */
const char *strata_coll_short_name(enum strata_coll coll);

/* Parses "bcast", "MPI_Bcast", ... (case-insensitive); -1 if unknown. */
int strata_coll_parse(const char *name);

/* ---- The nonblocking and persistent forms (issue 17).  Kept apart from
 * enum strata_coll, which other collectives are appended to: a call id is a
 * (collective, form) pair numbered form * STRATA_NCOLLS + coll, so the
 * blocking form's id is the collective's own value and every array sized
 * STRATA_NCALLS covers the new collectives' forms by itself. */
enum strata_coll_form {
    STRATA_FORM_BLOCKING,    /* MPI_Bcast */
    STRATA_FORM_NONBLOCKING, /* MPI_Ibcast */
    STRATA_FORM_PERSISTENT,  /* MPI_Bcast_init (Open MPI 4.1: MPIX_Bcast_init) */
    STRATA_NFORMS
};
#define STRATA_NCALLS (STRATA_NCOLLS * STRATA_NFORMS)

static inline int strata_call_id(enum strata_coll coll, enum strata_coll_form form)
{
    return (int)form * STRATA_NCOLLS + (int)coll;
}
static inline enum strata_coll strata_call_coll(int id) { return (enum strata_coll)(id % STRATA_NCOLLS); }
static inline enum strata_coll_form strata_call_form(int id)
{
    return (enum strata_coll_form)(id / STRATA_NCOLLS);
}

/* "MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init": the C name of a call id. */
const char *strata_call_name(int id);

/* Parses a call's C name or short name ("ibcast", "bcast_init"); -1 if unknown. */
int strata_call_parse(const char *name);

#endif
