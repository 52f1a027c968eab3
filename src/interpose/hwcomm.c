/* The hardware communicators API of include/strata.h, following the hsplit
 * paper (sections 3 and 4): colors come from each rank's location, computed
 * locally from the locations gathered at MPI_Init. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/runtime.h"
#include "strata.h"
#include "util/log.h"

/* What strata_comm_get_hlevel_info reports, cached on the new communicator. */
struct hlevel_info {
    int num_comms;
    int index;
    char type[STRATA_MAX_LEVEL_NAME];
};

static int info_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

/* A duplicate stands for the same resource, so it carries the same info. */
static int info_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct hlevel_info *copy = malloc(sizeof *copy);
    if (!copy) return MPI_ERR_NO_MEM;
    *copy = *(struct hlevel_info *)in;
    *(void **)out = copy;
    *flag = 1;
    return MPI_SUCCESS;
}

static int info_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    free(value);
    return MPI_SUCCESS;
}

static void create_info_keyval(void)
{
    PMPI_Comm_create_keyval(info_copy, info_delete, &info_keyval, NULL);
}

const char *strata_version(void) { return STRATA_VERSION " (" STRATA_HOST_MPI ")"; }

static void set_name(char *type, int typelen, const char *name)
{
    if (type && typelen > 0) snprintf(type, (size_t)typelen, "%s", name);
}

