/* The throttle's hand-off between turns (turns.h). */
#include "coll/turns.h"

void strata_turn_wait(struct strata_plane *p, int root, uint64_t base, int k)
{
    int turn = strata_rank_turn(p, root, p->rank);
    if (turn <= k) return;
    int before = strata_turn_rank(p, root, turn - k);
    strata_flag_wait_ge(&p->ctl[before].ack, base, p->pid[before]);
}

void strata_turn_wait_all(struct strata_plane *p, int root, uint64_t base, int k)
{
    /* A turn acknowledges only after the one k turns before it did
     * (acquire, then release), so the last k acknowledgements vouch for
     * every turn. */
    int last = p->size - 1, first = last - k + 1 > 1 ? last - k + 1 : 1;
    for (int t = first; t <= last; t++) {
        int r = strata_turn_rank(p, root, t);
        strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    }
}
