/* MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv and MPI_Alltoallv through
 * strata, each result compared byte for byte (gaps and holes included) with
 * the host MPI's own (PMPI_ on the same input):
 *   - count patterns: uniform, one empty rank, skewed (power law), irregular
 *     with zeros; displacements in reverse rank order with gaps;
 *   - small blocks and blocks past the copy-in/copy-out limit (16 KiB);
 *   - every root (or the first and last with --roots=some);
 *   - MPI_IN_PLACE in each form the standard allows;
 *   - MPI_INT, and a vector type with holes (extent 12, size 8);
 *   - each algorithm forced in turn, then the cost model's choice;
 *   - MPI_COMM_WORLD, a split with the ranks reversed, all but the last rank;
 *   - the large-count forms (_c) where the host has them;
 * and STRATA_STATS must show every call served by strata on a one-node
 * communicator and every algorithm run (the small blocks' copy-in/copy-out
 * fused with the layout too); across (virtual) nodes, all four served
 * by strata's compositions (src/net/net_vblock.c, whose node parts run each
 * forced algorithm in turn).  Across nodes, empty calls (every count 0)
 * are drawn too.
 *
 *   test_vcolls [--roots=some] [--large] [--model] [--comms=world,reversed,sub]
 *   (--model: the cost model's choice only, no forced algorithms; across
 *   nodes: STRATA_VIRTUAL_NODES, or real nodes such as netns hosts) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/block.h"
#include "coll/select.h"
#include "context/context.h"
#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

static int wrank;
static int some_roots, across_nodes, model_only;
static const char *comms_opt = "world,reversed,sub";
static long cases;

enum { NPATTERNS = 4, SENTINEL = -7 };
static const char *pattern_names[NPATTERNS] = {"uniform", "one-empty", "skewed", "irregular"};

/* Elements sender s sends receiver r (size n, pattern, scale base). */
static int count_of(int pattern, int base, int n, int s, int r)
{
    switch (pattern) {
    case 0: return base;
    case 1: return s == n / 2 ? 0 : base + s;
    case 2: return base * n / (1 + (s * 7 + r * 3) % n) / (1 + (s * 7 + r * 3) % n) + 1;
    default: return (s * 5 + r * 3 + 1) % 4 == 0 ? 0 : base * (1 + (s + 2 * r) % 3) / 2 + 1;
    }
}

/* Displacements (elements) of n blocks of counts c: reverse order, with a
 * gap of j % 3 elements after block j.  Returns the buffer's elements. */
static int place(const int *c, int n, int *displ)
{
    int at = 0;
    for (int j = n - 1; j >= 0; j--) {
        displ[j] = at;
        at += c[j] + j % 3;
    }
    return at;
}

/* A datatype and its layout in ints: extent_ints per element, data at
 * offsets 0 and (for the vector) 2. */
struct type {
    MPI_Datatype t;
    int extent_ints, nint;
    const char *name;
};

static int *alloc_ints(size_t n)
{
    int *p = malloc((n ? n : 1) * sizeof(int));
    CHECK(p, "out of memory");
    for (size_t i = 0; i < n; i++) p[i] = SENTINEL;
    return p;
}

/* Writes the data of `count` elements of ty at buf + displ (elements). */
static void fill(int *buf, const struct type *ty, int displ, int count, int s, int r)
{
    for (int e = 0; e < count; e++)
        for (int k = 0; k < ty->nint; k++)
            buf[(size_t)(displ + e) * ty->extent_ints + 2 * k] =
                (int)(((unsigned)s * 2654435761u) ^ ((unsigned)r * 40503u) ^
                      ((unsigned)(2 * e + k) * 2246822519u)) | 1; /* every byte varies; odd, never SENTINEL */
}

static void same(const int *got, const int *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: int %zu is %d, the host gives %d", what, i, got[i], want[i]);
}

