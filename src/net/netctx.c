/* The node view of a communicator that spans several nodes. */
#include "net/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "context/runtime.h"

/* Numbers the nodes of ctx's ranks by their lowest rank and lists each
 * node's ranks in ascending order. */
static int map_nodes(struct strata_net *net, const struct strata_ctx *ctx)
{
    const struct strata_runtime *rt = strata_runtime();
    int size = ctx->size;
    int *machine_node = malloc(sizeof(int) * (size_t)size);
    net->node_of = malloc(sizeof(int) * (size_t)size);
    net->node_rank = malloc(sizeof(int) * (size_t)size);
    net->members = malloc(sizeof(int) * (size_t)size);
    net->node_start = calloc((size_t)size + 1, sizeof(int));
    if (!machine_node || !net->node_of || !net->node_rank || !net->members || !net->node_start) {
        free(machine_node);
        return -1;
    }
    net->nnodes = 0;
    for (int r = 0; r < size; r++) {
        machine_node[r] = rt->world_loc[ctx->world_rank[r]].node;
        int n = 0;
        while (n < net->nnodes && machine_node[net->members[net->node_start[n]]] != machine_node[r])
            n++;
        if (n == net->nnodes) {
            /* A new node: remember its first rank where its list will start. */
            net->node_start[n] = r;
            net->members[r] = r;
            net->nnodes++;
        }
        net->node_of[r] = n;
    }
    free(machine_node);
    /* Counting sort by node keeps ranks ascending inside each node. */
    int *count = calloc((size_t)net->nnodes + 1, sizeof(int));
    net->contiguous = malloc((size_t)net->nnodes);
    net->tree_buf = malloc(sizeof(int) * (size_t)net->nnodes);
    if (!count || !net->contiguous || !net->tree_buf) {
        free(count);
        return -1;
    }
    for (int r = 0; r < size; r++) count[net->node_of[r] + 1]++;
    for (int n = 0; n < net->nnodes; n++) count[n + 1] += count[n];
    memcpy(net->node_start, count, sizeof(int) * ((size_t)net->nnodes + 1));
    net->max_node_size = 0;
    for (int r = 0; r < size; r++) {
        int n = net->node_of[r];
        net->node_rank[r] = count[n] - net->node_start[n];
        net->members[count[n]++] = r;
    }
    free(count);
    for (int n = 0; n < net->nnodes; n++) {
        int first = net->members[net->node_start[n]], len = strata_net_node_size(net, n);
        net->contiguous[n] = net->members[net->node_start[n] + len - 1] == first + len - 1;
        if (len > net->max_node_size) net->max_node_size = len;
    }
    net->my_node = net->node_of[ctx->rank];
    net->peer_pid = malloc(sizeof(pid_t) * (size_t)size);
    if (!net->peer_pid) return -1;
    for (int r = 0; r < size; r++) net->peer_pid[r] = rt->world_pid[ctx->world_rank[r]];
    net->engine.peer_pid = net->peer_pid;
    return 0;
}

/* The workers of a node with three ranks or more: every rank but the
 * node's first, with a data plane of their own.  Collective over the node;
 * the node uses two leaders only if every one of its ranks can. */
static void setup_double_leader(struct strata_net *net)
{
    int node_size = strata_net_node_size(net, net->my_node);
    if (strata_tuning()->net_reduce_leaders < 2 || node_size < 3) return;
    int node_rank;
    PMPI_Comm_rank(net->node_comm, &node_rank);
    int first = node_rank == 0;
    PMPI_Comm_split(net->node_comm, first ? MPI_UNDEFINED : 0, node_rank, &net->workers_comm);
    int able = 1;
    if (!first) {
        char name[MPI_MAX_OBJECT_NAME];
        snprintf(name, sizeof name, "strata workers of node %d", net->my_node);
        PMPI_Comm_set_name(net->workers_comm, name);
        net->workers = strata_ctx_get(net->workers_comm);
        able = net->workers && net->workers->served && net->workers->plane;
    }
    PMPI_Allreduce(&able, &net->double_leader, 1, MPI_INT, MPI_MIN, net->node_comm);
}

int strata_net_create(struct strata_ctx *ctx, char *why, size_t whylen)
{
    struct strata_net *net = calloc(1, sizeof *net);
    if (net) net->node_comm = net->dup = net->workers_comm = MPI_COMM_NULL;
    int ok = net && !map_nodes(net, ctx);
    /* The communicators are made whatever happened on this rank: the calls
     * are collective, and the agreement that follows settles the verdict. */
    MPI_Comm node_comm, dup;
    PMPI_Comm_split(ctx->comm, ok ? net->my_node : 0, ctx->rank, &node_comm);
    PMPI_Comm_dup(ctx->comm, &dup);
    if (!ok) {
        snprintf(why, whylen, "out of memory mapping the communicator's nodes");
        PMPI_Comm_free(&dup);
        PMPI_Comm_free(&node_comm);
        if (net) strata_net_free(net);
        return -1;
    }
    net->node_comm = node_comm;
    net->dup = dup;
    char name[MPI_MAX_OBJECT_NAME];
    snprintf(name, sizeof name, "strata node %d of communicator #%lu", net->my_node, ctx->serial);
    PMPI_Comm_set_name(net->node_comm, name);
    snprintf(name, sizeof name, "strata leaders of communicator #%lu", ctx->serial);
    PMPI_Comm_set_name(net->dup, name);
    /* The node's own context: its data plane, agreed among its ranks. */
    net->node = strata_ctx_get(net->node_comm);
    setup_double_leader(net);
    ctx->net = net;
    return 0;
}

int strata_net_node_ready(const struct strata_net *net)
{
    if (!net->node || !net->node->served) return 0;
    return net->node->size == 1 || net->node->plane != NULL;
}

void strata_net_free(struct strata_net *net)
{
    if (!net) return;
    /* Freeing the node communicator releases its context (attribute
     * callback), unless MPI_Finalize released it first. */
    if (net->workers_comm != MPI_COMM_NULL) PMPI_Comm_free(&net->workers_comm);
    if (net->node_comm != MPI_COMM_NULL) PMPI_Comm_free(&net->node_comm);
    if (net->dup != MPI_COMM_NULL) PMPI_Comm_free(&net->dup);
    strata_engine_free(&net->engine);
    free(net->node_of);
    free(net->node_rank);
    free(net->node_start);
    free(net->members);
    free(net->contiguous);
    free(net->tree_buf);
    free(net->peer_pid);
    free(net->staging[0]);
    free(net->staging[1]);
    free(net);
}

void *strata_net_staging(struct strata_net *net, enum strata_net_buffer which, size_t bytes)
{
    if (bytes <= net->staging_bytes[which]) return net->staging[which];
    /* The old contents are never needed: free first, so the peak is one buffer. */
    free(net->staging[which]);
    net->staging[which] = malloc(bytes);
    net->staging_bytes[which] = net->staging[which] ? bytes : 0;
    return net->staging[which];
}
