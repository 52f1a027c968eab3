/* MPI_Comm_split_type with MPI-4's hardware split types, where the host MPI
 * defines them (STRATA_HAVE_HW_SPLIT_TYPES: MPICH 4.0 does, Open MPI 4.1
 * does not), answered from strata's view of the machine (src/topology/,
 * the same as strata_comm_split_hw) so that they agree with strata's
 * hierarchy, virtual nodes and STRATA_TOPOLOGY included:
 *
 * MPI_COMM_TYPE_HW_GUIDED: the info key "mpi_hw_resource_type" names the
 *   resource: the standard's "mpi_shared_memory" (strata's node, which is
 *   the host's shared-memory domain unless virtual nodes split it), or any
 *   level name strata_comm_split_hw accepts ("numa", "L3Cache", "package",
 *   ...; a "hwloc://" prefix is allowed, as in MPI-4.1's examples).  A rank
 *   not bound inside one object of that type gets MPI_COMM_NULL.
 * MPI_COMM_TYPE_HW_UNGUIDED: the coarsest level whose communicators are
 *   strict subsets of comm; MPI_COMM_NULL once no level splits it further
 *   (or for a rank that may move across the objects of that level).  The
 *   level chosen is written into info under "mpi_hw_resource_type" (on the
 *   ranks that get a communicator), in a spelling HW_GUIDED accepts.
 *
 * The rest goes to the host MPI unchanged, on every rank alike (the
 * standard requires the same split type and info value on every rank):
 * other split types, a guided split without the key or with a value strata
 * does not know, an intercommunicator, strata off (or not yet set up, where
 * MPI_Init bypassed it and this split is not over the whole world).  A rank passing
 * MPI_UNDEFINED goes to the host as well; both MPIs split with
 * MPI_UNDEFINED as color then, which matches strata's PMPI_Comm_split. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "context/runtime.h"
#include "strata.h"
#include "topology/location.h"
#include "util/log.h"

#ifdef STRATA_HAVE_HW_SPLIT_TYPES

#define HW_KEY "mpi_hw_resource_type"

static int host(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm,
                const char *what, const char *why)
{
    strata_verbose(2, "MPI_Comm_split_type(%s): host MPI (%s)", what, why);
    return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}

/* The level name strata_comm_split_hw takes for a guided value, or NULL. */
static const char *guided_level(const char *value)
{
    if (!strcmp(value, "mpi_shared_memory")) return "node";
    if (!strncasecmp(value, "hwloc://", 8)) value += 8;
    return strata_hw_type_parse(value) == STRATA_HW_UNKNOWN ? NULL : value;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int guided = split_type == MPI_COMM_TYPE_HW_GUIDED;
    if (!guided && split_type != MPI_COMM_TYPE_HW_UNGUIDED)
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    const char *what = guided ? "MPI_COMM_TYPE_HW_GUIDED" : "MPI_COMM_TYPE_HW_UNGUIDED";
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return host(comm, split_type, key, info, newcomm, what,
                    "not an intracommunicator: the host MPI judges it");
    /* Collective over comm like the collectives: where MPI_Init bypassed
     * strata, a split of the whole world sets it up as they do. */
    strata_runtime_start_late(comm);
    if (!strata_runtime())
        return host(comm, split_type, key, info, newcomm, what, "strata is not set up");

    if (guided) {
        char value[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        if (info != MPI_INFO_NULL &&
            PMPI_Info_get(info, HW_KEY, MPI_MAX_INFO_VAL, value, &found) != MPI_SUCCESS)
            found = 0;
        if (!found)
            return host(comm, split_type, key, info, newcomm, what, "no " HW_KEY " in the info");
        const char *level = guided_level(value);
        if (!level) {
            char why[MPI_MAX_INFO_VAL + 64];
            snprintf(why, sizeof why, HW_KEY " \"%s\" is not a level strata knows", value);
            return host(comm, split_type, key, info, newcomm, what, why);
        }
        int rc = strata_comm_split_hw(comm, level, key, newcomm);
        strata_verbose(2, "MPI_Comm_split_type(%s, \"%s\"): strata's hierarchy, %s", what, value,
                       rc != MPI_SUCCESS ? "failed" : *newcomm == MPI_COMM_NULL ? "MPI_COMM_NULL"
                                                                                : "a communicator");
        return rc;
    }

    int rc = strata_comm_split_hw(comm, NULL, key, newcomm);
    if (rc != MPI_SUCCESS || *newcomm == MPI_COMM_NULL) {
        strata_verbose(2, "MPI_Comm_split_type(%s): strata's hierarchy, %s", what,
                       rc != MPI_SUCCESS ? "failed" : "MPI_COMM_NULL (nothing splits it further)");
        return rc;
    }
    int num, index;
    char type[STRATA_MAX_LEVEL_NAME];
    rc = strata_comm_get_hlevel_info(*newcomm, &num, &index, type, sizeof type);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL) rc = PMPI_Info_set(info, HW_KEY, type);
    strata_verbose(2, "MPI_Comm_split_type(%s): strata's hierarchy, %s %d of %d", what, type,
                   index, num);
    return rc;
}

#endif
