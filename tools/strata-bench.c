/* strata-bench: strata's collectives against the host MPI's, side by side.
 *
 *   strata-run -n N strata-bench [--sizes 8,1K,64K,1M,4M | --sweep] [--colls bcast,...]
 *                                [--iters N] [--root-shift] [--cold] [--alloc-mem]
 *                                [--json FILE]
 *                                [--csv FILE] [--algorithms]
 *                                [--noise[=MS]] [--noise-form rate|late] [--noise-rounds R]
 *                                [--noise-block S] [--noise-calls N] [--noise-seed S]
 *                                [--overlap] [--nonblocking] [--persistent]
 *                                [--load N] [--load-kind spin|noise] [--load-pin]
 *                                [--device]
 *
 * Both implementations are timed alternately in one process, call after
 * call, each after the same preparation; a call's time is the slowest
 * rank's (how and why: bench_timing.c).  Per row (collective and size) the
 * table gives the median and minimum over the calls; after the table, the
 * spread of the ranks' own mean times and the bandwidth; --json and --csv
 * keep every figure (bench_output.c, tools/bench-schema.json).
 *
 * --algorithms validates the cost model: for every collective with several
 * algorithms, each row is timed once with strata's own choice ("tuned") and
 * once per algorithm and factor forced, each beside the host MPI, and the
 * model's prediction is printed next to the measured time.
 *
 * --overlap times the nonblocking forms (MPI_Ibcast, ...): post and wait,
 * then post, compute and wait, and the share of the operation the
 * computation hides, strata's beside the host's (bench_overlap.c);
 * --nonblocking is that table, or with --noise the noise experiment on the
 * nonblocking forms.  --persistent times one MPI_Start + MPI_Wait of a
 * persistent collective against strata's blocking call and the host's
 * persistent form (bench_persistent.c).
 *
 * --device times MPI_Bcast and MPI_Allreduce on device buffers: strata's
 * staging against the application's own (copy to host, host MPI, copy
 * back) and against host buffers (bench_device.c).
 *
 * --noise[=MS] is ADAPT's noise experiment (section 5.1.1): after each row's
 * quiet calls, the row again with noise (bench_noise.h).
 *
 * --load N runs N busy processes on each node beside the job for the whole
 * run (bench_load.h): both implementations meet the same competitors, call
 * after call.
 *
 * This file: set-up, which rows run in which order, main. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "coll/select.h"
#include "context/context.h"
#include "strata.h"

static struct bench_row make_row(const struct bench *b, enum strata_coll coll, size_t bytes)
{
    struct bench_row r = {.coll = coll, .bytes = bytes, .count = (int)bytes, .type = MPI_BYTE,
                          .nonblocking = b->opt.nonblocking};
    if (coll == STRATA_COLL_REDUCE || coll == STRATA_COLL_ALLREDUCE ||
        coll == STRATA_COLL_REDUCE_SCATTER_BLOCK || coll == STRATA_COLL_REDUCE_SCATTER ||
        coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN) {
        r.count = bytes / 8 ? (int)(bytes / 8) : 1;
        r.type = MPI_DOUBLE;
        r.bytes = (size_t)r.count * 8;
    } else if (coll == STRATA_COLL_BARRIER) {
        r.count = 0;
        r.bytes = 0;
    }
    r.refusal = strata_route_refusal(b->ctx, coll);
    r.predicted = -1;
    return r;
}

/* The command line as one string, arguments quoted where a shell needs it. */
static void format_command(int argc, char **argv, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && used < len; i++) {
        const char *a = i == 0 && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[i];
        int quote = !*a || strpbrk(a, " \t\"'$\\*?;&|<>()`") != NULL;
        used += (size_t)snprintf(out + used, len - used, quote ? "%s'%s'" : "%s%s",
                                 i ? " " : "", a);
    }
}

static void host_mpi_name(char *out, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    snprintf(out, len, "%s", version);
}

/* ---- setup ------------------------------------------------------------ */

/* Counts the nodes (real ones, not strata's virtual ones) and returns the
 * world rank of the first rank on this rank's node. */
static int discover_nodes(struct bench *b)
{
    MPI_Comm node;
    int local, leader = b->rank;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, b->rank, MPI_INFO_NULL, &node);
    PMPI_Comm_rank(node, &local);
    PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
    int first = local == 0;
    PMPI_Allreduce(&first, &b->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Comm_free(&node);
    return leader;
}

/* Rank 1 learns rank 0's pid and send buffer, and tries one small read: the
 * CMA column is shown only if rank 1 shares rank 0's node and may read it. */
