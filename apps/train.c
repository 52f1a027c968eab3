/* Data-parallel training: a two-layer perceptron (tanh hidden layer, softmax
 * output) learns a synthetic classification task with plain SGD, every rank
 * holding the whole model and a share of each step's batch.  Each step every
 * rank computes the gradient of its samples and one MPI_Allreduce (MPI_SUM,
 * MPI_DOUBLE, in place) adds them up: a buffer of all the parameters (plus
 * the loss), 8 bytes each, so the parameter count sets the message size
 * (12K parameters ~ 100 KB, 512K ~ 4 MB).  This is the Allreduce pattern of
 * data-parallel deep learning, where large Allreduces dominate.
 *
 * The data are reproducible: sample s has inputs uniform in [-1, 1), a
 * function of (seed, s, input), and the class a fixed random linear
 * "teacher" gives it; step t trains on samples t*B .. t*B+B-1, dealt over the
 * ranks in contiguous blocks.
 *
 * Exact sums, hence exact verification.  An Allreduce adds the ranks'
 * contributions in an order each implementation chooses, and floating-point
 * addition is not associative: with plain double sums, strata, Open MPI and
 * MPICH would each give parameters differing in the last bits, growing over
 * the steps, and a comparison would need a tolerance of many ulps that
 * neither the rank count nor the step count bounds well.  Instead every
 * per-sample term of the gradient is clipped to +-1024/B and rounded to a
 * multiple of 2^-40 (snap() below) before it is added.  Then any sum of such
 * terms, in any grouping and any order, is a multiple of 2^-40 of magnitude
 * at most 1024 < 2^13, which a double holds exactly (13 + 40 bits < 53):
 * every partial sum, on a rank, inside the Allreduce and in the serial
 * reference, is exact.  The gradient is therefore the same bits whatever the
 * implementation, the rank count and the order, the parameters after S
 * steps are too, and --verify compares them bit for bit (tolerance zero)
 * with a serial run on rank 0.  The Allreduce itself is unchanged (doubles,
 * MPI_SUM, the full size): a collective that drops, repeats or misplaces any
 * contribution changes the result, which the comparison sees.  Rounding to
 * 2^-40 costs precision no training of this size notices. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

#if FLT_EVAL_METHOD != 0
#error "snap() needs double arithmetic evaluated in double precision"
#endif

static const char *usage =
    "usage: train PARAMS [SEED] [--steps S] [--batch B] [--inputs D] [--classes C]\n"
    "             [--lr RATE] [--verify] [--json FILE]\n"
    "  PARAMS     parameters wanted (K, M allowed); the hidden width is chosen to come\n"
    "             closest from below; each step Allreduces PARAMS+1 doubles\n"
    "  SEED       data and initial weights (default 1)\n"
    "  --steps S  SGD steps (default 20)     --batch B  samples per step, all ranks (default 8)\n"
    "  --inputs D input features (default 64) --classes C classes (default 10)\n"
    "  --lr RATE  learning rate (default 0.1)\n"
    "  --verify   rank 0 repeats the training serially and compares the parameters\n"
    "  --json F   rank 0 writes the result as JSON to F\n";

struct model {
    long inputs, hidden, classes, params;
    double *w1, *b1, *w2, *b2; /* views into one array of params doubles */
};

static void model_view(struct model *m, double *theta)
{
    m->w1 = theta;
    m->b1 = m->w1 + m->hidden * m->inputs;
    m->w2 = m->b1 + m->hidden;
    m->b2 = m->w2 + m->classes * m->hidden;
}

static void model_init(double *theta, const struct model *m, uint64_t seed)
{
    double s1 = 1 / sqrt((double)m->inputs), s2 = 1 / sqrt((double)m->hidden);
    long n1 = m->hidden * m->inputs, n2 = m->classes * m->hidden;
    memset(theta, 0, sizeof *theta * (size_t)m->params);
    for (long i = 0; i < n1; i++) theta[i] = s1 * app_uniform(app_key(seed, 1, (uint64_t)i));
    double *w2 = theta + n1 + m->hidden;
    for (long i = 0; i < n2; i++) w2[i] = s2 * app_uniform(app_key(seed, 2, (uint64_t)i));
}