/* One call of coll on comm with everything drawn from (pattern, base, root,
 * in_place, ty); strata and the host on identical inputs. */
static void one_case(MPI_Comm comm, int coll, int pattern, int base, int root, int in_place,
                     const struct type *ty, int large_form, const char *algo)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int));
    int *rc = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int));
    CHECK(sc && sd && rc && rd, "out of memory");
    int scount = 0, rcount = 0, slen = 0, rlen = 0;
    int sym = coll == STRATA_COLL_ALLTOALLV && in_place;
    for (int j = 0; j < n; j++) {
        int a = sym && j < me ? j : me, b = sym && j < me ? me : j;
        switch (coll) {
        case STRATA_COLL_GATHERV: rc[j] = count_of(pattern, base, n, j, root); break;
        case STRATA_COLL_SCATTERV: sc[j] = count_of(pattern, base, n, root, j); break;
        case STRATA_COLL_ALLGATHERV: rc[j] = count_of(pattern, base, n, j, j); break;
        default:
            sc[j] = count_of(pattern, base, n, a, b);
            rc[j] = sym ? sc[j] : count_of(pattern, base, n, j, me);
        }
    }
    if (coll == STRATA_COLL_GATHERV) scount = count_of(pattern, base, n, me, root);
    if (coll == STRATA_COLL_SCATTERV) rcount = count_of(pattern, base, n, root, me);
    if (coll == STRATA_COLL_ALLGATHERV) scount = count_of(pattern, base, n, me, me);
    slen = place(sc, n, sd);
    rlen = place(rc, n, rd);
    int multi_send = coll == STRATA_COLL_SCATTERV || coll == STRATA_COLL_ALLTOALLV;
    int multi_recv = coll != STRATA_COLL_SCATTERV;
    size_t sints = (size_t)(multi_send ? slen : scount) * ty->extent_ints + 2;
    size_t rints = (size_t)(multi_recv ? rlen : rcount) * ty->extent_ints + 2;
    int *send = alloc_ints(sints), *recv = alloc_ints(rints), *want = alloc_ints(rints);
    if (multi_send) {
        for (int j = 0; j < n; j++) fill(send, ty, sd[j], sc[j], me, j);
    } else {
        fill(send, ty, 0, scount, me, coll == STRATA_COLL_GATHERV ? root : me);
    }
    /* In place: the rank's own input where the standard reads it (Gatherv's
     * and Scatterv's root only). */
    int rooted = coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV;
    in_place = in_place && (!rooted || me == root);
    if (in_place) {
        if (coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_ALLGATHERV)
            fill(recv, ty, rd[me], rc[me], me, coll == STRATA_COLL_GATHERV ? root : me);
        if (coll == STRATA_COLL_ALLTOALLV)
            for (int j = 0; j < n; j++) fill(recv, ty, rd[j], rc[j], me, j);
        memcpy(want, recv, rints * sizeof(int));
    }
    const void *sb = in_place && coll != STRATA_COLL_SCATTERV ? MPI_IN_PLACE : send;
    void *rb = in_place && coll == STRATA_COLL_SCATTERV ? MPI_IN_PLACE : recv;
    void *wb = in_place && coll == STRATA_COLL_SCATTERV ? MPI_IN_PLACE : want;
    int err = MPI_SUCCESS, herr = MPI_SUCCESS;
