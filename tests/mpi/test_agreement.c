/* The verdict "strata serves this communicator" is agreed: every member of a
 * communicator holds the same verdict and the same reason, and the calls
 * still give correct results whatever the verdict.
 *
 * Modes (the expectation is given on the command line as well as through the
 * environment, so that a variable that fails to reach the ranks makes the
 * test fail instead of silently testing the default):
 *   (none)               every communicator is served
 *   --refuse R           STRATA_TEST_REFUSE_RANK=R: communicators holding
 *                        world rank R are refused on every member, the
 *                        others are served
 *   --disabled           STRATA_DISABLE=1 on every rank: no runtime, no context
 *   --disable-rank R     the test itself sets STRATA_DISABLE=1 on world rank R
 *                        only (before MPI_Init, from the launcher's rank
 *                        variable): every rank must end up disabled
 *   --rank-env R VAR=VAL sets VAR=VAL on world rank R only (repeatable): the
 *                        settings that ranks compute with together must
 *                        still be the same everywhere, and every result
 *                        right (all communicators served) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "context/context.h"
#include "context/runtime.h"
#include "transport/registry.h"
#include "testutil.h"
#include "util/stats.h"

static int world_rank, world_size;
static int refuse_rank = -1; /* -1: nobody refuses */

/* Checks all eight collectives on comm against values computed here, not by
 * the host MPI. */
static void check_collectives(MPI_Comm comm, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 5 };
    int *all = malloc(sizeof(int) * N * (size_t)size);
    int *mine = malloc(sizeof(int) * N * (size_t)size);
    CHECK(all && mine, "out of memory");

    for (int root = 0; root < size; root++) {
        int buf[N];
        for (int i = 0; i < N; i++) buf[i] = rank == root ? 1000 * root + i : -1;
        MPI_Bcast(buf, N, MPI_INT, root, comm);
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == 1000 * root + i, "%s: Bcast root %d [%d] = %d", what, root, i, buf[i]);

        int in[N], out[N];
        for (int i = 0; i < N; i++) in[i] = rank * 10 + i;
        MPI_Reduce(in, out, N, MPI_INT, MPI_SUM, root, comm);
        if (rank == root)
            for (int i = 0; i < N; i++)
                CHECK(out[i] == 10 * size * (size - 1) / 2 + size * i,
                      "%s: Reduce root %d [%d] = %d", what, root, i, out[i]);

        for (int i = 0; i < N; i++) in[i] = rank * 100 + i;
        MPI_Gather(in, N, MPI_INT, all, N, MPI_INT, root, comm);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < N; i++)
                    CHECK(all[r * N + i] == r * 100 + i, "%s: Gather root %d from %d [%d] = %d",
                          what, root, r, i, all[r * N + i]);

        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < N; i++) all[r * N + i] = r * 7 + i + root;
        MPI_Scatter(all, N, MPI_INT, out, N, MPI_INT, root, comm);
        for (int i = 0; i < N; i++)
            CHECK(out[i] == rank * 7 + i + root, "%s: Scatter root %d [%d] = %d", what, root, i,
                  out[i]);
    }

    int in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = rank == size - 1 ? i : -i - rank;
    MPI_Allreduce(in, out, N, MPI_INT, MPI_MAX, comm);
    for (int i = 0; i < N; i++) CHECK(out[i] == i, "%s: Allreduce [%d] = %d", what, i, out[i]);

    for (int i = 0; i < N; i++) in[i] = rank * 3 + i;
    MPI_Allgather(in, N, MPI_INT, all, N, MPI_INT, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == r * 3 + i, "%s: Allgather from %d [%d] = %d", what, r, i,
                  all[r * N + i]);

    /* Block r of rank s goes to rank r, as block s. */
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++) mine[r * N + i] = rank * 1000 + r * 10 + i;
    MPI_Alltoall(mine, N, MPI_INT, all, N, MPI_INT, comm);
    for (int s = 0; s < size; s++)
        for (int i = 0; i < N; i++)
            CHECK(all[s * N + i] == s * 1000 + rank * 10 + i, "%s: Alltoall from %d [%d] = %d",
                  what, s, i, all[s * N + i]);

    /* Large enough for strata's pipelined and single-copy paths (beyond
     * STRATA_CICO_MAX and one STRATA_CHUNK by default). */
    enum { L = 70001 };
    int *big = malloc(sizeof(int) * L), *sum = malloc(sizeof(int) * L);
    CHECK(big && sum, "out of memory");
    for (int root = 0; root < size; root += size > 1 ? size - 1 : 1) {
        for (int i = 0; i < L; i++) big[i] = rank == root ? i * 3 + root : -1;
        MPI_Bcast(big, L, MPI_INT, root, comm);
        for (int i = 0; i < L; i++)
            CHECK(big[i] == i * 3 + root, "%s: large Bcast root %d [%d] = %d", what, root, i,
                  big[i]);
        for (int i = 0; i < L; i++) big[i] = (i % 1000) + rank;
        MPI_Reduce(big, sum, L, MPI_INT, MPI_SUM, root, comm);
        if (rank == root)
            for (int i = 0; i < L; i++)
                CHECK(sum[i] == size * (i % 1000) + size * (size - 1) / 2,
                      "%s: large Reduce root %d [%d] = %d", what, root, i, sum[i]);
    }
    for (int i = 0; i < L; i++) big[i] = rank == i % size ? i : -i;
    MPI_Allreduce(MPI_IN_PLACE, big, L, MPI_INT, MPI_MAX, comm);
    for (int i = 0; i < L; i++)
        CHECK(big[i] == i, "%s: large Allreduce [%d] = %d", what, i, big[i]);
    free(big);
    free(sum);

    MPI_Barrier(comm);
    free(all);
    free(mine);
}

