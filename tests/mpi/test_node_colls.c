/* The correctness matrix of strata's node collectives (MPI_Bcast, MPI_Reduce,
 * MPI_Allreduce, MPI_Barrier) on several communicators.  Results are checked
 * against values computed here from every rank's deterministic input (see
 * node_common.h), and against the host MPI's PMPI_ result where the host is
 * known to be right.  Options choose a subset, so that each ctest entry stays
 * short:
 *
 *   --suites=LIST   bcast, mixed, permuted, reduce, allreduce, reduce-inplace,
 *                   allreduce-inplace, large, fp, userop, barrier, alternate,
 *                   or all (default)
 *   --comms=LIST    world, reversed (keys reversed), evenodd (two halves at
 *                   once), subset3 (ranks 0-2), dup, or all (default world)
 *   --types=LIST    reduction type categories: int, multi, float, complex,
 *                   bool, byte, pair (default all)
 *   --roots=some    the large sizes (broadcasts and the "large" reductions) at
 *                   the first, last and middle roots only (default: every root)
 *   --no-large      skip sizes from 256 KiB up
 *   --lean-large    each large reduction case once (Allreduce, or Reduce at one
 *                   root, in place every other case) instead of at every root
 *                   both ways: the hierarchies of the fake machines, briefly
 *   --huge=N        N broadcasts of 16 MiB (default 0)
 *   --no-host       do not compare with the host MPI
 *   --host-survey   print the host MPI's wrong results (HOST-WRONG lines)
 *                   instead of failing on them, known bugs included
 *   --expect-host   strata must hand every communicator to the host MPI (the
 *                   shared-memory fallback tests): results must still be right
 *   --expect-host=TEXT  ... and the reason strata gives must contain TEXT
 *   --transport=NAME  strata's planes must move data with this transport
 *                   (cma, segment: run with STRATA_TRANSPORT=NAME)
 *   --reps=N        run the selection N times, with other inputs (default 1)
 *   --seed=N        input seed
 *
 * Rank 0 prints "PASS <suite> on <communicator>" for each part. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "context/context.h"
#include "route/route.h"
#include "node_common.h"

/* ---- Barrier ------------------------------------------------------------- */

/* Each rank publishes the number of barriers it has entered in a shared
 * window; right after barrier k every rank must have entered barrier k, and
 * nobody can have left barrier k+1 (so nobody shows more than k + 1). */
void node_barrier_suite(MPI_Comm comm, const char *cname)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Win win;
    _Atomic uint64_t *mine;
    CHECK(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, comm, &mine, &win) == MPI_SUCCESS,
          "%s: MPI_Win_allocate_shared", cname);
    _Atomic uint64_t **slot = malloc(sizeof *slot * (size_t)size);
    CHECK(slot != NULL, "out of memory");
    for (int r = 0; r < size; r++) {
        MPI_Aint bytes;
        int disp;
        MPI_Win_shared_query(win, r, &bytes, &disp, &slot[r]);
    }
    atomic_store(mine, 0);
    MPI_Barrier(comm);

    const int rounds = 400;
    for (int k = 1; k <= rounds; k++) {
        atomic_store_explicit(mine, (uint64_t)k, memory_order_release);
        MPI_Barrier(comm);
        for (int r = 0; r < size; r++) {
            uint64_t v = atomic_load_explicit(slot[r], memory_order_acquire);
            CHECK(v == (uint64_t)k || v == (uint64_t)k + 1,
                  "%s: after barrier %d, rank %d has entered barrier %llu", cname, k, r,
                  (unsigned long long)v);
        }
        /* Interleaved with the other collectives, small and large. */
        if (k % 10 == 0)
            node_bcast_check(comm, cname, MPI_BYTE, 64, MPI_BYTE, 64, k % size,
                             node_salt(70, (uint64_t)k, 0, 0), "MPI_BYTE (between barriers)");
        if (k % 25 == 0) node_int_sum_check(comm, cname, k % 50 ? 3 : 20000, -1,
                                            node_salt(71, (uint64_t)k, 0, 0));
        if (k % 40 == 0)
            node_bcast_check(comm, cname, MPI_BYTE, 70000, MPI_BYTE, 70000, (k / 40) % size,
                             node_salt(72, (uint64_t)k, 0, 0), "MPI_BYTE (between barriers)");
    }
    /* Many in a row with nothing between them. */
    for (int k = 0; k < 2000; k++) MPI_Barrier(comm);
    atomic_store_explicit(mine, (uint64_t)rounds + 7, memory_order_release);
    MPI_Barrier(comm);
    for (int r = 0; r < size; r++)
        CHECK(atomic_load_explicit(slot[r], memory_order_acquire) == (uint64_t)rounds + 7,
              "%s: rank %d did not arrive before the barrier let this one go", cname, r);
    MPI_Barrier(comm);
    free(slot);
    MPI_Win_free(&win);
}

