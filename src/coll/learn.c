/* Selection that corrects itself (learn.h). */
#include "coll/learn.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/algorithm.h"
#include "coll/model.h"
#include "config/config.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/stats.h"
#include "util/hot.h"

/* What this process's planes learned, kept past their end for the cache
 * (strata_learn_save).  Communicators freed on different threads end their
 * planes at once: a spin flag guards the list, held for a few copies. */
static struct strata_model kept;
static atomic_flag kept_busy = ATOMIC_FLAG_INIT;

/* Selection's prices (strata_learn_use): set before any plane learns. */
static const struct strata_learn_pricing *pricing;

void strata_learn_use(const struct strata_learn_pricing *with) { pricing = with; }

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* A candidate's price for a call of `block` bytes: its prediction, times
 * its measured ratio once there is one. */
static double price(const struct strata_plane *p, const struct strata_learn_cand *c, size_t block)
{
    double t = pricing->predict(p, strata_algorithm((enum strata_algo)c->algo), c->k, block);
    return c->ratio >= 0 ? t * c->ratio : t;
}

/* The cheapest candidate (untried only, or measured only); -1: none. */
static int cheapest(const struct strata_plane *p, const struct strata_learn_entry *e, size_t block,
                    int untried)
{
    int best = -1;
    double best_t = 0;
    for (int i = 0; i < e->ncand; i++) {
        const struct strata_learn_cand *c = &e->cand[i];
        if (untried ? c->tried : c->ratio < 0) continue;
        double t = price(p, c, block);
        if (best < 0 || t < best_t) best = i, best_t = t;
    }
    return best;
}

/* The host MPI's price for a call of `block` bytes (it has no prediction:
 * its time is kept as a ratio to the model's first candidate's); < 0 while
 * not measured. */
static double host_price(const struct strata_plane *p, const struct strata_learn_entry *e,
                         size_t block)
{
    if (e->host_ratio < 0) return -1;
    struct strata_learn_cand first = e->cand[0];
    first.ratio = e->host_ratio;
    return price(p, &first, block);
}

/* A new entry: the model's runnable candidates, fastest predicted first,
 * with the ratios earlier jobs measured for this shape; the first one used
 * is the cheapest by those prices.  Identical on every rank: the model and
 * its records are world rank 0's. */
