/* Context lifecycle: a communicator gets exactly one strata context, on its
 * first collective, and loses it when it is freed or at MPI_Finalize.
 *
 * strata_ctx_live_count() is per process, so every check is made on each
 * rank against what that rank should hold: ranks that are not members of a
 * communicator (MPI_COMM_NULL from a split or create) gain nothing.
 *
 * A served context of several ranks maps its node's shared segment; the
 * mappings in /proc/self/maps must follow the contexts (no leak over many
 * create/free cycles).
 *
 * The last check runs after MPI_Finalize: the contexts of communicators the
 * program never freed, and their segments, must all have been released by
 * then. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "context/runtime.h"
#include "testutil.h"

static int world_rank, world_size;

/* Mappings of strata's shared segments in this process. */
static int segment_mappings(void) { return test_segment_mappings((int)getpid()); }

/* The context of a communicator that already has one.  strata_ctx_get would
 * create a missing context collectively, so the count is checked around it:
 * this helper must never be the one that creates. */
static struct strata_ctx *existing_ctx(MPI_Comm comm)
{
    int before = strata_ctx_live_count();
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(strata_ctx_live_count() == before, "looking up a context created one (%d -> %d)",
          before, strata_ctx_live_count());
    return ctx;
}

/* The context of comm is for comm and knows its members' world ranks. */
static void check_ctx_matches(MPI_Comm comm, const char *what)
{
    struct strata_ctx *ctx = existing_ctx(comm);
    CHECK(ctx != NULL, "%s: no context after a collective", what);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CHECK(ctx->comm == comm, "%s: context belongs to another communicator", what);
    CHECK(ctx->rank == rank && ctx->size == size, "%s: context says rank %d of %d, MPI %d of %d",
          what, ctx->rank, ctx->size, rank, size);
    CHECK(ctx->served == 1, "%s: not served: %s", what, ctx->reason);
    /* One machine, default settings: every served communicator of several
     * ranks gets its data plane. */
    CHECK((ctx->plane != NULL) == (size > 1), "%s (size %d): %s data plane: %s", what, size,
          ctx->plane ? "a" : "no", ctx->plane_why);

    MPI_Group group, world_group;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int *ranks = malloc(sizeof(int) * (size_t)size);
    int *expected = malloc(sizeof(int) * (size_t)size);
    CHECK(ranks && expected, "out of memory");
    for (int i = 0; i < size; i++) ranks[i] = i;
    MPI_Group_translate_ranks(group, size, ranks, world_group, expected);
    for (int i = 0; i < size; i++)
        CHECK(ctx->world_rank[i] == expected[i], "%s: member %d is world rank %d, context says %d",
              what, i, expected[i], ctx->world_rank[i]);
    free(ranks);
    free(expected);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
}

/* One collective with a checked result, so that a context creation that
 * disturbed the call would be seen. */
static void sum_ranks(MPI_Comm comm)
{
    int rank, size, total = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, comm);
    CHECK(total == size * (size - 1) / 2, "Allreduce gave %d, expected %d", total,
          size * (size - 1) / 2);
}

static void expect_count(int expected, const char *when)
{
    CHECK(strata_ctx_live_count() == expected, "%s: %d live contexts, expected %d", when,
          strata_ctx_live_count(), expected);
}

