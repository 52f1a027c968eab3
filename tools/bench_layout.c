/* The v-collectives' counts and displacements of a row (strata-bench
 * --pattern), shared by the blocking timing and the nonblocking forms. */
#include "bench.h"

/* The v-collectives' counts of a row (--pattern): block j's elements,
 * packed one after the other; returns their sum.  The same on every rank,
 * except for Alltoallv, where rank r's block j is pattern block (r + j) %
 * size: what r sends j is what j sends r, so one layout serves both sides. */
size_t bench_v_layout(const struct bench *b, const struct bench_row *r)
{
    size_t at = 0;
    for (int j = 0; j < b->size; j++) {
        int c = r->count, i = r->coll == STRATA_COLL_ALLTOALLV || r->coll == STRATA_COLL_ALLTOALLW
                                ? (b->rank + j) % b->size
                                : j;
        if (b->opt.pattern == BENCH_PATTERN_EMPTY && i == b->size / 2) c = 0;
        if (b->opt.pattern == BENCH_PATTERN_SKEWED) c = r->count / (i + 1) ? r->count / (i + 1) : 1;
        b->vcounts[j] = c;
        b->vdispls[j] = (int)at;
        at += (size_t)c;
    }
    return at;
}