static void setup_copy_peer(struct bench *b, int node_leader)
{
    b->copy_ok = 0;
    if (b->size < 2 || !b->opt.want[STRATA_COLL_BCAST] || b->opt.algorithms) return;
    uint64_t info[2] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)b->send};
    if (b->rank == 0) PMPI_Send(info, 2, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
    if (b->rank == 1) {
        PMPI_Recv(info, 2, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        b->peer_pid = (pid_t)info[0];
        b->peer_addr = info[1];
        b->copy_ok = node_leader == 0 && bench_copy_from_root(b, 8) == 0;
    }
    PMPI_Bcast(&b->copy_ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
}

/* ---- rows ------------------------------------------------------------- */

static void out_of_memory(void)
{
    fprintf(stderr, "strata-bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void record_row(struct bench *b, const struct bench_row *r)
{
    if (b->rank != 0) return;
    if (r->algorithm) bench_print_algorithm_row(r);
    else if (r->noise.calls) bench_print_noise_row(r);
    else bench_print_row(r);
    struct bench_row *grown = realloc(b->rows, (size_t)(b->nrows + 1) * sizeof *grown);
    if (!grown) out_of_memory();
    b->rows = grown;
    b->rows[b->nrows++] = *r;
}

static void run_all_rows(struct bench *b)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        if (!b->opt.want[c]) continue;
        int nsizes = c == STRATA_COLL_BARRIER ? 1 : b->opt.nsizes;
        for (int s = 0; s < nsizes; s++) {
            struct bench_row r = make_row(b, (enum strata_coll)c, b->opt.sizes[s]);
            if (bench_run_row(b, &r) || (b->opt.noise.max_ms > 0 && bench_run_noisy_row(b, &r)))
                out_of_memory();
            record_row(b, &r);
        }
    }
}

/* One --algorithms row: `al` with factor k forced (NULL: strata's own choice). */
static void run_algorithm_row(struct bench *b, enum strata_coll c, size_t bytes,
                              const struct strata_algorithm *al, int k)
{
    struct bench_row r = make_row(b, c, bytes);
    struct strata_model_shape shape;
    strata_select_shape(b->ctx->plane, &shape);
    if (al) {
        char name_k[96], err[256];
        snprintf(name_k, sizeof name_k, "%s:%d", al->name, k);
        if (strata_select_force(c, al->k_meaning ? name_k : al->name, err, sizeof err)) return;
    } else {
        struct strata_choice ch;
        strata_select_force(c, NULL, NULL, 0);
        strata_select(b->ctx->plane, c, r.bytes, &ch);
        al = ch.al;
        k = ch.k;
        r.tuned = 1;
    }
    r.algorithm = al->name;
    r.k = al->k_meaning ? k : 0;
    r.predicted = strata_model_predict(strata_select_model(), al, &shape, r.bytes, k);
    if (bench_run_row(b, &r)) out_of_memory();
    record_row(b, &r);
    strata_select_force(c, NULL, NULL, 0);
}

/* Factors: 1 for an algorithm without one, else the powers of two below
 * size, then size - 1 (every other rank at once). */
static int factors_to_try(const struct strata_algorithm *al, int size, int *out)
{
    int n = 0;
    if (!al->k_meaning) {
        out[n++] = 1;
        return n;
    }
    for (int k = 1; k < size - 1 && n < 32; k *= 2) out[n++] = k;
    out[n++] = size > 1 ? size - 1 : 1;
    return n;
}

/* --algorithms: per collective and size, strata's choice, then every
 * algorithm that can run here, with each factor worth trying. */
static void run_algorithm_rows(struct bench *b)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        if (!b->opt.want[c] || strata_route_refusal(b->ctx, (enum strata_coll)c)) continue;
        for (int s = 0; s < b->opt.nsizes; s++) {
            int any = 0;
            for (int id = 0; id < STRATA_NALGOS; id++) {
                const struct strata_algorithm *al = strata_algorithm((enum strata_algo)id);
                if (al->coll != c) continue;
                if (!any++) run_algorithm_row(b, (enum strata_coll)c, b->opt.sizes[s], NULL, 0);
                int ks[40], nk = factors_to_try(al, b->size, ks);
                for (int i = 0; i < nk; i++) {
                    if (strata_algorithm_refusal(al, b->size, strata_plane_single_copy(b->ctx->plane), ks[i]))
                        continue;
                    run_algorithm_row(b, (enum strata_coll)c, b->opt.sizes[s], al, ks[i]);
                }
            }
        }
    }
}

