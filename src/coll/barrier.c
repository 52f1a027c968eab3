/* Barrier inside a node: an arrival wave up the hierarchy (each leader waits
 * for its children, whose flag stands for their whole subtree), then a
 * release wave down. */
#include "coll/coll.h"
#include "coll/tree.h"

int strata_barrier(struct strata_plane *p)
{
    if (p->size == 1) return MPI_SUCCESS;
    int parent, *children = p->tree_buf;
    int nchildren = strata_tree_links(p->hier, 0, p->rank, &parent, children);
    uint64_t base = strata_plane_enter(p, 0, NULL, NULL);
    struct strata_rank_ctl *me = &p->ctl[p->rank];
    for (int i = 0; i < nchildren; i++)
        strata_flag_wait_ge(&p->ctl[children[i]].arrive, base, p->pid[children[i]]);
    if (parent >= 0) {
        strata_flag_publish(&me->arrive, base);
        strata_flag_wait_ge(&p->ctl[parent].release, base, p->pid[parent]);
    }
    if (nchildren > 0) strata_flag_publish(&me->release, base);
    return MPI_SUCCESS;
}
