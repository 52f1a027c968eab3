/* The flag lines (src/coll/plane.h, "The flag lines"; line_block.c, and the
 * smallest Bcast and Allreduce): small payloads travel in the writer's own
 * control lines, in a ring of slots that a writer reuses once it knows
 * every rank has moved on.
 *
 * A few hundred calls of Bcast, Gather, Scatter, Allgather, Alltoall and
 * Allreduce on block sizes around the lines' limits (55-57, 111-113,
 * 223-225 bytes, and (size - 1) * block for Scatter's root and Alltoall),
 * in place or not, roots turning, in streaks of the same rooted call (a
 * root that reads nothing from its readers runs ahead of them), with one
 * rank now and then late by up to 300 us, so that a writer that reused a
 * slot too early would overwrite what a late reader has yet to read.  Every
 * result is compared with values computed here; every call that should
 * take the lines is checked to have written this rank's line of its slot
 * (the plane's own state), and every call that should not, not to have.
 *
 *   test_lines [--rounds=N] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/block.h"
#include "coll/plane.h"
#include "context/context.h"
#include "testutil.h"
#include "util/colls.h"

enum { BCAST, GATHER, SCATTER, ALLGATHER, ALLTOALL, ALLREDUCE, NKINDS };
static const char *kind_name[NKINDS] = {"Bcast", "Gather", "Scatter", "Allgather", "Alltoall",
                                        "Allreduce"};

/* Byte i of the block rank `src` sends rank `dst` in round `round`. */
static unsigned char value(int round, int src, int dst, size_t i)
{
    return (unsigned char)(round * 131 + src * 31 + dst * 7 + (int)i * 3 + 1);
}

/* A generator every rank runs alike (the schedule is the same everywhere). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state >> 11);
}

/* The Allreduce of a b-byte case: b / sizeof(int) ints, at least one. */
static int allreduce_count(size_t b) { return b / sizeof(int) ? (int)(b / sizeof(int)) : 1; }

/* Whether this call should take the flag lines, by the rules of
 * line_block.c / bcast.c / tiny.c (what the plane must show). */
static int takes_lines(int kind, int size, size_t b)
{
    switch (kind) {
    case BCAST: return size > 1 && b <= STRATA_LINE_SLOT_BYTES; /* STRATA_CICO_MAX unset */
    case ALLREDUCE: return size > 1 && allreduce_count(b) * sizeof(int) <= STRATA_TINY_MAX;
    case GATHER: return strata_lines_fit(STRATA_COLL_GATHER, size, b);
    case SCATTER: return strata_lines_fit(STRATA_COLL_SCATTER, size, b);
    case ALLGATHER: return strata_lines_fit(STRATA_COLL_ALLGATHER, size, b);
    default: return strata_lines_fit(STRATA_COLL_ALLTOALL, size, b);
    }
}

/* Whether this rank writes lines in that call (the others only read). */
static int writes_lines(int kind, int rank, int root)
{
    switch (kind) {
    case BCAST:
    case SCATTER: return rank == root;
    case GATHER: return rank != root;
    default: return 1;
    }
}