static void test_world_and_dup(void)
{
    /* strata's own set-up in MPI_Init uses PMPI only: no context yet. */
    expect_count(0, "after MPI_Init");
    CHECK(strata_runtime() != NULL, "strata is not set up: %s",
          strata_runtime_state()->why_disabled);

    MPI_Barrier(MPI_COMM_WORLD);
    expect_count(1, "after the first collective on MPI_COMM_WORLD");
    check_ctx_matches(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    sum_ranks(MPI_COMM_WORLD);
    expect_count(1, "after a second collective on MPI_COMM_WORLD");

    /* A duplicate does not inherit the context (its attribute copy function
     * is MPI_COMM_NULL_COPY_FN); it gets its own on its first collective. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    expect_count(1, "after MPI_Comm_dup");
    sum_ranks(dup);
    expect_count(2, "after the first collective on the duplicate");
    check_ctx_matches(dup, "duplicate of MPI_COMM_WORLD");
    CHECK(existing_ctx(dup) != existing_ctx(MPI_COMM_WORLD), "duplicate shares the context");

    /* A duplicate of a duplicate that has a context: same rule. */
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    expect_count(2, "after duplicating the duplicate");
    MPI_Comm_free(&dup2);
    expect_count(2, "after freeing a communicator that never had a collective");

    MPI_Comm_free(&dup);
    expect_count(1, "after freeing the duplicate");
    check_ctx_matches(MPI_COMM_WORLD, "MPI_COMM_WORLD after freeing its duplicate");
}

static void test_split_and_create(void)
{
    int base = strata_ctx_live_count();

    /* Two halves, keys reversed: each rank is in exactly one. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &half);
    expect_count(base, "after MPI_Comm_split");
    sum_ranks(half);
    expect_count(base + 1, "after a collective on a split half");
    check_ctx_matches(half, "split half");

    /* World rank 0 left out: it gets MPI_COMM_NULL and no context. */
    MPI_Comm without_zero;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank == 0 ? MPI_UNDEFINED : 0, world_rank,
                   &without_zero);
    CHECK((without_zero == MPI_COMM_NULL) == (world_rank == 0),
          "MPI_UNDEFINED colour gave %s",
          without_zero == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (without_zero != MPI_COMM_NULL) {
        MPI_Barrier(without_zero);
        check_ctx_matches(without_zero, "split without world rank 0");
    }
    int mine = without_zero != MPI_COMM_NULL;
    expect_count(base + 1 + mine, "after a collective on the split without rank 0");

    /* MPI_Comm_create with the even ranks; the odd ones get MPI_COMM_NULL. */
    MPI_Group world_group, even_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int range[1][3] = {{0, world_size - 1, 2}};
    MPI_Group_range_incl(world_group, 1, range, &even_group);
    MPI_Comm evens;
    MPI_Comm_create(MPI_COMM_WORLD, even_group, &evens);
    MPI_Group_free(&even_group);
    MPI_Group_free(&world_group);
    CHECK((evens == MPI_COMM_NULL) == (world_rank % 2 == 1), "MPI_Comm_create membership wrong");
    expect_count(base + 1 + mine, "after MPI_Comm_create");
    int even = evens != MPI_COMM_NULL;
    if (even) {
        sum_ranks(evens);
        check_ctx_matches(evens, "created communicator of even ranks");
    }
    expect_count(base + 1 + mine + even, "after a collective on the created communicator");

    /* Each free releases exactly its own context. */
    if (even) MPI_Comm_free(&evens);
    expect_count(base + 1 + mine, "after freeing the created communicator");
    if (mine) MPI_Comm_free(&without_zero);
    expect_count(base + 1, "after freeing the split without rank 0");
    MPI_Comm_free(&half);
    expect_count(base, "after freeing the split half");
}

/* Contexts are created and destroyed many times without drift: a leak or a
 * double release would show in the count. */
static void test_cycles(int cycles)
{
    int base = strata_ctx_live_count(), segments = segment_mappings();
    CHECK(segments >= 0, "cannot read /proc/self/maps");
    for (int i = 0; i < cycles; i++) {
        MPI_Comm comm;
        if (i % 2 == 0) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        else MPI_Comm_split(MPI_COMM_WORLD, world_rank % 3, world_rank, &comm);
        int size, root = i % world_size, value = i * 1000 + world_rank, expected;
        MPI_Comm_size(comm, &size);
        root %= size;
        /* Through strata's data plane: the result shows the plane of a
         * fresh communicator is not confused with an earlier one's. */
        MPI_Bcast(&value, 1, MPI_INT, root, comm);
        int root_world;
        MPI_Group group, world_group;
        MPI_Comm_group(comm, &group);
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_translate_ranks(group, 1, &root, world_group, &root_world);
        MPI_Group_free(&group);
        MPI_Group_free(&world_group);
        expected = i * 1000 + root_world;
        CHECK(value == expected, "cycle %d: Bcast gave %d, expected %d", i, value, expected);
        expect_count(base + 1, "during a create/free cycle");
        CHECK(segment_mappings() == segments + (size > 1),
              "cycle %d: %d segment mappings, expected %d", i, segment_mappings(),
              segments + (size > 1));
        MPI_Barrier(comm);
        expect_count(base + 1, "after a second collective in a create/free cycle");
        MPI_Comm_free(&comm);
        expect_count(base, "after a create/free cycle");
        CHECK(segment_mappings() == segments, "cycle %d: %d segment mappings after the free, "
              "expected %d", i, segment_mappings(), segments);
    }
}

static void test_self(void)
{
    int base = strata_ctx_live_count();
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    CHECK(sum == 1, "Allreduce on MPI_COMM_SELF gave %d", sum);
    int value = 7 + world_rank, copy = 0;
    MPI_Allgather(&value, 1, MPI_INT, &copy, 1, MPI_INT, MPI_COMM_SELF);
    CHECK(copy == value, "Allgather on MPI_COMM_SELF gave %d", copy);
    MPI_Barrier(MPI_COMM_SELF);
    expect_count(base + 1, "after collectives on MPI_COMM_SELF");
    check_ctx_matches(MPI_COMM_SELF, "MPI_COMM_SELF");
    /* Never freed by the program: released at MPI_Finalize, where strata's
     * own finalisation also hangs off MPI_COMM_SELF. */
}

/* Intercommunicator collectives pass through without a context; the
 * intracommunicator made by merging it gets one as usual. */
static void test_intercomm(void)
{
    if (world_size < 2) return;
    int base = strata_ctx_live_count();
    int color = world_rank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local);
    /* Local leaders: world rank 0 (even side) and world rank 1 (odd side). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter);
    expect_count(base, "after MPI_Intercomm_create");

    int local_size, remote_size, local_rank;
    MPI_Comm_size(inter, &local_size);
    MPI_Comm_remote_size(inter, &remote_size);
    MPI_Comm_rank(inter, &local_rank);

    /* On an intercommunicator each side receives the reduction of the other
     * side: the sum of the other side's world ranks. */
    int remote_sum = 0;
    for (int r = 0; r < world_size; r++)
        if (r % 2 != color) remote_sum += r;
    int sum = -1;
    MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == remote_sum, "intercommunicator Allreduce gave %d, expected %d", sum, remote_sum);

    /* Bcast from the even side's leader to the odd side. */
    int value = color == 0 ? 4242 : -1;
    int root = color == 0 ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&value, 1, MPI_INT, root, inter);
    CHECK(value == 4242, "intercommunicator Bcast gave %d", value);
    MPI_Barrier(inter);
    expect_count(base, "after collectives on an intercommunicator");
    CHECK(strata_ctx_get(inter) == NULL, "an intercommunicator got a context");
    expect_count(base, "after asking for an intercommunicator's context");

    MPI_Comm merged;
    MPI_Intercomm_merge(inter, color, &merged);
    expect_count(base, "after MPI_Intercomm_merge");
    sum_ranks(merged);
    expect_count(base + 1, "after a collective on the merged communicator");
    check_ctx_matches(merged, "merged intercommunicator");

    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    expect_count(base, "after freeing the intercommunicator and its parts");
}

