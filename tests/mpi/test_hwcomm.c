/* The hardware communicators of include/strata.h, checked against exact,
 * hand-written expectations on fake machines (STRATA_TOPOLOGY) with imposed
 * bindings (STRATA_MAP) and virtual nodes (STRATA_VIRTUAL_NODES), following
 * the worked examples of the hsplit paper (sections 5.1 and 5.2).
 *
 *   test_hwcomm SCENARIO
 *
 * Each scenario expects the environment and rank count tests/hwcomm.cmake
 * launches it with (written above each scenario).  A communicator is
 * compared by the MPI_COMM_WORLD ranks of its members, in its own rank
 * order, written "0 1 2 3"; "null" stands for MPI_COMM_NULL and "-" for a
 * step a rank must not reach (its loop ended before). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcomm_split_type.h"
#include "strata.h"
#include "testutil.h"

#define MAX_RANKS 16

static int me, nprocs; /* in MPI_COMM_WORLD */
static const char *scenario;

/* "3 1 2": the world ranks of comm's members in comm's rank order; "null". */
static const char *members(MPI_Comm comm, char *buf, size_t len)
{
    if (comm == MPI_COMM_NULL) {
        snprintf(buf, len, "null");
        return buf;
    }
    MPI_Group group, world;
    int n, local[MAX_RANKS], global[MAX_RANKS];
    MPI_Comm_size(comm, &n);
    CHECK(n <= MAX_RANKS, "%s: communicator of %d ranks", scenario, n);
    for (int i = 0; i < n; i++) local[i] = i;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(group, n, local, world, global);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, i ? " %d" : "%d", global[i]);
    return buf;
}

static void expect_members(MPI_Comm comm, const char *want, const char *what)
{
    char got[256];
    members(comm, got, sizeof got);
    CHECK(!strcmp(got, want), "%s: %s: members \"%s\", expected \"%s\"", scenario, what, got,
          want);
}

static void expect_hlevel(MPI_Comm comm, int num, int index, const char *type, const char *what)
{
    int got_num = -1, got_index = -1;
    char got_type[STRATA_MAX_LEVEL_NAME] = "";
    int rc = strata_comm_get_hlevel_info(comm, &got_num, &got_index, got_type, sizeof got_type);
    CHECK(rc == MPI_SUCCESS, "%s: %s: strata_comm_get_hlevel_info returned %d", scenario, what,
          rc);
    CHECK(got_num == num && got_index == index && !strcmp(got_type, type),
          "%s: %s: hlevel info (%d, %d, \"%s\"), expected (%d, %d, \"%s\")", scenario, what,
          got_num, got_index, got_type, num, index, type);
}

static void expect_compare(MPI_Comm a, MPI_Comm b, int want, const char *what)
{
    int result = -1;
    MPI_Comm_compare(a, b, &result);
    CHECK(result == want, "%s: %s: MPI_Comm_compare gave %d, expected %d", scenario, what,
          result, want);
}

static void free_comm(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
}

/* ---------------------------------------------------- the unguided loop */

/* One step of the paper's loop, seen from every world rank. */
struct step {
    const char *members[MAX_RANKS]; /* new communicator of each rank */
    const char *roots[MAX_RANKS];   /* its roots communicator */
    const char *type;               /* hlevel type of every new communicator */
    int num_comms;                  /* same for every new communicator here */
    int index[MAX_RANKS];           /* of each rank's new communicator */
};

/* The paper's loop, twice in lockstep: with strata_comm_split_hw(old, NULL,
 * rank) (the MPI_Comm_split_type of the snippet) and with
 * strata_comm_hsplit_with_roots.  Every step: exact members, roots,
 * hlevel info (also through a duplicate), the new communicator a strict
 * subset of its parent (MPI_UNEQUAL), both functions congruent, and a
 * one-rank communicator congruent to MPI_COMM_SELF.  Where the host MPI has
 * them, MPI_Comm_split_type(MPI_COMM_TYPE_HW_UNGUIDED) gives the same
 * communicators, and HW_GUIDED too (hwcomm_split_type.h). */
