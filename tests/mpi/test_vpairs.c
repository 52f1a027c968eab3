/* One pair's counts differ in a small v-collective (issue 31 item 2): the
 * blocking v-collectives under STRATA_CHECK_ARGS=auto run without a round
 * before the call, and each reader compares the bytes its writers publish
 * for it with its own count as it reads (coll/agree.h).  For MPI_Alltoallv,
 * MPI_Gatherv, MPI_Scatterv and MPI_Allgatherv, at 8 B to 2 KiB per block,
 * every (writer, reader) pair in turn (a rank and itself included) gets a
 * count that differs on one side only (more, fewer, none sent, none
 * expected), and:
 *   - the reader of that pair gets MPI_ERR_TRUNCATE when it was sent more
 *     than it posted, an error when fewer;
 *   - no byte of the guard zones around any rank's send and receive buffers
 *     changes, and the reader's block holds no byte past what was sent;
 *   - every other rank gets its data right, and at 8 B (the fused path:
 *     no finding round) MPI_SUCCESS; above it a refusal (an error on a rank
 *     that receives, nothing moved) is also accepted;
 *   - the same call with every count right, right after, succeeds and is
 *     right on every rank (the plane stayed in step).
 * test_vpairs [--verbose] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route_check.h"
#include "testutil.h"

enum { GUARD = 256, MAXR = 8, BASES = 3, EVERY_READER = 99 };
static const int bases[BASES] = {1, 16, 256}; /* doubles per block */
static const unsigned char PATTERN = 0xA5;
static int verbose;

enum kind { ALLTOALLV, GATHERV, SCATTERV, ALLGATHERV, NKINDS };
static const char *const names[NKINDS] = {"MPI_Alltoallv", "MPI_Gatherv", "MPI_Scatterv",
                                          "MPI_Allgatherv"};

/* A buffer of n doubles between two guard zones. */
struct guarded {
    unsigned char *alloc;
    double *d;
    size_t n;
};

static void galloc(struct guarded *g, size_t n, double fill)
{
    g->n = n;
    g->alloc = malloc(2 * GUARD + n * sizeof(double) + 1);
    CHECK(g->alloc, "out of memory");
    memset(g->alloc, PATTERN, 2 * GUARD + n * sizeof(double));
    g->d = (double *)(void *)(g->alloc + GUARD);
    for (size_t i = 0; i < n; i++) g->d[i] = fill;
}

static int guards_intact(const struct guarded *g)
{
    const unsigned char *after = g->alloc + GUARD + g->n * sizeof(double);
    for (int i = 0; i < GUARD; i++)
        if (g->alloc[i] != PATTERN || after[i] != PATTERN) return 0;
    return 1;
}

static double datum(int s, int r, int i) { return s * 1e6 + r * 1e3 + i; }

/* Whether s sends to r in the kind (rooted at root). */
static int flows(enum kind k, int s, int r, int root)
{
    if (k == GATHERV) return r == root;
    if (k == SCATTERV) return s == root;
    return 1;
}

/* One case: send[s][r] what s says it sends r, recv[r][s] what r says it
 * receives from s (doubles); each rank reads its own rows.  Checks the
 * class, the guards and the data; `odd_reader` the reader of the odd pair
 * (-1: every count agrees). */