/* The settings that ranks compute with together are the same on every rank,
 * whatever each rank's environment said. */
static void check_settings_agreed(void)
{
    struct settings {
        size_t cico_max, chunk0, reduce_chunk, min_slice;
        int throttle, transport, check_args, stats;
        char hierarchy[sizeof strata_config()->hierarchy];
    } my, *all = malloc(sizeof my * (size_t)world_size);
    CHECK(all, "out of memory");
    memset(&my, 0, sizeof my);
    const struct strata_tuning *t = strata_tuning();
    my.cico_max = t->cico_max;
    my.chunk0 = t->chunk[0];
    my.reduce_chunk = t->reduce_chunk;
    my.min_slice = t->min_slice;
    my.throttle = t->throttle;
    my.transport = strata_transport_index(strata_runtime()->transport);
    my.check_args = strata_config()->check_args;
    my.stats = strata_stats_enabled();
    memcpy(my.hierarchy, strata_config()->hierarchy, sizeof my.hierarchy);
    MPI_Allgather(&my, (int)sizeof my, MPI_BYTE, all, (int)sizeof my, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < world_size; r++) {
        CHECK(all[r].cico_max == all[0].cico_max && all[r].chunk0 == all[0].chunk0 &&
                  all[r].reduce_chunk == all[0].reduce_chunk &&
                  all[r].min_slice == all[0].min_slice && all[r].throttle == all[0].throttle,
              "rank %d's data-plane tuning differs from rank 0's (copy-in/out up to %zu, "
              "chunk %zu, against %zu, %zu)", r, all[r].cico_max, all[r].chunk0,
              all[0].cico_max, all[0].chunk0);
        CHECK(all[r].transport == all[0].transport, "rank %d uses transport %s, rank 0 %s", r,
              strata_transport_at(all[r].transport) ? strata_transport_at(all[r].transport)->name
                                                    : "?",
              strata_transport_at(all[0].transport) ? strata_transport_at(all[0].transport)->name
                                                    : "?");
        CHECK(all[r].check_args == all[0].check_args && all[r].stats == all[0].stats,
              "rank %d: STRATA_CHECK_ARGS %d, STRATA_STATS %s; rank 0: %d, %s", r,
              all[r].check_args, all[r].stats ? "on" : "off", all[0].check_args,
              all[0].stats ? "on" : "off");
        CHECK(!strcmp(all[r].hierarchy, all[0].hierarchy),
              "rank %d builds hierarchies from \"%s\", rank 0 from \"%s\"", r,
              all[r].hierarchy, all[0].hierarchy);
    }
    free(all);
}

/* Does comm hold world rank r? */
static int holds_world_rank(MPI_Comm comm, int r)
{
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Group group, world_group;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int found = 0;
    for (int i = 0; i < size && r >= 0; i++) {
        int w;
        MPI_Group_translate_ranks(group, 1, &i, world_group, &w);
        found |= w == r;
    }
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    return found;
}

/* After a first collective on comm: every member has a context with the
 * verdict expected from refuse_rank, and verdict and reason are identical on
 * every member (gathered and compared on each member's rank 0). */