static void check_unguided_loop(const struct step *steps, int nsteps)
{
    MPI_Comm old = MPI_COMM_WORLD, made[MAX_RANKS];
    int nmade = 0;
    char what[64];
    for (int s = 0;; s++) {
        CHECK(s < nsteps, "%s: the loop goes on past step %d", scenario, nsteps);
        const struct step *w = &steps[s];
        CHECK(strcmp(w->members[me], "-") != 0,
              "%s: step %d reached, but the loop should have ended before", scenario, s + 1);
        int rank;
        MPI_Comm_rank(old, &rank);
        MPI_Comm newcomm, hnew, roots;
        int rc = strata_comm_split_hw(old, NULL, rank, &newcomm);
        CHECK(rc == MPI_SUCCESS, "%s: step %d: strata_comm_split_hw returned %d", scenario,
              s + 1, rc);
        split_type_check_unguided(old, rank, newcomm, w->type);
        rc = strata_comm_hsplit_with_roots(old, &hnew, &roots);
        CHECK(rc == MPI_SUCCESS, "%s: step %d: strata_comm_hsplit_with_roots returned %d",
              scenario, s + 1, rc);
        snprintf(what, sizeof what, "step %d newcomm", s + 1);
        expect_members(newcomm, w->members[me], what);
        snprintf(what, sizeof what, "step %d hsplit newcomm", s + 1);
        expect_members(hnew, w->members[me], what);
        snprintf(what, sizeof what, "step %d rootscomm", s + 1);
        expect_members(roots, w->roots[me], what);
        free_comm(&roots);
        if (newcomm == MPI_COMM_NULL) break;

        snprintf(what, sizeof what, "step %d", s + 1);
        expect_hlevel(newcomm, w->num_comms, w->index[me], w->type, what);
        expect_hlevel(hnew, w->num_comms, w->index[me], w->type, what);
        MPI_Comm dup;
        MPI_Comm_dup(newcomm, &dup);
        snprintf(what, sizeof what, "step %d duplicate", s + 1);
        expect_hlevel(dup, w->num_comms, w->index[me], w->type, what);
        MPI_Comm_free(&dup);
        snprintf(what, sizeof what, "step %d new vs old", s + 1);
        expect_compare(old, newcomm, MPI_UNEQUAL, what);
        snprintf(what, sizeof what, "step %d split vs hsplit", s + 1);
        expect_compare(newcomm, hnew, MPI_CONGRUENT, what);
        int size;
        MPI_Comm_size(newcomm, &size);
        snprintf(what, sizeof what, "step %d vs MPI_COMM_SELF", s + 1);
        expect_compare(newcomm, MPI_COMM_SELF, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, what);
        free_comm(&hnew);
        made[nmade++] = newcomm;
        old = newcomm;
    }
    while (nmade > 0) MPI_Comm_free(&made[--nmade]);
}

/* Paper 5.1 at half scale, faithfully: 2 (virtual) nodes of the paper's
 * machine instead of 4, 8 ranks each, rank x = 8k + i on core i of node k.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_VIRTUAL_NODES=2 STRATA_MAP=core, 16 ranks. */
static const struct step paper51[] = {
    /* step 1: one communicator per node ("Machine") */
    {.members = {"0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7",
                 "0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7", "0 1 2 3 4 5 6 7",
                 "8 9 10 11 12 13 14 15", "8 9 10 11 12 13 14 15", "8 9 10 11 12 13 14 15",
                 "8 9 10 11 12 13 14 15", "8 9 10 11 12 13 14 15", "8 9 10 11 12 13 14 15",
                 "8 9 10 11 12 13 14 15", "8 9 10 11 12 13 14 15"},
     .roots = {"0 8", "null", "null", "null", "null", "null", "null", "null",
               "0 8", "null", "null", "null", "null", "null", "null", "null"},
     .type = "Machine", .num_comms = 2,
     .index = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}},
    /* step 2: NumaNode (NumaNode, Package and L3 coincide) */
    {.members = {"0 1 2 3", "0 1 2 3", "0 1 2 3", "0 1 2 3", "4 5 6 7", "4 5 6 7", "4 5 6 7",
                 "4 5 6 7", "8 9 10 11", "8 9 10 11", "8 9 10 11", "8 9 10 11",
                 "12 13 14 15", "12 13 14 15", "12 13 14 15", "12 13 14 15"},
     .roots = {"0 4", "null", "null", "null", "0 4", "null", "null", "null",
               "8 12", "null", "null", "null", "8 12", "null", "null", "null"},
     .type = "NUMANode", .num_comms = 2,
     .index = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1}},
    /* step 3: L2 caches */
    {.members = {"0 1", "0 1", "2 3", "2 3", "4 5", "4 5", "6 7", "6 7",
                 "8 9", "8 9", "10 11", "10 11", "12 13", "12 13", "14 15", "14 15"},
     .roots = {"0 2", "null", "0 2", "null", "4 6", "null", "4 6", "null",
               "8 10", "null", "8 10", "null", "12 14", "null", "12 14", "null"},
     .type = "L2Cache", .num_comms = 2,
     .index = {0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1}},
    /* step 4: cores (Core and PU coincide), congruent to MPI_COMM_SELF */
    {.members = {"0", "1", "2", "3", "4", "5", "6", "7",
                 "8", "9", "10", "11", "12", "13", "14", "15"},
     .roots = {"0 1", "0 1", "2 3", "2 3", "4 5", "4 5", "6 7", "6 7",
               "8 9", "8 9", "10 11", "10 11", "12 13", "12 13", "14 15", "14 15"},
     .type = "Core", .num_comms = 2,
     .index = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}},
    /* step 5: the bottom */
    {.members = {"null", "null", "null", "null", "null", "null", "null", "null",
                 "null", "null", "null", "null", "null", "null", "null", "null"},
     .roots = {"null", "null", "null", "null", "null", "null", "null", "null",
               "null", "null", "null", "null", "null", "null", "null", "null"}},
};

