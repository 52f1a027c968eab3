/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_bcast_direct_read(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_bcast_direct_read is not written yet");
    abort();
}

int strata_bcast_direct_write(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_bcast_direct_write is not written yet");
    abort();
}

int strata_bcast_knomial(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_bcast_knomial is not written yet");
    abort();
}

int strata_bcast_scatter_allgather(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_bcast_scatter_allgather is not written yet");
    abort();
}

