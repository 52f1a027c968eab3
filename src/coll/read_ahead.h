/* Reading ahead of a late peer (issue 15): for block algorithms whose step
 * s reads one peer's buffer, valid from that peer's entry on (Alltoall
 * pairwise, Allgather ring-source-read).  Steps run in a fixed order so that
 * each buffer has one reader per step; but when a step's peer has not
 * entered (descheduled, noisy), waiting for it would also hold up every later
 * step whose peer is already there.  So, while it waits, the rank reads every
 * later step whose peer has entered, and marks it in o->ahead; the step loop
 * skips marked steps.  Each block lands at its own place, so results do not
 * depend on the order.  Two readers may share a buffer for a while, only
 * when a rank is late already. */
#ifndef STRATA_COLL_READ_AHEAD_H
#define STRATA_COLL_READ_AHEAD_H

#include <stdint.h>

#include "coll/block.h"
#include "coll/task.h"

/* Steps past this one are never read ahead (o->ahead has 64 bits). */
#define STRATA_AHEAD_LAST 63

/* The peer of step s; reads step s's block from `peer`. */
typedef int (*strata_ahead_peer_fn)(const struct strata_block_task *o, int s);
typedef void (*strata_ahead_read_fn)(struct strata_block_task *o, int peer);

static inline int strata_ahead_done(const struct strata_block_task *o, int s)
{
    return s <= STRATA_AHEAD_LAST && (o->ahead >> s & 1);
}

/* Reads every step after `step`, up to STRATA_AHEAD_LAST and below `steps`,
 * whose peer has entered, and marks it. */
static inline void strata_read_ahead(struct strata_block_task *o, int step, int steps,
                                     strata_ahead_peer_fn peer_of, strata_ahead_read_fn read)
{
    struct strata_plane *p = o->op.p;
    for (int s = step + 1; s < steps && s <= STRATA_AHEAD_LAST; s++) {
        int peer = peer_of(o, s);
        /* The acquire makes the peer's exposed buffer of this operation
         * visible, as the step's own await does. */
        if (strata_ahead_done(o, s) || strata_flag_read(&p->ctl[peer].seq) < o->base) continue;
        read(o, peer);
        o->ahead |= (uint64_t)1 << s;
    }
}

/* STRATA_TASK_AWAIT_GE on the seq of step `step`'s peer, but every look at
 * the flag while the peer is late first reads ahead whoever has entered
 * since the last look (the wait comes back to the step at least once per
 * blocking timeout). */
#define STRATA_AWAIT_READING_AHEAD(op, o, step, steps, peer_of, read)                        \
    do {                                                                                   \
        (op)->resume = __LINE__;                                                           \
        STRATA_FALLTHROUGH;                                                                \
    case __LINE__:                                                                         \
        if (strata_flag_read(&(op)->p->ctl[peer_of((o), (step))].seq) < (o)->base)         \
            strata_read_ahead((o), (step), (steps), (peer_of), (read));                    \
        if (strata_flag_read(&(op)->p->ctl[peer_of((o), (step))].seq) < (o)->base) {       \
            (op)->waiting_for = (op)->p->pid[peer_of((o), (step))];                        \
            (op)->wait_flag = &(op)->p->ctl[peer_of((o), (step))].seq;                     \
            (op)->wait_value = (o)->base;                                                  \
            (op)->wait_plane = (op)->p;                                                    \
            return STRATA_TASK_PENDING;                                                    \
        }                                                                                  \
        (op)->waits++;                                                                     \
    } while (0)

#endif
