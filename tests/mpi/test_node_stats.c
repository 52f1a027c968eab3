/* Traffic accounting (STRATA_STATS): what strata counts for one collective,
 * summed over the ranks, must be exactly what the algorithm's tree implies.
 * The expectations come from the command line, computed by hand for the
 * (fake) machine the test runs on (tests/node.cmake and tests/stats.cmake
 * explain each one):
 *
 *   test_node_stats --coll=bcast|reduce|allreduce|allgather|barrier --bytes=B --roots=0,5
 *       --expect=same_l3:4,same_numa:0,other_numa:2,other_socket:1,other_node:0
 *       [--expect-messages=same_l3:4..16,same_numa:0,other_numa:8,other_socket:4,other_node:0]
 *       [--algorithm=pipelined]
 *
 * --expect gives bytes as multiples of the payload B (Allgather: of the
 * block; Barrier: bytes, B is not given), a multiple may be a fraction
 * ("3/2"); --expect-messages gives
 * messages per call, exact or as a range "fewest..most" (a leaf of the
 * broadcast tree copies whatever its parent has ready: one to all chunks).
 * Per call it also checks that every rank counted one served call, for
 * --algorithm when given, and that nothing was counted for any other
 * collective (an Allgather across nodes broadcasts inside each node: those
 * bytes are the Allgather's).  Each call's result is checked too, so the
 * accounting is never tested on a wrong answer.  NODE_STATS_PER_RANK=1
 * prints each rank's own running totals (for diagnosis). */
#include <stdlib.h>
#include <string.h>

#include "route/route.h"
#include "node_common.h"
#include "util/stats.h"

/* Every counter of the job, summed over ranks (PMPI_: not counted). */
struct counts {
    unsigned long long bytes[STRATA_NCOLLS][STRATA_NDIST];
    unsigned long long messages[STRATA_NCOLLS][STRATA_NDIST];
    unsigned long long calls[STRATA_NCOLLS][2];
    unsigned long long algorithm; /* calls of the tested collective by --algorithm */
};

static void total_counts(int coll, const char *algorithm, struct counts *out)
{
    struct counts mine;
    for (int k = 0; k < STRATA_NCOLLS; k++) {
        for (int d = 0; d < STRATA_NDIST; d++) {
            mine.bytes[k][d] = strata_stats_local_bytes(k, (enum strata_distance)d);
            mine.messages[k][d] = strata_stats_local_messages(k, (enum strata_distance)d);
        }
        mine.calls[k][0] = strata_stats_local_calls(k, 0);
        mine.calls[k][1] = strata_stats_local_calls(k, 1);
    }
    mine.algorithm = algorithm ? strata_stats_local_algorithm(coll, algorithm) : 0;
    PMPI_Allreduce(&mine, out, sizeof mine / sizeof(unsigned long long), MPI_UNSIGNED_LONG_LONG,
                   MPI_SUM, MPI_COMM_WORLD);
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

/* An Allgather of `block` bytes per rank, every block checked. */
static void checked_allgather(size_t block)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *in = malloc(block), *out = malloc(block * (size_t)size);
    CHECK(in && out, "out of memory");
    for (size_t i = 0; i < block; i++) in[i] = (unsigned char)node_word(rank, i, 91);
    memset(out, 0xEE, block * (size_t)size);
    MPI_Allgather(in, (int)block, MPI_BYTE, out, (int)block, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < block; i++)
            CHECK(out[(size_t)r * block + i] == (unsigned char)node_word(r, i, 91),
                  "Allgather: byte %zu of rank %d's block is wrong", i, r);
    free(in);
    free(out);
}

/* Parses "name:value,..." with one entry per distance.  Values are
 * multiples of `unit` ("3/2") for bytes, or "n" / "fewest..most" for
 * messages (unit 0). */