/* Sample s: inputs, and the class of the largest teacher score. */
static int sample(uint64_t seed, long s, const struct model *m, double *x)
{
    for (long d = 0; d < m->inputs; d++)
        x[d] = app_uniform(app_key(seed, 3 + ((uint64_t)s << 8), (uint64_t)d));
    int label = 0;
    double best = -INFINITY;
    for (long c = 0; c < m->classes; c++) {
        double score = 0;
        for (long d = 0; d < m->inputs; d++)
            score += app_uniform(app_key(seed, 4, (uint64_t)(c * m->inputs + d))) * x[d];
        if (score > best) best = score, label = (int)c;
    }
    return label;
}

/* A per-sample term (already divided by B) clipped to +-limit (limit =
 * 1024/B) and rounded to a multiple of 2^-40: adding 1.5 * 2^12 puts it in
 * [2^12, 2^13), where doubles are 2^-40 apart, and subtracting it again is
 * exact.  See the comment at the top for why. */
#define SNAP_SHIFT 6144.0 /* 1.5 * 2^12 */
static inline double snap(double v, double limit)
{
    v = v > limit ? limit : v;
    v = v < -limit ? -limit : v;
    return (v + SNAP_SHIFT) - SNAP_SHIFT;
}

struct scratch {
    double *x, *h, *z, *dz, *dh;
};

/* One sample's working vectors for model m. */
static struct scratch scratch_alloc(const struct model *m)
{
    return (struct scratch){app_alloc("train", sizeof(double) * (size_t)m->inputs),
                            app_alloc("train", sizeof(double) * (size_t)m->hidden),
                            app_alloc("train", sizeof(double) * (size_t)m->classes),
                            app_alloc("train", sizeof(double) * (size_t)m->classes),
                            app_alloc("train", sizeof(double) * (size_t)m->hidden)};
}

static void scratch_free(struct scratch *t)
{
    free(t->x), free(t->h), free(t->z), free(t->dz), free(t->dh);
}

/* Adds sample s's loss and gradient terms (divided by batch) to grad, laid
 * out like the parameters, the loss after them. */
static void accumulate(const struct model *m, uint64_t seed, long s, long batch, double *grad,
                       struct scratch *t)
{
    const double inv = 1.0 / (double)batch, limit = 1024.0 / (double)batch;
    long D = m->inputs, H = m->hidden, C = m->classes;
    int y = sample(seed, s, m, t->x);
    for (long j = 0; j < H; j++) {
        double a = m->b1[j];
        const double *w = &m->w1[j * D];
        for (long d = 0; d < D; d++) a += w[d] * t->x[d];
        t->h[j] = tanh(a);
    }
    double zmax = -INFINITY;
    for (long c = 0; c < C; c++) {
        double z = m->b2[c];
        const double *w = &m->w2[c * H];
        for (long j = 0; j < H; j++) z += w[j] * t->h[j];
        t->z[c] = z;
        if (z > zmax) zmax = z;
    }
    double sum = 0;
    for (long c = 0; c < C; c++) sum += exp(t->z[c] - zmax);
    double loss = log(sum) + zmax - t->z[y];
    for (long c = 0; c < C; c++) t->dz[c] = exp(t->z[c] - zmax) / sum - (c == y);

    double *g_w1 = grad, *g_b1 = g_w1 + H * D, *g_w2 = g_b1 + H, *g_b2 = g_w2 + C * H;
    memset(t->dh, 0, sizeof *t->dh * (size_t)H);
    for (long c = 0; c < C; c++) {
        double dzc = t->dz[c] * inv;
        const double *w = &m->w2[c * H];
        double *g = &g_w2[c * H];
        for (long j = 0; j < H; j++) {
            g[j] += snap(dzc * t->h[j], limit);
            t->dh[j] += w[j] * t->dz[c];
        }
        g_b2[c] += snap(dzc, limit);
    }
    for (long j = 0; j < H; j++) {
        double da = t->dh[j] * (1 - t->h[j] * t->h[j]) * inv;
        double *g = &g_w1[j * D];
        for (long d = 0; d < D; d++) g[d] += snap(da * t->x[d], limit);
        g_b1[j] += snap(da, limit);
    }
    grad[m->params] += snap(loss * inv, limit);
}

static void sgd_update(double *theta, const double *grad, long params, double lr)
{
    for (long i = 0; i < params; i++) theta[i] -= lr * grad[i];
}

struct run {
    struct model shape;
    uint64_t seed;
    long steps, batch;
    double lr;
};

/* Rank 0: the same training on one process, every sample of every step.
 * Returns 1 if its parameters and losses equal the parallel run's bit for
 * bit, 0 otherwise (after saying where they first differ). */
