/* Turns of the rooted single-copy algorithms (Scatter, Gather; paper IV-A
 * and IV-B): the non-roots are served in the order root+1, root+2, ...
 * (mod size), turn t from 1 to size-1 being rank (root + t) % size.
 *
 * The throttle hands turns on point to point, without barriers: turn t
 * moves its block once turn t-k has acknowledged (ctl.ack = base), so at
 * most k ranks touch the root at any time; k >= size-1 is no throttle. */
#ifndef STRATA_TURNS_H
#define STRATA_TURNS_H

#include <stdint.h>

#include "coll/task.h"
#include "coll/plane.h"

static inline int strata_turn_rank(const struct strata_plane *p, int root, int turn)
{
    return (root + turn) % p->size;
}

static inline int strata_rank_turn(const struct strata_plane *p, int root, int r)
{
    return (r - root + p->size) % p->size;
}

/* The rank whose acknowledgement a non-root waits for before its turn
 * (turn t-k), or -1 if it need not wait. */
static inline int strata_turn_before(const struct strata_plane *p, int root, int k)
{
    int turn = strata_rank_turn(p, root, p->rank);
    return turn <= k ? -1 : strata_turn_rank(p, root, turn - k);
}

/* The first turn whose acknowledgement the root waits for: a turn
 * acknowledges only after the one k turns before it did (acquire, then
 * release), so the last k acknowledgements vouch for every turn. */
static inline int strata_turns_first(const struct strata_plane *p, int k)
{
    int last = p->size - 1;
    return last - k + 1 > 1 ? last - k + 1 : 1;
}

/* Resumable waits (coll/task.h).  A non-root waits for its turn: */
#define STRATA_TASK_AWAIT_TURN(op, p, root, base, k)                                         \
    if (strata_turn_before(p, root, k) >= 0)                                               \
    STRATA_TASK_AWAIT_GE(op, &(p)->ctl[strata_turn_before(p, root, k)].ack, base,          \
                         (p)->pid[strata_turn_before(p, root, k)])

/* The root waits until every turn has acknowledged (t: an int field of the
 * operation). */
#define STRATA_TASK_AWAIT_ALL_TURNS(op, p, root, base, k, t)                                 \
    for ((t) = strata_turns_first(p, k); (t) < (p)->size; (t)++)                           \
    STRATA_TASK_AWAIT_GE(op, &(p)->ctl[strata_turn_rank(p, root, t)].ack, base,            \
                         (p)->pid[strata_turn_rank(p, root, t)])

#endif
