/* Shared pieces of Reduce_scatter and Scan/Exscan (rs_scan_common.h). */
#include "coll/rs_scan_common.h"

#include <stdlib.h>

#include "util/colls.h"
#include "util/log.h"

unsigned char *strata_rs_slot(struct strata_plane *p, int i, int nslots, size_t bytes)
{
    size_t stride = (bytes + 2 * 4096 - 1) / 4096 * 4096;
    unsigned char *base = strata_plane_scratch(p, (size_t)nslots * stride);
    if (!base) {
        strata_error("out of memory for %d reduction slices of %zu bytes", nslots, stride);
        abort();
    }
    return base + (size_t)i * stride;
}

size_t strata_rs_window(const struct strata_plane *p)
{
    return p->region < strata_tuning()->cico_max ? p->region : strata_tuning()->cico_max;
}

const char *strata_rs_scan_path(const struct strata_plane *p, int coll, size_t bytes)
{
    int scan = coll == STRATA_COLL_SCAN || coll == STRATA_COLL_EXSCAN;
    if (bytes <= strata_rs_window(p))
        return scan ? "copy-in/copy-out, each rank folds its predecessors' operands"
                    : "copy-in/copy-out slice reduction (each rank folds its own block)";
    if (strata_plane_single_copy(p))
        return scan ? "pipelined prefix along rank order, single copy"
                    : "single-copy slice reduction (each rank reads its block from every peer)";
    return scan ? "copy-in/copy-out in rounds (no single-copy transport)"
                : "copy-in/copy-out slice reduction in rounds (no single-copy transport)";
}