/* ---- Two communicators used alternately ------------------------------------ */

void node_alternate_suite(MPI_Comm a, MPI_Comm b, const char *cname)
{
    int size;
    MPI_Comm_size(a, &size);
    char an[128], bn[128];
    snprintf(an, sizeof an, "%s (first of two)", cname);
    snprintf(bn, sizeof bn, "%s (second of two, reversed)", cname);
    for (int k = 0; k < 60; k++) {
        uint64_t s = (uint64_t)k;
        int big = k % 3 == 0;
        node_bcast_check(a, an, MPI_BYTE, big ? 100000 : 200, MPI_BYTE, big ? 100000 : 200,
                         k % size, node_salt(80, s, 0, 0), "MPI_BYTE");
        node_int_sum_check(b, bn, k % 2 ? 3 : 20000, -1, node_salt(81, s, 0, 0));
        node_int_sum_check(a, an, 7, (k * 5) % size, node_salt(82, s, 0, 0));
        MPI_Barrier(b);
        node_bcast_check(b, bn, MPI_INT, big ? 5 : 30000, MPI_INT, big ? 5 : 30000,
                         (k + 1) % size, node_salt(83, s, 0, 0), "MPI_INT");
        node_int_sum_check(a, an, big ? 4097 : 1, -1, node_salt(84, s, 0, 0));
        node_int_sum_check(b, bn, 5000, (k * 3) % size, node_salt(85, s, 0, 0));
        MPI_Barrier(a);
    }
}

/* ---- Driver --------------------------------------------------------------- */

enum suite { S_BCAST, S_MIXED, S_PERMUTED, S_REDUCE, S_ALLREDUCE, S_REDUCE_IP, S_ALLREDUCE_IP,
             S_LARGE, S_FP, S_USEROP, S_BARRIER, S_ALTERNATE, NSUITES };
static const char *suite_names[NSUITES] = {"bcast", "mixed", "permuted", "reduce", "allreduce",
                                           "reduce-inplace", "allreduce-inplace", "large", "fp",
                                           "userop", "barrier", "alternate"};
enum comm_kind { C_WORLD, C_REVERSED, C_EVENODD, C_SUBSET3, C_DUP, NCOMMS };
static const char *comm_names[NCOMMS] = {"world", "reversed", "evenodd", "subset3", "dup"};
static const char *cat_names[NODE_NCATS] = {"int", "multi", "float", "complex",
                                            "bool", "byte", "pair"};

/* Parses a comma list of names into a bit set; "all" selects everything. */
static unsigned parse_list(const char *opt, const char *list, const char *const *names, int n)
{
    if (!strcasecmp(list, "all")) return (1u << n) - 1;
    unsigned set = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (!strcasecmp(tok, names[i])) found = i;
        CHECK(found >= 0, "%s: unknown name \"%s\"", opt, tok);
        set |= 1u << found;
    }
    return set;
}

/* The communicator of one kind for this rank (MPI_COMM_NULL if not a member). */
static MPI_Comm make_comm(enum comm_kind kind, int wrank, int wsize)
{
    MPI_Comm c = MPI_COMM_NULL;
    switch (kind) {
    case C_WORLD: return MPI_COMM_WORLD;
    case C_REVERSED: MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &c); break;
    case C_EVENODD: MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c); break;
    case C_SUBSET3:
        MPI_Comm_split(MPI_COMM_WORLD, wrank < 3 ? 0 : MPI_UNDEFINED, wrank, &c);
        break;
    case C_DUP: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
    default: break;
    }
    return c;
}