/* Communicators with contexts that the program never frees: MPI_Finalize
 * must release their contexts without trouble. */
static void leave_unfreed(MPI_Comm *kept)
{
    int base = strata_ctx_live_count();
    MPI_Comm_dup(MPI_COMM_WORLD, &kept[0]);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &kept[1]);
    sum_ranks(kept[0]);
    sum_ranks(kept[1]);
    /* This one never had a collective: it has no context to release. */
    MPI_Comm_dup(MPI_COMM_WORLD, &kept[2]);
    expect_count(base + 2, "after creating the communicators left unfreed");
}

int main(int argc, char **argv)
{
    int cycles = 200;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = atoi(argv[++i]);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    test_world_and_dup();
    test_split_and_create();
    test_cycles(cycles);
    test_self();
    test_intercomm();
    MPI_Comm kept[3];
    leave_unfreed(kept);
    /* WORLD, SELF and the two kept communicators with a collective. */
    expect_count(4, "before MPI_Finalize");
    test_pass("lifecycle");
    fflush(stdout);

    MPI_Finalize();
    /* No MPI (and so no CHECK) after MPI_Finalize: a plain exit status. */
    if (strata_ctx_live_count() != 0) {
        fprintf(stderr, "FAIL rank %d: %d contexts still live after MPI_Finalize\n", world_rank,
                strata_ctx_live_count());
        return 1;
    }
    if (segment_mappings() != 0) {
        fprintf(stderr, "FAIL rank %d: %d shared segments still mapped after MPI_Finalize\n",
                world_rank, segment_mappings());
        return 1;
    }
    if (strata_runtime() != NULL) {
        fprintf(stderr, "FAIL rank %d: strata still set up after MPI_Finalize\n", world_rank);
        return 1;
    }
    return 0;
}
