/* The collectives strata knows, by number: the vocabulary every layer shares
 * (accounting, algorithms, selection, routing, the tools), so it sits at the
 * bottom of the stack. */
#ifndef STRATA_COLLS_H
#define STRATA_COLLS_H

/* If you add a value here, also update: the names in src/util/colls.c (the
 * MPI name and the short name), the algorithm table of src/coll/algorithm.c
 * (its entries for the new collective) and the selection of src/coll/select.c,
 * the entry point in src/interpose/collectives.c, the benchmarked calls of
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
    STRATA_NCOLLS
};

/* Whether coll is a v-collective (Gatherv, Scatterv, Allgatherv, Alltoallv). */
static inline int strata_coll_is_v(int coll)
{
    return coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV ||
           coll == STRATA_COLL_ALLGATHERV || coll == STRATA_COLL_ALLTOALLV;
}

/* "MPI_Bcast", ... */
const char *strata_coll_name(enum strata_coll coll);

/* "bcast", ...: the short name, as the tools and the tuning file write it. */
const char *strata_coll_short_name(enum strata_coll coll);

/* Parses "bcast", "MPI_Bcast", ... (case-insensitive); -1 if unknown. */
int strata_coll_parse(const char *name);

#endif
