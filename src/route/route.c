/* Per-call routing between strata's algorithms and the host MPI. */
#include "route/route.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "coll/ops.h"
#include "net/net.h"
#include "config/config.h"
#include "util/log.h"
#include "util/hot.h"

STRATA_HOT const char *strata_route_refusal(const struct strata_ctx *ctx, enum strata_coll coll)
{
    if (!ctx) return "strata is off or this is not an intracommunicator";
    if (!ctx->served) return ctx->reason;
    /* One rank: every collective is a local copy or nothing, served by the
     * entry points themselves (no plane, no peers). */
    if (ctx->size == 1) return NULL;
    if (ctx->net) {
        /* Alltoall's traffic is all between nodes: a node level adds a copy
         * and takes nothing off the network. */
        if (coll == STRATA_COLL_ALLTOALL) {
            static _Thread_local char why[160];
            snprintf(why, sizeof why, "communicator spans %d nodes, and MPI_Alltoall's blocks "
                     "between nodes all cross the network: a node level would add a copy",
                     ctx->hier.nnodes);
            return why;
        }
        /* The node parts' layout records, on the largest node with the
         * smallest round a node plane can have (one region of the agreed
         * STRATA_CICO_MAX): the same bound on every rank, whatever the node. */
        if (strata_coll_is_v(strata_coll_engine(coll)))
            return strata_vblock_refusal_size(ctx->net->max_node_size, strata_tuning()->cico_max);
        /* A prefix across nodes adds whole nodes' totals in node order,
         * which is rank order only when each node's ranks are consecutive. */
        if (coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN) {
            for (int n = 0; n < ctx->net->nnodes; n++) {
                if (ctx->net->contiguous[n]) continue;
                static _Thread_local char why[200];
                snprintf(why, sizeof why, "communicator spans %d nodes whose ranks are not "
                         "consecutive (node %d), and strata's %s across nodes adds node totals in "
                         "node order", ctx->hier.nnodes, n, strata_coll_name(coll));
                return why;
            }
        }
        return NULL;
    }
    if (!ctx->plane) return ctx->plane_why;
    /* The same plane, so the same answer, on every rank. */
    if (strata_coll_is_v(strata_coll_engine(coll))) return strata_vblock_refusal(ctx->plane);
    return NULL;
}

STRATA_HOT const char *strata_route_path(const struct strata_plane *p, size_t bytes)
{
    size_t cico = p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
    if (bytes <= STRATA_TINY_MAX) return "tiny payload in the flag lines (Allreduce) or copy-in/copy-out";
    if (bytes <= cico) return "copy-in/copy-out through the segment";
    if (!strata_plane_single_copy(p)) return "segment rounds (no single-copy transport)";
    /* Names of the stats report: a fixed string per transport. */
    return (p->xport->features & STRATA_XPORT_MAP_PEER)
               ? "pipelined single copy (transport map)"
               : "pipelined single copy (transport cma)";
}

STRATA_HOT void strata_route_served(const struct strata_ctx *ctx, int call, const char *algorithm,
                                    size_t bytes)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 2) return;
    strata_verbose(2, "%s on communicator #%lu: strata, %zu bytes, %s",
                   strata_call_name(call), ctx->serial, bytes, algorithm);
}

void strata_route_to_host(const struct strata_ctx *ctx, int call, const char *reason)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < 2) return;
    strata_verbose(2, "%s on communicator #%lu: host MPI (%s)", strata_call_name(call),
                   ctx ? ctx->serial : 0UL, reason);
}

/* A private communicator on which strata asks the host MPI whether a
 * datatype is committed (a send to MPI_PROC_NULL checks it and moves
 * nothing); its errors return rather than reach the application's handler.
 * Freed with MPI_COMM_SELF's attributes, at MPI_Finalize. */
static MPI_Comm type_check_comm = MPI_COMM_NULL;
static pthread_once_t type_check_once = PTHREAD_ONCE_INIT;

