/* Resumable operations (coll/task.h): two collectives on two different
 * communicators, started one after the other and driven by alternating
 * single progress steps from one thread, must both complete with the host
 * MPI's result.  A progress step that waited inside (instead of returning
 * "not yet") would deadlock here: this rank would sit in operation A while
 * a peer sits in operation B, each waiting for the other's flags, and the
 * test's timeout catches it.
 *
 *   test_task_alternate [--colls=LIST] [--sizes=LIST]
 *
 * Every converted operation (bcast, barrier, allreduce-tiny, reduce, allreduce,
 * and "block": every block algorithm with a resumable form; across virtual
 * nodes net-bcast, net-barrier, net-block (Gather, Scatter, Allgather, and
 * Gatherv, Scatterv, Allgatherv, Alltoallv on uniform layouts),
 * net-reduce and net-allreduce, the compositions; reduce-scatter, scan,
 * exscan and their net- forms) at every size of the list (by
 * default sizes on both sides of the copy-in/copy-out limit, so that both the
 * segment and the single-copy paths run), with the first and last rank as
 * roots, on MPI_COMM_WORLD's duplicate and a reversed split.  Each result is
 * compared with the same collective run through PMPI_ on the same
 * communicator.  Finally the test asserts that progress did return "not
 * yet" somewhere (otherwise nothing was alternated). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/block.h"
#include "coll/coll.h"
#include "coll/task.h"
#include "coll/ops.h"
#include "context/context.h"
#include "net/net.h"
#include "route/route.h"
#include "shm/flags.h"
#include "testutil.h"

enum { COLL_BCAST, COLL_BARRIER, COLL_ALLREDUCE_TINY, COLL_REDUCE, COLL_ALLREDUCE, COLL_BLOCK,
       COLL_NET_BCAST, COLL_NET_BARRIER, COLL_NET_BLOCK, COLL_NET_REDUCE, COLL_NET_ALLREDUCE,
       COLL_RS, COLL_SCAN, COLL_EXSCAN, COLL_NET_RS, COLL_NET_SCAN, COLL_NET_EXSCAN, NCOLLS };
static const char *coll_names[NCOLLS] = {"bcast", "barrier", "allreduce-tiny", "reduce",
                                         "allreduce", "block", "net-bcast", "net-barrier",
                                         "net-block", "net-reduce", "net-allreduce",
                                         "reduce-scatter", "scan", "exscan", "net-reduce-scatter",
                                         "net-scan", "net-exscan"};

/* Reduce_scatter (Reduce_scatter_block's counts), Scan, Exscan, in a node
 * or across nodes. */
static int rs_scan_coll(int c)
{
    return c >= COLL_RS && c <= COLL_NET_EXSCAN;
}

/* One operation in flight on one communicator, with its buffers. */
struct slot {
    MPI_Comm comm;
    struct strata_ctx *ctx;
    struct strata_plane *plane;
    int rank, size, coll, root;
    size_t bytes;
    unsigned seed;
    unsigned char *buf;
    union {
        struct strata_bcast_task bcast;
        struct strata_barrier_task barrier;
        struct strata_tiny_task tiny;
        struct strata_reduce_task reduce;
        struct strata_block_task block;
        struct strata_net_bcast_task net_bcast;
        struct strata_net_barrier_task net_barrier;
        struct strata_net_block_task net_block;
        struct strata_net_reduce_task net_reduce;
        struct strata_rs_task rs;
        struct strata_scan_task scan;
        struct strata_net_rs_task net_rs;
        struct strata_net_scan_task net_scan;
        struct strata_net_v_task net_v;
    } u;
    size_t *counts;  /* Reduce_scatter: every rank's block */
    int bcoll;                         /* COLL_BLOCK, COLL_NET_BLOCK: enum strata_coll */
    const struct strata_algorithm *al; /* COLL_BLOCK: the block algorithm */
    int vcoll;                         /* COLL_NET_BLOCK: run as this v-collective (0: none) */
    size_t *lay;                       /* ... its layout, uniform: [4 * size] */
    struct strata_vlayout vl;
    unsigned char *bsend;              /* ... its send buffer */
    int *send;       /* reductions: this rank's operand (count ints) */
    size_t count;
    struct strata_task *op;
    int done;
};