static struct strata_learn_entry *create(struct strata_plane *p, int coll, size_t block)
{
    struct strata_learn *l = p->learn;
    if (!l) {
        l = p->learn = calloc(1, sizeof *l);
        p->learn_release = strata_learn_release;
        if (!l) {
            /* A rank that could not learn would choose apart from the others. */
            strata_error("out of memory for the measurements of selection (STRATA_LEARN=0 "
                         "avoids them)");
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (l->nentries == STRATA_LEARN_ENTRIES) return NULL;
    struct strata_learn_entry *e = &l->e[l->nentries++];
    memset(e, 0, sizeof *e);
    e->coll = coll;
    e->cls = strata_learn_class(block);
    struct strata_prediction all[STRATA_NALGOS];
    int n = pricing->predictions(p, coll, block, all, STRATA_NALGOS);
    struct strata_model_shape shape;
    pricing->shape(p, &shape);
    for (int i = 0; i < n && e->ncand < (int)(sizeof e->cand / sizeof e->cand[0]); i++) {
        if (all[i].us < 0) break; /* refused ones come last */
        const struct strata_model_measured *r = strata_model_find_measured(
            pricing->model(), &shape, coll, e->cls, (int)all[i].al->id, all[i].k);
        e->cand[e->ncand++] = (struct strata_learn_cand){(int)all[i].al->id, all[i].k,
                                                          r ? r->ratio : -1, 0, 0};
    }
    int first = cheapest(p, e, block, 1);
    e->cur = first < 0 ? 0 : first;
    e->tries = 1;
    e->watch_base = STRATA_LEARN_WATCH;
    e->host_ratio = -1;
    /* The host is timed with MPI_BYTE counts: blocks an int can count. */
    e->host_pending = block <= INT_MAX && strata_learn_host_serves(coll);
    /* The cached choice of this collective may be the model's alone. */
    p->chosen[coll].valid = 0;
    return e;
}

/* Every rank's report of the open call: 1 with the slowest rank's ratio if
 * all measured the candidate in use often enough. */
static int reports_in(const struct strata_plane *p, const struct strata_learn_entry *e,
                      double *worst)
{
    uint64_t n = p->call.number;
    *worst = 0;
    for (int r = 0; r < p->size; r++) {
        const struct strata_call_sig *s = &p->ctl[r].sig[n % STRATA_SIG_SLOTS];
        const struct strata_call_sig_more *m = &p->ctl[r].sig_more[n % STRATA_SIG_SLOTS];
        /* Written before the stamp, which the agreement's wait acquired
         * (every stamp of a full call). */
        if (atomic_load_explicit(&s->stamp, memory_order_relaxed) != n ||
            m->learn_cand != strata_learn_measured(e) || m->learn_n < STRATA_LEARN_SAMPLES)
            return 0;
        if (m->learn_ratio > *worst) *worst = m->learn_ratio;
    }
    return 1;
}

static const char *algo_name(int algo) { return strata_algorithm((enum strata_algo)algo)->name; }

static void switched(struct strata_plane *p, struct strata_learn_entry *e)
{
    e->switches++;
    p->chosen[e->coll].valid = 0;
    if (p->stats) strata_stats_switch(e->coll);
}

/* A settled entry is timed again every `every` calls of it. */
static void watch(struct strata_learn_entry *e, int every)
{
    if (!e->calls_to_settle) e->calls_to_settle = e->calls;
    e->watch_every = every < STRATA_LEARN_WATCH_MAX ? every : STRATA_LEARN_WATCH_MAX;
    e->since = 0;
}

/* An entry settled on the host, its fresh measurement of the host, every
 * rank alike: while the host still measures faster than the fastest
 * candidate's price it is watched half as often; otherwise that candidate
 * serves again, watched as after a search (its price may be old: the
 * watch then opens the search again if it measures worse). */
static void recheck_host(struct strata_plane *p, struct strata_learn_entry *e, double worst,
                         size_t block)
{
    e->host_ratio = worst;
    e->sampling_host = 0;
    double host_t = host_price(p, e, block), best_t = price(p, &e->cand[e->cur], block);
    if (host_t < best_t) {
        watch(e, 2 * e->watch_every);
        return;
    }
    if (p->rank == 0)
        strata_verbose(1, "%s of %zu-byte blocks on %d ranks: the host MPI now measures %.1f us; "
                       "%s serves again (%.1f us measured)", strata_coll_name(e->coll), block,
                       p->size, host_t, algo_name(e->cand[e->cur].algo), best_t);
    e->host_chosen = 0;
    watch(e, e->watch_base);
    switched(p, e);
}

/* A settled entry's fresh measurement, every rank alike: if the choice now
 * measures worse than another candidate's price, the search opens again
 * from it (what was measured before is kept as those candidates' prices);
 * otherwise the choice is watched half as often. */
static void recheck(struct strata_plane *p, struct strata_learn_entry *e, double worst,
                    size_t block)
{
    if (e->host_chosen) {
        recheck_host(p, e, worst, block);
        return;
    }
    struct strata_learn_cand *c = &e->cand[e->cur];
    c->ratio = worst;
    c->measured = 1;
    int other = -1;
    for (int i = 0; i < e->ncand; i++)
        if (i != e->cur && (other < 0 || price(p, &e->cand[i], block) < price(p, &e->cand[other], block)))
            other = i;
    double bar = price(p, c, block) * (1 - STRATA_LEARN_MARGIN), host_t = host_price(p, e, block);
    if (other < 0 || (price(p, &e->cand[other], block) >= bar && !(host_t >= 0 && host_t < bar))) {
        watch(e, 2 * e->watch_every);
        return;
    }
    if (p->rank == 0)
        strata_verbose(1, "%s of %zu-byte blocks on %d ranks: %s now measures %.1f us; trying %s "
                       "again (%.1f us)", strata_coll_name(e->coll), block, p->size,
                       algo_name(c->algo), price(p, c, block), algo_name(e->cand[other].algo),
                       price(p, &e->cand[other], block));
    for (int i = 0; i < e->ncand; i++) e->cand[i].tried = i == e->cur;
    e->settled = 0;
    e->host_pending = e->host_ratio >= 0; /* timed again in the new search */
    e->watch_base = 2 * e->watch_base < STRATA_LEARN_WATCH_MAX ? 2 * e->watch_base
                                                               : STRATA_LEARN_WATCH_MAX;
    e->tries = 2;
    e->cur = other;
    switched(p, e);
}

/* Rank 0 of the plane says what was measured and decided (STRATA_VERBOSE=1). */
static void say(const struct strata_plane *p, const struct strata_learn_entry *e, size_t block,
                const char *measured, double us, double predicted)
{
    if (p->rank != 0) return;
    char pred[48] = "";
    if (predicted >= 0) snprintf(pred, sizeof pred, " (predicted %.1f)", predicted);
    const struct strata_learn_cand *c = &e->cand[e->cur];
    if (e->host_chosen) {
        strata_verbose(1, "%s of %zu-byte blocks on %d ranks: %s measured %.1f us%s; settled on "
                       "the host MPI (%.1f us measured; strata's fastest, %s, %.1f): its "
                       "blocking calls go to the host", strata_coll_name(e->coll), block, p->size,
                       measured, us, pred, host_price(p, e, block), algo_name(c->algo),
                       price(p, c, block));
        return;
    }
    strata_verbose(1, "%s of %zu-byte blocks on %d ranks: %s measured %.1f us%s; %s %s (%.1f us %s)",
                   strata_coll_name(e->coll), block, p->size, measured, us, pred,
                   e->sampling_host ? "timing the host MPI instead of"
                   : e->settled     ? "settled on"
                                    : "trying",
                   algo_name(c->algo), price(p, c, block),
                   e->settled || c->tried ? "measured"
                   : c->ratio >= 0        ? "as measured before"
                                          : "predicted");
}

/* The decision every rank takes from the same reports (`worst`: the slowest
 * rank's median ratio of what was measured). */
static void conclude(struct strata_plane *p, struct strata_learn_entry *e, double worst,
                     size_t block)
{
    struct strata_learn_cand *c = &e->cand[e->cur];
    int was = e->cur, host = e->sampling_host;
    char what[64];
    double us, predicted = -1;
    if (host) {
        e->host_ratio = worst;
        e->sampling_host = 0;
        snprintf(what, sizeof what, "the host MPI");
        us = host_price(p, e, block);
    } else {
        c->ratio = worst;
        c->tried = c->measured = 1;
        snprintf(what, sizeof what, "%s", algo_name(c->algo));
        us = price(p, c, block);
        predicted = us / worst;
        /* The host's time, once per search, right after the first candidate's. */
        if (e->host_pending) {
            e->host_pending = 0;
            e->sampling_host = 1;
            say(p, e, block, what, us, predicted);
            return;
        }
    }
    int best = cheapest(p, e, block, 0);
    int next = e->tries < STRATA_LEARN_TRIES ? cheapest(p, e, block, 1) : -1;
    double best_t = price(p, &e->cand[best], block), host_t = host_price(p, e, block);
    /* Worse than the runner-up's price, or than the host's: try the next. */
    double bar = best_t * (1 - STRATA_LEARN_MARGIN);
    if (next >= 0 && (price(p, &e->cand[next], block) < bar || (host_t >= 0 && host_t < bar))) {
        e->cur = next;
        e->tries++;
    } else {
        e->cur = best;
        e->settled = 1;
        /* Faster than every candidate tried by the margin: the host serves. */
        e->host_chosen = host_t >= 0 && host_t < bar;
        watch(e, e->watch_base);
    }
    if (e->cur != was || e->host_chosen) switched(p, e);
    say(p, e, block, what, us, predicted);
}

int strata_learn_decide(struct strata_plane *p, int coll, size_t block, MPI_Comm comm)
{
    /* Only where every rank's signature of this call is in: a full call
     * (agree.h), never a nonblocking one's (its plane may be another's). */
    if (!p->call.open || p->call.small || p->call.mine.coll != coll || strata_coll_is_v(coll))
        return 0;
    struct strata_learn_entry *e = strata_learn_find(p->learn, coll, strata_learn_class(block));
    if (!e && !(e = create(p, coll, block))) return 0;
    if (e->ncand < 2) return 0; /* nothing to choose between */
    e->calls++;
    /* The communicator the host's collective runs on, this call's. */
    p->learn->comm = comm;
    double worst;
    if (reports_in(p, e, &worst)) {
        if (e->settled) recheck(p, e, worst, block);
        else conclude(p, e, worst, block);
        e->n = 0;
        /* A watched algorithm is warm: no call left out. */
        e->skipped = e->settled;
    }
    if (e->settled && ++e->since < e->watch_every) return e->host_chosen;
    e->since = 0;
    /* Settled on the host: what is watched is the host. */
    if (e->host_chosen) e->sampling_host = 1;
    p->learn_armed = e;
    p->learn->armed_call = p->call.number;
    /* The host's time is kept as a ratio to the first candidate's prediction. */
    if (e->sampling_host)
        p->learn->host_pred = pricing->predict(
            p, strata_algorithm((enum strata_algo)e->cand[0].algo), e->cand[0].k, block);
    return e->sampling_host || e->host_chosen;
}

int strata_learn_host_sample(const struct strata_plane *p)
{
    const struct strata_learn *l = p->learn;
    return l && p->learn_armed && l->armed_call == p->call.number && p->learn_armed->sampling_host;
}

int strata_learn_choice(const struct strata_plane *p, int coll, size_t block,
                        struct strata_choice *out)
{
    const struct strata_learn_entry *e = strata_learn_find(p->learn, coll, strata_learn_class(block));
    if (!e || !e->ncand) return 0;
    const struct strata_learn_cand *c = &e->cand[e->cur];
    out->al = strata_algorithm((enum strata_algo)c->algo);
    out->k = c->k;
    out->predicted_us = pricing->predict(p, out->al, c->k, block);
    out->why = e->settled ? "cost model, corrected by measurement" : "cost model, measuring";
    return 1;
}

int strata_learn_run_timed(struct strata_plane *p, const struct strata_choice *ch,
                           struct strata_block_args *a)
{
    struct strata_learn *l = p->learn;
    /* Armed by an earlier call whose run did not come (refused): not this one. */
    struct strata_learn_entry *e = p->learn_armed;
    p->learn_armed = NULL;
    if (!e || l->armed_call != p->call.number)
        return ch->host == STRATA_CHOICE_STRATA ? ch->al->run(p, a)
                                                : strata_learn_host_run(l->comm, ch->al->coll, a);
    int host = e->sampling_host;
    double t0 = now_us();
    int rc = host ? strata_learn_host_run(l->comm, e->coll, a) : ch->al->run(p, a);
    double t = now_us() - t0;
    const struct strata_config *cfg = strata_config();
    if (host && cfg) t *= cfg->test_host_time_percent / 100.0;
    double predicted = host ? l->host_pred : ch->predicted_us;
    /* The first run of a candidate is left out (cold pages and lines). */
    if (rc != MPI_SUCCESS || predicted <= 0 ||
        (!host && (int)ch->al->id != e->cand[e->cur].algo))
        return rc;
    if (!e->skipped) e->skipped = 1;
    else if (e->n < STRATA_LEARN_SAMPLES) e->sample[e->n++] = t / predicted;
    return rc;
}

void strata_learn_release(struct strata_plane *p)
{
    struct strata_learn *l = p->learn;
    if (!l) return;
    struct strata_model_shape shape;
    pricing->shape(p, &shape);
    while (atomic_flag_test_and_set_explicit(&kept_busy, memory_order_acquire)) continue;
    for (int i = 0; i < l->nentries; i++) {
        const struct strata_learn_entry *e = &l->e[i];
        for (int j = 0; j < e->ncand; j++) {
            const struct strata_learn_cand *c = &e->cand[j];
            if (!c->measured) continue;
            struct strata_model_measured r = {e->coll, shape.size, shape.groups,
                                              shape.single_copy != 0, e->cls, c->algo, c->k,
                                              c->ratio};
            strata_model_put_measured(&kept, &r);
        }
    }
    atomic_flag_clear_explicit(&kept_busy, memory_order_release);
    free(l);
    p->learn = NULL;
    p->learn_armed = NULL;
}

void strata_learn_save(const char *cache_path, int cache_state, const struct strata_model *base)
{
    char learned[512], why[640];
    if (!kept.nmeasured) return;
    if (!cache_state || strata_learn_file_path(cache_path, learned, sizeof learned)) return;
    /* What earlier jobs measured (read at MPI_Init) and what this one did. */
    struct strata_model m = *base;
    for (int i = 0; i < kept.nmeasured; i++) strata_model_put_measured(&m, &kept.measured[i]);
    if (strata_learn_file_save(&m, learned, why, sizeof why)) {
        strata_warn("what selection measured is not kept: %s", why);
        return;
    }
    strata_verbose(1, "what selection measured (%d algorithm%s) is kept in %s", kept.nmeasured,
                   kept.nmeasured == 1 ? "" : "s", learned);
    if (cache_state == 2) {
        /* A cache an earlier build wrote its "measured" lines into: they
         * are in the learned file now, and the cache goes back to what
         * every build reads. */
        m.nmeasured = 0;
        if (strata_model_save_cache(&m, cache_path, why, sizeof why))
            strata_warn("the model cache keeps its \"measured\" lines: %s", why);
    }
}
