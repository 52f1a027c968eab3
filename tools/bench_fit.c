/* strata-bench --algorithms --fit FILE: per-algorithm corrections of the
 * cost model from what --algorithms measured.  Each forced row's strata
 * median over the model's prediction for the same call is written as a
 * "measured" line (coll/model.h) for the communicator's shape and the
 * block's size class: the ratios selection's measurements keep
 * (coll/learn.h), which a job whose model has them starts from.  Only
 * forced rows count: strata's own choice ("tuned") may be corrected by
 * selection while it is timed. */
#include <errno.h>

#include "bench.h"
#include "coll/algorithm.h"
#include "coll/learn.h"
#include "coll/model.h"
#include "coll/select.h"
#include "context/context.h"

int bench_write_fit(const struct bench *b)
{
    struct strata_model m = *strata_select_model();
    const struct strata_plane *p = b->ctx ? b->ctx->plane : NULL;
    if (!p) {
        errno = ENOTSUP; /* no plane: strata does not serve MPI_COMM_WORLD here */
        return -1;
    }
    struct strata_model_shape shape;
    strata_select_shape(p, &shape);
    for (int i = 0; i < b->nrows; i++) {
        const struct bench_row *r = &b->rows[i];
        if (!r->algorithm || r->tuned || r->refusal || !(r->st[V_STRATA].median > 0)) continue;
        const struct strata_algorithm *al = strata_algorithm_find(r->coll, r->algorithm);
        if (!al) continue;
        int k = al->k_meaning ? r->k : 1;
        double predicted = strata_select_predict(p, al, k, r->bytes);
        if (!(predicted > 0)) continue;
        struct strata_model_measured rec = {r->coll, shape.size, shape.groups,
                                            shape.single_copy != 0, strata_learn_class(r->bytes),
                                            (int)al->id, k, r->st[V_STRATA].median / predicted};
        strata_model_put_measured(&m, &rec);
    }
    return strata_model_save(&m, b->opt.fit);
}
