/* The model file's "measured" lines (model.h): what selection measured in
 * earlier jobs (coll/learn.h), one algorithm per line:
 *
 *   measured COLL RANKS GROUPS SINGLE_COPY CLASS ALGORITHM[:k] RATIO
 *
 * COLL the collective's short name (allgather), the communicator's shape
 * (ranks, groups of the finest hierarchy level, 1 if a single-copy
 * transport serves it), CLASS the bit length of the block (21: 1 MiB to
 * 2 MiB - 1), and RATIO the measured time over the model's prediction. */
#include "coll/model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/colls.h"

static int whole(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int same_record(const struct strata_model_measured *a, const struct strata_model_measured *b)
{
    return a->coll == b->coll && a->ranks == b->ranks && a->groups == b->groups &&
           a->single_copy == b->single_copy && a->cls == b->cls && a->algo == b->algo &&
           a->k == b->k;
}

void strata_model_put_measured(struct strata_model *m, const struct strata_model_measured *r)
{
    for (int i = 0; i < m->nmeasured; i++)
        if (same_record(&m->measured[i], r)) {
            m->measured[i] = *r;
            return;
        }
    if (m->nmeasured == STRATA_MODEL_MAX_MEASURED) {
        /* The oldest record goes: the newest describe the machine as it is. */
        memmove(m->measured, m->measured + 1, sizeof m->measured[0] * (STRATA_MODEL_MAX_MEASURED - 1));
        m->nmeasured--;
    }
    m->measured[m->nmeasured++] = *r;
}

const char *strata_model_parse_measured(struct strata_model *m, char *values, char *why,
                                        size_t whylen)
{
    char *tok[8], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(values, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == 8) return "measured takes 7 values: COLL RANKS GROUPS SINGLE_COPY CLASS "
                          "ALGORITHM[:k] RATIO";
        tok[n++] = t;
    }
    if (n != 7)
        return "measured takes 7 values: COLL RANKS GROUPS SINGLE_COPY CLASS ALGORITHM[:k] RATIO";
    struct strata_model_measured r;
    r.coll = strata_coll_parse(tok[0]);
    if (r.coll < 0) {
        snprintf(why, whylen, "measured: \"%s\" is not a collective", tok[0]);
        return why;
    }
    if (whole(tok[1], 1, 1 << 24, &r.ranks) || whole(tok[2], 1, 1 << 24, &r.groups) ||
        whole(tok[3], 0, 1, &r.single_copy) || whole(tok[4], 0, 64, &r.cls))
        return "measured: RANKS and GROUPS must be positive integers, SINGLE_COPY 0 or 1, "
               "CLASS 0 to 64";
    const struct strata_algorithm *al;
    char err[512];
    if (strata_algorithm_parse(r.coll, tok[5], &al, &r.k, err, sizeof err)) {
        snprintf(why, whylen, "measured: %s", err);
        return why;
    }
    r.algo = (int)al->id;
    char *end;
    errno = 0;
    r.ratio = strtod(tok[6], &end);
    if (end == tok[6] || *end || errno || !isfinite(r.ratio) || r.ratio <= 0)
        return "measured: RATIO must be a number above 0";
    strata_model_put_measured(m, &r);
    return NULL;
}

void strata_model_write_measured(const struct strata_model *m, FILE *f)
{
    if (m->nmeasured)
        fprintf(f, "# measured COLL RANKS GROUPS SINGLE_COPY CLASS ALGORITHM[:k] RATIO: what "
                   "selection measured\n# (the time over this model's prediction; CLASS: the "
                   "block's bit length)\n");
    for (int i = 0; i < m->nmeasured; i++) {
        const struct strata_model_measured *r = &m->measured[i];
        const struct strata_algorithm *al = strata_algorithm((enum strata_algo)r->algo);
        char k[16] = "";
        if (al->k_meaning) snprintf(k, sizeof k, ":%d", r->k);
        fprintf(f, "measured %s %d %d %d %d %s%s %.4g\n", strata_coll_short_name(r->coll),
                r->ranks, r->groups, r->single_copy, r->cls, al->name, k, r->ratio);
    }
}

const struct strata_model_measured *strata_model_find_measured(const struct strata_model *m,
                                                               const struct strata_model_shape *s,
                                                               int coll, int cls, int algo, int k)
{
    struct strata_model_measured key = {coll, s->size, s->groups, s->single_copy != 0, cls, algo, k, 0};
    for (int i = 0; i < m->nmeasured; i++)
        if (same_record(&m->measured[i], &key)) return &m->measured[i];
    return NULL;
}
