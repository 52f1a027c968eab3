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
 * MPI_Init bypassed it and this split is not over the whole world).
 *
 * A rank may pass MPI_UNDEFINED beside ranks passing a split type, and it
 * cannot know which.  MPICH serves it with a bare MPI_Comm_split, which
 * would match strata's; Open MPI 5 runs its own protocol (two allreduces,
 * then the split), which strata's split does not match: the job hangs.  So
 * on an intracommunicator strata set up, every rank first says with one
 * PMPI_Allreduce whether its call is for strata, for the host, or
 * MPI_UNDEFINED: for the host if any rank's is (every rank then calls the
 * host with its own arguments), else for strata if any rank's is (a rank
 * passing MPI_UNDEFINED then takes part in strata's split with that
 * color).  That is one small collective more per split, on calls that
 * create a communicator. */
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
    /* Said only of the types strata could serve: other splits are the host's by nature. */
    if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED)
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

/* Whether this rank's call is one strata serves: a hardware type and, for
 * HW_GUIDED, a level it knows in the info (*level, NULL for HW_UNGUIDED);
 * why not in *why otherwise. */
static int for_strata(int split_type, MPI_Info info, const char **level, char *value,
                      char *why, size_t whylen)
{
    *level = NULL;
    if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) return 1;
    if (split_type != MPI_COMM_TYPE_HW_GUIDED) {
        snprintf(why, whylen, "not a hardware split type");
        return 0;
    }
    int found = 0;
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get(info, HW_KEY, MPI_MAX_INFO_VAL, value, &found) != MPI_SUCCESS)
        found = 0;
    if (!found) {
        snprintf(why, whylen, "no " HW_KEY " in the info");
        return 0;
    }
    *level = guided_level(value);
    if (!*level) {
        snprintf(why, whylen, HW_KEY " \"%.*s\" is not a level strata knows", MPI_MAX_INFO_VAL,
                 value);
        return 0;
    }
    return 1;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int guided = split_type == MPI_COMM_TYPE_HW_GUIDED;
    int hw = guided || split_type == MPI_COMM_TYPE_HW_UNGUIDED;
    const char *what = guided ? "MPI_COMM_TYPE_HW_GUIDED"
                       : hw   ? "MPI_COMM_TYPE_HW_UNGUIDED"
                              : "another split type";
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return host(comm, split_type, key, info, newcomm, what,
                    "not an intracommunicator: the host MPI judges it");
    /* Collective over comm like the collectives: where MPI_Init bypassed
     * strata, a split of the whole world sets it up as they do. */
    strata_runtime_start_late(comm);
    if (!strata_runtime())
        return host(comm, split_type, key, info, newcomm, what, "strata is not set up");

    char value[MPI_MAX_INFO_VAL + 1] = "", why[MPI_MAX_INFO_VAL + 64] = "";
    const char *level = NULL;
    int undefined = split_type == MPI_UNDEFINED;
    int mine = !undefined && for_strata(split_type, info, &level, value, why, sizeof why);
    /* [0]: some rank's call is for the host; [1]: some rank's is strata's. */
    int votes[2] = {!undefined && !mine, mine};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, votes, 2, MPI_INT, MPI_MAX, comm);
    if (rc != MPI_SUCCESS) return rc;
    if (votes[0] || !votes[1]) {
        if (hw && !mine) return host(comm, split_type, key, info, newcomm, what, why);
        if (hw) /* erroneous: the ranks passed different split types or values */
            return host(comm, split_type, key, info, newcomm, what,
                        "another rank's call is for the host MPI");
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    }
    if (undefined) {
        /* Beside ranks whose split strata serves: its one PMPI_Comm_split. */
        strata_verbose(2, "MPI_Comm_split_type(MPI_UNDEFINED): MPI_COMM_NULL, beside other "
                          "ranks' hardware split served by strata");
        return PMPI_Comm_split(comm, MPI_UNDEFINED, key, newcomm);
    }

    if (guided) {
        rc = strata_comm_split_hw(comm, level, key, newcomm);
        strata_verbose(2, "MPI_Comm_split_type(%s, \"%s\"): strata's hierarchy, %s", what, value,
                       rc != MPI_SUCCESS ? "failed" : *newcomm == MPI_COMM_NULL ? "MPI_COMM_NULL"
                                                                                : "a communicator");
        return rc;
    }

    rc = strata_comm_split_hw(comm, NULL, key, newcomm);
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
