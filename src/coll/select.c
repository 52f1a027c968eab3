/* Per-call algorithm selection (select.h). */
#include "coll/select.h"

#include <ctype.h>
#include <stdatomic.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll.h"
#include "coll/learn.h"
#include "coll/tuning_file.h"
#include "config/config.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/hot.h"

/* A named choice: an override, a rule's or a test's. */
struct named_choice {
    int set;
    int algo;
    int k;
};

/* Everything selection depends on, world rank 0's, broadcast as bytes. */
struct selection_settings {
    int ok;
    char err[768];
    struct strata_model model;
    struct named_choice override[STRATA_NCOLLS];
    int nrules;
    struct strata_rule rules[STRATA_MAX_RULES];
    int learn; /* STRATA_LEARN: selection corrects itself (coll/learn.h) */
    char cache[512]; /* the per-host cache the model was read from, or "" */
    int cache_measured; /* the cache itself held "measured" lines (written before learn_file.c) */
};

static struct selection_settings settings;
static int settings_ready;
static struct named_choice forced[STRATA_NCOLLS];
static size_t mapped_min; /* strata_select_set_mapped; 0: no call is priced as mapped */
static char override_names[STRATA_NCOLLS][40]; /* "STRATA_SCATTER_ALGORITHM", ... */
_Static_assert(STRATA_NCOLLS <= (int)(sizeof ((struct strata_plane *)0)->chosen / sizeof (struct strata_plane_choice)),
               "the plane keeps one cached choice per collective");

const struct strata_model *strata_select_model(void)
{
    if (!settings_ready) {
        strata_model_defaults(&settings.model);
        settings_ready = 1;
    }
    return &settings.model;
}

/* The STRATA_<COLL>_ALGORITHM overrides config.c read, checked against
 * the algorithm table. */
static int read_overrides(struct selection_settings *s, const struct strata_config *cfg)
{
    for (int c = 0; c < STRATA_NCOLLS; c++) {
        char var[64], err[512];
        const char *text = cfg->algorithm[c];
        if (!*text) continue;
        strata_coll_algorithm_variable(c, var, sizeof var);
        const struct strata_algorithm *al;
        int k;
        char names[512];
        strata_algorithm_names(c, names, sizeof names);
        if (!names[0]) {
            /* Else the message would list an empty set of accepted values. */
            snprintf(s->err, sizeof s->err, "%s=\"%s\" is not valid: %s has no algorithms to "
                     "choose from, so %s accepts no value: unset it", var, text,
                     strata_coll_name(c), var);
            return -1;
        }
        if (strata_algorithm_parse(c, text, &al, &k, err, sizeof err)) {
            snprintf(s->err, sizeof s->err, "%s=%s", var, err);
            return -1;
        }
        s->override[c] = (struct named_choice){1, al->id, k};
    }
    return 0;
}

/* What earlier jobs measured, from the file beside the cache: a file that
 * cannot be used is named and left out (selection then starts from the
 * model, as on a first job). */
static void load_learned(struct selection_settings *s, const char *cache)
{
    char path[512], err[640];
    if (strata_learn_file_path(cache, path, sizeof path)) return;
    /* All of the file or none: records before a bad line are left out too. */
    struct strata_model with = s->model;
    int rc = strata_learn_file_load(&with, path, err, sizeof err);
    if (rc == 0) s->model = with;
    if (rc < 0)
        strata_warn("what earlier jobs measured is not used: %s (remove the file; the next job "
                    "that learns writes it again)", err);
    else if (rc == 0)
        strata_verbose(2, "what earlier jobs measured: %d record%s from %s", s->model.nmeasured,
                       s->model.nmeasured == 1 ? "" : "s", path);
}

/* The per-host cache, calibrated at first use.  A cache another user could
 * have written is refused with a warning (the job goes on with the built-in
 * model); a bad file of the user's own stops the job, as STRATA_MODEL's. */