static unsigned char pattern(unsigned seed, size_t i)
{
    return (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static void start(struct slot *s)
{
    s->done = 0;
    switch (s->coll) {
    case COLL_BCAST:
    case COLL_NET_BCAST:
        s->buf = malloc(s->bytes ? s->bytes : 1);
        CHECK(s->buf, "out of memory");
        for (size_t i = 0; i < s->bytes; i++)
            s->buf[i] = s->rank == s->root ? pattern(s->seed, i) : 0xee;
        if (s->coll == COLL_NET_BCAST) {
            strata_net_bcast_start(&s->u.net_bcast, s->ctx->net, s->buf, s->bytes, s->root, NULL, 0);
            s->op = &s->u.net_bcast.op;
        } else {
            strata_bcast_start(&s->u.bcast, s->plane, s->buf, s->bytes, s->root);
            s->op = &s->u.bcast.op;
        }
        break;
    case COLL_NET_BARRIER:
        s->buf = NULL;
        strata_net_barrier_start(&s->u.net_barrier, s->ctx->net);
        s->op = &s->u.net_barrier.op;
        break;
    case COLL_BARRIER:
        s->buf = NULL;
        strata_barrier_start(&s->u.barrier, s->plane);
        s->op = &s->u.barrier.op;
        break;
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
    case COLL_NET_REDUCE:
    case COLL_NET_ALLREDUCE:
    case COLL_ALLREDUCE_TINY: {
        /* MPI_INT sums: bit-identical to the host's whatever the order. */
        s->send = malloc(sizeof(int) * s->count);
        s->buf = malloc(sizeof(int) * s->count);
        CHECK(s->send && s->buf, "out of memory");
        for (size_t i = 0; i < s->count; i++) s->send[i] = (int)(pattern(s->seed, i) * (s->rank + 1));
        struct strata_reduce_args a = {.sendbuf = s->send, .recvbuf = s->buf, .count = s->count,
                                       .extent = sizeof(int), .true_extent = sizeof(int),
                                       .fn = strata_reduce_kernel(MPI_SUM, MPI_INT),
                                       .root = s->coll == COLL_REDUCE || s->coll == COLL_NET_REDUCE
                                                   ? s->root : -1};
        CHECK(a.fn, "no MPI_SUM kernel for MPI_INT");
        memset(s->buf, 0xee, sizeof(int) * s->count);
        if (s->coll == COLL_ALLREDUCE_TINY) {
            strata_allreduce_tiny_start(&s->u.tiny, s->plane, &a);
            s->op = &s->u.tiny.op;
        } else if (s->coll == COLL_NET_REDUCE || s->coll == COLL_NET_ALLREDUCE) {
            strata_net_reduce_start(&s->u.net_reduce, s->ctx->net, &a, NULL, 0);
            s->op = &s->u.net_reduce.op;
        } else {
            strata_reduce_start(&s->u.reduce, s->plane, &a);
            s->op = &s->u.reduce.op;
        }
        break;
    }
    case COLL_RS:
    case COLL_SCAN:
    case COLL_EXSCAN:
    case COLL_NET_RS:
    case COLL_NET_SCAN:
    case COLL_NET_EXSCAN: {
        /* MPI_INT sums; Reduce_scatter: count ints per rank's block. */
        int rs = s->coll == COLL_RS || s->coll == COLL_NET_RS;
        size_t nsend = rs ? s->count * (size_t)s->size : s->count;
        s->send = malloc(sizeof(int) * nsend);
        s->buf = malloc(sizeof(int) * s->count);
        s->counts = malloc(sizeof(size_t) * (size_t)s->size);
        CHECK(s->send && s->buf && s->counts, "out of memory");
        for (size_t i = 0; i < nsend; i++) s->send[i] = (int)(pattern(s->seed, i) * (s->rank + 1));
        for (int q = 0; q < s->size; q++) s->counts[q] = s->count;
        memset(s->buf, 0xee, sizeof(int) * s->count);
        struct strata_reduce_args a = {.sendbuf = s->send, .recvbuf = s->buf, .count = nsend,
                                       .extent = sizeof(int), .true_extent = sizeof(int),
                                       .fn = strata_reduce_kernel(MPI_SUM, MPI_INT), .root = -1};
        struct strata_rs_args ra = {a, s->counts, STRATA_COLL_REDUCE_SCATTER_BLOCK};
        int exclusive = s->coll == COLL_EXSCAN || s->coll == COLL_NET_EXSCAN;
        switch (s->coll) {
        case COLL_RS:
            strata_reduce_scatter_start(&s->u.rs, s->plane, &ra);
            s->op = &s->u.rs.op;
            break;
        case COLL_NET_RS:
            strata_net_reduce_scatter_start(&s->u.net_rs, s->ctx->net, &ra, NULL, 0);
            s->op = &s->u.net_rs.op;
            break;
        case COLL_NET_SCAN:
        case COLL_NET_EXSCAN:
            strata_net_scan_start(&s->u.net_scan, s->ctx->net, &a, exclusive, NULL, 0);
            s->op = &s->u.net_scan.op;
            break;
        default:
            strata_scan_start(&s->u.scan, s->plane, &a, exclusive);
            s->op = &s->u.scan.op;
            break;
        }
        break;
    }
    case COLL_NET_BLOCK:
    case COLL_BLOCK: {
        /* Send: size blocks at the root of Scatter and for Alltoall, one
         * block otherwise; every byte tells its sender, block and place. */
        int many = s->bcoll == STRATA_COLL_SCATTER || s->bcoll == STRATA_COLL_ALLTOALL;
        int bcast = s->bcoll == STRATA_COLL_BCAST;
        size_t nsend = many ? (size_t)s->size * s->bytes : s->bytes;
        size_t nrecv = bcast || (many && s->bcoll == STRATA_COLL_SCATTER)
                           ? s->bytes : (size_t)s->size * s->bytes;
        s->bsend = malloc(nsend ? nsend : 1);
        s->buf = malloc(nrecv ? nrecv : 1);
        CHECK(s->bsend && s->buf, "out of memory");
        for (size_t i = 0; i < nsend; i++) s->bsend[i] = pattern(s->seed + (unsigned)s->rank, i);
        memset(s->buf, 0xee, nrecv);
        /* Bcast: the payload is recv (== send), the root's pattern. */
        if (bcast && s->rank == s->root) memcpy(s->buf, s->bsend, nrecv);
        struct strata_block_args a = {.send = bcast ? s->buf : s->bsend, .recv = s->buf,
                                      .block = s->bytes, .root = s->root,
                                      .k = s->coll == COLL_BLOCK ? s->al->k_default : 1};
        if (s->bcoll == STRATA_COLL_ALLGATHER || s->bcoll == STRATA_COLL_ALLTOALL)
            a.root = -1;
        if (s->coll == COLL_NET_BLOCK && s->vcoll) {
            /* The v-composition on the uniform layout: the block result. */
            size_t n = (size_t)s->size, *l = s->lay = calloc(4 * n, sizeof(size_t));
            CHECK(l, "out of memory");
            s->vl = (struct strata_vlayout){l, l + n, l + 2 * n, l + 3 * n, NULL, NULL};
            for (int q = 0; q < s->size && s->vcoll == STRATA_COLL_ALLTOALLV; q++) {
                l[q] = l[2 * n + q] = s->bytes; /* out_len, in_len */
                l[n + q] = l[3 * n + q] = (size_t)q * s->bytes;
            }
            for (int q = 0; q < s->size && s->vcoll != STRATA_COLL_ALLTOALLV; q++) {
                int gather = s->vcoll != STRATA_COLL_SCATTERV;
                int all = s->vcoll == STRATA_COLL_ALLGATHERV;
                if (gather && (all || q == s->root)) l[q] = s->bytes; /* out_len */
                if (gather && (all || s->rank == s->root))
                    l[2 * n + q] = s->bytes, l[3 * n + q] = (size_t)q * s->bytes;
                if (!gather && s->rank == s->root)
                    l[q] = s->bytes, l[n + q] = (size_t)q * s->bytes;
                if (!gather && q == s->root) l[2 * n + q] = s->bytes;
            }
            a.v = &s->vl;
            strata_net_vblock_start(&s->u.net_v, s->ctx->net, s->vcoll, &a, NULL, 0);
            s->op = &s->u.net_v.op;
        } else if (s->coll == COLL_NET_BLOCK) {
            strata_net_block_start(&s->u.net_block, s->ctx->net, s->bcoll, &a, NULL, 0);
            s->op = &s->u.net_block.op;
        } else {
            strata_block_starter((int)s->al->id)(&s->u.block, s->plane, &a);
            s->op = &s->u.block.op;
        }
        break;
    }
    }
}

/* Compares with the host MPI's result on the same communicator. */
static void check(struct slot *s, const char *what)
{
    switch (s->coll) {
    case COLL_NET_BCAST:
    case COLL_BCAST: {
        unsigned char *want = malloc(s->bytes ? s->bytes : 1);
        CHECK(want, "out of memory");
        for (size_t i = 0; i < s->bytes; i++)
            want[i] = s->rank == s->root ? pattern(s->seed, i) : 0;
        PMPI_Bcast(want, (int)s->bytes, MPI_BYTE, s->root, s->comm);
        for (size_t i = 0; i < s->bytes; i++)
            CHECK(s->buf[i] == want[i], "%s: bcast of %zu bytes from %d: byte %zu is %d, "
                  "PMPI_Bcast gives %d", what, s->bytes, s->root, i, s->buf[i], want[i]);
        free(want);
        break;
    }
    case COLL_REDUCE:
    case COLL_ALLREDUCE:
    case COLL_NET_REDUCE:
    case COLL_NET_ALLREDUCE:
    case COLL_ALLREDUCE_TINY: {
        int *want = malloc(sizeof(int) * s->count);
        CHECK(want, "out of memory");
        int rooted = s->coll == COLL_REDUCE || s->coll == COLL_NET_REDUCE;
        if (rooted)
            PMPI_Reduce(s->send, want, (int)s->count, MPI_INT, MPI_SUM, s->root, s->comm);
        else
            PMPI_Allreduce(s->send, want, (int)s->count, MPI_INT, MPI_SUM, s->comm);
        for (size_t i = 0; (!rooted || s->rank == s->root) && i < s->count; i++)
            CHECK(((int *)s->buf)[i] == want[i], "%s: allreduce of %zu ints: element %zu is %d, "
                  "PMPI_Allreduce gives %d", what, s->count, i, ((int *)s->buf)[i], want[i]);
        free(want);
        free(s->send);
        s->send = NULL;
        break;
    }
    case COLL_RS:
    case COLL_SCAN:
    case COLL_EXSCAN:
    case COLL_NET_RS:
    case COLL_NET_SCAN:
    case COLL_NET_EXSCAN: {
        int *want = malloc(sizeof(int) * s->count + 1);
        CHECK(want, "out of memory");
        int n = (int)s->count, judged = 1;
        if (s->coll == COLL_RS || s->coll == COLL_NET_RS) {
            PMPI_Reduce_scatter_block(s->send, want, n, MPI_INT, MPI_SUM, s->comm);
        } else if (s->coll == COLL_SCAN || s->coll == COLL_NET_SCAN) {
            PMPI_Scan(s->send, want, n, MPI_INT, MPI_SUM, s->comm);
        } else {
            PMPI_Exscan(s->send, want, n, MPI_INT, MPI_SUM, s->comm);
            judged = s->rank > 0; /* undefined at rank 0 */
        }
        for (size_t i = 0; judged && i < s->count; i++)
            CHECK(((int *)s->buf)[i] == want[i], "%s: %zu ints: element %zu is %d, the host MPI "
                  "gives %d", what, s->count, i, ((int *)s->buf)[i], want[i]);
        free(want);
        free(s->send);
        free(s->counts);
        s->send = NULL;
        s->counts = NULL;
        break;
    }
    case COLL_NET_BLOCK:
    case COLL_BLOCK: {
        int many = s->bcoll == STRATA_COLL_SCATTER || s->bcoll == STRATA_COLL_ALLTOALL;
        int bcast = s->bcoll == STRATA_COLL_BCAST;
        size_t nrecv = bcast || (many && s->bcoll == STRATA_COLL_SCATTER)
                           ? s->bytes : (size_t)s->size * s->bytes;
        unsigned char *want = malloc(nrecv ? nrecv : 1);
        CHECK(want, "out of memory");
        int n = (int)s->bytes, judged = 1;
        switch (s->bcoll) {
        case STRATA_COLL_GATHER:
            PMPI_Gather(s->bsend, n, MPI_BYTE, want, n, MPI_BYTE, s->root, s->comm);
            judged = s->rank == s->root;
            break;
        case STRATA_COLL_SCATTER:
            PMPI_Scatter(s->bsend, n, MPI_BYTE, want, n, MPI_BYTE, s->root, s->comm);
            break;
        case STRATA_COLL_ALLGATHER:
            PMPI_Allgather(s->bsend, n, MPI_BYTE, want, n, MPI_BYTE, s->comm);
            break;
        case STRATA_COLL_BCAST:
            memcpy(want, s->bsend, nrecv); /* significant at the root only */
            PMPI_Bcast(want, n, MPI_BYTE, s->root, s->comm);
            break;
        default:
            PMPI_Alltoall(s->bsend, n, MPI_BYTE, want, n, MPI_BYTE, s->comm);
            break;
        }
        for (size_t i = 0; judged && i < nrecv; i++)
            CHECK(s->buf[i] == want[i], "%s: byte %zu is %d, the host MPI gives %d", what, i,
                  s->buf[i], want[i]);
        free(want);
        free(s->bsend);
        free(s->lay);
        s->bsend = NULL;
        s->lay = NULL;
        break;
    }
    case COLL_NET_BARRIER:
    case COLL_BARRIER:
        /* Nothing to compare: completing on every rank (without deadlock)
         * is the result; the host's barrier keeps the next case apart. */
        PMPI_Barrier(s->comm);
        break;
    }
    free(s->buf);
    s->buf = NULL;
}

/* strata's context of comm: a node data plane, or (virtual nodes) a view
 * across nodes. */
static struct strata_ctx *ctx_of(MPI_Comm comm)
{
    MPI_Barrier(comm); /* creates strata's context on the first collective */
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx && (ctx->plane || ctx->net), "strata does not serve the communicator (%s)",
          ctx ? ctx->plane_why : "no context");
    return ctx;
}

static unsigned parse_colls(const char *list)
{
    unsigned set = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < NCOLLS; i++)
            if (!strcmp(t, coll_names[i])) found = i;
        CHECK(found >= 0, "--colls: unknown collective %s", t);
        set |= 1u << found;
    }
    return set;
}

