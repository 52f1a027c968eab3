/* strata-info --explain and --explain-nodes: the cost model's view of one
 * collective inside a node, and of a call across nodes. */
#include <ctype.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/learn.h"
#include "coll/select.h"
#include "coll/tree.h"
#include "coll/tuning_file.h"
#include "config/config.h"
#include "context/context.h"
#include "context/runtime.h"
#include "info.h"
#include "util/colls.h"
#include "net/net_tree.h"
#include "util/stats.h"

/* ------------------------------------------------------------ --explain */

struct explain_request {
    int coll;
    size_t block;
    int ranks; /* 0: the size of MPI_COMM_WORLD */
};

/* "65536", "64K", "1M", "1G" (powers of 1024, as the STRATA_ variables). */
int info_parse_bytes(const char *s, size_t *out)
{
    char *end;
    if (*s < '0' || *s > '9') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10, end++;
    else if (*end == 'm' || *end == 'M') shift = 20, end++;
    else if (*end == 'g' || *end == 'G') shift = 30, end++;
    if (*end || v > (SIZE_MAX >> shift)) return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int has_algorithms(int coll)
{
    for (int id = 0; id < STRATA_NALGOS; id++)
        if (strata_algorithm(id)->coll == coll) return 1;
    return 0;
}

/* Reduce_scatter(_block), Scan, Exscan: no table of algorithms, a path by
 * size that the model prices (model.h's strata_model_rs_scan). */
static int is_rs_scan(int coll)
{
    return coll == STRATA_COLL_REDUCE_SCATTER_BLOCK || coll == STRATA_COLL_REDUCE_SCATTER ||
           coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN;
}

/* argv after "--explain"; 0, or -1 with the problem in err. */
static int parse_explain(int argc, char **argv, struct explain_request *rq, char *err,
                         size_t errlen)
{
    if (argc < 2) {
        snprintf(err, errlen, "--explain needs a collective and a size");
        return -1;
    }
    rq->coll = strata_coll_parse(argv[0]);
    if (rq->coll < 0 ||
        (!has_algorithms(strata_coll_engine(rq->coll)) && !is_rs_scan(rq->coll))) {
        snprintf(err, errlen, "\"%s\" is not a collective with algorithms to choose from "
                 "(bcast, gather, scatter, allgather, alltoall, gatherv, scatterv, allgatherv, "
                 "alltoallv; alltoallw and the neighbor_ ones on alltoallv's) or paths the model "
                 "prices (reduce_scatter_block, reduce_scatter, scan, exscan)", argv[0]);
        return -1;
    }
    if (info_parse_bytes(argv[1], &rq->block)) {
        snprintf(err, errlen, "\"%s\" is not a size (65536, 64K, 1M, 1G)", argv[1]);
        return -1;
    }
    rq->ranks = 0;
    if (argc == 4 && !strcmp(argv[2], "-n")) {
        char *end;
        long n = strtol(argv[3], &end, 10);
        if (*end || end == argv[3] || n < 1 || n > 1 << 20) {
            snprintf(err, errlen, "-n takes a number of ranks from 1 to %d, not \"%s\"", 1 << 20,
                     argv[3]);
            return -1;
        }
        rq->ranks = (int)n;
    } else if (argc == 3 && !strcmp(argv[2], "-n")) {
        snprintf(err, errlen, "-n needs a number of ranks");
        return -1;
    } else if (argc != 2) {
        snprintf(err, errlen, "unexpected \"%s\" after the size (only -n ranks may follow)",
                 argv[2]);
        return -1;
    }
    return 0;
}

static void print_model(const struct strata_model *m)
{
    printf("Cost model: %s\n", m->source);
    if (m->machine[0] || m->date[0] || m->cpus > 0)
        printf("  measured on %s, %s, %d CPUs\n", m->machine[0] ? m->machine : "(machine unknown)",
               m->date[0] ? m->date : "(date unknown)", m->cpus);
    printf("  times in microseconds\n");
    printf("  CMA copy of n bytes, c ranks at one process:  alpha + n*beta + lock*gamma(c)*"
           "ceil(n/page)\n");
    printf("    alpha %.3f, beta %.4g (%.1f GB/s), lock %.3f, page %.0f bytes\n", m->alpha,
           m->beta, m->beta > 0 ? 1e-3 / m->beta : 0, m->lock, m->page);
    printf("    gamma(c) measured for c = 1..%d:", m->ngamma);
    for (int c = 1; c <= m->ngamma; c++) printf(" %.3g", m->gamma[c - 1]);
    printf("\n    gamma(c) beyond: %.4g c^2 + %.4g c\n", m->gamma_a, m->gamma_b);
    printf("  shared-memory copy %.4g per byte (%.1f GB/s), private memcpy %.4g per byte "
           "(%.1f GB/s),\n  flag hand-off %.3f\n", m->shm_beta,
           m->shm_beta > 0 ? 1e-3 / m->shm_beta : 0, m->memcpy_beta,
           m->memcpy_beta > 0 ? 1e-3 / m->memcpy_beta : 0, m->flag);
    printf("  copy through a peer's mapped arena (transport map): map_alpha + n*memcpy_beta, "
           "map_alpha %.3f;\n  on transport map a call is priced with these figures when "
           "every rank's buffers are in arenas\n  by agreed settings (the shared heap on at "
           "every rank, blocks from its threshold),\n  else with the CMA figures above; a "
           "buffer outside an arena is copied by CMA either way\n", m->map_alpha);
    char why[256];
    int wins = strata_model_map_wins(m, why, sizeof why);
    printf("  map against cma: %s (%s)\n", wins ? "map wins" : "cma wins", why);
}

static void print_algorithm_k(const struct strata_algorithm *al, int k)
{
    if (al->k_meaning) printf("%s, k=%d", al->name, k);
    else printf("%s", al->name);
}

/* What decides before the model, in select.c's order: the override, then
 * the first tuning-file rule that matches; either one refused here leaves
 * the choice to what comes next (the rule: to the model). */
static void print_deciders(const struct explain_request *rq, const struct strata_model_shape *sh)
{
    char var[64], err[1024];
    int coll = strata_coll_engine(rq->coll); /* whose algorithms run the call */
    strata_coll_algorithm_variable(coll, var, sizeof var);
    const char *text = getenv(var);
    if (text && *text) {
        const struct strata_algorithm *al;
        int k;
        if (strata_algorithm_parse(coll, text, &al, &k, err, sizeof err)) {
            printf("  %s=%s is not valid: %s\n", var, text, err);
        } else {
            const char *why = strata_algorithm_refusal(al, sh->size, sh->single_copy, k);
            if (!why) {
                printf("  %s decides instead of the model: ", var);
                print_algorithm_k(al, k);
                printf("\n");
                return;
            }
            printf("  %s asks for %s: refused here (%s)\n", var, al->name, why);
        }
    }
    const char *path = getenv("STRATA_TUNING_FILE");
    if (path && *path) {
        struct strata_rule rules[STRATA_MAX_RULES];
        int n = strata_tuning_file_load(path, rules, err, sizeof err);
        if (n < 0) printf("  STRATA_TUNING_FILE: %s\n", err);
        for (int i = 0; i < n; i++) {
            const struct strata_rule *r = &rules[i];
            if (r->coll != coll || rq->block < r->min_bytes || rq->block > r->max_bytes ||
                sh->size < r->min_ranks || sh->size > r->max_ranks)
                continue;
            const struct strata_algorithm *al = strata_algorithm(r->algo);
            const char *why = strata_algorithm_refusal(al, sh->size, sh->single_copy, r->k);
            printf("  tuning file rule %d (%s) matches: ", i + 1, path);
            print_algorithm_k(al, r->k);
            if (why) printf(", refused here (%s): the model decides\n", why);
            else printf(", it decides instead of the model\n");
            return;
        }
        if (n >= 0) printf("  no rule of the tuning file %s matches: the model decides\n", path);
        return;
    }
    printf("  the model decides (no %s, no STRATA_TUNING_FILE)\n", var);
}

/* Reduce_scatter(_block), Scan, Exscan: both paths priced, the one the
 * size picks marked, and whether the model would pick the same. */
static void explain_rs_scan(const struct explain_request *rq, const struct strata_model_shape *sh)
{
    struct strata_rs_scan_price pr[2];
    strata_model_rs_scan(strata_select_model(), sh, rq->coll, rq->block, pr);
    printf("\n  %-22s %-6s %14s\n", "path", "", "predicted us");
    int taken = pr[1].taken, cheaper = pr[1].us >= 0 && pr[1].us < pr[0].us;
    for (int i = 0; i < 2; i++) {
        if (pr[i].us >= 0)
            printf("%c %-22s %-6s %14.2f  %s\n", pr[i].taken ? '*' : ' ', pr[i].name, "-",
                   pr[i].us, pr[i].summary);
        else
            printf("  %-22s %-6s %14s  refused: %s\n", pr[i].name, "-", "-", pr[i].refusal);
    }
    size_t cap = strata_tuning()->cico_max, window = sh->region < cap ? sh->region : cap;
    printf("  * the path strata takes\n\nWhat decides on such a call:\n");
    printf("  the size, not the model: a vector of up to one copy-in/copy-out window (%zu bytes, "
           "the smaller of\n  the plane's region and STRATA_CICO_MAX) goes through the segment, "
           "a longer one %s\n", window,
           sh->single_copy ? "by single copy" : "in rounds of the window (no single-copy transport)");
    if (taken == cheaper)
        printf("  the model agrees at this size\n");
    else
        printf("  the model would take %s at this size (%.2f us against %.2f)\n",
               pr[cheaper].name, pr[cheaper].us, pr[taken].us);
    printf("  across nodes: the composition of src/net/net_rs_scan.c, its node parts as above\n");
}

static void explain(const struct explain_request *rq, int world_size)
{
    const struct strata_runtime *rt = strata_runtime();
    int ranks = rq->ranks ? rq->ranks : world_size;
    /* Collective on MPI_COMM_WORLD: every rank has the same arguments, so
     * every rank takes this branch or none does. */
    struct strata_ctx *world = ranks == world_size ? strata_ctx_get(MPI_COMM_WORLD) : NULL;
    if (rt->world_rank != 0) return;

    struct strata_model_shape shape;
    char shape_from[512];
    if (world && world->plane) {
        strata_select_shape(world->plane, &shape);
        snprintf(shape_from, sizeof shape_from, "of MPI_COMM_WORLD");
    } else {
        /* A node's communicator of that many ranks, all in one group. */
        shape = (struct strata_model_shape){ranks, 1, ranks,
                                            strata_transport_single_copy(rt->transport),
                                            2 * strata_tuning()->cico_max, 0, 0};
        long cores = sysconf(_SC_NPROCESSORS_ONLN); /* as strata_select_shape */
        if (cores > 0 && cores < ranks) shape.cores = (int)cores;
        snprintf(shape_from, sizeof shape_from, "assumed (%s%s)",
                 world ? "MPI_COMM_WORLD has no data plane: " : "not the size of MPI_COMM_WORLD",
                 world ? (world->plane_why[0] ? world->plane_why : world->reason) : "");
    }
    char cma[600];
    if (!shape.single_copy)
        snprintf(cma, sizeof cma, "none: transport %s%s%s%s", rt->transport->name,
                 rt->transport_why[0] ? " (" : "", rt->transport_why,
                 rt->transport_why[0] ? ")" : "");
    else if (rt->host_local_size < 2)
        snprintf(cma, sizeof cma, "transport %s (not probed: one rank here)", rt->transport->name);
    else snprintf(cma, sizeof cma, "transport %s", rt->transport->name);
    /* As strata_select prices this call (the agreed shared-heap threshold). */
    size_t mapped_min = strata_select_mapped();
    shape.mapped = mapped_min && rq->block >= mapped_min &&
                   (rt->transport->features & STRATA_XPORT_MAP_PEER);
    print_model(strata_select_model());
    printf("\n%s of %zu bytes%s on %d ranks\n  shape %s: %d group%s, the largest of %d ranks\n"
           "  single copy: %s; copy-in/copy-out rounds of %zu bytes\n",
           strata_coll_name(rq->coll), rq->block,
           rq->coll == STRATA_COLL_BCAST ? ""
           : is_rs_scan(rq->coll)        ? " per rank vector"
                                         : " per rank block",
           shape.size, shape_from,
           shape.groups, shape.groups == 1 ? "" : "s", shape.largest_group, cma, shape.region);
    printf("  transport chosen at MPI_Init: %s%s%s\n  copies priced as: %s\n", rt->transport->name,
           rt->transport_choice[0] ? "; " : " (named by STRATA_TRANSPORT or STRATA_CMA)",
           rt->transport_choice,
           shape.mapped ? "memcpy through peers' mappings (map_alpha, memcpy_beta)"
           : !shape.single_copy ? "copies through the segment"
           : (rt->transport->features & STRATA_XPORT_MAP_PEER)
               ? "CMA (transport map: no agreement that every buffer of the call is in an arena)"
               : "CMA");
    if (shape.size == 1)
        printf("  (a single-rank communicator: strata serves every collective locally, a "
               "copy or nothing, whatever the model says below)\n");

    if (is_rs_scan(rq->coll)) {
        explain_rs_scan(rq, &shape);
        return;
    }
    int engine = strata_coll_engine(rq->coll);
    if (engine != rq->coll)
        printf("  %s runs on %s's engine and algorithms:\n"
               "  each rank's blocks for one peer (%s)\n"
               "  form one stream, packed where they do not already lie in that order;\n"
               "  the size is the largest stream; peers on other nodes get theirs through the\n"
               "  host's point-to-point, as Alltoallv's do across nodes\n",
               strata_coll_name(rq->coll), strata_coll_name(engine),
               strata_coll_is_neighbor(rq->coll)
                   ? "its edges' blocks, in the order the host pairs duplicate edges"
                   : "its one block, whatever its datatype");
    struct strata_prediction all[STRATA_NALGOS];
    int n = strata_select_explain(strata_select_model(), &shape, engine, rq->block, all,
                                  STRATA_NALGOS);
    /* What earlier jobs measured (the model's "measured" lines, coll/learn.h):
     * the price selection starts from is the measured time where there is
     * one, else the prediction. */
    double measured[STRATA_NALGOS];
    int start = -1, nmeasured = 0;
    for (int i = 0; i < n; i++) {
        const struct strata_model_measured *r = strata_model_find_measured(
            strata_select_model(), &shape, rq->coll, strata_learn_class(rq->block),
            (int)all[i].al->id, all[i].k);
        measured[i] = r && all[i].us >= 0 ? all[i].us * r->ratio : -1;
        nmeasured += measured[i] >= 0;
        double price = measured[i] >= 0 ? measured[i] : all[i].us;
        if (all[i].us >= 0 && (start < 0 || price < (measured[start] >= 0 ? measured[start] : all[start].us)))
            start = i;
    }
    printf("\n  %-22s %-6s %14s %13s\n", "algorithm", "best k", "predicted us", "measured us");
    for (int i = 0; i < n; i++) {
        const struct strata_prediction *p = &all[i];
        char k[16] = "-", m[32] = "-";
        if (p->al->k_meaning && p->us >= 0) snprintf(k, sizeof k, "%d", p->k);
        if (measured[i] >= 0) snprintf(m, sizeof m, "%.2f", measured[i]);
        char mark = i == 0 ? '*' : ' ';
        if (nmeasured && i == start) mark = i == 0 ? '#' : '>';
        if (p->us >= 0)
            printf("%c %-22s %-6s %14.2f %13s  %s\n", mark, p->al->name, k, p->us, m,
                   p->al->summary);
        else
            printf("  %-22s %-6s %14s %13s  refused: %s\n", p->al->name, k, "-", "-",
                   p->refusal ? p->refusal : "no factor can run");
    }
    printf("  * the model's choice");
    if (nmeasured)
        printf("; > where selection starts from what earlier jobs measured (# both)");
    printf("\n  measured: what earlier jobs on this shape measured (STRATA_LEARN), kept in the "
           "model file\n\nWhat decides on such a call:\n");
    print_deciders(rq, &shape);
}

/* ------------------------------------------------------- --explain-nodes */

/* The pipelined node broadcast of `bytes` among `ranks` ranks, each on a
 * core: the one a leader feeds segment by segment (net_bcast.c). */
static double node_bcast_us(size_t bytes, int ranks)
{
    struct strata_model_shape shape = {ranks, 1, ranks, 1, 2 * strata_tuning()->cico_max, 0, 0};
    struct strata_prediction all[STRATA_NALGOS];
    int n = strata_select_explain(strata_select_model(), &shape, STRATA_COLL_BCAST, bytes, all,
                                  STRATA_NALGOS);
    for (int i = 0; i < n; i++)
        if (!strcmp(all[i].al->name, "pipelined") && all[i].us >= 0) return all[i].us;
    return 0;
}

int info_explain_nodes(int argc, char **argv)
{
    size_t bytes;
    char *end1, *end2;
    long nodes = argc == 4 ? strtol(argv[2], &end1, 10) : 0;
    long per_node = argc == 4 ? strtol(argv[3], &end2, 10) : 0;
    int coll = argc == 4 ? strata_coll_parse(argv[0]) : -1;
    if (argc != 4 || (coll != STRATA_COLL_BCAST && coll != STRATA_COLL_REDUCE) ||
        info_parse_bytes(argv[1], &bytes) || *end1 || *end2 || nodes < 2 || nodes > 1 << 20 ||
        per_node < 1 || per_node > 4096) {
        fprintf(stderr, "usage: strata-info --explain-nodes <bcast|reduce> <size> <nodes 2..> "
                "<ranks per node 1..4096>\n");
        return 2;
    }
    const struct strata_model *m = strata_select_model();
    const struct strata_tuning *tu = strata_tuning();
    print_model(m);
    printf("  between node leaders: %.3f + n * %.4g (%.1f GB/s) per message (net_alpha_us, "
           "net_beta_us_per_byte)\n", m->net_alpha, m->net_beta,
           m->net_beta > 0 ? 1e-3 / m->net_beta : 0);
    printf("\n%s of %zu bytes on %ld nodes of %ld ranks, %zu-byte segments "
           "(STRATA_NET_SEGMENT), each rank on a core of its own\n",
           strata_coll_name(coll), bytes, nodes, per_node, tu->net_segment);
    struct strata_net_tree best;
    strata_net_tree_choose(m, (int)nodes, bytes, tu->net_segment, &best);
    printf("\n  %-12s %14s\n", "leader tree", "predicted us");
    for (int k = 0; k <= 7 && k < nodes; k++) {
        struct strata_net_tree t = {k ? STRATA_NET_KNOMIAL : STRATA_NET_CHAIN, k ? k : 1, 0};
        t.predicted_us = strata_net_tree_predict(m, &t, (int)nodes, bytes, tu->net_segment);
        char name[32];
        int chosen = t.shape == best.shape && (t.shape == STRATA_NET_CHAIN || t.k == best.k);
        printf("%c %-12s %14.1f\n", chosen ? '*' : ' ', strata_net_tree_name(&t, name, sizeof name),
               t.predicted_us);
    }
    printf("  * the choice (STRATA_NET_TREE=auto)\n");
    if (coll != STRATA_COLL_BCAST || per_node < 2) {
        printf("\n(the node's part of a Reduce is not in the model: its time adds per segment.)\n");
        return 0;
    }
    double whole = node_bcast_us(bytes, (int)per_node);
    double one = node_bcast_us(tu->net_segment < bytes ? tu->net_segment : bytes, (int)per_node);
    /* HierKNEM's overlap: a node pulls each segment while the next is on the
     * wire, so only the slower of the two levels counts in full, plus one
     * segment of the other to fill or drain the pipeline. */
    double overlapped = (best.predicted_us > whole ? best.predicted_us : whole) + one;
    if (bytes <= tu->net_segment) overlapped = best.predicted_us + whole; /* one segment: nothing overlaps */
    printf("\n  inside a node: pipelined, %.1f us for the whole payload, %.1f us per segment\n",
           whole, one);
    printf("  one level after the other: %.1f us\n", best.predicted_us + whole);
    printf("  overlapped (the node pulls segments as they arrive): %.1f us, %.2fx\n", overlapped,
           (best.predicted_us + whole) / overlapped);
    return 0;
}

int info_explain_main(int argc, char **argv, int rank, int size)
{
    struct explain_request rq;
    char err[512];
    int status = 0;
    if (parse_explain(argc - 2, argv + 2, &rq, err, sizeof err)) {
        if (rank == 0)
            fprintf(stderr, "strata-info: %s\nusage: strata-info --explain <collective> "
                    "<size> [-n ranks]\n", err);
        status = 2;
    } else if (!strata_runtime()) {
        if (rank == 0)
            printf("strata is off: %s\n", strata_runtime_state()->why_disabled[0]
                       ? strata_runtime_state()->why_disabled
                       : "MPI_Init did not go through strata");
        status = 1;
    } else {
        explain(&rq, size);
    }
    return status;
}