static int load_cached_model(struct selection_settings *s)
{
    char path[512], err[640];
    strata_model_default_path(path, sizeof path);
    int rc = strata_model_load_cache(&s->model, path, err, sizeof err);
    const struct strata_config *cfg = strata_config();
    if (rc == 1 && cfg && cfg->calibrate) {
        strata_verbose(1, "no cost model for this machine yet: running strata-calibrate "
                       "(STRATA_CALIBRATE=0 skips it) -> %s", path);
        char learned[512];
        /* Its ratios are over the old model's predictions: stale now. */
        if (!strata_learn_file_path(path, learned, sizeof learned) && !unlink(learned))
            strata_verbose(1, "a new model: what selection measured before (%s) is dropped",
                           learned);
        if (strata_model_calibrate_now(path, err, sizeof err)) {
            strata_warn("calibration failed (%s): strata uses its built-in cost model", err);
            return 0;
        }
        rc = strata_model_load_cache(&s->model, path, err, sizeof err);
    }
    if (rc == 0) {
        if (s->model.skipped[0])
            strata_verbose(2, "the cached cost model %s has keys this build does not know (a "
                           "newer strata-calibrate wrote it), skipped: %s", path,
                           s->model.skipped);
        snprintf(s->cache, sizeof s->cache, "%s", path);
        s->cache_measured = s->model.nmeasured > 0;
        /* STRATA_LEARN=0: the model's choice stands, and strata-info
         * --explain shows the choice such a job makes. */
        if (!cfg || cfg->learn) load_learned(s, path);
    }
    if (rc == 2)
        strata_warn("the cached cost model is not used: %s; strata uses its built-in cost model "
                    "(STRATA_MODEL=file names one to use)", err);
    if (rc < 0) {
        snprintf(s->err, sizeof s->err, "the cached cost model %s (written by strata-calibrate: "
                 "remove it or run strata-calibrate again)", err);
        return -1;
    }
    return 0;
}

/* The configuration (config.c parsed it at MPI_Init, before selection
 * starts): its model file, tuning file and learning. */
static int load_settings(struct selection_settings *s)
{
    const struct strata_config *cfg = strata_config();
    char err[512];
    if (!cfg) {
        snprintf(s->err, sizeof s->err, "selection started before the configuration was read");
        return -1;
    }
    strata_model_defaults(&s->model);
    if (!cfg->model[0]) {
        if (load_cached_model(s)) return -1;
    } else if (strata_model_load(&s->model, cfg->model, err, sizeof err)) {
        snprintf(s->err, sizeof s->err, "STRATA_MODEL: %s", err);
        return -1;
    }
    s->learn = cfg->learn;
    if (read_overrides(s, cfg)) return -1;
    if (cfg->tuning_file[0]) {
        s->nrules = strata_tuning_file_load(cfg->tuning_file, s->rules, err, sizeof err);
        if (s->nrules < 0) {
            snprintf(s->err, sizeof s->err, "STRATA_TUNING_FILE: %s", err);
            return -1;
        }
    }
    return 0;
}

void strata_select_save_learned(void)
{
    char path[512];
    int cache = strata_select_cache_path(path, sizeof path);
    if (cache) strata_learn_save(path, cache, strata_select_model());
}

int strata_select_init(char *err, size_t errlen)
{
    static const struct strata_learn_pricing pricing = {
        strata_select_predict, strata_select_predictions, strata_select_shape,
        strata_select_model};
    strata_learn_use(&pricing);
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(&settings, 0, sizeof settings);
    for (int c = 0; c < STRATA_NCOLLS; c++)
        strata_coll_algorithm_variable(c, override_names[c], sizeof override_names[c]);
    /* The choice must be the same on every rank of a communicator: world
     * rank 0's model, overrides and rules are everyone's.  The others wait
     * asleep, not in a spinning PMPI_Bcast: rank 0 may be calibrating, which
     * needs the machine's cores to itself. */
    MPI_Request req;
    if (rank == 0) settings.ok = load_settings(&settings) == 0;
    PMPI_Ibcast(&settings, sizeof settings, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    for (int done = 0;;) {
        PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) break;
        nanosleep(&(struct timespec){0, 200000}, NULL);
    }
    settings_ready = 1;
    if (!settings.ok) {
        snprintf(err, errlen, "%s", rank == 0 ? settings.err : "");
        return -1;
    }
    return 0;
}

void strata_select_set_mapped(size_t min_bytes) { mapped_min = min_bytes; }

size_t strata_select_mapped(void) { return mapped_min; }

