/* Faults provoked from inside a job (driven by tests/scripts/fault_*.sh).
 *
 *   test_faults --cma-refused=WHEN [--refuse-rank=R] [--bytes=B]
 *     Makes the kernel refuse Cross-Memory Attach to this job's ranks: the
 *     chosen ranks (default: all) become non-dumpable (prctl) and every rank
 *     drops CAP_SYS_PTRACE, which root would otherwise keep.  WHEN is
 *       before-init  before MPI_Init (strata's start-up probe must see it);
 *       after-init   after MPI_Init, before the first collective;
 *       before-dup   after collectives on MPI_COMM_WORLD, before the first
 *                    collective of a new communicator, which then does the
 *                    checked collectives;
 *       mid          after collectives on MPI_COMM_WORLD, which goes on:
 *                    its next copy is refused in the middle of a collective
 *                    strata set up with CMA (the job must stop with a
 *                    message naming the refusal, not hang nor go on wrong).
 *     Except in "mid", the collectives after the change must give right
 *     results through strata's shared-memory path with CMA off (asserted).
 *     The host MPI must not use CMA itself (the script sees to it).
 *
 *   test_faults --loop=SECONDS [--bytes=B] [--nonblocking]
 *     Prints "PIDS p0 p1 ..." and "LOOPING", then runs checked Bcasts and
 *     Allreduces of B bytes for SECONDS (--nonblocking: an Ibcast and an
 *     Iallreduce outstanding together, then one Waitall): a script kills one
 *     rank meanwhile and watches what the others do.  Exits 0 if nothing
 *     happened. */
#include <errno.h>
#include <linux/capability.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "context/context.h"
#include "testutil.h"

static int rank, size;
static size_t bytes = 4 << 20;

/* This process's rank before MPI_Init, from the launcher's environment. */
static int launcher_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMI_RANK");
    return r ? atoi(r) : -1;
}

/* Non-dumpable if chosen, and without CAP_SYS_PTRACE (effective and
 * permitted, so it cannot come back) in any case. */
static void refuse_cma(int me, int refuse_rank)
{
    if (refuse_rank < 0 || refuse_rank == me)
        CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, "prctl: %s", strerror(errno));
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    CHECK(syscall(SYS_capget, &head, data) == 0, "capget: %s", strerror(errno));
    data[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    data[CAP_SYS_PTRACE / 32].permitted &= ~(1u << (CAP_SYS_PTRACE % 32));
    CHECK(syscall(SYS_capset, &head, data) == 0, "capset: %s", strerror(errno));
}

static unsigned char pattern(size_t i, int seed) { return (unsigned char)(i * 131 + seed * 7 + 1); }

/* Checked Bcast (every root), Allreduce, Allgather, Gather, Scatter and
 * Alltoall of about `bytes` on comm. */
static void checked_collectives(MPI_Comm comm, const char *what)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    unsigned char *buf = malloc(bytes);
    size_t count = bytes / sizeof(int);
    int *in = malloc(count * sizeof(int)), *out = malloc(count * sizeof(int));
    CHECK(buf && in && out, "out of memory");
    for (int root = 0; root < n; root++) {
        for (size_t i = 0; i < bytes; i++) buf[i] = r == root ? pattern(i, root) : 0;
        CHECK(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm) == MPI_SUCCESS, "Bcast");
        for (size_t i = 0; i < bytes; i++)
            CHECK(buf[i] == pattern(i, root), "%s: Bcast from %d: byte %zu is %d, expected %d",
                  what, root, i, buf[i], pattern(i, root));
    }
    for (size_t i = 0; i < count; i++) in[i] = (int)(i % 1000) + r;
    CHECK(MPI_Allreduce(in, out, (int)count, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS, "Allreduce");
    for (size_t i = 0; i < count; i++)
        CHECK(out[i] == n * (int)(i % 1000) + n * (n - 1) / 2, "%s: Allreduce: element %zu is %d",
              what, i, out[i]);
    /* Block collectives: count / n ints per rank. */
    size_t block = count / (size_t)n;
    for (size_t i = 0; i < block * (size_t)n; i++) in[i] = r * 100000 + (int)i;
    CHECK(MPI_Allgather(in, (int)block, MPI_INT, out, (int)block, MPI_INT, comm) == MPI_SUCCESS,
          "Allgather");
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < block; i++)
            CHECK(out[(size_t)q * block + i] == q * 100000 + (int)i,
                  "%s: Allgather: element %zu of rank %d is %d", what, i, q,
                  out[(size_t)q * block + i]);
    CHECK(MPI_Alltoall(in, (int)(block / (size_t)n), MPI_INT, out, (int)(block / (size_t)n),
                       MPI_INT, comm) == MPI_SUCCESS, "Alltoall");
    size_t piece = block / (size_t)n;
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < piece; i++)
            CHECK(out[(size_t)q * piece + i] == q * 100000 + (int)((size_t)r * piece + i),
                  "%s: Alltoall: element %zu from rank %d is %d", what, i, q,
                  out[(size_t)q * piece + i]);
    CHECK(MPI_Gather(in, (int)block, MPI_INT, out, (int)block, MPI_INT, n - 1, comm) ==
          MPI_SUCCESS, "Gather");
    if (r == n - 1)
        for (int q = 0; q < n; q++)
            CHECK(out[(size_t)q * block] == q * 100000, "%s: Gather: block of rank %d is wrong",
                  what, q);
    CHECK(MPI_Scatter(in, (int)block, MPI_INT, out, (int)block, MPI_INT, 0, comm) == MPI_SUCCESS,
          "Scatter");
    for (size_t i = 0; i < block; i++)
        CHECK(out[i] == (int)((size_t)r * block + i), "%s: Scatter: element %zu is %d", what, i,
              out[i]);
    free(buf);
    free(in);
    free(out);
}