/* The locations of ranks[0..n-1] of comm; NULL if strata has none. */
static const struct strata_location **locations_of(MPI_Comm comm, int n, const int *ranks,
                                                   int *err)
{
    const struct strata_runtime *rt = strata_runtime();
    *err = MPI_SUCCESS;
    if (!rt) {
        strata_error("the hardware communicators need strata set up (%s)",
                     strata_runtime_state()->why_disabled[0]
                         ? strata_runtime_state()->why_disabled : "MPI_Init did not go through strata");
        *err = MPI_ERR_OTHER;
        return NULL;
    }
    MPI_Group group, world_group;
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int *world = malloc(sizeof(int) * (size_t)(n ? n : 1));
    const struct strata_location **locs = malloc(sizeof *locs * (size_t)(n ? n : 1));
    if (!world || !locs) *err = MPI_ERR_NO_MEM;
    else if (PMPI_Group_translate_ranks(group, n, ranks, world_group, world) != MPI_SUCCESS)
        *err = MPI_ERR_RANK;
    for (int i = 0; *err == MPI_SUCCESS && i < n; i++) {
        if (world[i] == MPI_UNDEFINED) *err = MPI_ERR_COMM; /* outside MPI_COMM_WORLD */
        else locs[i] = &rt->world_loc[world[i]];
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    free(world);
    if (*err != MPI_SUCCESS) {
        free(locs);
        return NULL;
    }
    return locs;
}

static const struct strata_location **all_locations(MPI_Comm comm, int *size, int *err)
{
    PMPI_Comm_size(comm, size);
    int *ranks = malloc(sizeof(int) * (size_t)*size);
    if (!ranks) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    for (int i = 0; i < *size; i++) ranks[i] = i;
    const struct strata_location **locs = locations_of(comm, *size, ranks, err);
    free(ranks);
    return locs;
}

/* The name of the deepest level shared by n locations. */
static const char *common_level_name(const struct strata_levels *lv,
                                     const struct strata_location *const *locs, int n)
{
    int common = strata_locations_common_level(lv, locs, n);
    if (common == -2) return "Cluster";
    return strata_levels_class_name(lv, common);
}

/* This rank's color for the split, and the name of the resource. */
static int split_color(const struct strata_levels *lv, const struct strata_location *const *locs,
                       int size, int me, int type, const char **name)
{
    const struct strata_location *mine = locs[me];
    if (type == STRATA_HW_UNKNOWN) { /* unguided */
        int common = strata_locations_common_level(lv, locs, size);
        if (common == -2) {
            *name = "Machine";
            return mine->node;
        }
        int split = common + 1;
        if (split >= lv->nlevels) return MPI_UNDEFINED;
        *name = strata_levels_class_name(lv, split);
        return mine->idx[split] >= 0 ? mine->idx[split] : MPI_UNDEFINED;
    }
    if (type == STRATA_HW_MACHINE) {
        *name = "Machine";
        return mine->node;
    }
    if (type == STRATA_HW_CLUSTER) {
        *name = "Cluster";
        return 0;
    }
    int pos = strata_levels_find(lv, type);
    *name = strata_hw_type_name(type);
    if (pos < 0 || mine->idx[pos] < 0) return MPI_UNDEFINED;
    return mine->node * lv->count[pos] + mine->idx[pos];
}

/* Caches num_comms and index on the new communicator.  Every rank's color
 * is computed here from the locations, without communicating: the split
 * must be one PMPI_Comm_split and nothing else, since MPI_Comm_split_type
 * lets some ranks pass MPI_UNDEFINED, which the host MPI serves with a bare
 * split. */
static int attach_info(const struct strata_levels *lv, const struct strata_location *const *locs,
                       int size, int type, int color, const char *name, MPI_Comm newcomm)
{
    if (newcomm == MPI_COMM_NULL) return MPI_SUCCESS;
    int *colors = malloc(sizeof(int) * (size_t)size);
    if (!colors) return MPI_ERR_NO_MEM;
    const char *unused;
    for (int r = 0; r < size; r++) colors[r] = split_color(lv, locs, size, r, type, &unused);
    int num = 0, index = 0;
    for (int r = 0; r < size; r++) {
        if (colors[r] == MPI_UNDEFINED) continue;
        int first = 1;
        for (int q = 0; q < r && first; q++) first = colors[q] != colors[r];
        if (!first) continue;
        num++;
        if (color != MPI_UNDEFINED && colors[r] < color) index++;
    }
    free(colors);
    struct hlevel_info *info = malloc(sizeof *info);
    if (!info) return MPI_ERR_NO_MEM;
    info->num_comms = num;
    info->index = index;
    set_name(info->type, sizeof info->type, name);
    pthread_once(&info_once, create_info_keyval);
    return PMPI_Comm_set_attr(newcomm, info_keyval, info);
}

int strata_comm_split_hw(MPI_Comm comm, const char *level, int key, MPI_Comm *newcomm)
{
    int type = STRATA_HW_UNKNOWN;
    if (level) {
        type = strata_hw_type_parse(level);
        if (type == STRATA_HW_UNKNOWN) {
            strata_error("strata_comm_split_hw: \"%s\" is not a level name", level);
            return MPI_ERR_ARG;
        }
    }
    int size, rank, err;
    const struct strata_location **locs = all_locations(comm, &size, &err);
    if (!locs) return err;
    PMPI_Comm_rank(comm, &rank);
    const char *name = "Unknown";
    const struct strata_levels *lv = &strata_runtime()->levels;
    int color = split_color(lv, locs, size, rank, type, &name);
    err = PMPI_Comm_split(comm, color, key, newcomm);
    if (err == MPI_SUCCESS) err = attach_info(lv, locs, size, type, color, name, *newcomm);
    free(locs);
    return err;
}

int strata_comm_hsplit_with_roots(MPI_Comm comm, MPI_Comm *newcomm, MPI_Comm *rootscomm)
{
    int rank, newrank = -1;
    PMPI_Comm_rank(comm, &rank);
    int err = strata_comm_split_hw(comm, NULL, rank, newcomm);
    if (err != MPI_SUCCESS) return err;
    if (*newcomm != MPI_COMM_NULL) PMPI_Comm_rank(*newcomm, &newrank);
    /* All roots lie inside comm, whose members share the object being split,
     * so one color gathers the roots of this split (the paper's ancestor
     * index is constant here). */
    return PMPI_Comm_split(comm, newrank == 0 ? 0 : MPI_UNDEFINED, rank, rootscomm);
}

int strata_comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index, char *type,
                                int typelen)
{
    pthread_once(&info_once, create_info_keyval);
    void *value = NULL;
    int found = 0;
    int err = PMPI_Comm_get_attr(comm, info_keyval, &value, &found);
    if (err != MPI_SUCCESS) return err;
    if (found) {
        const struct hlevel_info *info = value;
        *num_comms = info->num_comms;
        *index = info->index;
        set_name(type, typelen, info->type);
        return MPI_SUCCESS;
    }
    int size;
    const struct strata_location **locs = all_locations(comm, &size, &err);
    if (!locs) return err;
    *num_comms = 1;
    *index = 0;
    set_name(type, typelen, common_level_name(&strata_runtime()->levels, locs, size));
    free(locs);
    return MPI_SUCCESS;
}

int strata_comm_get_min_hlevel(MPI_Comm comm, int nranks, const int ranks[], char *type,
                               int typelen)
{
    int rank, size, mine = 0, err;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    if (nranks < 0 || (nranks > 0 && !ranks)) return MPI_ERR_ARG;
    for (int i = 0; i < nranks; i++) {
        if (ranks[i] < 0 || ranks[i] >= size) return MPI_ERR_RANK;
        mine |= ranks[i] == rank;
    }
    if (!mine) {
        set_name(type, typelen, "Unknown");
        return MPI_SUCCESS;
    }
    const struct strata_location **locs = locations_of(comm, nranks, ranks, &err);
    if (!locs) return err;
    set_name(type, typelen, common_level_name(&strata_runtime()->levels, locs, nranks));
    free(locs);
    return MPI_SUCCESS;
}