static void check_verdict(MPI_Comm comm, const char *what)
{
    /* strata_ctx_get creates a missing context collectively; the barrier
     * makes sure it already exists, so this lookup only reads. */
    MPI_Barrier(comm);
    int before = strata_ctx_live_count();
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx != NULL && strata_ctx_live_count() == before, "%s: no context after a collective",
          what);

    int expect_served = !holds_world_rank(comm, refuse_rank);
    CHECK(ctx->served == expect_served, "%s: served %d, expected %d (refusing rank %d): %s",
          what, ctx->served, expect_served, refuse_rank, ctx->reason);
    if (expect_served)
        CHECK(ctx->reason[0] == '\0', "%s: served with a reason \"%s\"", what, ctx->reason);
    else
        CHECK(strstr(ctx->reason, "STRATA_TEST_REFUSE_RANK") != NULL,
              "%s: refused for the wrong reason \"%s\"", what, ctx->reason);

    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* The data plane is agreed too: refused communicators have none, and
     * served ones of several ranks on this one machine have one. */
    int expect_plane = expect_served && size > 1;
    CHECK((ctx->plane != NULL) == expect_plane, "%s: %s data plane, expected %s: %s", what,
          ctx->plane ? "a" : "no", expect_plane ? "one" : "none", ctx->plane_why);

    struct verdict {
        int served, plane;
        char reason[sizeof ctx->reason];
        char plane_why[sizeof ctx->plane_why];
    } my, *all = rank == 0 ? malloc(sizeof my * (size_t)size) : NULL;
    memset(&my, 0, sizeof my);
    my.served = ctx->served;
    my.plane = ctx->plane != NULL;
    memcpy(my.reason, ctx->reason, sizeof my.reason);
    memcpy(my.plane_why, ctx->plane_why, sizeof my.plane_why);
    CHECK(rank != 0 || all, "out of memory");
    MPI_Gather(&my, (int)sizeof my, MPI_BYTE, all, (int)sizeof my, MPI_BYTE, 0, comm);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            CHECK(all[r].served == my.served, "%s: rank %d has verdict %d, rank 0 has %d", what,
                  r, all[r].served, my.served);
            CHECK(!strcmp(all[r].reason, my.reason),
                  "%s: rank %d says \"%s\", rank 0 says \"%s\"", what, r, all[r].reason,
                  my.reason);
            CHECK(all[r].plane == my.plane && !strcmp(all[r].plane_why, my.plane_why),
                  "%s: rank %d has %s data plane (\"%s\"), rank 0 %s (\"%s\")", what, r,
                  all[r].plane ? "a" : "no", all[r].plane_why, my.plane ? "has one" : "none",
                  my.plane_why);
        }
        free(all);
    }
}

/* Runs a communicator through the verdict and result checks, then frees it. */
static void check_and_free(MPI_Comm *comm, const char *what)
{
    if (*comm == MPI_COMM_NULL) return;
    check_verdict(*comm, what);
    check_collectives(*comm, what);
    MPI_Comm_free(comm);
}

static void test_enabled(void)
{
    CHECK(strata_runtime() != NULL, "strata is not set up: %s",
          strata_runtime_state()->why_disabled);
    const struct strata_config *cfg = strata_config();
    CHECK(cfg->test_refuse_rank == refuse_rank,
          "strata sees STRATA_TEST_REFUSE_RANK=%d, the test was told %d", cfg->test_refuse_rank,
          refuse_rank);

    check_settings_agreed();
    /* The first collective on MPI_COMM_WORLD creates its context: it must
     * give a correct result whatever the verdict. */
    check_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    check_verdict(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    check_and_free(&comm, "duplicate of MPI_COMM_WORLD");

    /* Even and odd ranks: the refusing rank is in exactly one of them. */
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &comm);
    check_and_free(&comm, "even/odd split");

    /* The refusing rank alone, and everybody else together (reversed). */
    int r = refuse_rank >= 0 ? refuse_rank : 0;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank == r, -world_rank, &comm);
    check_and_free(&comm, "split around the refusing rank");

    /* A communicator made by MPI_Comm_create without the refusing rank;
     * the refusing rank (not a member) gets MPI_COMM_NULL. */
    MPI_Group world_group, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_excl(world_group, 1, &r, &group);
    MPI_Comm_create(MPI_COMM_WORLD, group, &comm);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    CHECK((comm == MPI_COMM_NULL) == (world_rank == r), "MPI_Comm_create membership wrong");
    check_and_free(&comm, "created without the refusing rank");

    /* A split of a communicator that was itself refused: the halves are
     * judged afresh, each by its own members. */
    MPI_Comm dup, quarter;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check_verdict(dup, "duplicate to split");
    MPI_Comm_split(dup, world_rank / 2, world_rank, &quarter);
    check_and_free(&quarter, "pairs split from a duplicate");
    MPI_Comm_free(&dup);

    /* MPI_COMM_SELF: refused on the refusing rank only (it is its own
     * communicator), served everywhere else. */
    check_verdict(MPI_COMM_SELF, "MPI_COMM_SELF");
    check_collectives(MPI_COMM_SELF, "MPI_COMM_SELF");
}

