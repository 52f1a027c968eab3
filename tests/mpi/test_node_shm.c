/* strata leaves nothing in /dev/shm: segments are unlinked as soon as every
 * rank has attached, and unmapped when their communicator is freed.
 *
 *   test_node_shm [--rounds=N]   creates and frees many communicators (each
 *                                with collectives, so each gets a segment),
 *                                checking /dev/shm and this process's
 *                                mappings as it goes
 *   test_node_shm --abort        gets several communicators served, then
 *                                rank 1 calls MPI_Abort in the middle of the
 *                                others' collectives (tests/scripts/
 *                                shm_leftovers.sh checks /dev/shm afterwards)
 *   test_node_shm --abort-create rank 1 calls MPI_Abort while the others are
 *                                in the first collective of a new
 *                                communicator, i.e. while its segment is
 *                                being set up
 *   test_node_shm --loop          duplicates MPI_COMM_WORLD, Allreduces on
 *                                the copy and frees it, over and over, until
 *                                shm_leftovers.sh kills a rank with SIGKILL
 *                                (at most 60 s)
 *
 * Other jobs may run at the same time, so only segments named after this
 * job's processes count: strata names them /strata-UID-PID-SERIAL-RANDOM-PIDNS.
 * Rank 0 prints "PIDS p0 p1 ..." first, for the script, and with
 * --pids=FILE also writes that line to FILE: a launcher that kills the job
 * on MPI_Abort may drop output it has not forwarded yet (MPICH's hydra did,
 * in CI), a file it cannot. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context/context.h"
#include "node_common.h"

static int *job_pids, job_size;

/* Entries of /dev/shm that this job's processes created. */
static int count_job_segments(char *first, size_t len)
{
    DIR *d = opendir("/dev/shm");
    CHECK(d != NULL, "cannot read /dev/shm");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned uid;
        int pid;
        if (sscanf(e->d_name, "strata-%u-%d-", &uid, &pid) != 2 || uid != (unsigned)getuid())
            continue;
        for (int r = 0; r < job_size; r++)
            if (job_pids[r] == pid) {
                if (!n && first) snprintf(first, len, "%s", e->d_name);
                n++;
            }
    }
    closedir(d);
    return n;
}

/* strata segments process `pid` has mapped (deleted or not). */
static int count_mappings_of(int pid)
{
    int n = test_segment_mappings(pid);
    CHECK(n >= 0, "cannot read /proc/%d/maps", pid);
    return n;
}

static int count_mappings(void) { return count_mappings_of((int)getpid()); }

static void check_no_segment(const char *when)
{
    char name[256] = "";
    int n = count_job_segments(name, sizeof name);
    CHECK(n == 0, "%s: %d segment(s) of this job in /dev/shm, e.g. %s", when, n, name);
}

/* A collective that needs the communicator's segment, checked. */
static void use(MPI_Comm comm, int salt)
{
    node_bcast_check(comm, "fresh communicator", MPI_BYTE, 100, MPI_BYTE, 100, 0,
                     node_salt(100, (uint64_t)salt, 0, 0), "MPI_BYTE");
    node_int_sum_check(comm, "fresh communicator", 10, -1, node_salt(101, (uint64_t)salt, 0, 0));
}

/* --loop: each round's communicator gets a segment of its own, so a kill at
 * a random moment often lands while one is being set up.  The ranks agree
 * in each round's Allreduce whether to go on. */