static int verify(const struct run *run, const double *theta, const double *losses)
{
    struct model m = run->shape;
    double *ref = app_alloc("train", sizeof *ref * (size_t)m.params);
    double *grad = app_alloc("train", sizeof *grad * (size_t)(m.params + 1));
    struct scratch t = scratch_alloc(&m);
    model_init(ref, &m, run->seed);
    model_view(&m, ref);
    int ok = 1;
    for (long step = 0; step < run->steps; step++) {
        memset(grad, 0, sizeof *grad * (size_t)(m.params + 1));
        for (long b = 0; b < run->batch; b++)
            accumulate(&m, run->seed, step * run->batch + b, run->batch, grad, &t);
        sgd_update(ref, grad, m.params, run->lr);
        if (ok && memcmp(&grad[m.params], &losses[step], sizeof(double))) {
            printf("train: verify FAILED: step %ld loss %.17g, serially %.17g\n", step + 1,
                   losses[step], grad[m.params]);
            ok = 0;
        }
    }
    long differ = 0, first = -1;
    double worst = 0;
    for (long i = 0; i < m.params; i++) {
        if (memcmp(&ref[i], &theta[i], sizeof(double)) == 0) continue;
        if (first < 0) first = i;
        differ++;
        if (fabs(ref[i] - theta[i]) > worst) worst = fabs(ref[i] - theta[i]);
    }
    if (differ) {
        printf("train: verify FAILED: %ld of %ld parameters differ from the serial run "
               "(first: #%ld, %.17g instead of %.17g; largest difference %.3g)\n",
               differ, m.params, first, theta[first], ref[first], worst);
        ok = 0;
    }
    if (ok)
        printf("train: verify OK: the %ld parameters equal a serial run's, bit for bit\n",
               m.params);
    free(ref);
    free(grad);
    scratch_free(&t);
    return ok;
}

static const char *option_value(int argc, char **argv, int *a)
{
    if (*a + 1 >= argc) app_die_usage("train", usage, "%s takes a value", argv[*a]);
    return argv[++*a];
}

static void parse(int argc, char **argv, struct run *run, int *want_verify, const char **json)
{
    long wanted = 0, inputs = 64, classes = 10, seed = 1;
    int positional = 0;
    run->steps = 20, run->batch = 8, run->lr = 0.1;
    for (int a = 1; a < argc; a++) {
        const char *opt = argv[a];
        if (!strcmp(opt, "--verify")) *want_verify = 1;
        else if (!strcmp(opt, "-h") || !strcmp(opt, "--help"))
            app_die_usage("train", usage, "data-parallel training of a two-layer perceptron");
        else if (!strcmp(opt, "--json")) *json = option_value(argc, argv, &a);
        else if (!strcmp(opt, "--steps"))
            run->steps = app_count_arg("train", usage, opt, option_value(argc, argv, &a), 1,
                                       1000000);
        else if (!strcmp(opt, "--batch"))
            run->batch = app_count_arg("train", usage, opt, option_value(argc, argv, &a), 1,
                                       1 << 20);
        else if (!strcmp(opt, "--inputs"))
            inputs = app_count_arg("train", usage, opt, option_value(argc, argv, &a), 1, 1 << 16);
        else if (!strcmp(opt, "--classes"))
            classes = app_count_arg("train", usage, opt, option_value(argc, argv, &a), 2,
                                    1 << 12);
        else if (!strcmp(opt, "--lr"))
            run->lr = app_positive_arg("train", usage, opt, option_value(argc, argv, &a));
        else if (opt[0] == '-') app_die_usage("train", usage, "unknown option %s", opt);
        else if (positional == 0) {
            wanted = app_count_arg("train", usage, "PARAMS", opt, 1, 1L << 28);
            positional++;
        } else if (positional == 1) {
            seed = app_count_arg("train", usage, "SEED", opt, 0, LONG_MAX);
            positional++;
        } else app_die_usage("train", usage, "unexpected argument %s", opt);
    }
    if (positional == 0) app_die_usage("train", usage, "PARAMS is missing");
    /* params = hidden * (inputs + 1 + classes) + classes */
    long hidden = (wanted - classes) / (inputs + 1 + classes);
    if (hidden < 1) hidden = 1;
    long params = hidden * (inputs + 1 + classes) + classes;
    /* The Allreduce count is an int. */
    if (params + 1 > INT_MAX)
        app_die_usage("train", usage, "%ld parameters: too many for one Allreduce", params);
    run->shape = (struct model){.inputs = inputs, .hidden = hidden, .classes = classes,
                                .params = params};
    run->seed = (uint64_t)seed;
}