/* Starts a then b, drives both by alternating single progress steps (odd
 * ranks begin with b) until both are done, and checks both results.
 * Returns the number of steps that said "not yet". */
static long alternate(struct slot *a, struct slot *b, int wrank, const char *what)
{
    long pending = 0;
    start(a);
    start(b);
    struct slot *order[2] = {wrank % 2 ? b : a, wrank % 2 ? a : b};
    unsigned long round = 0;
    while (!a->done || !b->done) {
        int moved = 0;
        for (int k = 0; k < 2; k++) {
            struct slot *s = order[k];
            if (s->done) continue;
            int rc = strata_task_step(s->op);
            if (rc == STRATA_TASK_PENDING) {
                pending++;
            } else {
                CHECK(rc == MPI_SUCCESS, "%s: progress failed (%d)", what, rc);
                s->done = 1;
                moved = 1;
            }
        }
        /* Yield now and then: more ranks than cores must progress. */
        if (!moved) strata_backoff(round++);
    }
    check(a, what);
    check(b, what);
    return pending;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    unsigned colls = (1u << NCOLLS) - 1;
    size_t sizes[32] = {8, 100, 4096, 16384, 16385, 65536 + 3, (1u << 20) + 5};
    int nsizes = 7;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--colls=", 8)) {
            colls = parse_colls(argv[i] + 8);
        } else if (!strncmp(argv[i], "--sizes=", 8)) {
            nsizes = 0;
            char *p = argv[i] + 8;
            while (*p && nsizes < 32) {
                sizes[nsizes++] = strtoull(p, &p, 0);
                if (*p == ',') p++;
            }
        } else {
            CHECK(0, "unknown option %s", argv[i]);
        }
    }
    CHECK(wsize >= 2, "run with 2 ranks or more");

    struct slot a = {0}, b = {0};
    MPI_Comm_dup(MPI_COMM_WORLD, &a.comm);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - 1 - wrank, &b.comm);
    a.ctx = ctx_of(a.comm);
    b.ctx = ctx_of(b.comm);
    a.plane = a.ctx->plane;
    b.plane = b.ctx->plane;
    /* Across nodes: the compositions; inside one node: the node operations. */
    int across = a.ctx->net != NULL;
    CHECK(across == (b.ctx->net != NULL), "one communicator spans nodes, the other not");
    unsigned net_colls = (1u << COLL_NET_BCAST) | (1u << COLL_NET_BARRIER) | (1u << COLL_NET_BLOCK) |
                         (1u << COLL_NET_REDUCE) | (1u << COLL_NET_ALLREDUCE) |
                         (1u << COLL_NET_RS) | (1u << COLL_NET_SCAN) | (1u << COLL_NET_EXSCAN);
    if (across) colls &= net_colls;
    else colls &= ~net_colls;
    /* Scan across nodes needs nodes of consecutive ranks (the router sends
     * the others to the host MPI). */
    for (int k = 0; across && k < 2; k++) {
        const struct strata_net *net = (k ? b.ctx : a.ctx)->net;
        for (int n = 0; n < net->nnodes; n++)
            if (!net->contiguous[n]) colls &= ~((1u << COLL_NET_SCAN) | (1u << COLL_NET_EXSCAN));
    }
    MPI_Comm_rank(a.comm, &a.rank);
    MPI_Comm_size(a.comm, &a.size);
    MPI_Comm_rank(b.comm, &b.rank);
    MPI_Comm_size(b.comm, &b.size);

    long pending = 0, cases = 0;
    for (int c = 0; c < NCOLLS; c++) {
        if (!(colls & (1u << c)) || c == COLL_BLOCK || c == COLL_NET_BLOCK) continue;
        int sized = c == COLL_BCAST || c == COLL_NET_BCAST;
        /* Tiny Allreduce: 1, 3 and the most ints a flag line holds. */
        size_t tiny_counts[3] = {1, 3, STRATA_TINY_MAX / sizeof(int)};
        /* Reductions: one tiny Allreduce, copy-in/copy-out (up to 16 KiB by
         * default), single copy (or segment rounds) of one and of two
         * reduction chunks (256 KiB). */
        size_t red_counts[4] = {3, 1000, 4097, 70001};
        int reduction = c == COLL_REDUCE || c == COLL_ALLREDUCE || c == COLL_NET_REDUCE ||
                        c == COLL_NET_ALLREDUCE || rs_scan_coll(c);
        const size_t *counts = reduction ? red_counts : tiny_counts;
        int ncases = sized ? nsizes : c == COLL_ALLREDUCE_TINY ? 3 : reduction ? 4 : 1;
        for (int si = 0; si < ncases; si++) {
            for (int ri = 0; ri < 2; ri++) {
                a.coll = b.coll = c;
                a.bytes = b.bytes = sized ? sizes[si] : 0;
                a.count = b.count = c == COLL_ALLREDUCE_TINY || reduction ? counts[si] : 0;
                a.root = ri ? a.size - 1 : 0;
                b.root = ri ? 0 : b.size / 2; /* another rank than a's */
                a.seed = (unsigned)(si * 4 + ri);
                b.seed = a.seed + 2;
                char what[128];
                snprintf(what, sizeof what, "%s, %zu bytes (%zu elements), roots %d/%d, dup then "
                         "reversed", coll_names[c], a.bytes, a.count, a.root, b.root);
                pending += alternate(&a, &b, wrank, what);
                cases++;
            }
        }
        if (wrank == 0) printf("PASS %s alternated on two communicators\n", coll_names[c]);
    }
    /* Every block algorithm that has a resumable form and can run here, at
     * block sizes below and above the copy-in/copy-out limit. */
    size_t blocks[3] = {8, 3001, 70001};
    for (int id = 0; (colls & (1u << COLL_BLOCK)) && id < STRATA_NALGOS; id++) {
        const struct strata_algorithm *al = strata_algorithm((enum strata_algo)id);
        CHECK(strata_block_starter(id), "algorithm %s has no resumable form", al->name);
        if (strata_algorithm_refusal(al, a.size, strata_plane_single_copy(a.plane),
                                     al->k_default)) {
            if (wrank == 0) printf("SKIP %s: refused here\n", al->name);
            continue;
        }
        for (int si = 0; si < 3; si++) {
            a.coll = b.coll = COLL_BLOCK;
            a.al = b.al = al;
            /* A v-algorithm runs the uniform layout (block.h: a->v NULL):
             * its result is the block collective's. */
            a.bcoll = b.bcoll = al->coll == STRATA_COLL_GATHERV      ? STRATA_COLL_GATHER
                                : al->coll == STRATA_COLL_SCATTERV   ? STRATA_COLL_SCATTER
                                : al->coll == STRATA_COLL_ALLGATHERV ? STRATA_COLL_ALLGATHER
                                : al->coll == STRATA_COLL_ALLTOALLV  ? STRATA_COLL_ALLTOALL
                                                                     : al->coll;
            a.bytes = b.bytes = blocks[si];
            a.root = si % 2 ? a.size - 1 : 0;
            b.root = b.size / 2;
            a.seed = (unsigned)si;
            b.seed = a.seed + 5;
            char what[160];
            snprintf(what, sizeof what, "%s %s, %zu-byte blocks, roots %d/%d",
                     strata_coll_name(al->coll), al->name, a.bytes, a.root, b.root);
            pending += alternate(&a, &b, wrank, what);
            cases++;
        }
        if (wrank == 0)
            printf("PASS %s %s alternated on two communicators\n", strata_coll_name(al->coll),
                   al->name);
    }
    /* Across nodes: Gather, Scatter and Allgather compositions, then
     * Gatherv, Scatterv, Allgatherv and Alltoallv's (net_vblock.c) on
     * uniform layouts, whose results are their block counterparts'. */
    const int net_block_colls[7] = {STRATA_COLL_GATHER, STRATA_COLL_SCATTER,
                                    STRATA_COLL_ALLGATHER, STRATA_COLL_GATHERV,
                                    STRATA_COLL_SCATTERV, STRATA_COLL_ALLGATHERV,
                                    STRATA_COLL_ALLTOALLV};
    const int net_block_of[7] = {STRATA_COLL_GATHER, STRATA_COLL_SCATTER, STRATA_COLL_ALLGATHER,
                                 STRATA_COLL_GATHER, STRATA_COLL_SCATTER, STRATA_COLL_ALLGATHER,
                                 STRATA_COLL_ALLTOALL};
    for (int ci = 0; (colls & (1u << COLL_NET_BLOCK)) && ci < 7; ci++) {
        for (int si = 0; si < 3; si++) {
            a.coll = b.coll = COLL_NET_BLOCK;
            a.vcoll = b.vcoll = ci < 3 ? 0 : net_block_colls[ci];
            a.bcoll = b.bcoll = net_block_of[ci];
            a.bytes = b.bytes = blocks[si];
            a.root = si % 2 ? a.size - 1 : 0;
            b.root = b.size / 2;
            a.seed = (unsigned)si;
            b.seed = a.seed + 5;
            char what[160];
            snprintf(what, sizeof what, "across nodes %s, %zu-byte blocks, roots %d/%d",
                     strata_coll_name(net_block_colls[ci]), a.bytes, a.root, b.root);
            pending += alternate(&a, &b, wrank, what);
            cases++;
        }
        if (wrank == 0)
            printf("PASS across nodes %s alternated on two communicators\n",
                   strata_coll_name(net_block_colls[ci]));
    }
    /* Some step must have returned "not yet" somewhere, or nothing was
     * really interleaved (e.g. a progress function that spins inside). */
    long all_pending = 0;
    MPI_Allreduce(&pending, &all_pending, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_pending > 0, "no progress step ever returned STRATA_TASK_PENDING in %ld cases", cases);
    if (wrank == 0) printf("%ld cases, %ld steps returned not-yet\n", cases, all_pending);
    MPI_Comm_free(&a.comm);
    MPI_Comm_free(&b.comm);
    test_pass("operations alternated on two communicators");
    MPI_Finalize();
    return 0;
}