/* Paper 5.1 at MPICH's scale: 2 virtual nodes of 2 ranks on a node of two
 * one-core sockets, so node, then NumaNode (= core), then the bottom.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:1 core:1 pu:1"
 * STRATA_VIRTUAL_NODES=2 STRATA_MAP=core, 4 ranks. */
static const struct step paper51_mini[] = {
    {.members = {"0 1", "0 1", "2 3", "2 3"},
     .roots = {"0 2", "null", "0 2", "null"},
     .type = "Machine", .num_comms = 2, .index = {0, 0, 1, 1}},
    {.members = {"0", "1", "2", "3"},
     .roots = {"0 1", "0 1", "2 3", "2 3"},
     .type = "NUMANode", .num_comms = 2, .index = {0, 1, 0, 1}},
    {.members = {"null", "null", "null", "null"},
     .roots = {"null", "null", "null", "null"}},
};

/* Paper 5.2 (Figure 2): one node, ranks 0, 1 on cores 0, 1, ranks 2, 3 on
 * L2 number 1, ranks 4-7 on NumaNode number 1.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_MAP="core:0,core:1,l2:1,l2:1,numa:1,numa:1,numa:1,numa:1", 8 ranks. */
static const struct step paper52[] = {
    /* step 1: NumaNode */
    {.members = {"0 1 2 3", "0 1 2 3", "0 1 2 3", "0 1 2 3", "4 5 6 7", "4 5 6 7", "4 5 6 7",
                 "4 5 6 7"},
     .roots = {"0 4", "null", "null", "null", "0 4", "null", "null", "null"},
     .type = "NUMANode", .num_comms = 2, .index = {0, 0, 0, 0, 1, 1, 1, 1}},
    /* step 2: L2 for NumaNode 0; ranks 4-7 may move across L2 caches */
    {.members = {"0 1", "0 1", "2 3", "2 3", "null", "null", "null", "null"},
     .roots = {"0 2", "null", "0 2", "null", "null", "null", "null", "null"},
     .type = "L2Cache", .num_comms = 2, .index = {0, 0, 1, 1}},
    /* step 3: cores for L2 0; ranks 2, 3 may move across cores */
    {.members = {"0", "1", "null", "null", "-", "-", "-", "-"},
     .roots = {"0 1", "0 1", "null", "null", "-", "-", "-", "-"},
     .type = "Core", .num_comms = 2, .index = {0, 1}},
    /* step 4: the bottom for ranks 0 and 1 */
    {.members = {"null", "null", "-", "-", "-", "-", "-", "-"},
     .roots = {"null", "null", "-", "-", "-", "-", "-", "-"}},
};

/* Paper 5.2 at MPICH's scale: the same machine and the same shape with 4
 * ranks: ranks 0, 1 on cores 0, 1, rank 2 on L2 number 1, rank 3 on
 * NumaNode number 1.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_MAP="core:0,core:1,l2:1,numa:1", 4 ranks. */
static const struct step paper52_mini[] = {
    {.members = {"0 1 2", "0 1 2", "0 1 2", "3"},
     .roots = {"0 3", "null", "null", "0 3"},
     .type = "NUMANode", .num_comms = 2, .index = {0, 0, 0, 1}},
    /* rank 3 may move across the L2 caches of its NumaNode */
    {.members = {"0 1", "0 1", "2", "null"},
     .roots = {"0 2", "null", "0 2", "null"},
     .type = "L2Cache", .num_comms = 2, .index = {0, 0, 1}},
    /* rank 2 may move across the cores of its L2 */
    {.members = {"0", "1", "null", "-"},
     .roots = {"0 1", "0 1", "null", "-"},
     .type = "Core", .num_comms = 2, .index = {0, 1}},
    {.members = {"null", "null", "-", "-"},
     .roots = {"null", "null", "-", "-"}},
};

