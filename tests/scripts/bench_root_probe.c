/* A preloaded library for tests/scripts/bench_run.sh: counts the roots the
 * host MPI's rooted collectives (PMPI_Bcast, PMPI_Reduce, PMPI_Gather,
 * PMPI_Scatter) get on MPI_COMM_WORLD, and at exit prints one line per rank
 * that made any (to ROOT_PROBE_DIR/root-probe.R when that is set, else to
 * stdout):
 *
 *   root-probe rank R: bcast 0=N 1=N ... reduce ... gather ... scatter ...
 *
 * strata-bench times the host MPI through exactly these PMPI_ calls, so the
 * counts show which roots its host-MPI calls had: with --root-shift every
 * rank takes its turn, without it rank 0 is the root of every timed call.
 * The real functions are the next definitions after this library's. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define MAX_ROOTS 16

enum kind { BCAST, REDUCE, GATHER, SCATTER, NKINDS };
static const char *kind_names[NKINDS] = {"bcast", "reduce", "gather", "scatter"};
static long counts[NKINDS][MAX_ROOTS];

static void count(enum kind k, int root, MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD && root >= 0 && root < MAX_ROOTS) counts[k][root]++;
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "root-probe: no %s after this library\n", name);
        abort();
    }
    return f;
}

int PMPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    static int (*next)(void *, int, MPI_Datatype, int, MPI_Comm);
    if (!next) next = (int (*)(void *, int, MPI_Datatype, int, MPI_Comm))real("PMPI_Bcast");
    count(BCAST, root, comm);
    return next(buf, n, t, root, comm);
}

int PMPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm)
{
    static int (*next)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
    if (!next)
        next = (int (*)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm))real(
            "PMPI_Reduce");
    count(REDUCE, root, comm);
    return next(s, r, n, t, op, root, comm);
}

typedef int (*rooted_block_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int,
                               MPI_Comm);

int PMPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
                MPI_Comm comm)
{
    static rooted_block_fn next;
    if (!next) next = (rooted_block_fn)real("PMPI_Gather");
    count(GATHER, root, comm);
    return next(s, sn, st, r, rn, rt, root, comm);
}

int PMPI_Scatter(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 int root, MPI_Comm comm)
{
    static rooted_block_fn next;
    if (!next) next = (rooted_block_fn)real("PMPI_Scatter");
    count(SCATTER, root, comm);
    return next(s, sn, st, r, rn, rt, root, comm);
}

/* After MPI_Finalize: the rank comes from the launcher's environment. */
__attribute__((destructor)) static void report(void)
{
    long any = 0;
    for (int k = 0; k < NKINDS; k++)
        for (int r = 0; r < MAX_ROOTS; r++) any += counts[k][r];
    if (!any) return; /* the launcher, or a process without such calls */
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank) rank = getenv("PMI_RANK");
    /* One file per rank in ROOT_PROBE_DIR: on a shared stdout the launcher
     * may cut one rank's line with another's (seen with MPICH's). */
    const char *dir = getenv("ROOT_PROBE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/root-probe.%s", dir ? dir : ".", rank ? rank : "unknown");
    FILE *f = dir ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "root-probe: cannot write %s\n", path);
        return;
    }
    fprintf(f, "root-probe rank %s:", rank ? rank : "?");
    for (int k = 0; k < NKINDS; k++) {
        fprintf(f, " %s", kind_names[k]);
        for (int r = 0; r < MAX_ROOTS; r++)
            if (counts[k][r]) fprintf(f, " %d=%ld", r, counts[k][r]);
    }
    fprintf(f, "\n");
    if (f == stdout) fflush(stdout);
    else fclose(f);
}
