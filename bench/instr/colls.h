/* The collectives bench/instr/calls.c and between.c can call, by name, in
 * strata's form (MPI_X) or the host MPI's (PMPI_X).  Buffers: `in` holds
 * size * count doubles (Scatter's and Alltoall's send side), `out` as many. */
#ifndef STRATA_BENCH_INSTR_COLLS_H
#define STRATA_BENCH_INSTR_COLLS_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static const char *const instr_coll_names[] = {
    "reduce",  "allreduce", "bcast",      "allgather", "gather", "scatter", "alltoall",
    "barrier", "gatherv",   "scatterv",   "allgatherv", "alltoallv", "scan",  "exscan",
    "neighbor_allgather"};
#define INSTR_NCOLLS (int)(sizeof instr_coll_names / sizeof instr_coll_names[0])
#define INSTR_USAGE                                                                        \
    "reduce|allreduce|bcast|allgather|gather|scatter|alltoall|barrier|gatherv|scatterv|"    \
    "allgatherv|alltoallv|scan|exscan|neighbor_allgather"

/* The index of a name above, -1 if none. */
static inline int instr_coll_parse(const char *name)
{
    for (int i = 0; i < INSTR_NCOLLS; i++)
        if (!strcmp(name, instr_coll_names[i])) return i;
    return -1;
}

/* The v-collectives' layout: every rank's block `count` doubles, packed in
 * rank order (as the regular collectives'), so the two compare directly. */
static inline void instr_v_layout(int count, int **counts, int **displs)
{
    static int *c, *d, n;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (n < size) {
        free(c);
        free(d);
        c = malloc(sizeof *c * (size_t)size);
        d = malloc(sizeof *d * (size_t)size);
        if (!c || !d) MPI_Abort(MPI_COMM_WORLD, 1);
        n = size;
    }
    for (int j = 0; j < size; j++) {
        c[j] = count;
        d[j] = j * count;
    }
    *counts = c;
    *displs = d;
}

/* Neighbor_allgather's communicator: a periodic ring of the ranks (at 2
 * ranks each rank's two neighbours are the other rank), made on first use;
 * `out` holds its 2 blocks. */
static inline MPI_Comm instr_ring(void)
{
    static MPI_Comm ring = MPI_COMM_NULL;
    if (ring == MPI_COMM_NULL) {
        int size, periods[1] = {1};
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        PMPI_Cart_create(MPI_COMM_WORLD, 1, &size, periods, 0, &ring);
    }
    return ring;
}

#define INSTR_DEFINE_CALL(fname, P)                                                            \
    static inline int fname(int coll, double *in, double *out, int count, int root)          \
    {                                                                                        \
        MPI_Comm w = MPI_COMM_WORLD;                                                         \
        switch (coll) {                                                                      \
        case 0: return P##Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, root, w);              \
        case 1: return P##Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, w);                 \
        case 2: return P##Bcast(in, count, MPI_DOUBLE, root, w);                             \
        case 3: return P##Allgather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, w);       \
        case 4: return P##Gather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, root, w);    \
        case 5: return P##Scatter(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, root, w);   \
        case 6: return P##Alltoall(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, w);        \
        case 7: return P##Barrier(w);                                                        \
        case 12: return P##Scan(in, out, count, MPI_DOUBLE, MPI_SUM, w);                     \
        case 13: return P##Exscan(in, out, count, MPI_DOUBLE, MPI_SUM, w);                   \
        case 14:                                                                             \
            return P##Neighbor_allgather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE,      \
                                         instr_ring());                                      \
        }                                                                                    \
        int *c, *d;                                                                          \
        instr_v_layout(count, &c, &d);                                                       \
        switch (coll) {                                                                      \
        case 8: return P##Gatherv(in, count, MPI_DOUBLE, out, c, d, MPI_DOUBLE, root, w);    \
        case 9: return P##Scatterv(in, c, d, MPI_DOUBLE, out, count, MPI_DOUBLE, root, w);   \
        case 10: return P##Allgatherv(in, count, MPI_DOUBLE, out, c, d, MPI_DOUBLE, w);      \
        default: return P##Alltoallv(in, c, d, MPI_DOUBLE, out, c, d, MPI_DOUBLE, w);        \
        }                                                                                    \
    }
INSTR_DEFINE_CALL(instr_call_strata, MPI_)
INSTR_DEFINE_CALL(instr_call_host, PMPI_)
#undef INSTR_DEFINE_CALL

#endif
