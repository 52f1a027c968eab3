/* See hwcomm_split_type.h. */
#include "hwcomm_split_type.h"

#include <stdio.h>
#include <string.h>

#include "strata.h"
#include "testutil.h"

#ifndef STRATA_HAVE_HW_SPLIT_TYPES

int split_type_available(void) { return 0; }
void split_type_check_unguided(MPI_Comm old, int key, MPI_Comm expected, const char *type) {}
void split_type_check_guided(MPI_Comm comm, const char *value, int key, MPI_Comm expected) {}
void split_type_check_rules(void) {}

#else

#define KEY "mpi_hw_resource_type"

int split_type_available(void) { return 1; }

/* Same members in the same order (MPI_CONGRUENT), or both MPI_COMM_NULL. */
static void expect_congruent(MPI_Comm got, MPI_Comm want, const char *what)
{
    if (got == MPI_COMM_NULL || want == MPI_COMM_NULL) {
        CHECK(got == want, "%s: %s where %s was expected", what,
              got == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator",
              want == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
        return;
    }
    int result = -1;
    MPI_Comm_compare(got, want, &result);
    CHECK(result == MPI_CONGRUENT, "%s: MPI_Comm_compare gave %d, not MPI_CONGRUENT", what,
          result);
}

static void free_comm(MPI_Comm *comm)
{
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
}

static MPI_Comm guided(MPI_Comm comm, const char *value, int key)
{
    MPI_Info info;
    MPI_Comm out = MPI_COMM_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, KEY, value);
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, key, info, &out);
    CHECK(rc == MPI_SUCCESS, "HW_GUIDED \"%s\" returned %d", value, rc);
    MPI_Info_free(&info);
    return out;
}

void split_type_check_unguided(MPI_Comm old, int key, MPI_Comm expected, const char *type)
{
    MPI_Info info;
    MPI_Comm got = MPI_COMM_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, KEY, "left over from before"); /* replaced by the level */
    int rc = MPI_Comm_split_type(old, MPI_COMM_TYPE_HW_UNGUIDED, key, info, &got);
    CHECK(rc == MPI_SUCCESS, "HW_UNGUIDED returned %d", rc);
    char what[96];
    snprintf(what, sizeof what, "HW_UNGUIDED (%s)", type ? type : "the bottom");
    expect_congruent(got, expected, what);
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int found = 0;
    MPI_Info_get(info, KEY, MPI_MAX_INFO_VAL, value, &found);
    if (got != MPI_COMM_NULL) {
        CHECK(found && !strcmp(value, type), "%s: info says %s \"%s\", expected \"%s\"", what,
              found ? "" : "nothing,", value, type);
        int size, old_size;
        MPI_Comm_size(got, &size);
        MPI_Comm_size(old, &old_size);
        CHECK(size < old_size, "%s: %d ranks of %d, not a strict subset", what, size, old_size);
    } else {
        CHECK(found && !strcmp(value, "left over from before"),
              "%s: MPI_COMM_NULL, but the info was changed to \"%s\"", what, value);
    }
    MPI_Info_free(&info);
    /* HW_GUIDED with the value written gives the same split.  Every rank
     * of old takes part, those with MPI_COMM_NULL too (the step's type is
     * the same on every rank). */
    if (type) {
        MPI_Comm again = guided(old, type, key);
        snprintf(what, sizeof what, "HW_GUIDED with HW_UNGUIDED's \"%s\"", type);
        expect_congruent(again, got, what);
        free_comm(&again);
    }
    free_comm(&got);
}

void split_type_check_guided(MPI_Comm comm, const char *value, int key, MPI_Comm expected)
{
    MPI_Comm got = guided(comm, value, key);
    char what[96];
    snprintf(what, sizeof what, "HW_GUIDED \"%s\"", value);
    expect_congruent(got, expected, what);
    free_comm(&got);
}