static void parse_expect(const char *opt, const char *text, long long unit,
                         unsigned long long lo[STRATA_NDIST], unsigned long long hi[STRATA_NDIST])
{
    int given[STRATA_NDIST] = {0};
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        CHECK(colon != NULL, "%s: \"%s\" is not name:value", opt, tok);
        *colon = '\0';
        int d = -1;
        for (int k = 0; k < STRATA_NDIST; k++)
            if (!strcmp(tok, strata_distance_name((enum strata_distance)k))) d = k;
        CHECK(d >= 0 && !given[d], "%s: %s is unknown or given twice", opt, tok);
        char *end;
        long long num = strtoll(colon + 1, &end, 10), den = 1, top = num;
        if (unit && *end == '/') den = strtoll(end + 1, &end, 10);
        if (!unit && !strncmp(end, "..", 2)) top = strtoll(end + 2, &end, 10);
        CHECK(!*end && num >= 0 && den > 0 && top >= num, "%s: bad entry for %s", opt, tok);
        if (unit) {
            CHECK((unit * num) % den == 0, "%s: %s is not a whole number of bytes", opt, tok);
            lo[d] = hi[d] = (unsigned long long)(unit * num / den);
        } else {
            lo[d] = (unsigned long long)num;
            hi[d] = (unsigned long long)top;
        }
        given[d] = 1;
    }
    for (int d = 0; d < STRATA_NDIST; d++)
        CHECK(given[d], "%s must give every distance (%s is missing)", opt,
              strata_distance_name((enum strata_distance)d));
}