/* A JSON number, or null for what JSON cannot hold (a diverged loss). */
static void json_number(char *out, size_t len, double v)
{
    if (isfinite(v)) snprintf(out, len, "%.9g", v);
    else snprintf(out, len, "null");
}

/* FNV-1a of this rank's parameters; 1 if every rank holds the same bits
 * (each applied the same update, so each must have received the same sum). */
static int ranks_agree(uint64_t checksum, MPI_Comm comm)
{
    int rank, ranks, agree = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    uint64_t *all = rank == 0 ? app_alloc("train", sizeof *all * (size_t)ranks) : NULL;
    MPI_Gather(&checksum, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, comm);
    for (int r = 1; rank == 0 && r < ranks; r++) {
        if (all[r] == all[0]) continue;
        printf("train: FAILED: rank %d's parameters differ from rank 0's (checksum %016llx, "
               "not %016llx)\n", r, (unsigned long long)all[r], (unsigned long long)all[0]);
        agree = 0;
    }
    free(all);
    return agree;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, ranks, want_verify = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    struct run run;
    const char *json = NULL;
    parse(argc, argv, &run, &want_verify, &json);

    struct model m = run.shape;
    long count = m.params + 1;
    double *theta = app_alloc("train", sizeof *theta * (size_t)m.params);
    double *grad = app_alloc("train", sizeof *grad * (size_t)count);
    double *losses = app_alloc("train", sizeof *losses * (size_t)run.steps);
    struct scratch t = scratch_alloc(&m);
    model_init(theta, &m, run.seed);
    model_view(&m, theta);
    long lo, hi;
    app_block(run.batch, ranks, rank, &lo, &hi);
    if (rank == 0) {
        printf("train: %ld parameters (%ld inputs, %ld hidden, %ld classes), seed %llu, "
               "%ld steps of %ld samples over %d ranks, %zu bytes Allreduced per step\n",
               m.params, m.inputs, m.hidden, m.classes, (unsigned long long)run.seed,
               run.steps, run.batch, ranks, sizeof(double) * (size_t)count);
        fflush(stdout);
    }

    MPI_Barrier(comm);
    double start = MPI_Wtime(), in_allreduce = 0;
    for (long step = 0; step < run.steps; step++) {
        memset(grad, 0, sizeof *grad * (size_t)count);
        for (long b = lo; b < hi; b++)
            accumulate(&m, run.seed, step * run.batch + b, run.batch, grad, &t);
        double t0 = MPI_Wtime();
        MPI_Allreduce(MPI_IN_PLACE, grad, (int)count, MPI_DOUBLE, MPI_SUM, comm);
        in_allreduce += MPI_Wtime() - t0;
        sgd_update(theta, grad, m.params, run.lr);
        losses[step] = grad[m.params];
    }
    double total = MPI_Wtime() - start;

    uint64_t checksum = app_fnv1a(APP_FNV_START, theta, sizeof *theta * (size_t)m.params);
    int agree = ranks_agree(checksum, comm);
    if (rank == 0)
        printf("train: loss %.6f at step 1, %.6f at step %ld\n", losses[0],
               losses[run.steps - 1], run.steps);
    int verified = want_verify && rank == 0 ? verify(&run, theta, losses) : -1;
    if (want_verify && rank == 0 && !agree) verified = 0;
    char params[320], first[32], last[32];
    json_number(first, sizeof first, losses[0]);
    json_number(last, sizeof last, losses[run.steps - 1]);
    snprintf(params, sizeof params,
             "\"params\": %ld, \"hidden\": %ld, \"seed\": %llu, \"steps\": %ld, "
             "\"batch\": %ld, \"lr\": %.17g, \"loss_first\": %s, \"loss_last\": %s",
             m.params, m.hidden, (unsigned long long)run.seed, run.steps, run.batch, run.lr,
             first, last);
    struct app_result result = {
        .app = "train", .collective = "MPI_Allreduce", .calls = run.steps,
        .bytes_per_call = sizeof(double) * (size_t)count, .total_s = total,
        .coll_s = in_allreduce, .checksum = checksum, .verified = verified,
        .params_json = params};
    int report_failed = app_report(comm, &result, json);
    free(theta), free(grad), free(losses);
    scratch_free(&t);
    MPI_Finalize();
    return report_failed || (rank == 0 && (verified == 0 || !agree)) ? 1 : 0;
}