void strata_select_shape(const struct strata_plane *p, struct strata_model_shape *shape)
{
    const struct strata_hier_level *L0 = &p->hier->level[0];
    shape->size = p->size;
    shape->groups = L0->ngroups;
    shape->largest_group = 0;
    for (int g = 0; g < L0->ngroups; g++) {
        int n = L0->member_start[g + 1] - L0->member_start[g];
        if (n > shape->largest_group) shape->largest_group = n;
    }
    shape->single_copy = strata_plane_single_copy(p);
    shape->mapped = 0; /* per call: strata_select */
    /* The machine's cores, not the fake topology's: what can really run. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    shape->cores = cores > 0 && cores < p->size ? (int)cores : 0;
    shape->region = (size_t)p->nregions * p->region;
}

/* The factors worth trying for an algorithm on `size` ranks. */
static int candidate_factors(const struct strata_algorithm *al, int size, int *out)
{
    int n = 0;
    if (!al->k_meaning) {
        out[n++] = 1;
        return n;
    }
    /* Powers of two, then size - 1 (always coprime with size: a ring
     * distance that works) and size (no throttling at all). */
    for (int k = 1; k < size - 1 && n < 14; k *= 2) out[n++] = k;
    if (size > 1 && (n == 0 || out[n - 1] != size - 1)) out[n++] = size - 1;
    if (n == 0 || out[n - 1] != size) out[n++] = size;
    return n;
}

int strata_select_explain(const struct strata_model *m, const struct strata_model_shape *shape,
                          int coll, size_t block, struct strata_prediction *out, int max)
{
    int n = 0;
    for (int id = 0; id < STRATA_NALGOS && n < max; id++) {
        const struct strata_algorithm *al = strata_algorithm(id);
        if (al->coll != coll) continue;
        struct strata_prediction best = {al, al->k_default, -1, NULL};
        int ks[16], nk = candidate_factors(al, shape->size, ks);
        for (int i = 0; i < nk; i++) {
            const char *why = strata_algorithm_refusal(al, shape->size, shape->single_copy, ks[i]);
            if (why) {
                if (best.us < 0) best.refusal = why;
                continue;
            }
            double t = strata_model_predict(m, al, shape, block, ks[i]);
            if (best.us < 0 || t < best.us) best = (struct strata_prediction){al, ks[i], t, NULL};
        }
        /* Insertion keeps the list fastest first, refused ones last. */
        int at = n;
        while (at > 0 && (out[at - 1].us < 0 ? best.us >= 0 : best.us >= 0 && best.us < out[at - 1].us)) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = best;
        n++;
    }
    return n;
}

/* Takes a named choice if the algorithm can run here; otherwise says why
 * not (once per collective and reason, on the first rank that sees it). */
static int take_named(const struct strata_plane *p, int coll, const struct named_choice *nc,
                      const char *source, int rule, struct strata_choice *out)
{
    const struct strata_algorithm *al = strata_algorithm(nc->algo);
    const char *why = strata_algorithm_refusal(al, p->size, strata_plane_single_copy(p), nc->k);
    if (why) {
        /* Said once per collective and process: the refusal repeats on
         * every call of that kind on this communicator. */
        static _Atomic int said[STRATA_NCOLLS];
        if (p->rank == 0 && !atomic_exchange(&said[coll], 1))
            strata_verbose(1, "%s%.0d asks for %s \"%s\" on a communicator of %d ranks: refused, "
                           "%s; the cost model chooses instead", source, rule,
                           strata_coll_name(coll), al->name, p->size, why);
        return 0;
    }
    out->al = al;
    out->k = nc->k;
    out->host = STRATA_CHOICE_STRATA;
    out->predicted_us = -1;
    out->why = source;
    out->rule = rule;
    return 1;
}

static int rule_matches(const struct strata_rule *r, int coll, size_t block, int size)
{
    return r->coll == coll && block >= r->min_bytes && block <= r->max_bytes &&
           size >= r->min_ranks && size <= r->max_ranks;
}

/* A forced, overridden or ruled choice for the call: 1 with *out filled,
 * else 0 (the cost model decides). */
static inline __attribute__((always_inline)) int select_named(struct strata_plane *p, int coll,
                                                              size_t block,
                                                              struct strata_choice *out)
{
    if (forced[coll].set && take_named(p, coll, &forced[coll], "forced by the caller", 0, out))
        return 1;
    if (settings.override[coll].set &&
        take_named(p, coll, &settings.override[coll], override_names[coll], 0, out))
        return 1;
    for (int i = 0; i < settings.nrules; i++) {
        const struct strata_rule *r = &settings.rules[i];
        if (!rule_matches(r, coll, block, p->size)) continue;
        struct named_choice nc = {1, r->algo, r->k};
        if (take_named(p, coll, &nc, "tuning file rule ", i + 1, out)) return 1;
        break; /* the first matching rule decides, even by being refused */
    }
    return 0;
}

/* The shape of p for a call of `block` bytes per rank, as the model prices it. */
static void call_shape(const struct strata_plane *p, size_t block, struct strata_model_shape *shape)
{
    strata_select_shape(p, shape);
    shape->mapped = mapped_min && block >= mapped_min && (p->xport->features & STRATA_XPORT_MAP_PEER);
}

int strata_select_predictions(const struct strata_plane *p, int coll, size_t block,
                              struct strata_prediction *out, int max)
{
    struct strata_model_shape shape;
    call_shape(p, block, &shape);
    return strata_select_explain(strata_select_model(), &shape, coll, block, out, max);
}

double strata_select_predict(const struct strata_plane *p, const struct strata_algorithm *al, int k,
                             size_t block)
{
    struct strata_model_shape shape;
    call_shape(p, block, &shape);
    return strata_model_predict(strata_select_model(), al, &shape, block, k);
}

int strata_select_learning(void) { return settings.learn; }

int strata_select_cache_path(char *out, size_t outlen)
{
    if (!settings.cache[0]) return 0;
    snprintf(out, outlen, "%s", settings.cache);
    return settings.cache_measured ? 2 : 1;
}

/* A size not chosen for last time: what the plane measured, else the
 * model's fastest prediction; kept as the plane's last choice. */
static void select_afresh(struct strata_plane *p, int coll, size_t block, struct strata_choice *out)
{
    if (!strata_learn_choice(p, coll, block, out)) {
        struct strata_prediction all[STRATA_NALGOS];
        strata_select_predictions(p, coll, block, all, STRATA_NALGOS);
        /* Every collective has an algorithm that needs nothing (shared memory). */
        out->al = all[0].al;
        out->k = all[0].k;
        out->predicted_us = all[0].us;
    }
    p->chosen[coll] = (struct strata_plane_choice){1, block, (int)out->al->id, out->k,
                                                   out->predicted_us, out->why};
}

/* The cost model's choice, corrected by what the plane measured. */
static inline __attribute__((always_inline)) void select_model(struct strata_plane *p, int coll,
                                                               size_t block,
                                                               struct strata_choice *out)
{
    out->why = "cost model";
    out->rule = 0;
    out->host = STRATA_CHOICE_STRATA;
    /* A program repeats its calls: the model's last answer per collective
     * is kept with the plane, so a repeated size costs one comparison. */
    struct strata_plane_choice *last = &p->chosen[coll];
    if (last->valid && last->block == block) {
        out->al = strata_algorithm(last->algo);
        out->k = last->k;
        out->predicted_us = last->predicted_us;
        out->why = last->why;
        return;
    }
    select_afresh(p, coll, block, out);
}

STRATA_HOT void strata_select(struct strata_plane *p, int coll, size_t block, struct strata_choice *out)
{
    if (!select_named(p, coll, block, out)) select_model(p, coll, block, out);
}

STRATA_HOT void strata_select_blocking(struct strata_plane *p, int coll, size_t block,
                                       MPI_Comm comm, struct strata_choice *out)
{
    if (select_named(p, coll, block, out)) return;
    /* Only calls past one region are measured (learn.h): a small call's
     * path stays one comparison longer, no more. */
    if (!settings.learn || block <= p->region) {
        select_model(p, coll, block, out);
        return;
    }
    int host = strata_learn_decide(p, coll, block, comm);
    select_model(p, coll, block, out);
    out->host = !host                         ? STRATA_CHOICE_STRATA
                : strata_learn_host_sample(p) ? STRATA_CHOICE_HOST_TIMED
                                              : STRATA_CHOICE_HOST_CHOSEN;
}

int strata_select_force(int coll, const char *name_k, char *err, size_t errlen)
{
    if (!name_k) {
        forced[coll].set = 0;
        return 0;
    }
    const struct strata_algorithm *al;
    int k;
    if (strata_algorithm_parse(coll, name_k, &al, &k, err, errlen)) return -1;
    forced[coll] = (struct named_choice){1, al->id, k};
    return 0;
}