#ifdef STRATA_HAVE_LARGE_COUNT
    MPI_Count csc[64], crc[64];
    MPI_Aint asd[64], ard[64];
    for (int j = 0; j < n && j < 64; j++) csc[j] = sc[j], crc[j] = rc[j], asd[j] = sd[j], ard[j] = rd[j];
    if (large_form && n <= 64) {
        switch (coll) {
        case STRATA_COLL_GATHERV:
            err = MPI_Gatherv_c(sb, scount, ty->t, recv, crc, ard, ty->t, root, comm);
            herr = PMPI_Gatherv_c(sb, scount, ty->t, want, crc, ard, ty->t, root, comm);
            break;
        case STRATA_COLL_SCATTERV:
            err = MPI_Scatterv_c(send, csc, asd, ty->t, rb, rcount, ty->t, root, comm);
            herr = PMPI_Scatterv_c(send, csc, asd, ty->t, wb, rcount, ty->t, root, comm);
            break;
        case STRATA_COLL_ALLGATHERV:
            err = MPI_Allgatherv_c(sb, scount, ty->t, recv, crc, ard, ty->t, comm);
            herr = PMPI_Allgatherv_c(sb, scount, ty->t, want, crc, ard, ty->t, comm);
            break;
        default:
            err = MPI_Alltoallv_c(sb, csc, asd, ty->t, recv, crc, ard, ty->t, comm);
            herr = PMPI_Alltoallv_c(sb, csc, asd, ty->t, want, crc, ard, ty->t, comm);
        }
    } else
#else
    (void)large_form;
#endif
    switch (coll) {
    case STRATA_COLL_GATHERV:
        err = MPI_Gatherv(sb, scount, ty->t, recv, rc, rd, ty->t, root, comm);
        herr = PMPI_Gatherv(sb, scount, ty->t, want, rc, rd, ty->t, root, comm);
        break;
    case STRATA_COLL_SCATTERV:
        err = MPI_Scatterv(send, sc, sd, ty->t, rb, rcount, ty->t, root, comm);
        herr = PMPI_Scatterv(send, sc, sd, ty->t, wb, rcount, ty->t, root, comm);
        break;
    case STRATA_COLL_ALLGATHERV:
        err = MPI_Allgatherv(sb, scount, ty->t, recv, rc, rd, ty->t, comm);
        herr = PMPI_Allgatherv(sb, scount, ty->t, want, rc, rd, ty->t, comm);
        break;
    default:
        err = MPI_Alltoallv(sb, sc, sd, ty->t, recv, rc, rd, ty->t, comm);
        herr = PMPI_Alltoallv(sb, sc, sd, ty->t, want, rc, rd, ty->t, comm);
    }
    char what[256];
    snprintf(what, sizeof what, "%s %s on %d ranks, %s counts from %d, root %d%s, %s%s, algorithm %s",
             strata_coll_name(coll), large_form ? "(_c)" : "", n, pattern_names[pattern], base,
             root, in_place ? ", in place" : "", ty->name, "", algo ? algo : "model's");
    CHECK(err == MPI_SUCCESS && herr == MPI_SUCCESS, "%s: returned %d (host %d)", what, err, herr);
    /* Gatherv's non-roots and Scatterv's in-place root receive nothing. */
    if (!(coll == STRATA_COLL_GATHERV && me != root)) same(recv, want, rints, what);
    free(sc), free(sd), free(rc), free(rd), free(send), free(recv), free(want);
    cases++;
}

