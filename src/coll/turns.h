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

#include "coll/plane.h"

static inline int strata_turn_rank(const struct strata_plane *p, int root, int turn)
{
    return (root + turn) % p->size;
}

static inline int strata_rank_turn(const struct strata_plane *p, int root, int r)
{
    return (r - root + p->size) % p->size;
}

/* A non-root waits for its turn: the acknowledgement of turn t-k. */
void strata_turn_wait(struct strata_plane *p, int root, uint64_t base, int k);

/* The root waits until every turn has acknowledged. */
void strata_turn_wait_all(struct strata_plane *p, int root, uint64_t base, int k);

#endif