/* Unbound ranks (paper 3.2.4): nothing below the node.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_VIRTUAL_NODES=2 STRATA_MAP=none, 4 ranks. */
static const struct step unbound[] = {
    {.members = {"0 1", "0 1", "2 3", "2 3"},
     .roots = {"0 2", "null", "0 2", "null"},
     .type = "Machine", .num_comms = 2, .index = {0, 0, 1, 1}},
    {.members = {"null", "null", "null", "null"},
     .roots = {"null", "null", "null", "null"}},
};

/* Virtual nodes dealt cyclically: world ranks 0, 2 on node 0 (its cores 0,
 * 1), ranks 1, 3 on node 1 (its cores 0, 1), so the node communicators
 * interleave in world order.
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_VIRTUAL_NODES=2 STRATA_VIRTUAL_LAYOUT=cyclic STRATA_MAP=core, 4 ranks. */
static const struct step cyclic_nodes[] = {
    {.members = {"0 2", "1 3", "0 2", "1 3"},
     .roots = {"0 1", "0 1", "null", "null"},
     .type = "Machine", .num_comms = 2, .index = {0, 1, 0, 1}},
    /* both ranks of a node share L2 0: next come the cores */
    {.members = {"0", "1", "2", "3"},
     .roots = {"0 2", "1 3", "0 2", "1 3"},
     .type = "Core", .num_comms = 2, .index = {0, 0, 1, 1}},
    {.members = {"null", "null", "null", "null"},
     .roots = {"null", "null", "null", "null"}},
};

static void run_loop(const struct step *steps, int nsteps, int ranks, const char *world_type)
{
    CHECK(nprocs == ranks, "%s: run it with %d ranks, not %d", scenario, ranks, nprocs);
    /* MPI_COMM_WORLD was not made by strata: one communicator, index 0, of
     * the lowest level all its ranks share. */
    expect_hlevel(MPI_COMM_WORLD, 1, 0, world_type, "MPI_COMM_WORLD");
    check_unguided_loop(steps, nsteps);
}

/* ------------------------------------------------------- guided splits */

/* What each level name must give: the object each world rank lies in
 * (its logical index, node-major with several nodes; -1: none, so
 * MPI_COMM_NULL), and the type the new communicators report. */
struct guided_level {
    const char *level;
    const char *type;
    int object[8];
};

/* Every accepted spelling, and the level of the tables it means. */
static const struct {
    const char *name;
    const char *level;
} spellings[] = {
    {"node", "node"},       {"NODE", "node"},         {"machine", "node"},
    {"Machine", "node"},    {"socket", "socket"},     {"Socket", "socket"},
    {"package", "socket"},  {"PACKAGE", "socket"},    {"numa", "numa"},
    {"NUMANode", "numa"},   {"numanode", "numa"},     {"NuMa", "numa"},
    {"l3", "l3"},           {"L3", "l3"},             {"L3Cache", "l3"},
    {"l2", "l2"},           {"L2Cache", "l2"},        {"l2cache", "l2"},
    {"l1", "l1"},           {"L1Cache", "l1"},        {"core", "core"},
    {"Core", "core"},       {"CORE", "core"},         {"pu", "pu"},
    {"PU", "pu"},           {"cluster", "cluster"},   {"Cluster", "cluster"},
};

/* Machine of the guided scenarios: 2 packages of 2 NUMA nodes (one L3
 * each), 2 L2 per L3, 2 cores per L2, 2 PUs per core.  NUMA n = cores
 * 4n..4n+3, L2 m = cores 2m, 2m+1, package p = cores 8p..8p+7; no L1.
 * STRATA_TOPOLOGY="pack:2 numa:2 l3:1 l2:2 core:2 pu:2", 4 or 8 ranks: the
 * tables hold for any first ranks, since placement depends on the local rank
 * only. */

/* STRATA_MAP=numa: rank r on NUMA r % 4, its (r / 4)-th core: cores
 * 0 4 8 12 1 5 9 13. */
static const struct guided_level guided_numa[] = {
    {"node", "Machine", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"cluster", "Cluster", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"socket", "Package", {0, 0, 1, 1, 0, 0, 1, 1}},
    {"numa", "NUMANode", {0, 1, 2, 3, 0, 1, 2, 3}},
    {"l3", "L3Cache", {0, 1, 2, 3, 0, 1, 2, 3}},
    {"l2", "L2Cache", {0, 2, 4, 6, 0, 2, 4, 6}},
    {"l1", "L1Cache", {-1, -1, -1, -1, -1, -1, -1, -1}},
    {"core", "Core", {0, 4, 8, 12, 1, 5, 9, 13}},
    /* bound to a core, a rank may move between its 2 PUs */
    {"pu", "PU", {-1, -1, -1, -1, -1, -1, -1, -1}},
};