/* Rank 0 writes the files asked for; 0, or 1 after saying what failed. */
static int write_files(const struct bench *b, const char *command, const char *mpi)
{
    int rc = 0;
    if (b->opt.json && bench_write_json(b, command, mpi)) {
        fprintf(stderr, "strata-bench: cannot write %s: %s\n", b->opt.json, strerror(errno));
        rc = 1;
    }
    if (b->opt.csv && bench_write_csv(b)) {
        fprintf(stderr, "strata-bench: cannot write %s: %s\n", b->opt.csv, strerror(errno));
        rc = 1;
    }
    if (b->opt.fit && bench_write_fit(b)) {
        fprintf(stderr, "strata-bench: cannot write %s: %s\n", b->opt.fit, strerror(errno));
        rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    struct bench b = {0};
    /* The progress thread calls the host MPI: it needs MPI_THREAD_MULTIPLE
     * (and is refused, visibly, without). */
    const char *progress = getenv("STRATA_PROGRESS");
    int provided;
    if (progress && !strcmp(progress, "thread"))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    int rc = bench_parse_options(argc, argv, &b.opt, b.rank == 0);
    if (rc) {
        if (rc == 1 && b.rank == 0) bench_usage(stdout);
        if (rc == 2 && b.rank == 0) bench_usage(stderr);
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    b.root = BENCH_ROOT;
    /* Collective on first use; the route of each collective is read from it. */
    b.ctx = strata_ctx_get(MPI_COMM_WORLD);
    int leader = discover_nodes(&b);
    /* The halo exchange's grid (the neighbourhood collectives' rows). */
    int periods[2] = {1, 1};
    PMPI_Dims_create(b.size, 2, b.halo_dims);
    PMPI_Cart_create(MPI_COMM_WORLD, 2, b.halo_dims, periods, 0, &b.halo);
    int failed = bench_alloc_buffers(&b) != 0, any_failed;
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed) {
        if (b.rank == 0) fprintf(stderr, "strata-bench: cannot allocate the buffers\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    setup_copy_peer(&b, leader);
    /* After the set-up, so that the competitors slow only the timed part;
     * one set per node, as other jobs on a shared node would be. */
    failed = b.opt.load > 0 && b.rank == leader &&
             bench_load_start(&b.load, b.opt.load, b.opt.load_kind, b.opt.load_pin,
                              0x5eed0000u + (uint64_t)b.rank) != 0;
    if (failed) fprintf(stderr, "strata-bench: cannot start the load: %s\n", strerror(errno));
    PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed) MPI_Abort(MPI_COMM_WORLD, 1); /* the competitors die with this rank */

    char command[4096], mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    format_command(argc, argv, command, sizeof command);
    host_mpi_name(mpi, sizeof mpi);
    if (b.rank == 0) {
        bench_print_header(&b, command, mpi);
        int any_neighbor = 0;
        for (int c = STRATA_COLL_NEIGHBOR_ALLGATHER; c <= STRATA_COLL_NEIGHBOR_ALLTOALLW; c++)
            any_neighbor |= b.opt.want[c];
        if (any_neighbor)
            printf("halo      : the neighbor_ rows on a periodic %d x %d Cartesian grid of the "
                   "ranks, a block of the row's size from each of its %d neighbours\n",
                   b.halo_dims[0], b.halo_dims[1], BENCH_HALO_BLOCKS);
        if (b.opt.nonblocking && !b.opt.overlap)
            printf("--nonblocking --noise: the noisy calls are the nonblocking forms, post + "
                   "wait (progress: %s)\n",
                   progress && !strcmp(progress, "thread") ? "STRATA_PROGRESS=thread"
                                                           : "inside MPI calls only");
        if (b.opt.device) printf("--device: collectives on device buffers\n");
        else if (b.opt.persistent) printf("--persistent: MPI_Start + MPI_Wait per call\n");
        else if (b.opt.overlap) printf("--overlap: nonblocking forms, post + compute + wait\n");
        else if (b.opt.algorithms) bench_print_algorithm_header();
        else if (b.opt.noise.max_ms > 0) bench_noise_print_header(&b.opt.noise);
        else bench_print_table_header();
    }
    if (b.opt.device) {
        bench_run_device(&b);
    } else if (b.opt.overlap || b.opt.persistent) {
        struct bench_row rows[STRATA_NCOLLS * BENCH_MAX_SIZES];
        int n = 0;
        for (int c = 0; c < STRATA_NCOLLS; c++)
            for (int s = 0; b.opt.want[c] && s < (c == STRATA_COLL_BARRIER ? 1 : b.opt.nsizes); s++)
                rows[n++] = make_row(&b, (enum strata_coll)c, b.opt.sizes[s]);
        if (b.opt.persistent) bench_run_persistent(&b, rows, n);
        else bench_run_overlap(&b, rows, n);
    } else if (b.opt.algorithms) {
        run_algorithm_rows(&b);
    } else {
        run_all_rows(&b);
    }
    if (bench_load_stop(&b.load)) fprintf(stderr, "strata-bench: a load process was not reaped\n");
    if (b.rank == 0) {
        if (!b.opt.algorithms && !b.opt.overlap && !b.opt.device && !b.opt.persistent &&
            b.opt.noise.max_ms <= 0)
            bench_print_rank_table(&b);
        rc = write_files(&b, command, mpi);
    }
    free(b.rows);
    bench_free_buffer(&b, b.send);
    bench_free_buffer(&b, b.recv);
    free(b.flush);
    free(b.vcounts); /* vdispls is its second half */
    free(b.wbytes);
    free(b.wtypes);
    PMPI_Comm_free(&b.halo);
    MPI_Finalize();
    return rc;
}
