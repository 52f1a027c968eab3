/* Traffic counters and their report at MPI_Finalize. */
#include "util/stats.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "context/runtime.h"
#include "interpose/route.h"
#include "util/log.h"

static const char *dist_names[STRATA_NDIST] = {"same_l3", "same_numa", "other_numa",
                                               "other_socket", "other_node"};

/* Counters are per process; relaxed atomics keep concurrent collectives of
 * different threads (on different communicators) from losing counts. */
static _Atomic unsigned long long bytes_moved[STRATA_NCOLLS][STRATA_NDIST];
static _Atomic unsigned long long calls[STRATA_NCOLLS][2];

int strata_stats_enabled(void)
{
    const struct strata_config *cfg = strata_config();
    return cfg && cfg->stats[0];
}

static int same_object(const struct strata_levels *lv, int type, const struct strata_location *a,
                       const struct strata_location *b)
{
    int pos = strata_levels_find(lv, type);
    return pos >= 0 && a->idx[pos] >= 0 && a->idx[pos] == b->idx[pos];
}

enum strata_distance strata_distance(const struct strata_levels *lv,
                                     const struct strata_location *a,
                                     const struct strata_location *b)
{
    if (a->node != b->node) return STRATA_DIST_NODE;
    if (same_object(lv, STRATA_HW_L3, a, b)) return STRATA_DIST_L3;
    if (same_object(lv, STRATA_HW_NUMA, a, b)) return STRATA_DIST_NUMA;
    if (same_object(lv, STRATA_HW_PACKAGE, a, b)) return STRATA_DIST_SOCKET;
    /* A machine without NUMA or package objects is one domain. */
    if (strata_levels_find(lv, STRATA_HW_PACKAGE) < 0 && strata_levels_find(lv, STRATA_HW_NUMA) < 0)
        return STRATA_DIST_NUMA;
    return STRATA_DIST_MACHINE;
}

void strata_stats_bytes(int coll, enum strata_distance d, size_t bytes)
{
    atomic_fetch_add_explicit(&bytes_moved[coll][d], bytes, memory_order_relaxed);
}

void strata_stats_call(int coll, int served)
{
    atomic_fetch_add_explicit(&calls[coll][served ? 1 : 0], 1, memory_order_relaxed);
}

void strata_stats_call_unserve(int coll)
{
    atomic_fetch_sub_explicit(&calls[coll][1], 1, memory_order_relaxed);
}

unsigned long long strata_stats_local_bytes(int coll, enum strata_distance d)
{
    return atomic_load_explicit(&bytes_moved[coll][d], memory_order_relaxed);
}

static void write_json(FILE *f, unsigned long long (*b)[STRATA_NDIST],
                       unsigned long long (*c)[2], int ranks)
{
    fprintf(f, "{\n  \"ranks\": %d,\n  \"host_mpi\": \"%s\",\n  \"collectives\": {\n", ranks,
            STRATA_HOST_MPI);
    for (int k = 0; k < STRATA_NCOLLS; k++) {
        fprintf(f, "    \"%s\": {\"calls_strata\": %llu, \"calls_host\": %llu, \"bytes\": {",
                strata_coll_name(k), c[k][1], c[k][0]);
        for (int d = 0; d < STRATA_NDIST; d++)
            fprintf(f, "%s\"%s\": %llu", d ? ", " : "", dist_names[d], b[k][d]);
        fprintf(f, "}}%s\n", k + 1 < STRATA_NCOLLS ? "," : "");
    }
    fprintf(f, "  }\n}\n");
}

static void write_table(FILE *f, unsigned long long (*b)[STRATA_NDIST],
                        unsigned long long (*c)[2])
{
    fprintf(f, "strata traffic (bytes moved, summed over ranks)\n%-14s %9s %9s", "collective",
            "strata", "host");
    for (int d = 0; d < STRATA_NDIST; d++) fprintf(f, " %13s", dist_names[d]);
    fprintf(f, "\n");
    for (int k = 0; k < STRATA_NCOLLS; k++) {
        fprintf(f, "%-14s %9llu %9llu", strata_coll_name(k), c[k][1], c[k][0]);
        for (int d = 0; d < STRATA_NDIST; d++) fprintf(f, " %13llu", b[k][d]);
        fprintf(f, "\n");
    }
}

void strata_stats_report(void)
{
    const struct strata_runtime *rt = strata_runtime();
    if (!strata_stats_enabled() || !rt) return;
    unsigned long long b[STRATA_NCOLLS][STRATA_NDIST], c[STRATA_NCOLLS][2];
    unsigned long long sb[STRATA_NCOLLS][STRATA_NDIST], sc[STRATA_NCOLLS][2];
    for (int k = 0; k < STRATA_NCOLLS; k++) {
        for (int d = 0; d < STRATA_NDIST; d++) b[k][d] = strata_stats_local_bytes(k, d);
        c[k][0] = atomic_load(&calls[k][0]);
        c[k][1] = atomic_load(&calls[k][1]);
    }
    PMPI_Reduce(b, sb, STRATA_NCOLLS * STRATA_NDIST, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(c, sc, STRATA_NCOLLS * 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rt->world_rank != 0) return;
    const char *dest = strata_config()->stats;
    if (!strcmp(dest, "stderr")) {
        write_table(stderr, sb, sc);
        return;
    }
    FILE *f = fopen(dest, "w");
    if (!f) {
        strata_error("STRATA_STATS: cannot write %s", dest);
        return;
    }
    write_json(f, sb, sc, rt->world_size);
    fclose(f);
}