/* STRATA_MAP=core: rank r on core r. */
static const struct guided_level guided_core[] = {
    {"node", "Machine", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"cluster", "Cluster", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"socket", "Package", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"numa", "NUMANode", {0, 0, 0, 0, 1, 1, 1, 1}},
    {"l3", "L3Cache", {0, 0, 0, 0, 1, 1, 1, 1}},
    {"l2", "L2Cache", {0, 0, 1, 1, 2, 2, 3, 3}},
    {"l1", "L1Cache", {-1, -1, -1, -1, -1, -1, -1, -1}},
    {"core", "Core", {0, 1, 2, 3, 4, 5, 6, 7}},
    {"pu", "PU", {-1, -1, -1, -1, -1, -1, -1, -1}},
};

/* One socket, like this machine: 2 virtual nodes of 2 ranks (rank 2k + i on
 * core i of node k); "package" is the whole node, not MPI_COMM_NULL.
 * STRATA_TOPOLOGY="pack:1 l3:1 l2:2 core:1 pu:1" STRATA_VIRTUAL_NODES=2
 * STRATA_MAP=core, 4 ranks. */
static const struct guided_level guided_one_socket[] = {
    {"node", "Machine", {0, 0, 1, 1}},
    {"cluster", "Cluster", {0, 0, 0, 0}},
    {"socket", "Package", {0, 0, 1, 1}},
    {"numa", "NUMANode", {0, 0, 1, 1}},
    {"l3", "L3Cache", {0, 0, 1, 1}},
    {"l2", "L2Cache", {0, 1, 2, 3}},
    {"l1", "L1Cache", {-1, -1, -1, -1}},
    {"core", "Core", {0, 1, 2, 3}},
    {"pu", "PU", {0, 1, 2, 3}},
};

/* Expected members (ascending world ranks sharing my object), number of
 * communicators and my index, from a table row. */
static void expected_from_objects(const struct guided_level *row, char *want, size_t len,
                                  int *num, int *index)
{
    size_t at = 0;
    want[0] = '\0';
    *num = *index = 0;
    for (int r = 0; r < nprocs; r++) {
        int obj = row->object[r], first = obj >= 0;
        for (int q = 0; q < r && first; q++) first = row->object[q] != obj;
        if (first) {
            (*num)++;
            if (obj < row->object[me]) (*index)++;
        }
        if (obj >= 0 && obj == row->object[me])
            at += (size_t)snprintf(want + at, len - at, at ? " %d" : "%d", r);
    }
    if (row->object[me] < 0) snprintf(want, len, "null");
}

static void run_guided(const struct guided_level *table, int nlevels, int min_ranks,
                       int max_ranks)
{
    CHECK(nprocs >= min_ranks && nprocs <= max_ranks, "%s: run it with %d to %d ranks",
          scenario, min_ranks, max_ranks);
    char want[256], what[96];
    for (size_t s = 0; s < sizeof spellings / sizeof spellings[0]; s++) {
        const struct guided_level *row = NULL;
        for (int l = 0; l < nlevels; l++)
            if (!strcmp(table[l].level, spellings[s].level)) row = &table[l];
        CHECK(row, "%s: no table row for %s", scenario, spellings[s].level);
        int num, index;
        expected_from_objects(row, want, sizeof want, &num, &index);
        MPI_Comm comm;
        int rc = strata_comm_split_hw(MPI_COMM_WORLD, spellings[s].name, me, &comm);
        CHECK(rc == MPI_SUCCESS, "%s: split \"%s\" returned %d", scenario, spellings[s].name,
              rc);
        snprintf(what, sizeof what, "split \"%s\"", spellings[s].name);
        expect_members(comm, want, what);
        if (comm != MPI_COMM_NULL) expect_hlevel(comm, num, index, row->type, what);
        split_type_check_guided(MPI_COMM_WORLD, spellings[s].name, me, comm);
        free_comm(&comm);
    }

    /* key orders the new communicators: reversed keys, reversed ranks. */
    for (int l = 0; l < nlevels; l++) {
        if (strcmp(table[l].level, "socket") && strcmp(table[l].level, "numa")) continue;
        int num, index;
        expected_from_objects(&table[l], want, sizeof want, &num, &index);
        char reversed[256] = "";
        size_t at = 0;
        for (int r = nprocs - 1; r >= 0; r--)
            if (table[l].object[r] == table[l].object[me])
                at += (size_t)snprintf(reversed + at, sizeof reversed - at, at ? " %d" : "%d",
                                       r);
        MPI_Comm comm;
        CHECK(strata_comm_split_hw(MPI_COMM_WORLD, table[l].level, nprocs - me, &comm) ==
                  MPI_SUCCESS, "%s: reversed split", scenario);
        snprintf(what, sizeof what, "split \"%s\" with reversed keys", table[l].level);
        expect_members(comm, reversed, what);
        free_comm(&comm);
    }

    /* Unknown names are refused before any communication. */
    const char *unknown[] = {"l4", "", "sockets", "L2 ", "hwthread"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        MPI_Comm comm = MPI_COMM_NULL;
        int rc = strata_comm_split_hw(MPI_COMM_WORLD, unknown[i], me, &comm);
        CHECK(rc == MPI_ERR_ARG, "%s: split \"%s\" returned %d, expected MPI_ERR_ARG (%d)",
              scenario, unknown[i], rc, MPI_ERR_ARG);
    }
    split_type_check_rules();
}