static int free_type_check_comm(MPI_Comm self, int keyval, void *value, void *extra)
{
    if (type_check_comm != MPI_COMM_NULL) PMPI_Comm_free(&type_check_comm);
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void make_type_check_comm(void)
{
    int keyval;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &type_check_comm) != MPI_SUCCESS) {
        type_check_comm = MPI_COMM_NULL;
        return;
    }
    PMPI_Comm_set_errhandler(type_check_comm, MPI_ERRORS_RETURN);
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_type_check_comm, &keyval, NULL) ==
        MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL);
}

static int committed(MPI_Datatype type)
{
    pthread_once(&type_check_once, make_type_check_comm);
    if (type_check_comm == MPI_COMM_NULL) return 1; /* cannot tell: as before */
    /* One element: MPICH checks commitment only when there is data.  Nothing
     * is read from the address. */
    static char nothing;
    return PMPI_Send(&nothing, 1, type, MPI_PROC_NULL, 0, type_check_comm) == MPI_SUCCESS;
}

STRATA_HOT int strata_route_bad_data(const void *buf, long long count, MPI_Datatype type)
{
    int ni, na, nd, combiner, size;
    if (count < 0 || type == MPI_DATATYPE_NULL) return 1;
    /* A predefined type is named and committed: no need to ask the host. */
    if (!strata_predefined_c_type(type)) {
        if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return 1;
        if (combiner != MPI_COMBINER_NAMED && !committed(type)) return 1;
    }
    if (count == 0 || (buf != MPI_BOTTOM && buf != MPI_IN_PLACE)) return 0;
    if (strata_type_size(type, &size) != MPI_SUCCESS || size == 0) return 0;
    if (buf == MPI_IN_PLACE) return 1;
    /* MPI_BOTTOM with a type of absolute addresses is a real buffer. */
    MPI_Aint true_lb, true_extent;
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    return true_lb == 0;
}

/* The predefined types with holes (padding between their two members). */
static int padded_pair(MPI_Datatype t)
{
    return t == MPI_FLOAT_INT || t == MPI_DOUBLE_INT || t == MPI_LONG_INT ||
           t == MPI_SHORT_INT || t == MPI_LONG_DOUBLE_INT;
}

STRATA_HOT void strata_route_data_arg(const void *buf, long long count, int blocks,
                                      MPI_Datatype type, struct strata_data_arg *d)
{
    int ni, na, nd, combiner = MPI_COMBINER_NAMED, size;
    *d = (struct strata_data_arg){buf, 1, -1, 0, 0};
    if (count < 0 || type == MPI_DATATYPE_NULL) return;
    /* A predefined type is named and committed: no need to ask the host
     * (its envelope cost about a fifth of an 8-byte Allgather's entry). */
    if (!strata_predefined_c_type(type) &&
        PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return;
    int named = combiner == MPI_COMBINER_NAMED;
    if ((!named && !committed(type)) || strata_type_size(type, &size) != MPI_SUCCESS || size < 0)
        return;
    if (size > 0 && count > LLONG_MAX / size / (blocks ? blocks : 1)) return; /* the host's to judge */
    d->bytes = count * size;
    d->bad = 0;
    long long n = count * blocks;
    if (n == 0 || size == 0) return;
    /* Predefined types (but the padded pairs) have no holes and start at
     * their address: no need to ask the host MPI. */
    MPI_Aint lb = 0, extent = size, true_lb = 0, true_extent = size;
    if (!named || padded_pair(type)) {
        PMPI_Type_get_extent(type, &lb, &extent);
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    }
    /* MPI_BOTTOM with a type of absolute addresses is a real buffer. */
    if (buf == MPI_IN_PLACE || (buf == MPI_BOTTOM && true_lb == 0)) {
        d->bad = 1;
        return;
    }
    if (true_extent == size && (n == 1 || extent == size)) {
        d->lo = (uintptr_t)buf + (uintptr_t)true_lb;
        d->hi = d->lo + (uintptr_t)(n * size);
    }
}

STRATA_HOT int strata_route_overlap(const struct strata_data_arg *a,
                                    const struct strata_data_arg *b)
{
    if (a->bytes <= 0 || b->bytes <= 0) return 0;
    if (a->buf == b->buf && a->buf != MPI_BOTTOM) return 1;
    return a->lo < a->hi && b->lo < b->hi && a->lo < b->hi && b->lo < a->hi;
}
