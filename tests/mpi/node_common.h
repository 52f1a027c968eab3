/* Shared pieces of the node-collective test matrix (test_node_colls and the
 * programs next to it).
 *
 * Inputs are a pure function of (seed, rank, index, salt): every rank can
 * regenerate any other rank's input, so expected results are computed here,
 * independently of strata and of the host MPI (whose known bugs are listed in
 * shared/MACHINE-NOTES.md).  The salt changes from call to call, so a stale
 * result left over from an earlier call can never look right. */
#ifndef STRATA_NODE_COMMON_H
#define STRATA_NODE_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "testutil.h"

/* What a run covers, from the command line (test_node_colls --help). */
struct node_opts {
    unsigned long long seed;
    int all_roots;        /* every root, or only the first, last and middle ones */
    int large;            /* include the large sizes and counts (>= 256 KiB) */
    int lean_large;       /* the large reductions once each (one root, in place or not) */
    int huge;             /* number of 16 MiB broadcasts */
    int host_check;       /* also compare with the host MPI's PMPI_ result */
    int host_survey;      /* list the host MPI's wrong results instead of failing */
    int expect_host;      /* strata must hand every communicator to the host MPI */
    const char *host_reason; /* ... and its reason must contain this */
    const char *transport;   /* the plane must move data with this transport (NULL: any) */
    int reps;             /* repeat every selected suite this many times */
    unsigned types;       /* reduction type categories (bit per enum node_cat) */
};
extern struct node_opts node_opt;

/* Reduction type categories (MPI-3.1 section 5.9.2). */
enum node_cat {
    NODE_CAT_INT,       /* C integer */
    NODE_CAT_MULTI,     /* multi-language integers: MPI_AINT, MPI_OFFSET, MPI_COUNT */
    NODE_CAT_FLOAT,     /* floating point */
    NODE_CAT_COMPLEX,   /* C complex */
    NODE_CAT_BOOL,      /* logical: MPI_C_BOOL */
    NODE_CAT_BYTE,      /* MPI_BYTE */
    NODE_CAT_PAIR,      /* MINLOC/MAXLOC pair types */
    NODE_NCATS
};

/* SplitMix64's finaliser: a well-mixed 64-bit function of its input. */
static inline uint64_t node_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The deterministic input word of (rank, index) for the call with `salt`. */
static inline uint64_t node_word(int rank, uint64_t index, uint64_t salt)
{
    return node_mix(node_mix(node_opt.seed ^ (salt * 0x632be59bd9b4e019ull)) ^
                    ((uint64_t)(rank + 1) << 40) ^ index);
}

/* A salt for one call, from the numbers that identify it (the same on every
 * member of the communicator, whatever the rank did before). */
static inline uint64_t node_salt(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return node_mix(node_mix(node_mix(a) ^ b) ^ c) ^ d;
}

/* Roots to try on a communicator of `size`: all, or 0, last and middle. */
int node_roots(int size, int *roots);

/* Asserts that strata serves `comm` (or, with --expect-host, that it does
 * not): the suites must test strata's path, not silently the host MPI's. */
void node_check_route(MPI_Comm comm, const char *what);

/* The suites; `cname` names the communicator in messages. */
void node_bcast_suite(MPI_Comm comm, const char *cname);
void node_bcast_mixed_suite(MPI_Comm comm, const char *cname, int permuted);
void node_reduce_suite(MPI_Comm comm, const char *cname, int allreduce, int in_place);
void node_reduce_large_suite(MPI_Comm comm, const char *cname);
void node_fp_suite(MPI_Comm comm, const char *cname);
void node_userop_suite(MPI_Comm comm, const char *cname);
void node_barrier_suite(MPI_Comm comm, const char *cname);
void node_alternate_suite(MPI_Comm a, MPI_Comm b, const char *cname);

/* Broadcast helper shared by the suites: broadcasts `bytes` of the
 * deterministic stream (root, salt) as `count` elements of `type` on every
 * rank except the root, which uses `root_count` of `root_type`, and checks
 * every rank's buffer, holes included. */
void node_bcast_check(MPI_Comm comm, const char *cname, MPI_Datatype root_type, int root_count,
                      MPI_Datatype type, int count, int root, uint64_t salt, const char *tname);

/* Reduction helper: one MPI_Allreduce (root < 0) or MPI_Reduce of count
 * elements of an int-valued SUM on MPI_INT, checked (for the alternating
 * suite). */
void node_int_sum_check(MPI_Comm comm, const char *cname, int count, int root, uint64_t salt);

#endif