/* ------------------------------------------------ strata_comm_get_min_hlevel */

static void expect_min(MPI_Comm comm, int n, const int *ranks, const char *want)
{
    char type[STRATA_MAX_LEVEL_NAME] = "", list[64] = "";
    size_t at = 0;
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, i ? " %d" : "%d", ranks[i]);
    int rc = strata_comm_get_min_hlevel(comm, n, ranks, type, sizeof type);
    CHECK(rc == MPI_SUCCESS, "%s: min level of {%s} returned %d", scenario, list, rc);
    CHECK(!strcmp(type, want), "%s: min level of {%s} is \"%s\", expected \"%s\"", scenario,
          list, type, want);
}

/* Expected for callers in the list, "Unknown" for the others. */
static void expect_min_world(int n, const int *ranks, const char *want)
{
    int listed = 0;
    for (int i = 0; i < n; i++) listed |= ranks[i] == me;
    expect_min(MPI_COMM_WORLD, n, ranks, listed ? want : "Unknown");
}

static void expect_min_error(MPI_Comm comm, int n, const int *ranks, int want_rc)
{
    char type[STRATA_MAX_LEVEL_NAME] = "";
    int rc = strata_comm_get_min_hlevel(comm, n, ranks, type, sizeof type);
    CHECK(rc == want_rc, "%s: min level with a bad rank returned %d, expected %d", scenario, rc,
          want_rc);
}

/* One node, paper machine: rank 0 on core 0, rank 1 on core 1 (both L2 0),
 * rank 2 on core 4 (NumaNode 1), rank 3 on L2 1 (cores 2-3, NumaNode 0).
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_MAP="core:0,core:1,core:4,l2:1", 4 ranks. */
static void run_min_level(void)
{
    CHECK(nprocs == 4, "%s: run it with 4 ranks", scenario);
    expect_min_world(2, (int[]){0, 1}, "L2Cache");
    expect_min_world(2, (int[]){1, 0}, "L2Cache");
    expect_min_world(2, (int[]){0, 3}, "NUMANode");
    expect_min_world(3, (int[]){0, 1, 3}, "NUMANode");
    expect_min_world(2, (int[]){0, 2}, "Machine");
    expect_min_world(4, (int[]){0, 1, 2, 3}, "Machine");
    /* Alone: Core and PU coincide, so "Core"; bound to an L2 only, "L2Cache". */
    expect_min_world(1, &me, me == 3 ? "L2Cache" : "Core");
    expect_min_world(1, (int[]){(me + 1) % 4}, "Unknown");
    expect_min_error(MPI_COMM_WORLD, 1, (int[]){4}, MPI_ERR_RANK);
    expect_min_error(MPI_COMM_WORLD, 2, (int[]){0, -1}, MPI_ERR_RANK);
    expect_min_error(MPI_COMM_WORLD, 3, (int[]){me, 1, 4}, MPI_ERR_RANK);
    /* On a reversed communicator, ranks are that communicator's: its ranks
     * 2 and 3 are world ranks 1 and 0. */
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - me, &reversed);
    expect_min(reversed, 2, (int[]){2, 3}, me <= 1 ? "L2Cache" : "Unknown");
    expect_min(reversed, 2, (int[]){0, 1}, me >= 2 ? "Machine" : "Unknown");
    expect_min_error(reversed, 1, (int[]){4}, MPI_ERR_RANK);
    MPI_Comm_free(&reversed);
    expect_hlevel(MPI_COMM_WORLD, 1, 0, "Machine", "MPI_COMM_WORLD");
}

/* 2 virtual nodes of the paper's machine, ranks 2k, 2k+1 on cores 0, 1 of
 * node k.  STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_VIRTUAL_NODES=2 STRATA_MAP=core, 4 ranks. */
