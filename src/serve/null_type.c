/* Reductions passed MPI_DATATYPE_NULL (serve/null_type.h). */
#include "serve/null_type.h"

#include "util/log.h"
#include "util/stats.h"

int strata_null_type_answer(MPI_Comm comm, enum strata_coll coll,
                            const struct strata_build *build, int *rc)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    int call = strata_build_call_id(build, coll);
    /* Counted as a call strata answered (STRATA_STATS), as a refused
     * disagreement is. */
    if (strata_stats_enabled() && strata_build_counts(build)) strata_stats_call(call, 1);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    PMPI_Comm_get_errhandler(comm, &eh);
    int fatal = eh == MPI_ERRORS_ARE_FATAL;
    if (eh != MPI_ERRHANDLER_NULL) PMPI_Errhandler_free(&eh);
    /* A fatal handler ends the job: say why first, whatever the verbosity. */
    if (fatal)
        strata_error("%s: the datatype is MPI_DATATYPE_NULL (MPI_ERR_TYPE)", strata_call_name(call));
    else
        strata_verbose(1, "%s: the datatype is MPI_DATATYPE_NULL: MPI_ERR_TYPE, returned by "
                          "strata (some hosts end the job on it)", strata_call_name(call));
    *rc = MPI_ERR_TYPE;
    PMPI_Comm_call_errhandler(comm, MPI_ERR_TYPE);
    return 1;
}