static void test_disabled(const char *expected_why)
{
    const struct strata_runtime *state = strata_runtime_state();
    CHECK(strata_runtime() == NULL, "strata is set up although disabled");
    CHECK(state->disabled, "runtime not marked disabled");
    CHECK(!strcmp(state->why_disabled, expected_why), "disabled because \"%s\", expected \"%s\"",
          state->why_disabled, expected_why);

    check_collectives(MPI_COMM_WORLD, "MPI_COMM_WORLD (disabled)");
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &comm);
    check_collectives(comm, "even/odd split (disabled)");
    check_collectives(MPI_COMM_SELF, "MPI_COMM_SELF (disabled)");
    CHECK(strata_ctx_get(MPI_COMM_WORLD) == NULL, "a context exists while disabled");
    CHECK(strata_ctx_get(comm) == NULL, "a context exists while disabled");
    CHECK(strata_ctx_live_count() == 0, "%d contexts while disabled", strata_ctx_live_count());
    MPI_Comm_free(&comm);
}

/* The launcher's name for this process's world rank, before MPI_Init. */
static int launcher_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return atoi(v);
    }
    return -1;
}

int main(int argc, char **argv)
{
    enum { ENABLED, DISABLED, DISABLE_ONE } mode = ENABLED;
    int disable_rank = -1, self_disabled = 0, launcher = launcher_rank(), rank_env = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--refuse") && i + 1 < argc) {
            refuse_rank = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--disabled")) {
            mode = DISABLED;
        } else if (!strcmp(argv[i], "--disable-rank") && i + 1 < argc) {
            mode = DISABLE_ONE;
            disable_rank = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--rank-env") && i + 2 < argc) {
            /* strata reads its configuration in MPI_Init, after this. */
            rank_env = 1;
            int r = atoi(argv[++i]);
            char *setting = argv[++i], *eq = strchr(setting, '=');
            if (eq && r == launcher) {
                *eq = '\0';
                setenv(setting, eq + 1, 1);
            }
        }
    }
    /* strata reads its configuration in MPI_Init, after this. */
    if (mode == DISABLE_ONE) {
        unsetenv("STRATA_DISABLE");
        if (launcher == disable_rank) {
            setenv("STRATA_DISABLE", "1", 1);
            self_disabled = 1;
        }
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    if (rank_env)
        CHECK(launcher == world_rank, "the launcher's rank variable says %d, MPI says %d",
              launcher, world_rank);
    /* The environment must say what the command line says. */
    const char *env_refuse = getenv("STRATA_TEST_REFUSE_RANK");
    CHECK((env_refuse ? atoi(env_refuse) : -1) == refuse_rank,
          "STRATA_TEST_REFUSE_RANK is %s, the command line says %d",
          env_refuse ? env_refuse : "unset", refuse_rank);
    CHECK(refuse_rank < world_size, "refusing rank %d does not exist", refuse_rank);
    const char *env_disable = getenv("STRATA_DISABLE");
    int disabled_here = env_disable && !strcmp(env_disable, "1");

    switch (mode) {
    case ENABLED:
        CHECK(!disabled_here, "STRATA_DISABLE=1 without --disabled");
        test_enabled();
        test_pass(refuse_rank >= 0 ? "agreement (one rank refuses)" : "agreement");
        break;
    case DISABLED:
        CHECK(disabled_here, "--disabled without STRATA_DISABLE=1");
        test_disabled("STRATA_DISABLE=1");
        test_pass("agreement (disabled)");
        break;
    case DISABLE_ONE:
        CHECK(launcher == world_rank, "the launcher's rank variable says %d, MPI says %d",
              launcher, world_rank);
        CHECK(disable_rank < world_size, "rank %d does not exist", disable_rank);
        test_disabled(self_disabled ? "STRATA_DISABLE=1" : "STRATA_DISABLE=1 on another rank");
        test_pass("agreement (disabled on one rank)");
        break;
    }
    MPI_Finalize();
    return 0;
}
