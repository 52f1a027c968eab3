/* What a plane's learning table reports in each call's signature, and the
 * lookups the rest of learn.c shares (learn.h).  A file of its own below
 * the decisions: the agreement (agree.c) fills the signature from here on
 * every timed call, and the decisions call the algorithm table, the model and
 * selection, which call the agreement: one file would close a loop. */
#include <stdlib.h>
#include <string.h>

#include "coll/learn.h"
#include "util/colls.h"

struct strata_learn_entry *strata_learn_find(const struct strata_learn *l, int coll, int cls)
{
    if (!l) return NULL;
    for (int i = 0; i < l->nentries; i++)
        if (l->e[i].coll == coll && l->e[i].cls == cls) return (struct strata_learn_entry *)&l->e[i];
    return NULL;
}

const struct strata_learn_entry *strata_learn_entry(const struct strata_plane *p, int coll,
                                                    size_t block)
{
    return strata_learn_find(p->learn, coll, strata_learn_class(block));
}

/* What a report of e is about: its candidate in use, or the host. */
int strata_learn_measured(const struct strata_learn_entry *e)
{
    return e->sampling_host ? STRATA_LEARN_HOST : e->cur;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double strata_learn_median(const double *sample)
{
    double v[STRATA_LEARN_SAMPLES];
    memcpy(v, sample, sizeof v);
    qsort(v, STRATA_LEARN_SAMPLES, sizeof v[0], by_value);
    return STRATA_LEARN_SAMPLES % 2 ? v[STRATA_LEARN_SAMPLES / 2]
                                    : (v[STRATA_LEARN_SAMPLES / 2 - 1] + v[STRATA_LEARN_SAMPLES / 2]) / 2;
}

void strata_learn_fill(const struct strata_plane *p, const struct strata_call_sig *s,
                       struct strata_call_sig_more *m)
{
    long long block = s->in > s->out ? s->in : s->out;
    const struct strata_learn_entry *e =
        block > 0 && !strata_coll_is_v(s->coll)
            ? strata_learn_find(p->learn, s->coll, strata_learn_class((size_t)block)) : NULL;
    m->learn_cand = e ? strata_learn_measured(e) : -1;
    m->learn_n = !e ? 0 : e->n < STRATA_LEARN_SAMPLES ? e->n : STRATA_LEARN_SAMPLES;
    m->learn_ratio = e && e->n >= STRATA_LEARN_SAMPLES ? strata_learn_median(e->sample) : 0;
}