static void run_suite(enum suite s, MPI_Comm comm, const char *cname)
{
    switch (s) {
    case S_BCAST: node_bcast_suite(comm, cname); break;
    case S_MIXED: node_bcast_mixed_suite(comm, cname, 0); break;
    case S_PERMUTED: node_bcast_mixed_suite(comm, cname, 1); break;
    case S_REDUCE: node_reduce_suite(comm, cname, 0, 0); break;
    case S_ALLREDUCE: node_reduce_suite(comm, cname, 1, 0); break;
    case S_REDUCE_IP: node_reduce_suite(comm, cname, 0, 1); break;
    case S_ALLREDUCE_IP: node_reduce_suite(comm, cname, 1, 1); break;
    case S_LARGE: if (node_opt.large) node_reduce_large_suite(comm, cname); break;
    case S_FP: node_fp_suite(comm, cname); break;
    case S_USEROP: node_userop_suite(comm, cname); break;
    case S_BARRIER: node_barrier_suite(comm, cname); break;
    case S_ALTERNATE: {
        int rank, size;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        MPI_Comm other;
        MPI_Comm_split(comm, 0, size - 1 - rank, &other);
        node_alternate_suite(comm, other, cname);
        MPI_Comm_free(&other);
        break;
    }
    default: break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    unsigned suites = (1u << NSUITES) - 1, comms = 1u << C_WORLD;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strncmp(a, "--suites=", 9)) suites = parse_list(a, a + 9, suite_names, NSUITES);
        else if (!strncmp(a, "--comms=", 8)) comms = parse_list(a, a + 8, comm_names, NCOMMS);
        else if (!strncmp(a, "--types=", 8))
            node_opt.types = parse_list(a, a + 8, cat_names, NODE_NCATS);
        else if (!strcmp(a, "--roots=some")) node_opt.all_roots = 0;
        else if (!strcmp(a, "--roots=all")) node_opt.all_roots = 1;
        else if (!strcmp(a, "--no-large")) node_opt.large = 0;
        else if (!strcmp(a, "--lean-large")) node_opt.lean_large = 1;
        else if (!strncmp(a, "--huge=", 7)) node_opt.huge = atoi(a + 7);
        else if (!strcmp(a, "--no-host")) node_opt.host_check = 0;
        else if (!strcmp(a, "--host-survey")) node_opt.host_survey = 1;
        else if (!strcmp(a, "--expect-host")) node_opt.expect_host = 1;
        else if (!strncmp(a, "--expect-host=", 14)) {
            node_opt.expect_host = 1;
            node_opt.host_reason = a + 14;
        }
        else if (!strncmp(a, "--transport=", 12)) node_opt.transport = a + 12;
        else if (!strncmp(a, "--reps=", 7)) node_opt.reps = atoi(a + 7);
        else if (!strncmp(a, "--seed=", 7)) node_opt.seed = strtoull(a + 7, NULL, 0);
        else CHECK(0, "unknown option %s (see the comment at the top of test_node_colls.c)", a);
    }

    const unsigned long long seed = node_opt.seed;
    for (int rep = 0; rep < node_opt.reps; rep++) {
        node_opt.seed = seed + (unsigned long long)rep;
        for (int k = 0; k < NCOMMS; k++) {
            if (!(comms & (1u << k))) continue;
            MPI_Comm comm = make_comm((enum comm_kind)k, wrank, wsize);
            if (comm != MPI_COMM_NULL) {
                int size;
                MPI_Comm_size(comm, &size);
                char cname[64];
                snprintf(cname, sizeof cname, "%s (size %d)", comm_names[k], size);
                node_check_route(comm, cname);
                for (int s = 0; s < NSUITES; s++) {
                    if (!(suites & (1u << s))) continue;
                    run_suite((enum suite)s, comm, cname);
                    /* Each member's rank 0 reports (two at once for evenodd). */
                    MPI_Barrier(comm);
                    int crank;
                    MPI_Comm_rank(comm, &crank);
                    if (crank == 0) printf("PASS %s on %s\n", suite_names[s], cname);
                    fflush(stdout);
                }
                if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    test_pass("node collectives");
    MPI_Finalize();
    return 0;
}