/* Asserts what one call of coll counted, from the counters around it. */
static void check_call(int coll, const char *what, const struct counts *before,
                       const struct counts *after, const unsigned long long want[STRATA_NDIST],
                       const unsigned long long *msg_lo, const unsigned long long *msg_hi,
                       const char *algorithm, int size)
{
    printf("%s:", what);
    for (int d = 0; d < STRATA_NDIST; d++)
        printf(" %s=%llu/%llu", strata_distance_name((enum strata_distance)d),
               after->bytes[coll][d] - before->bytes[coll][d],
               after->messages[coll][d] - before->messages[coll][d]);
    printf(" (bytes/messages)\n");
    for (int d = 0; d < STRATA_NDIST; d++) {
        const char *dn = strata_distance_name((enum strata_distance)d);
        unsigned long long got = after->bytes[coll][d] - before->bytes[coll][d];
        CHECK(got == want[d], "%s: %llu bytes at distance %s, expected %llu", what, got, dn,
              want[d]);
        unsigned long long msgs = after->messages[coll][d] - before->messages[coll][d];
        if (msg_lo)
            CHECK(msgs >= msg_lo[d] && msgs <= msg_hi[d],
                  "%s: %llu messages at distance %s, expected %llu..%llu", what, msgs, dn,
                  msg_lo[d], msg_hi[d]);
    }
    CHECK(after->calls[coll][1] - before->calls[coll][1] == (unsigned long long)size &&
              after->calls[coll][0] == before->calls[coll][0],
          "%s: %llu served and %llu host calls counted, expected %d served (one per rank)", what,
          after->calls[coll][1] - before->calls[coll][1],
          after->calls[coll][0] - before->calls[coll][0], size);
    if (algorithm)
        CHECK(after->algorithm - before->algorithm == (unsigned long long)size,
              "%s: %llu calls counted for algorithm \"%s\", expected %d (one per rank)", what,
              after->algorithm - before->algorithm, algorithm, size);
    /* Counted under the collective called, and nothing else changed. */
    for (int k = 0; k < STRATA_NCOLLS; k++)
        for (int d = 0; d < STRATA_NDIST && k != coll; d++)
            CHECK(after->bytes[k][d] == before->bytes[k][d] &&
                      after->messages[k][d] == before->messages[k][d] &&
                      after->calls[k][1] == before->calls[k][1],
                  "%s: traffic or calls counted for %s", what, strata_coll_name(k));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *coll_name = "bcast", *expect = NULL, *expect_msgs = NULL, *roots = "0";
    const char *algorithm = NULL;
    long long bytes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--coll=", 7)) coll_name = argv[i] + 7;
        else if (!strncmp(argv[i], "--bytes=", 8)) bytes = atoll(argv[i] + 8);
        else if (!strncmp(argv[i], "--roots=", 8)) roots = argv[i] + 8;
        else if (!strncmp(argv[i], "--expect=", 9)) expect = argv[i] + 9;
        else if (!strncmp(argv[i], "--expect-messages=", 18)) expect_msgs = argv[i] + 18;
        else if (!strncmp(argv[i], "--algorithm=", 12)) algorithm = argv[i] + 12;
        else CHECK(0, "unknown option %s", argv[i]);
    }
    int coll = strata_coll_parse(coll_name);
    CHECK(coll == STRATA_COLL_BCAST || coll == STRATA_COLL_REDUCE ||
              coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_ALLGATHER ||
              coll == STRATA_COLL_BARRIER,
          "--coll=%s: bcast, reduce, allreduce, allgather or barrier", coll_name);
    if (coll == STRATA_COLL_BARRIER) bytes = 1; /* --expect gives bytes */
    CHECK(bytes > 0 && expect, "--bytes and --expect are required");
    CHECK(coll != STRATA_COLL_REDUCE && coll != STRATA_COLL_ALLREDUCE ? 1 : bytes % 8 == 0,
          "reductions take a multiple of 8 bytes");
    CHECK(strata_stats_enabled(), "STRATA_STATS is not set: nothing is counted");
    node_check_route(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    unsigned long long want[STRATA_NDIST], unused[STRATA_NDIST];
    unsigned long long msg_lo[STRATA_NDIST], msg_hi[STRATA_NDIST];
    parse_expect("--expect", expect, bytes, want, unused);
    if (expect_msgs) parse_expect("--expect-messages", expect_msgs, 0, msg_lo, msg_hi);

    /* Allreduce, Allgather and Barrier have no root: they run once. */
    char buf[512];
    int rootless = coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_ALLGATHER ||
                   coll == STRATA_COLL_BARRIER;
    snprintf(buf, sizeof buf, "%s", rootless ? "-1" : roots);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int root = atoi(tok);
        struct counts before, after;
        total_counts(coll, algorithm, &before);
        if (coll == STRATA_COLL_BCAST)
            node_bcast_check(MPI_COMM_WORLD, "MPI_COMM_WORLD", MPI_BYTE, (int)bytes, MPI_BYTE,
                             (int)bytes, root, node_salt(90, (uint64_t)root, 0, 0), "MPI_BYTE");
        else if (coll == STRATA_COLL_ALLGATHER)
            checked_allgather((size_t)bytes);
        else if (coll == STRATA_COLL_BARRIER)
            CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Barrier failed");
        else
            checked_reduce((int)(bytes / 8), root);
        total_counts(coll, algorithm, &after);
        if (getenv("NODE_STATS_PER_RANK")) { /* diagnosis: this rank's own totals */
            printf("rank %d:", rank);
            for (int d = 0; d < STRATA_NDIST; d++)
                printf(" %s=%llu", strata_distance_name((enum strata_distance)d),
                       strata_stats_local_bytes(coll, (enum strata_distance)d));
            printf("\n");
        }
        if (rank == 0) {
            char what[128];
            snprintf(what, sizeof what, "%s of %lld bytes%s, root %d", strata_coll_name(coll),
                     bytes, coll == STRATA_COLL_ALLGATHER ? " per rank" : "", root);
            check_call(coll, what, &before, &after, want, expect_msgs ? msg_lo : NULL,
                       expect_msgs ? msg_hi : NULL, algorithm, size);
        }
    }
    test_pass("traffic accounting");
    MPI_Finalize();
    return 0;
}