static void run_min_level_nodes(void)
{
    CHECK(nprocs == 4, "%s: run it with 4 ranks", scenario);
    expect_min_world(2, (int[]){0, 1}, "L2Cache");
    expect_min_world(2, (int[]){2, 3}, "L2Cache");
    expect_min_world(2, (int[]){0, 2}, "Cluster");
    expect_min_world(3, (int[]){3, 1, 2}, "Cluster");
    expect_min_world(4, (int[]){0, 1, 2, 3}, "Cluster");
    expect_min_world(1, &me, "Core");
    expect_min_error(MPI_COMM_WORLD, 1, (int[]){-1}, MPI_ERR_RANK);
    expect_hlevel(MPI_COMM_WORLD, 1, 0, "Cluster", "MPI_COMM_WORLD");
}

/* ------------------------------------------------------ sub-communicators */

/* Splitting communicators whose rank order is not the world's.  Paper
 * machine, one node: world ranks 0, 2 on cores 0, 1 (NumaNode 0, L2 0),
 * ranks 1, 3 on cores 4, 5 (NumaNode 1, L2 2).
 * STRATA_TOPOLOGY="pack:2 numa:1 l3:1 l2:2 core:2 pu:1"
 * STRATA_MAP="core:0,core:4,core:1,core:5", 4 ranks. */
static void run_subcomm(void)
{
    CHECK(nprocs == 4, "%s: run it with 4 ranks", scenario);
    MPI_Comm sub, level, roots, core;

    /* Reversed: sub ranks 0 1 2 3 are world 3 2 1 0. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - me, &sub);
    expect_members(sub, "3 2 1 0", "reversed sub");
    CHECK(strata_comm_hsplit_with_roots(sub, &level, &roots) == MPI_SUCCESS, "%s: hsplit",
          scenario);
    static const char *const numa_rev[4] = {"2 0", "3 1", "2 0", "3 1"};
    static const char *const roots_rev[4] = {"null", "null", "3 2", "3 2"};
    expect_members(level, numa_rev[me], "reversed: NumaNode");
    expect_hlevel(level, 2, me % 2, "NUMANode", "reversed: NumaNode");
    expect_members(roots, roots_rev[me], "reversed: roots of NumaNode");
    free_comm(&roots);
    /* Then the cores, keeping the order of `level`. */
    CHECK(strata_comm_hsplit_with_roots(level, &core, &roots) == MPI_SUCCESS, "%s: hsplit",
          scenario);
    char self[8];
    snprintf(self, sizeof self, "%d", me);
    expect_members(core, self, "reversed: Core");
    expect_hlevel(core, 2, me / 2, "Core", "reversed: Core");
    expect_members(roots, numa_rev[me], "reversed: roots of Core");
    free_comm(&roots);
    MPI_Comm bottom;
    CHECK(strata_comm_split_hw(core, NULL, 0, &bottom) == MPI_SUCCESS, "%s: split", scenario);
    expect_members(bottom, "null", "reversed: bottom");
    free_comm(&core);
    free_comm(&level);
    /* Guided, with keys reversed again: back to world order. */
    CHECK(strata_comm_split_hw(sub, "l2", me, &level) == MPI_SUCCESS, "%s: split", scenario);
    static const char *const l2_fwd[4] = {"0 2", "1 3", "0 2", "1 3"};
    expect_members(level, l2_fwd[me], "reversed: guided l2");
    expect_hlevel(level, 2, me % 2, "L2Cache", "reversed: guided l2");
    free_comm(&level);
    MPI_Comm_free(&sub);

    /* Interleaved: sub ranks 0 1 2 3 are world 1 0 3 2. */
    MPI_Comm_split(MPI_COMM_WORLD, 0, me ^ 1, &sub);
    expect_members(sub, "1 0 3 2", "interleaved sub");
    CHECK(strata_comm_hsplit_with_roots(sub, &level, &roots) == MPI_SUCCESS, "%s: hsplit",
          scenario);
    static const char *const numa_int[4] = {"0 2", "1 3", "0 2", "1 3"};
    static const char *const roots_int[4] = {"1 0", "1 0", "null", "null"};
    expect_members(level, numa_int[me], "interleaved: NumaNode");
    expect_hlevel(level, 2, me % 2, "NUMANode", "interleaved: NumaNode");
    expect_members(roots, roots_int[me], "interleaved: roots of NumaNode");
    free_comm(&roots);
    free_comm(&level);
    MPI_Comm_free(&sub);

    /* Three ranks, reversed: world 2 1 0; world 3 is out.  The split below
     * passes world ranks as keys, so its communicators come in world order. */
    MPI_Comm_split(MPI_COMM_WORLD, me < 3 ? 0 : MPI_UNDEFINED, -me, &sub);
    static const char *const sub3[4] = {"2 1 0", "2 1 0", "2 1 0", "null"};
    expect_members(sub, sub3[me], "three ranks");
    if (sub != MPI_COMM_NULL) {
        CHECK(strata_comm_split_hw(sub, NULL, me, &level) == MPI_SUCCESS, "%s: split",
              scenario);
        static const char *const numa3[3] = {"0 2", "1", "0 2"};
        expect_members(level, numa3[me], "three ranks: NumaNode");
        expect_hlevel(level, 2, me % 2, "NUMANode", "three ranks: NumaNode");
        /* World rank 1 is alone, bound to a core: nothing below. */
        CHECK(strata_comm_split_hw(level, NULL, 0, &core) == MPI_SUCCESS, "%s: split",
              scenario);
        if (me == 1) expect_members(core, "null", "three ranks: below the lone rank");
        else expect_members(core, me == 0 ? "0" : "2", "three ranks: Core");
        free_comm(&core);
        free_comm(&level);
        MPI_Comm_free(&sub);
    }
}

