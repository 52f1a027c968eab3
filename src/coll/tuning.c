/* The data plane's tuning, set once from the STRATA_ variables at MPI_Init
 * (before any collective runs) and only read afterwards. */
#include "coll/coll.h"
#include "util/hot.h"

static struct strata_tuning tuning = {
    .cico_max = 16 << 10,
    .chunk = {256 << 10, 256 << 10, 256 << 10, 256 << 10, 256 << 10, 256 << 10, 256 << 10,
              256 << 10, 256 << 10},
    .reduce_chunk = 256 << 10,
    .min_slice = 16 << 10,
    .throttle = 4,
};

STRATA_HOT const struct strata_tuning *strata_tuning(void) { return &tuning; }

void strata_tuning_set(const struct strata_tuning *t) { tuning = *t; }
