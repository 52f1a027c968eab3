/* strata-info: what strata sees and decides on this machine.  Run it under
 * the MPI launcher (strata-run -n N strata-info), like any MPI program.
 *
 *   strata-info            host MPI, transports, topology, hierarchy of
 *                          MPI_COMM_WORLD, configuration, collectives served
 *   strata-info --config   only the configuration table
 *   strata-info --explain <collective> <size> [-n ranks]
 *                          the cost model's prediction for every algorithm of
 *                          one collective (Reduce_scatter(_block), Scan,
 *                          Exscan: of both paths), and what decides the choice
 *   strata-info --explain-nodes <bcast|reduce> <size> <nodes> <ranks per node>
 *                          the model's view of a call across nodes: every
 *                          tree among node leaders, the node's own part,
 *                          and what overlapping the two gains
 *   strata-info --traffic bcast <size> [--root R] [-n ranks]
 *                          the bytes and messages STRATA_STATS will count for
 *                          that broadcast, by distance, from the same trees
 *                          the collective follows */
#include <ctype.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "info.h"
#include "coll/coll.h"
#include "coll/select.h"
#include "coll/tree.h"
#include "coll/tuning_file.h"
#include "config/config.h"
#include "context/context.h"
#include "context/runtime.h"
#include "route/route.h"
#include "net/net_tree.h"
#include "strata.h"
#include "coll/device_reduce.h"
#include "transport/device.h"
#include "heap/heap.h"
#include "shm/arena.h"
#include "transport/probe.h"
#include "transport/registry.h"
#include "util/stats.h"

static void print_config(void)
{
    printf("\nConfiguration (environment variables):\n");
    for (const struct strata_config_var *v = strata_config_vars(); v->name; v++) {
        const char *set = getenv(v->name);
        printf("  %-24s = %-22s default %s\n      accepts %s\n      %s\n", v->name,
               set ? set : "(unset)", v->default_value, v->accepts, v->meaning);
    }
}

static void print_topology(const struct strata_runtime *rt)
{
    const struct strata_levels *lv = &rt->levels;
    printf("\nTopology%s:\n  Machine", strata_config()->topology[0] ? " (imposed by STRATA_TOPOLOGY)" : "");
    for (int i = 0; i < lv->nlevels; i++)
        printf(" > %s x%d%s", strata_hw_type_name(lv->type[i]), lv->count[i],
               lv->same_as_coarser[i] ? " (=)" : "");
    printf("\n  (=) marks a level that partitions the machine like the one above it\n");
}