static void run(MPI_Comm comm, enum kind k, int root, int send[MAXR][MAXR], int recv[MAXR][MAXR],
                int odd_writer, int odd_reader, int base, const char *what)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int scount[MAXR], sdispl[MAXR], rcount[MAXR], rdispl[MAXR], stot = 0, rtot = 0;
    for (int r = 0; r < size; r++) {
        scount[r] = flows(k, me, r, root) ? send[me][r] : 0;
        rcount[r] = flows(k, r, me, root) ? recv[me][r] : 0;
        sdispl[r] = stot, stot += scount[r];
        rdispl[r] = rtot, rtot += rcount[r];
    }
    /* Allgatherv sends one block: what it says it sends rank 0 (every
     * case keeps a writer's blocks equal, or changes them all). */
    int one = k == ALLGATHERV ? send[me][0] : k == GATHERV ? scount[root] : 0;
    struct guarded sb, rb;
    galloc(&sb, k == ALLGATHERV || k == GATHERV ? (size_t)one : (size_t)stot, 0);
    galloc(&rb, k == SCATTERV ? (size_t)rcount[root] : (size_t)rtot, -1);
    if (k == ALLGATHERV || k == GATHERV)
        for (int i = 0; i < one; i++) sb.d[i] = datum(me, k == GATHERV ? root : EVERY_READER, i);
    else
        for (int r = 0; r < size; r++)
            for (int i = 0; i < scount[r]; i++) sb.d[sdispl[r] + i] = datum(me, r, i);
    int rc = MPI_ERR_INTERN;
    switch (k) {
    case ALLTOALLV:
        rc = MPI_Alltoallv(sb.d, scount, sdispl, MPI_DOUBLE, rb.d, rcount, rdispl, MPI_DOUBLE, comm);
        break;
    case GATHERV:
        rc = MPI_Gatherv(sb.d, one, MPI_DOUBLE, rb.d, rcount, rdispl, MPI_DOUBLE, root, comm);
        break;
    case SCATTERV:
        rc = MPI_Scatterv(sb.d, scount, sdispl, MPI_DOUBLE, rb.d, rcount[root], MPI_DOUBLE, root,
                          comm);
        break;
    case ALLGATHERV:
        rc = MPI_Allgatherv(sb.d, one, MPI_DOUBLE, rb.d, rcount, rdispl, MPI_DOUBLE, comm);
        break;
    default:
        break;
    }
    int cls = route_error_class(rc);
    CHECK(guards_intact(&sb) && guards_intact(&rb), "%s: a guard zone changed on rank %d", what, me);
    /* What each block holds. */
    int refused = 0, wrong = 0;
    for (int s = 0; s < size; s++) {
        if (!rcount[s]) continue;
        int sent = flows(k, s, me, root) ? send[s][k == ALLGATHERV ? 0 : me] : 0;
        int lo = sent < rcount[s] ? sent : rcount[s];
        const double *blk = rb.d + (k == SCATTERV ? 0 : rdispl[s]);
        for (int i = 0; i < rcount[s]; i++) {
            double want = datum(s, k == ALLGATHERV ? EVERY_READER : me, i);
            if (i >= lo) CHECK(blk[i] == -1, "%s: rank %d's block from %d holds a byte past what "
                               "was sent (element %d of %d sent)", what, me, s, i, sent);
            else if (blk[i] == -1) refused = 1;
            else if (blk[i] != want) wrong = 1;
        }
    }
    CHECK(!wrong, "%s: rank %d got wrong data", what, me);
    if (me == odd_reader) {
        int more = 0;
        for (int s = 0; s < size; s++)
            if (flows(k, s, me, root) && send[s][k == ALLGATHERV ? 0 : me] > recv[me][s]) more = 1;
        if (more)
            CHECK(cls == MPI_ERR_TRUNCATE, "%s: rank %d was sent more than it posted: class %d",
                  what, me, cls);
        else
            CHECK(cls != MPI_SUCCESS, "%s: rank %d was sent less than it posted: MPI_SUCCESS",
                  what, me);
    } else if (odd_reader < 0) {
        CHECK(cls == MPI_SUCCESS && !refused, "%s: counts agree, rank %d got class %d", what, me,
              cls);
    } else {
        /* A bystander: its data right; at the smallest size no refusal. */
        CHECK(cls == MPI_SUCCESS || (base > 1 && rtot > 0),
              "%s: rank %d's counts agree with its writers', got class %d", what, me, cls);
        CHECK(cls != MPI_SUCCESS || !refused, "%s: rank %d succeeded without its data", what, me);
    }
    (void)odd_writer;
    free(sb.alloc);
    free(rb.alloc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    verbose = argc > 1 && !strcmp(argv[1], "--verbose");
    int size, wrank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    CHECK(size >= 2 && size <= MAXR, "run with 2 to %d ranks", MAXR);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    long cases = 0;
    for (int b = 0; b < BASES; b++) {
        int c = bases[b];
        /* The odd side: (what the writer says, what the reader says). */
        const int odd[4][2] = {{2 * c, c}, {c / 2 ? c / 2 : 0, c}, {0, c}, {c, 0}};
        for (int k = 0; k < NKINDS; k++)
            for (int root = 0; root < (k == GATHERV || k == SCATTERV ? size : 1); root++)
                for (int w = 0; w < size; w++)
                    for (int r = 0; r < size; r++)
                        for (int o = 0; o < 4; o++) {
                            if (!flows((enum kind)k, w, r, root)) continue;
                            /* Allgatherv: a writer's one block is read by
                             * everyone; only a reader's count is odd. */
                            if (k == ALLGATHERV && o < 3 && w != r) continue;
                            int send[MAXR][MAXR], recv[MAXR][MAXR];
                            for (int i = 0; i < size; i++)
                                for (int j = 0; j < size; j++) send[i][j] = recv[i][j] = c;
                            send[w][r] = odd[o][0];
                            recv[r][w] = odd[o][1];
                            if (k == ALLGATHERV && w == r && o < 3) {
                                /* The writer's block itself: every reader's
                                 * count differs from it (the others err as
                                 * readers; checked as the odd reader here). */
                                for (int j = 0; j < size; j++) send[w][j] = odd[o][0];
                                for (int i = 0; i < size; i++) recv[i][w] = odd[o][1];
                            }
                            char what[160];
                            snprintf(what, sizeof what, "%s %zu B root=%d pair %d->%d %s",
                                     names[k], c * sizeof(double), root, w, r,
                                     o == 0 ? "more" : o == 1 ? "fewer" : o == 2 ? "none sent"
                                                                               : "none expected");
                            if (verbose && wrank == 0) printf("case: %s\n", what), fflush(stdout);
                            int reader = k == ALLGATHERV && w == r && o < 3 ? -2 : r;
                            if (reader == -2) {
                                /* Every rank reads the odd block: each errs. */
                                run(comm, (enum kind)k, root, send, recv, w, wrank, c, what);
                            } else {
                                run(comm, (enum kind)k, root, send, recv, w, reader, c, what);
                            }
                            for (int i = 0; i < size; i++)
                                for (int j = 0; j < size; j++) send[i][j] = recv[i][j] = c;
                            char after[200];
                            snprintf(after, sizeof after, "the correct call after %s", what);
                            run(comm, (enum kind)k, root, send, recv, -1, -1, c, after);
                            cases++;
                        }
    }
    MPI_Comm_free(&comm);
    if (wrank == 0) printf("%ld cases\n", cases);
    test_pass("vpairs");
    MPI_Finalize();
    return 0;
}