/* The host MPI's own answer (PMPI_) and strata's must be alike. */
static void expect_host(int split_type, MPI_Info info, const char *what)
{
    MPI_Comm got = MPI_COMM_NULL, host = MPI_COMM_NULL;
    int rank, rc, host_rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, split_type, rank, info, &got);
    host_rc = PMPI_Comm_split_type(MPI_COMM_WORLD, split_type, rank, info, &host);
    CHECK(rc == host_rc, "%s: returned %d, the host MPI %d", what, rc, host_rc);
    expect_congruent(got, host, what);
    free_comm(&got);
    free_comm(&host);
}

void split_type_check_rules(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm want, got;

    /* The standard's reserved value: the shared-memory domain, strata's node. */
    strata_comm_split_hw(MPI_COMM_WORLD, "node", rank, &want);
    split_type_check_guided(MPI_COMM_WORLD, "mpi_shared_memory", rank, want);
    free_comm(&want);
    strata_comm_split_hw(MPI_COMM_WORLD, "numa", rank, &want);
    split_type_check_guided(MPI_COMM_WORLD, "hwloc://NUMANode", rank, want);
    free_comm(&want);

    /* Left to the host, answered as the host answers. */
    expect_host(MPI_COMM_TYPE_HW_GUIDED, MPI_INFO_NULL, "HW_GUIDED without info");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "some_other_key", "numa");
    expect_host(MPI_COMM_TYPE_HW_GUIDED, info, "HW_GUIDED without the key");
    MPI_Info_set(info, KEY, "hwthread"); /* not a strata level name */
    expect_host(MPI_COMM_TYPE_HW_GUIDED, info, "HW_GUIDED \"hwthread\"");
    MPI_Info_free(&info);
    expect_host(MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, "MPI_COMM_TYPE_SHARED");

    /* Ranks passing MPI_UNDEFINED beside ranks in a strata split: the
     * others still get their communicators, nobody waits forever. */
    int in = rank % 2 == 0;
    MPI_Comm part;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &part);
    MPI_Info_create(&info);
    MPI_Info_set(info, KEY, "numa");
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, in ? MPI_COMM_TYPE_HW_GUIDED : MPI_UNDEFINED,
                                 rank, info, &got);
    CHECK(rc == MPI_SUCCESS, "HW_GUIDED beside MPI_UNDEFINED returned %d", rc);
    MPI_Info_free(&info);
    if (in) {
        strata_comm_split_hw(part, "numa", rank, &want);
        expect_congruent(got, want, "HW_GUIDED \"numa\" beside MPI_UNDEFINED");
        free_comm(&want);
        MPI_Comm_free(&part);
    } else {
        CHECK(got == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    }
    free_comm(&got);
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, in ? MPI_COMM_TYPE_HW_UNGUIDED : MPI_UNDEFINED,
                             rank, MPI_INFO_NULL, &got);
    CHECK(rc == MPI_SUCCESS, "HW_UNGUIDED beside MPI_UNDEFINED returned %d", rc);
    if (!in) CHECK(got == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    free_comm(&got);

    /* MPI_UNDEFINED beside a split type the host serves: all ranks meet in
     * the host's split (Open MPI 5's runs allreduces of its own first). */
    int type = in ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED;
    MPI_Comm host = MPI_COMM_NULL;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, type, rank, MPI_INFO_NULL, &got);
    CHECK(rc == MPI_SUCCESS, "MPI_COMM_TYPE_SHARED beside MPI_UNDEFINED returned %d", rc);
    rc = PMPI_Comm_split_type(MPI_COMM_WORLD, type, rank, MPI_INFO_NULL, &host);
    CHECK(rc == MPI_SUCCESS, "the host's MPI_COMM_TYPE_SHARED beside MPI_UNDEFINED returned %d",
          rc);
    expect_congruent(got, host, "MPI_COMM_TYPE_SHARED beside MPI_UNDEFINED");
    free_comm(&got);
    free_comm(&host);
}

#endif