static void one_call(MPI_Comm c, int round, int kind, size_t b, int root, int in_place,
                     unsigned char *send, unsigned char *recv)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    struct strata_ctx *ctx = strata_ctx_get(c);
    CHECK(ctx && ctx->plane, "strata must serve the communicator");
    struct strata_plane *p = ctx->plane;
    int n = (int)b;
    int rc = MPI_SUCCESS;
    size_t total = (size_t)size * b;
    memset(recv, 0xee, total);
    memset(send, 0xdd, total);
    switch (kind) {
    case BCAST:
        if (rank == root)
            for (size_t i = 0; i < b; i++) recv[i] = value(round, root, 0, i);
        rc = MPI_Bcast(recv, n, MPI_BYTE, root, c);
        for (size_t i = 0; i < b; i++)
            CHECK(recv[i] == value(round, root, 0, i), "round %d Bcast %zu B root %d: byte %zu",
                  round, b, root, i);
        break;
    case GATHER:
        for (size_t i = 0; i < b; i++) send[i] = value(round, rank, root, i);
        if (rank == root && in_place) memcpy(recv + (size_t)root * b, send, b);
        rc = MPI_Gather(rank == root && in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n,
                        MPI_BYTE, root, c);
        if (rank == root)
            for (int q = 0; q < size; q++)
                for (size_t i = 0; i < b; i++)
                    CHECK(recv[(size_t)q * b + i] == value(round, q, root, i),
                          "round %d Gather %zu B root %d%s: block %d byte %zu", round, b, root,
                          in_place ? " in place" : "", q, i);
        break;
    case SCATTER:
        if (rank == root)
            for (int q = 0; q < size; q++)
                for (size_t i = 0; i < b; i++) send[(size_t)q * b + i] = value(round, root, q, i);
        rc = MPI_Scatter(send, n, MPI_BYTE, rank == root && in_place ? MPI_IN_PLACE : recv, n,
                         MPI_BYTE, root, c);
        if (!(rank == root && in_place))
            for (size_t i = 0; i < b; i++)
                CHECK(recv[i] == value(round, root, rank, i),
                      "round %d Scatter %zu B root %d: byte %zu", round, b, root, i);
        break;
    case ALLGATHER:
        for (size_t i = 0; i < b; i++) {
            send[i] = value(round, rank, 0, i);
            if (in_place) recv[(size_t)rank * b + i] = send[i];
        }
        rc = MPI_Allgather(in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n, MPI_BYTE, c);
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < b; i++)
                CHECK(recv[(size_t)q * b + i] == value(round, q, 0, i),
                      "round %d Allgather %zu B%s: block %d byte %zu", round, b,
                      in_place ? " in place" : "", q, i);
        break;
    case ALLTOALL: {
        unsigned char *out = in_place ? recv : send;
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < b; i++) out[(size_t)q * b + i] = value(round, rank, q, i);
        rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n, MPI_BYTE, c);
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < b; i++)
                CHECK(recv[(size_t)q * b + i] == value(round, q, rank, i),
                      "round %d Alltoall %zu B%s: block %d byte %zu", round, b,
                      in_place ? " in place" : "", q, i);
        break;
    }
    default: {
        int count = allreduce_count(b);
        int *mine = (int *)(void *)send, *sum = (int *)(void *)recv;
        for (int i = 0; i < count; i++) mine[i] = round * 1000 + rank * 10 + i;
        rc = MPI_Allreduce(mine, sum, count, MPI_INT, MPI_SUM, c);
        for (int i = 0; i < count; i++)
            CHECK(sum[i] == size * (round * 1000 + i) + 10 * size * (size - 1) / 2,
                  "round %d Allreduce %d ints: element %d is %d", round, count, i, sum[i]);
        break;
    }
    }
    CHECK(rc == MPI_SUCCESS, "round %d %s: rc %d", round, kind_name[kind], rc);
    /* The path: this rank's line 0 of the call's slot carries a value of
     * this op's range (its base, plus its signature's code at 2 ranks:
     * plane.h, "The signature in the line") iff the call went through the
     * lines (the plane's op is still this call's; an older op's values are
     * all below its base). */
    if (writes_lines(kind, rank, root) && size > 1) {
        uint64_t flag = atomic_load(&p->ctl[rank].line[strata_plane_slot(p)][0].flag);
        int lines = takes_lines(kind, size, b);
        CHECK((flag >= p->cur_base && flag <= p->pos) == lines, "round %d %s %zu B at %d ranks: %s the flag lines",
              round, kind_name[kind], b, size, lines ? "did not take" : "took");
    }
}

int main(int argc, char **argv)
{
    int rounds = 600;
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--rounds=", 9)) rounds = atoi(argv[i] + 9);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* World, and the ranks reversed (a rank's place differs from its id). */
    MPI_Comm comms[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[1]);
    static const size_t sizes[] = {1, 7, 8, 28, 55, 56, 57, 74, 75, 111, 112, 113, 223, 224, 225, 1000};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    size_t cap = (size_t)wsize * 1024;
    unsigned char *send = malloc(cap), *recv = malloc(cap);
    CHECK(send && recv, "out of memory");
    long counts[NKINDS][2] = {{0}};
    int kind = 0, streak = 0, root = 0;
    size_t b = 8;
    for (int round = 0; round < rounds; round++) {
        MPI_Comm c = comms[(round / 50) % 2];
        int size;
        MPI_Comm_size(c, &size);
        if (streak == 0) {
            /* A new streak: one call kind and size, 1-12 calls long. */
            kind = (int)(next_rand() % NKINDS);
            b = sizes[next_rand() % nsizes];
            streak = 1 + (int)(next_rand() % 12);
            root = (int)(next_rand() % (unsigned)size);
        }
        streak--;
        int in_place = next_rand() % 3 == 0;
        int late = next_rand() % 4 == 0 ? (int)(next_rand() % (unsigned)size) : -1;
        unsigned delay = next_rand() % 300;
        int crank;
        MPI_Comm_rank(c, &crank);
        if (crank == late) usleep(delay);
        one_call(c, round, kind, b, root, in_place, send, recv);
        counts[kind][takes_lines(kind, size, b)]++;
    }
    for (int k = 0; k < NKINDS; k++)
        CHECK(counts[k][1] > 0, "the schedule never sent %s through the flag lines", kind_name[k]);
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    free(send);
    free(recv);
    test_pass("lines");
    MPI_Finalize();
    return 0;
}