static void churn_until_killed(void)
{
    const double end = MPI_Wtime() + 60;
    for (int go = 1; go;) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        go = MPI_Wtime() < end;
        MPI_Allreduce(MPI_IN_PLACE, &go, 1, MPI_INT, MPI_MIN, dup);
        MPI_Comm_free(&dup);
    }
    CHECK(0, "--loop: no rank was killed within 60 s");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, rounds = 40, abort_mode = 0, loop = 0;
    const char *pids_file = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--rounds=", 9)) rounds = atoi(argv[i] + 9);
        else if (!strcmp(argv[i], "--abort")) abort_mode = 1;
        else if (!strcmp(argv[i], "--abort-create")) abort_mode = 2;
        else if (!strcmp(argv[i], "--loop")) loop = 1;
        else if (!strncmp(argv[i], "--pids=", 7)) pids_file = argv[i] + 7;
        else CHECK(0, "unknown option %s", argv[i]);
    }
    job_size = size;
    job_pids = malloc(sizeof(int) * (size_t)size);
    CHECK(job_pids != NULL, "out of memory");
    int me = (int)getpid();
    PMPI_Allgather(&me, 1, MPI_INT, job_pids, 1, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *to[2] = {stdout, pids_file ? fopen(pids_file, "w") : NULL};
        CHECK(!pids_file || to[1], "cannot write %s", pids_file);
        for (int k = 0; k < 2 && to[k]; k++) {
            fprintf(to[k], "PIDS");
            for (int r = 0; r < size; r++) fprintf(to[k], " %d", job_pids[r]);
            fprintf(to[k], "\n");
        }
        fflush(stdout);
        CHECK(!to[1] || fclose(to[1]) == 0, "cannot write %s", pids_file);
    }
    /* Rank 1 may end the job next: the file is complete before it can. */
    PMPI_Barrier(MPI_COMM_WORLD);
    CHECK(size >= 2 || !abort_mode, "the abort modes need 2 ranks or more");
    if (loop) churn_until_killed();

    use(MPI_COMM_WORLD, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    check_no_segment("after MPI_COMM_WORLD's first collectives");
    const int base_maps = count_mappings(), base_live = strata_ctx_live_count();
    CHECK(size == 1 || base_maps >= 1, "MPI_COMM_WORLD is served but no segment is mapped");

    if (abort_mode) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        if (abort_mode == 1) use(dup, 1); /* --abort: the segment is set up */
        /* Rank 1 leaves; the others are inside a collective on dup (for
         * --abort-create, its first, which creates the segment). */
        if (rank == 1) {
            /* --abort-create: wait until rank 0 has mapped the new segment
             * (named or anonymous), so the job ends inside the window where
             * a named segment would still have its name.  A bounded wait for
             * a state, not a timing assertion. */
            for (int i = 0; abort_mode == 2 && i < 20000 && count_mappings_of(job_pids[0]) <= base_maps;
                 i++)
                usleep(1000);
            MPI_Abort(MPI_COMM_WORLD, 9);
        }
        use(dup, 2);
        CHECK(0, "rank 1 should have ended the job");
    }

    for (int k = 0; k < rounds; k++) {
        MPI_Comm c[4];
        int n = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &c[n++]);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c[n++]);
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c[n++]);
        MPI_Comm_dup(c[k % 3], &c[n++]);
        int mapped = 0;
        for (int i = 0; i < n; i++) {
            int csize;
            MPI_Comm_size(c[i], &csize);
            use(c[i], k * 8 + i);
            mapped += csize > 1; /* single-rank communicators get no segment */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        check_no_segment("with live communicators");
        CHECK(count_mappings() == base_maps + mapped, "round %d: %d strata mappings, expected %d",
              k, count_mappings(), base_maps + mapped);
        /* Freed in an order different from creation. */
        for (int i = n - 1; i >= 0; i--) MPI_Comm_free(&c[(i + k) % n]);
        CHECK(count_mappings() == base_maps && strata_ctx_live_count() == base_live,
              "round %d: after freeing, %d mappings and %d contexts (expected %d and %d)", k,
              count_mappings(), strata_ctx_live_count(), base_maps, base_live);
        MPI_Barrier(MPI_COMM_WORLD);
        check_no_segment("after freeing the communicators");
    }
    test_pass("no strata segment left in /dev/shm");
    MPI_Finalize();
    return 0;
}
