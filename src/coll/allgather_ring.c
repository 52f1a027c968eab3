/* PLACEHOLDER: being written; not part of any commit in this state. */
#include <stdlib.h>
#include "coll/block.h"
#include "util/log.h"

int strata_allgather_ring_neighbour(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_allgather_ring_neighbour is not written yet");
    abort();
}

int strata_allgather_ring_source_read(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_allgather_ring_source_read is not written yet");
    abort();
}

int strata_allgather_ring_source_write(struct strata_plane *p, const struct strata_block_args *a)
{
    strata_error("strata_allgather_ring_source_write is not written yet");
    abort();
}