static void run_comm(MPI_Comm comm, const struct type *types, int ntypes, int large)
{
    int n;
    MPI_Comm_size(comm, &n);
    static const int colls[4] = {STRATA_COLL_GATHERV, STRATA_COLL_SCATTERV,
                                 STRATA_COLL_ALLGATHERV, STRATA_COLL_ALLTOALLV};
    /* Elements per block: small, and past the 16 KiB copy-in/copy-out limit
     * (--large: about a MiB); across nodes also none at all. */
    int bases[3] = {3, large ? 300000 : 5000, 0}, nbases = across_nodes ? 3 : 2;
    for (int ci = 0; ci < 4; ci++) {
        int coll = colls[ci], rooted = coll == STRATA_COLL_GATHERV || coll == STRATA_COLL_SCATTERV;
        /* Each algorithm forced in turn (one with a factor also with k = 1:
         * its throttle's turns), then the model's choice (NULL). */
        const char *algos[12];
        static char with_k[4][64];
        int nalgos = 0, nk = 0;
        for (int id = 0; id < STRATA_NALGOS && !model_only; id++) {
            const struct strata_algorithm *al = strata_algorithm(id);
            if (al->coll != coll) continue;
            algos[nalgos++] = al->name;
            if (al->k_meaning && nk < 4) {
                snprintf(with_k[nk], sizeof with_k[nk], "%s:1", al->name);
                algos[nalgos++] = with_k[nk++];
            }
        }
        algos[nalgos++] = NULL;
        for (int ai = 0; ai < nalgos; ai++) {
            char err[256];
            CHECK(!strata_select_force(coll, algos[ai], err, sizeof err), "%s", err);
            for (int pattern = 0; pattern < NPATTERNS; pattern++)
                for (int bi = 0; bi < nbases; bi++)
                    for (int root = 0; root < (rooted ? n : 1); root++) {
                        if (some_roots && root != 0 && root != n - 1) continue;
                        for (int ti = 0; ti < ntypes; ti++)
                            for (int in_place = 0; in_place < 2; in_place++) {
                                /* The _c form on every other case. */
                                int lf = (int)(cases & 1);
                                one_case(comm, coll, pattern, bases[bi], root, in_place,
                                         &types[ti], lf, algos[ai]);
                            }
                    }
        }
        strata_select_force(coll, NULL, NULL, 0);
    }
}

/* Bad arguments on every rank alike get the host MPI's error class: a
 * negative count, a null datatype, a root out of range. */
