/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_scatter_parallel_read(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_scatter_parallel_read is not written yet");
    abort();
}

int strata_scatter_sequential_write(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_scatter_sequential_write is not written yet");
    abort();
}

int strata_scatter_throttled_read(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_scatter_throttled_read is not written yet");
    abort();
}

