/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_alltoall_pairwise(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_alltoall_pairwise is not written yet");
    abort();
}

