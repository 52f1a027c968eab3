/* Traffic accounting (STRATA_STATS): the bytes strata moves for one
 * collective, summed over the ranks, split by hardware distance, must be
 * exactly what the algorithm's tree implies.  The expectation comes from the
 * command line as multiples of the payload B, computed by hand for the fake
 * machine the test runs on (tests/node.cmake explains each one):
 *
 *   test_node_stats --coll=bcast|reduce|allreduce --bytes=B --roots=0,5
 *                   --expect=same_l3:4,same_numa:0,other_numa:2,other_socket:1,other_node:0
 *
 * A multiple may be a fraction ("3/2").  Each call's result is checked too,
 * so the accounting is never tested on a wrong answer.  NODE_STATS_PER_RANK=1
 * prints each rank's own running totals (for diagnosis). */
#include <stdlib.h>
#include <string.h>

#include "interpose/route.h"
#include "node_common.h"
#include "util/stats.h"

static const char *dist_names[STRATA_NDIST] = {"same_l3", "same_numa", "other_numa",
                                               "other_socket", "other_node"};

/* Bytes of coll moved so far by all ranks of the job, per distance. */
static void total_bytes(int coll, unsigned long long out[STRATA_NDIST])
{
    unsigned long long mine[STRATA_NDIST];
    for (int d = 0; d < STRATA_NDIST; d++)
        mine[d] = strata_stats_local_bytes(coll, (enum strata_distance)d);
    PMPI_Allreduce(mine, out, STRATA_NDIST, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

/* A reduction of n doubles with integer values, checked where it lands. */
static void checked_reduce(int n, int root)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *in = malloc(sizeof(double) * (size_t)n), *out = malloc(sizeof(double) * (size_t)n);
    CHECK(in && out, "out of memory");
    for (int i = 0; i < n; i++) in[i] = rank * 1000.0 + i % 977;
    if (root < 0) MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
    if (root < 0 || rank == root)
        for (int i = 0; i < n; i++)
            CHECK(out[i] == 1000.0 * size * (size - 1) / 2 + (double)size * (i % 977),
                  "%s root %d: [%d] = %g", root < 0 ? "Allreduce" : "Reduce", root, i, out[i]);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *coll_name = "bcast", *expect = NULL, *roots = "0";
    long long bytes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--coll=", 7)) coll_name = argv[i] + 7;
        else if (!strncmp(argv[i], "--bytes=", 8)) bytes = atoll(argv[i] + 8);
        else if (!strncmp(argv[i], "--roots=", 8)) roots = argv[i] + 8;
        else if (!strncmp(argv[i], "--expect=", 9)) expect = argv[i] + 9;
        else CHECK(0, "unknown option %s", argv[i]);
    }
    int coll = strata_coll_parse(coll_name);
    CHECK(coll == STRATA_COLL_BCAST || coll == STRATA_COLL_REDUCE ||
              coll == STRATA_COLL_ALLREDUCE,
          "--coll=%s: bcast, reduce or allreduce", coll_name);
    CHECK(bytes > 0 && expect, "--bytes and --expect are required");
    CHECK(coll == STRATA_COLL_BCAST || bytes % 8 == 0, "reductions take a multiple of 8 bytes");
    CHECK(strata_stats_enabled(), "STRATA_STATS is not set: nothing is counted");
    node_check_route(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    /* Expected bytes per distance. */
    unsigned long long want[STRATA_NDIST];
    int given[STRATA_NDIST] = {0};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", expect);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        CHECK(colon != NULL, "--expect: \"%s\" is not name:multiple", tok);
        *colon = '\0';
        long num = strtol(colon + 1, NULL, 10), den = 1;
        if (strchr(colon + 1, '/')) den = strtol(strchr(colon + 1, '/') + 1, NULL, 10);
        int d = -1;
        for (int k = 0; k < STRATA_NDIST; k++)
            if (!strcmp(tok, dist_names[k])) d = k;
        CHECK(d >= 0 && den > 0 && (bytes * num) % den == 0, "--expect: bad entry %s", tok);
        want[d] = (unsigned long long)(bytes * num / den);
        given[d] = 1;
    }
    for (int d = 0; d < STRATA_NDIST; d++)
        CHECK(given[d], "--expect must give every distance (%s is missing)", dist_names[d]);

    /* Allreduce has no root: it runs once. */
    snprintf(buf, sizeof buf, "%s", coll == STRATA_COLL_ALLREDUCE ? "-1" : roots);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int root = atoi(tok);
        unsigned long long before[STRATA_NDIST], after[STRATA_NDIST];
        total_bytes(coll, before);
        if (coll == STRATA_COLL_BCAST)
            node_bcast_check(MPI_COMM_WORLD, "MPI_COMM_WORLD", MPI_BYTE, (int)bytes, MPI_BYTE,
                             (int)bytes, root, node_salt(90, (uint64_t)root, 0, 0), "MPI_BYTE");
        else
            checked_reduce((int)(bytes / 8), root);
        total_bytes(coll, after);
        if (getenv("NODE_STATS_PER_RANK")) { /* diagnosis: this rank's own totals */
            printf("rank %d:", rank);
            for (int d = 0; d < STRATA_NDIST; d++)
                printf(" %s=%llu", dist_names[d],
                       strata_stats_local_bytes(coll, (enum strata_distance)d));
            printf("\n");
        }
        if (rank == 0) {
            printf("%s of %lld bytes, root %d:", strata_coll_name(coll), bytes, root);
            for (int d = 0; d < STRATA_NDIST; d++)
                printf(" %s=%llu (%.2fB)", dist_names[d], after[d] - before[d],
                       (double)(after[d] - before[d]) / (double)bytes);
            printf("\n");
            for (int d = 0; d < STRATA_NDIST; d++)
                CHECK(after[d] - before[d] == want[d],
                      "%s of %lld bytes from root %d: %llu bytes at distance %s, expected %llu",
                      strata_coll_name(coll), bytes, root, after[d] - before[d], dist_names[d],
                      want[d]);
        }
    }
    test_pass("traffic accounting");
    MPI_Finalize();
    return 0;
}