/* strata serves comm through its shared segment, with CMA on or off. */
static void check_plane(MPI_Comm comm, int want_cma, const char *what)
{
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx && ctx->plane, "%s: strata must serve it through its segment: %s", what,
          ctx ? ctx->plane_why : "no context");
    CHECK(strata_plane_single_copy(ctx->plane) == want_cma, "%s: CMA is %s, expected %s", what,
          strata_plane_single_copy(ctx->plane) ? "on" : "off", want_cma ? "on" : "off");
}

static int nonblocking; /* --nonblocking: the loop's calls are MPI_Ibcast + MPI_Iallreduce */

static void loop(double seconds)
{
    int *pids = malloc(sizeof(int) * (size_t)size), me = (int)getpid();
    CHECK(pids, "out of memory");
    MPI_Gather(&me, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("PIDS");
        for (int r = 0; r < size; r++) printf(" %d", pids[r]);
        printf("\nLOOPING\n");
        fflush(stdout);
    }
    free(pids);
    unsigned char *buf = malloc(bytes);
    size_t count = bytes / sizeof(double);
    double *in = malloc(count * sizeof(double)), *out = malloc(count * sizeof(double));
    CHECK(buf && in && out, "out of memory");
    for (size_t i = 0; i < count; i++) in[i] = (double)(i % 64);
    double end = MPI_Wtime() + seconds;
    for (int iter = 0;; iter++) {
        /* Rank 0 decides when to stop, so every rank runs the same calls. */
        int go = MPI_Wtime() < end;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go) break;
        int root = iter % size;
        if (rank == root) memset(buf, iter & 0xff, bytes);
        if (nonblocking) {
            /* Both outstanding at once, completed together (issue 17):
             * the survivors notice a death through their progress loop. */
            MPI_Request req[2];
            MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: MPICH's headers warn of it */
            MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD, &req[0]);
            MPI_Iallreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, st);
        } else {
            MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
            MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        CHECK(buf[bytes - 1] == (unsigned char)(iter & 0xff), "Bcast %d: wrong data", iter);
        CHECK(out[count - 1] == (double)size * (double)((count - 1) % 64),
              "Allreduce %d: wrong data", iter);
    }
    free(buf);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    const char *when = NULL;
    double loop_seconds = -1;
    int refuse_rank = -1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--cma-refused=", 14)) when = argv[i] + 14;
        else if (!strncmp(argv[i], "--refuse-rank=", 14)) refuse_rank = atoi(argv[i] + 14);
        else if (!strncmp(argv[i], "--bytes=", 8)) bytes = strtoull(argv[i] + 8, NULL, 10);
        else if (!strncmp(argv[i], "--loop=", 7)) loop_seconds = atof(argv[i] + 7);
        else if (!strcmp(argv[i], "--nonblocking")) nonblocking = 1;
        else {
            fprintf(stderr, "test_faults: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (when && !strcmp(when, "before-init")) refuse_cma(launcher_rank(), refuse_rank);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "run with 2 ranks or more");
    if (loop_seconds >= 0) {
        loop(loop_seconds);
        test_pass("loop (nothing was killed)");
        MPI_Finalize();
        return 0;
    }
    CHECK(when, "give --cma-refused=WHEN or --loop=SECONDS");
    if (!strcmp(when, "before-init")) {
        checked_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        check_plane(MPI_COMM_WORLD, 0, "MPI_COMM_WORLD");
    } else if (!strcmp(when, "after-init")) {
        refuse_cma(rank, refuse_rank);
        checked_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        check_plane(MPI_COMM_WORLD, 0, "MPI_COMM_WORLD");
    } else if (!strcmp(when, "before-dup") || !strcmp(when, "mid")) {
        checked_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD before the change");
        struct strata_ctx *world = strata_ctx_get(MPI_COMM_WORLD);
        if (world && world->plane && !strata_plane_single_copy(world->plane)) {
            /* The same on every rank: the verdict is agreed. */
            if (rank == 0) printf("SKIP: strata does not use CMA here in the first place\n");
            MPI_Finalize();
            return 77;
        }
        check_plane(MPI_COMM_WORLD, 1, "MPI_COMM_WORLD before the change");
        MPI_Barrier(MPI_COMM_WORLD);
        refuse_cma(rank, refuse_rank);
        if (!strcmp(when, "mid")) {
            /* A copy is refused here: the job must stop, with a message. */
            checked_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD after the change");
            if (rank == 0) printf("UNEXPECTED: the collectives went on after the change\n");
            MPI_Finalize();
            return 1;
        }
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        checked_collectives(dup, "a communicator made after the change");
        check_plane(dup, 0, "a communicator made after the change");
        MPI_Comm_free(&dup);
    } else {
        CHECK(0, "--cma-refused takes before-init, after-init, before-dup or mid, not %s", when);
    }
    test_pass(when);
    MPI_Finalize();
    return 0;
}
