/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_allgather_recursive_doubling(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_allgather_recursive_doubling is not written yet");
    abort();
}

int strata_allgather_bruck(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_allgather_bruck is not written yet");
    abort();
}