static void bad_arguments(void)
{
    MPI_Comm comm;
    int n, me;
    PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int *c = calloc(n, sizeof(int)), *d = calloc(n, sizeof(int)), *ok = calloc(n, sizeof(int));
    int buf[64] = {0};
    CHECK(c && d && ok, "out of memory");
    for (int j = 0; j < n; j++) c[j] = ok[j] = 1, d[j] = j;
    c[n - 1] = -1;
    for (int which = 0; which < 4; which++) {
        int err, herr, cls, hcls;
        switch (which) {
        case 0:
            err = MPI_Allgatherv(buf, -1, MPI_INT, buf + 8, ok, d, MPI_INT, comm);
            herr = PMPI_Allgatherv(buf, -1, MPI_INT, buf + 8, ok, d, MPI_INT, comm);
            break;
        case 1:
            err = MPI_Alltoallv(buf, c, d, MPI_DATATYPE_NULL, buf + 8, c, d, MPI_DATATYPE_NULL, comm);
            herr = PMPI_Alltoallv(buf, c, d, MPI_DATATYPE_NULL, buf + 8, c, d, MPI_DATATYPE_NULL, comm);
            break;
        case 2:
            err = MPI_Gatherv(buf, 1, MPI_INT, buf + 8, c, d, MPI_INT, n, comm);
            herr = PMPI_Gatherv(buf, 1, MPI_INT, buf + 8, c, d, MPI_INT, n, comm);
            break;
        default:
            err = MPI_Scatterv(buf, c, d, MPI_INT, buf + 8, 1, MPI_INT, -2, comm);
            herr = PMPI_Scatterv(buf, c, d, MPI_INT, buf + 8, 1, MPI_INT, -2, comm);
        }
        CHECK(herr != MPI_SUCCESS, "case %d: the host MPI accepts it", which);
        MPI_Error_class(err, &cls);
        MPI_Error_class(herr, &hcls);
        CHECK(cls == hcls, "bad arguments, case %d: error class %d, the host MPI's %d", which, cls, hcls);
    }
    (void)me;
    free(c), free(d), free(ok);
    PMPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    int large = 0;
    setenv("STRATA_STATS", "/dev/null", 0); /* to count the routes */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--roots=some")) some_roots = 1;
        else if (!strcmp(argv[i], "--large")) large = 1;
        else if (!strcmp(argv[i], "--model")) model_only = 1;
        else if (!strncmp(argv[i], "--comms=", 8)) comms_opt = argv[i] + 8;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* Virtual nodes, or real ones (namespace hosts, tests/netns.cmake). */
    const char *vnodes = getenv("STRATA_VIRTUAL_NODES");
    struct strata_ctx *wctx = strata_ctx_get(MPI_COMM_WORLD);
    across_nodes = (vnodes && atoi(vnodes) > 1) || (wctx && wctx->hier.nnodes > 1);

    struct type types[2] = {{MPI_INT, 1, 1, "MPI_INT"}, {MPI_DATATYPE_NULL, 3, 2, "vector(2,1,2) of int"}};
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[1].t);
    MPI_Type_commit(&types[1].t);

    unsigned long long served0[STRATA_NCOLLS], host0[STRATA_NCOLLS];
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        served0[c] = strata_stats_local_calls(c, 1);
        host0[c] = strata_stats_local_calls(c, 0);
    }
    long before = 0;
    if (strstr(comms_opt, "world")) {
        run_comm(MPI_COMM_WORLD, types, 2, large);
        if (wrank == 0) printf("world: %ld cases\n", cases - before);
        before = cases;
    }
    if (strstr(comms_opt, "reversed")) {
        MPI_Comm rev;
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev);
        run_comm(rev, types, 1, 0);
        MPI_Comm_free(&rev);
        if (wrank == 0) printf("reversed: %ld cases\n", cases - before);
        before = cases;
    }
    if (strstr(comms_opt, "sub") && wsize > 2) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, wrank == wsize - 1 ? MPI_UNDEFINED : 0, wrank, &sub);
        if (sub != MPI_COMM_NULL) {
            run_comm(sub, types, 1, 0);
            MPI_Comm_free(&sub);
        }
        if (wrank == 0) printf("sub: %ld cases\n", cases - before);
    }
    int single_copy = wctx && wctx->plane && strata_plane_single_copy(wctx->plane);
    /* Every call was served by strata.  Across nodes a communicator whose
     * nodes hold one rank each is the host's, so served calls (under the
     * across-nodes composition) are only required to exist. */
    for (int c = STRATA_COLL_GATHERV; c <= STRATA_COLL_ALLTOALLV; c++) {
        unsigned long long served = strata_stats_local_calls(c, 1) - served0[c];
        unsigned long long host = strata_stats_local_calls(c, 0) - host0[c];
        CHECK(served + host > 0, "%s not counted under its C name", strata_coll_name(c));
        if (across_nodes) {
            CHECK(served > 0, "%s: nothing served by strata across nodes", strata_coll_name(c));
            CHECK(strata_stats_local_algorithm(c, STRATA_STATS_ACROSS_NODES) > 0,
                  "%s: no call counted under the across-nodes composition", strata_coll_name(c));
        } else {
            CHECK(host == 0, "%s: %llu calls went to the host MPI", strata_coll_name(c), host);
            for (int id = 0; id < STRATA_NALGOS; id++)
                if (strata_algorithm(id)->coll == c &&
                    !strata_algorithm_refusal(strata_algorithm(id), wsize, single_copy, 1))
                    CHECK(strata_stats_local_algorithm(c, strata_algorithm(id)->name) > 0,
                          "%s: algorithm %s never ran", strata_coll_name(c),
                          strata_algorithm(id)->name);
            /* The small blocks' copy-in/copy-out runs fused with the layout. */
            CHECK(strata_stats_local_algorithm(c, STRATA_VBLOCK_FUSED_NAME) > 0,
                  "%s: the fused copy-in/copy-out never ran", strata_coll_name(c));
        }
    }
    if (test_errors_return())
        bad_arguments();
    else
        test_skip_errors("bad arguments to the v-collectives");
    MPI_Type_free(&types[1].t);
    if (wrank == 0) printf("%ld cases compared with the host MPI\n", cases);
    test_pass("vcolls");
    MPI_Finalize();
    return 0;
}
