/* PLACEHOLDER: being written (model, calibration file). */
#include "coll/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double strata_model_gamma(const struct strata_model *m, int c)
{
    if (c <= 1) return 1.0;
    if (c <= m->ngamma) return m->gamma[c - 1];
    return m->gamma_a * c * c + m->gamma_b * c;
}

double strata_model_predict(const struct strata_model *m, const struct strata_algorithm *al,
                            const struct strata_model_shape *shape, size_t block, int k)
{
    double n = (double)block;
    if (!(al->needs & STRATA_NEEDS_CMA)) return 2 * n * m->shm_beta * shape->size + m->flag;
    return m->alpha + n * m->beta * shape->size + m->flag;
}

void strata_model_defaults(struct strata_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "built-in defaults");
    m->alpha = 1.5;
    m->beta = 1.0 / 31000.0;
    m->lock = 0.2;
    m->page = 4096;
    m->ngamma = 1;
    m->gamma[0] = 1;
    m->gamma_a = 0.1;
    m->gamma_b = 0.9;
    m->shm_beta = 1.0 / 20000.0;
    m->memcpy_beta = 1.0 / 20000.0;
    m->flag = 0.2;
}

int strata_model_load(struct strata_model *m, const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: model files are not read yet", path);
    return -1;
}

int strata_model_save(const struct strata_model *m, const char *path) { return -1; }

void strata_model_default_path(char *out, size_t outlen) { snprintf(out, outlen, "/nonexistent"); }