/* One line per rank: node, binding and location, gathered to rank 0. */
static void print_ranks(const struct strata_runtime *rt)
{
    char line[256];
    snprintf(line, sizeof line, "  rank %d: node %d, local rank %d of %d, binding PU %s",
             rt->world_rank, rt->node, rt->local_rank, rt->local_size, rt->binding);
    char *all = rt->world_rank == 0 ? malloc(sizeof line * (size_t)rt->world_size) : NULL;
    PMPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (all) {
        printf("\nRanks (%d on %d node%s%s):\n", rt->world_size, rt->nnodes,
               rt->nnodes == 1 ? "" : "s", strata_config()->virtual_nodes > 1 ? ", virtual" : "");
        for (int r = 0; r < rt->world_size; r++) printf("%s\n", all + (size_t)r * sizeof line);
        free(all);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int config_only = argc > 1 && !strcmp(argv[1], "--config");
    if (argc > 1 && !strcmp(argv[1], "--explain-nodes")) {
        int status = rank == 0 ? info_explain_nodes(argc - 2, argv + 2) : 0;
        MPI_Finalize();
        return status;
    }
    if (argc > 1 && !strcmp(argv[1], "--traffic")) {
        int status = info_traffic_main(argc, argv, rank, size);
        MPI_Finalize();
        return status;
    }
    if (argc > 1 && !strcmp(argv[1], "--explain")) {
        int status = info_explain_main(argc, argv, rank, size);
        MPI_Finalize();
        return status;
    }

    if (rank == 0 && !config_only) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len, major, minor;
        MPI_Get_library_version(version, &len);
        MPI_Get_version(&major, &minor);
        char *nl = strchr(version, '\n');
        if (nl) *nl = '\0';
        printf("strata %s\nHost MPI: %s (MPI %d.%d)\n", strata_version(), version, major, minor);
        /* What this build intercepts beyond the C collectives: the Fortran
         * bindings (src/fortran/calls.def), the host's MPI-4 additions where
         * CMake found them. */
        printf("Entry points: the C collectives; from Fortran, MPI_Init, MPI_Init_thread, "
               "MPI_Finalize, the collectives, their nonblocking forms%s and the completion calls "
               "(mpif.h and use mpi in every name mangling, "
               "%s; counted under the C names)%s%s\n",
#ifdef STRATA_HAVE_PERSISTENT_COLL
               " and persistent forms",
#else
               "",
#endif
#ifdef OPEN_MPI
               "use mpi_f08",
#else
               "use mpi_f08's buffer-less calls, its others through the C functions",
#endif
#ifdef STRATA_HAVE_LARGE_COUNT
               ", their MPI-4 large-count forms (MPI_Bcast_c ... MPI_Alltoallv_c, "
               "MPI_Ibcast_c ... MPI_Ialltoallv_c"
#ifdef STRATA_HAVE_PERSISTENT_COLL
               ", MPI_Bcast_init_c ... MPI_Alltoallv_init_c"
#endif
               "; counted under the C names)",
#else
               " (the host MPI has no MPI-4 large-count forms)",
#endif
#ifdef STRATA_HAVE_HW_SPLIT_TYPES
               ", MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED/HW_UNGUIDED"
#else
               ""
#endif
        );
    }
    const struct strata_runtime *rt = strata_runtime();
    if (config_only || !rt) {
        if (rank == 0) {
            if (!rt) printf("\nstrata is off: %s\n", strata_runtime_state()->why_disabled[0]
                                  ? strata_runtime_state()->why_disabled
                                  : "MPI_Init did not go through strata");
            if (strata_config()) print_config();
        }
        MPI_Finalize();
        return 0;
    }

    /* Transports, probed among the ranks of each machine. */
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    char xport_why[8][512], shm_why[512] = "";
    int xport_ok[8];
    int host_size, nxport = strata_transport_count() < 8 ? strata_transport_count() : 8;
    MPI_Comm_size(host, &host_size);
    for (int i = 0; i < nxport; i++) {
        const struct strata_transport *t = strata_transport_at(i);
        xport_why[i][0] = '\0';
        /* -1: nothing to probe (one rank here, or a transport that needs none). */
        xport_ok[i] = host_size > 1 && t->probe ? t->probe(host, xport_why[i], sizeof xport_why[i])
                                                : -1;
    }
    int shm_ok = strata_shm_probe(1 << 20, shm_why, sizeof shm_why);
    MPI_Comm_free(&host);
    if (rank == 0) {
        printf("\nTransports (probed between the ranks of this machine; in use: %s%s%s%s):\n",
               rt->transport->name, rt->transport_why[0] ? ", because " : "",
               rt->transport_why, "");
        for (int i = 0; i < nxport; i++) {
            const struct strata_transport *t = strata_transport_at(i);
            char features[128];
            strata_transport_features(t, features, sizeof features);
            printf("  %s: ", t->name);
            if (xport_ok[i] > 0) printf("works");
            else if (!xport_ok[i]) printf("does not work: %s", xport_why[i]);
            else if (t->probe) printf("not probed (one rank on this machine; run with -n 2 or more)");
            else printf("needs no probe");
            printf(" [%s] %s\n", features, t->summary);
        }
        printf("  /dev/shm: %s%s\n", shm_ok ? "works" : "does not work: ", shm_why);
        /* Device buffers (transport/device.h): rank 0's driver; the job's
         * verdict was agreed at MPI_Init. */
        printf("\nDevice memory (CUDA, STRATA_CUDA_LIB): %s\n", strata_device_why());
        if (rt->device_world) {
            printf("  device buffers are staged through pinned host memory (all sixteen blocking "
                   "collectives); a large MPI_Bcast with device buffers on every rank uses CUDA "
                   "IPC inside nodes (tried per call, host staging if a rank cannot map its "
                   "peer); reductions inside collectives run on the staged host copies (CPU); "
                   "nonblocking and persistent calls on device buffers are refused "
                   "(MPI_ERR_BUFFER)\n");
            printf("  device reducer (STRATA_CUDA_PLUGIN): %s\n", strata_device_reducer_why());
        }
        else
            printf("  no rank of this job has a device: collectives behave as without device "
                   "support\n");
        size_t heap_min;
        const char *heap_why;
        struct strata_arena_usage u;
        int heap_on = strata_heap_enabled(&heap_min, &heap_why);
        strata_arena_usage(&u);
        if (heap_on)
            printf("  shared heap: on, malloc-family allocations of %zu bytes or more", heap_min);
        else if (heap_why)
            printf("  shared heap: refused (%s)", heap_why);
        else
            printf("  shared heap: off (STRATA_SHARED_HEAP=1 turns it on)");
        printf("; this rank's arena holds %zu bytes in %zu allocations (%zu mapped, grown %zu "
               "times; it serves MPI_Alloc_mem on transport map)\n", u.in_use, u.allocations,
               u.mapped, u.grows);
        print_topology(rt);
    }
    print_ranks(rt);

    /* The hierarchy and verdict for MPI_COMM_WORLD (creates its context). */
    struct strata_ctx *ctx = strata_ctx_get(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("\nHierarchy of MPI_COMM_WORLD (hint STRATA_HIERARCHY=%s; * marks leaders):\n",
               strata_config()->hierarchy);
        if (ctx && ctx->served) {
            char desc[8192];
            strata_hier_describe(&ctx->hier, desc, sizeof desc);
            fputs(desc, stdout);
        } else {
            printf("  none: %s\n", ctx ? ctx->reason : "no context");
        }
        printf("\nCollectives on MPI_COMM_WORLD:\n");
        for (int c = 0; c < STRATA_NCOLLS; c++) {
            const char *refusal = strata_route_refusal(ctx, c);
            if (refusal) printf("  %-26s host MPI (%s)\n", strata_coll_name(c), refusal);
            else printf("  %-26s strata\n", strata_coll_name(c));
        }
        /* The nonblocking and persistent forms take the blocking form's
         * route and algorithm (issue 17). */
        printf("\nNonblocking and persistent forms (the blocking form's route; progress inside "
               "MPI calls):\n");
        for (int c = 0; c < STRATA_NCOLLS; c++) {
            const char *refusal = strata_route_refusal(ctx, c);
            char forms[96];
            snprintf(forms, sizeof forms, "%s, %s%s",
                     strata_call_name(strata_call_id(c, STRATA_FORM_NONBLOCKING)),
                     strata_call_name(strata_call_id(c, STRATA_FORM_PERSISTENT)),
#if defined(STRATA_HAVE_PERSISTENT_COLL)
                     "");
#elif defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
                     " (as MPIX_)");
#else
                     " (not in this MPI)");
#endif
            printf("  %-50s %s\n", forms, refusal ? "host MPI" : "strata");
        }
        print_config();
    }
    MPI_Finalize();
    return 0;
}
