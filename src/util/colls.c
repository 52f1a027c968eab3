/* The names of the collectives. */
#include "util/colls.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>

static const struct {
    const char *name;       /* the C MPI name, under which everything reports */
    const char *short_name; /* accepted by the tuning file and the tools */
} colls[] = {
    [STRATA_COLL_BCAST] = {"MPI_Bcast", "bcast"},
    [STRATA_COLL_REDUCE] = {"MPI_Reduce", "reduce"},
    [STRATA_COLL_ALLREDUCE] = {"MPI_Allreduce", "allreduce"},
    [STRATA_COLL_ALLGATHER] = {"MPI_Allgather", "allgather"},
    [STRATA_COLL_GATHER] = {"MPI_Gather", "gather"},
    [STRATA_COLL_SCATTER] = {"MPI_Scatter", "scatter"},
    [STRATA_COLL_ALLTOALL] = {"MPI_Alltoall", "alltoall"},
    [STRATA_COLL_BARRIER] = {"MPI_Barrier", "barrier"},
    [STRATA_COLL_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", "reduce_scatter_block"},
    [STRATA_COLL_REDUCE_SCATTER] = {"MPI_Reduce_scatter", "reduce_scatter"},
    [STRATA_COLL_SCAN] = {"MPI_Scan", "scan"},
    [STRATA_COLL_EXSCAN] = {"MPI_Exscan", "exscan"},
    [STRATA_COLL_GATHERV] = {"MPI_Gatherv", "gatherv"},
    [STRATA_COLL_SCATTERV] = {"MPI_Scatterv", "scatterv"},
    [STRATA_COLL_ALLGATHERV] = {"MPI_Allgatherv", "allgatherv"},
    [STRATA_COLL_ALLTOALLV] = {"MPI_Alltoallv", "alltoallv"},
    [STRATA_COLL_ALLTOALLW] = {"MPI_Alltoallw", "alltoallw"},
    [STRATA_COLL_NEIGHBOR_ALLGATHER] = {"MPI_Neighbor_allgather", "neighbor_allgather"},
    [STRATA_COLL_NEIGHBOR_ALLGATHERV] = {"MPI_Neighbor_allgatherv", "neighbor_allgatherv"},
    [STRATA_COLL_NEIGHBOR_ALLTOALL] = {"MPI_Neighbor_alltoall", "neighbor_alltoall"},
    [STRATA_COLL_NEIGHBOR_ALLTOALLV] = {"MPI_Neighbor_alltoallv", "neighbor_alltoallv"},
    [STRATA_COLL_NEIGHBOR_ALLTOALLW] = {"MPI_Neighbor_alltoallw", "neighbor_alltoallw"},
};
/* A collective without a name would print as (null): every value has one. */
_Static_assert(sizeof colls / sizeof colls[0] == STRATA_NCOLLS,
               "every enum strata_coll value needs its names here");

const char *strata_coll_name(enum strata_coll coll) { return colls[coll].name; }

const char *strata_coll_short_name(enum strata_coll coll) { return colls[coll].short_name; }

int strata_coll_parse(const char *name)
{
    for (int c = 0; c < STRATA_NCOLLS; c++)
        if (!strcasecmp(name, colls[c].name) || !strcasecmp(name, colls[c].short_name))
            return c;
    return -1;
}

void strata_coll_algorithm_variable(enum strata_coll coll, char *out, size_t outlen)
{
    const char *name = strata_coll_name(coll) + 4; /* after "MPI_" */
    size_t n = (size_t)snprintf(out, outlen, "STRATA_");
    for (; *name && n + 1 < outlen; name++) out[n++] = (char)toupper((unsigned char)*name);
    snprintf(out + n, outlen - n, "_ALGORITHM");
}

/* The names of the other forms follow the standard's pattern (MPI_Ibcast,
 * MPI_Bcast_init), built once; a collective appended to enum strata_coll
 * gets its forms' names without an edit here. */
static char form_names[STRATA_NFORMS][STRATA_NCOLLS][2][48];
static void make_form_names(void)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        const char *mpi = colls[c].name + 4, *shrt = colls[c].short_name;
        snprintf(form_names[0][c][0], 48, "%s", colls[c].name);
        snprintf(form_names[0][c][1], 48, "%s", shrt);
        snprintf(form_names[1][c][0], 48, "MPI_I%c%s", tolower((unsigned char)mpi[0]), mpi + 1);
        snprintf(form_names[1][c][1], 48, "i%s", shrt);
        snprintf(form_names[2][c][0], 48, "%s_init", colls[c].name);
        snprintf(form_names[2][c][1], 48, "%s_init", shrt);
    }
}

#include <pthread.h>
static pthread_once_t form_names_once = PTHREAD_ONCE_INIT;

const char *strata_call_name(int id)
{
    pthread_once(&form_names_once, make_form_names);
    return form_names[strata_call_form(id)][strata_call_coll(id)][0];
}

int strata_call_parse(const char *name)
{
    pthread_once(&form_names_once, make_form_names);
    for (int f = 0; f < STRATA_NFORMS; f++)
        for (int c = 0; c < STRATA_NCOLLS; c++)
            if (!strcasecmp(name, form_names[f][c][0]) || !strcasecmp(name, form_names[f][c][1]))
                return strata_call_id((enum strata_coll)c, (enum strata_coll_form)f);
    return -1;
}
