/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_gather_parallel_write(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_gather_parallel_write is not written yet");
    abort();
}

int strata_gather_sequential_read(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_gather_sequential_read is not written yet");
    abort();
}

int strata_gather_throttled_write(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_gather_throttled_write is not written yet");
    abort();
}