/* With STRATA_DISABLE=1 strata knows no locations: every call that needs
 * them says so with MPI_ERR_OTHER, on every rank alike (nobody is left
 * waiting in a split); a bad level name is still MPI_ERR_ARG.  2 ranks. */
static void run_disabled(void)
{
    MPI_Comm comm = MPI_COMM_NULL, roots = MPI_COMM_NULL;
    int rc = strata_comm_split_hw(MPI_COMM_WORLD, NULL, me, &comm);
    CHECK(rc == MPI_ERR_OTHER, "%s: unguided split returned %d", scenario, rc);
    rc = strata_comm_split_hw(MPI_COMM_WORLD, "numa", me, &comm);
    CHECK(rc == MPI_ERR_OTHER, "%s: guided split returned %d", scenario, rc);
    rc = strata_comm_split_hw(MPI_COMM_WORLD, "l4", me, &comm);
    CHECK(rc == MPI_ERR_ARG, "%s: split \"l4\" returned %d", scenario, rc);
    rc = strata_comm_hsplit_with_roots(MPI_COMM_WORLD, &comm, &roots);
    CHECK(rc == MPI_ERR_OTHER, "%s: hsplit returned %d", scenario, rc);
    int num, index;
    char type[STRATA_MAX_LEVEL_NAME];
    rc = strata_comm_get_hlevel_info(MPI_COMM_WORLD, &num, &index, type, sizeof type);
    CHECK(rc == MPI_ERR_OTHER, "%s: hlevel info returned %d", scenario, rc);
    rc = strata_comm_get_min_hlevel(MPI_COMM_WORLD, 1, &me, type, sizeof type);
    CHECK(rc == MPI_ERR_OTHER, "%s: min level returned %d", scenario, rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    scenario = argc > 1 ? argv[1] : "";
    CHECK(nprocs <= MAX_RANKS, "at most %d ranks", MAX_RANKS);
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))
    if (!strcmp(scenario, "paper51")) run_loop(paper51, COUNT(paper51), 16, "Cluster");
    else if (!strcmp(scenario, "paper51-mini"))
        run_loop(paper51_mini, COUNT(paper51_mini), 4, "Cluster");
    else if (!strcmp(scenario, "paper52")) run_loop(paper52, COUNT(paper52), 8, "Machine");
    else if (!strcmp(scenario, "paper52-mini"))
        run_loop(paper52_mini, COUNT(paper52_mini), 4, "Machine");
    else if (!strcmp(scenario, "unbound")) run_loop(unbound, COUNT(unbound), 4, "Cluster");
    else if (!strcmp(scenario, "cyclic-nodes"))
        run_loop(cyclic_nodes, COUNT(cyclic_nodes), 4, "Cluster");
    else if (!strcmp(scenario, "disabled")) run_disabled();
    else if (!strcmp(scenario, "guided-numa")) run_guided(guided_numa, COUNT(guided_numa), 2, 8);
    else if (!strcmp(scenario, "guided-core")) run_guided(guided_core, COUNT(guided_core), 2, 8);
    else if (!strcmp(scenario, "guided-one-socket"))
        run_guided(guided_one_socket, COUNT(guided_one_socket), 4, 4);
    else if (!strcmp(scenario, "min-level")) run_min_level();
    else if (!strcmp(scenario, "min-level-nodes")) run_min_level_nodes();
    else if (!strcmp(scenario, "subcomm")) run_subcomm();
    else CHECK(0, "unknown scenario \"%s\"", scenario);
    test_pass(scenario);
    MPI_Finalize();
    return 0;
}
