/* Running an operation to completion: the one place where a blocking
 * collective waits. */
#include "coll/op.h"

#include "coll/agree.h"

#include <mpi.h>
#include <stdatomic.h>

_Atomic(strata_op_idle_fn) strata_op_idle_hook;

#include "shm/wait.h"
#include "util/hot.h"

STRATA_HOT int strata_op_run(struct strata_op *op)
{
    /* The policy of shm/wait.h, per wait: a wait that the op passes starts
     * the next one afresh (a pipeline waits once per chunk, and each chunk
     * deserves its spin before yielding or blocking). */
    struct strata_waiter w;
    struct strata_wait_target t;
    unsigned long waits = op->waits, pauses = 0;
    strata_waiter_init(&w);
    for (;;) {
        int rc = op->progress(op);
        if (rc != STRATA_OP_PENDING) {
            strata_waiter_done(&w);
            return rc;
        }
        /* Relaxed: the hook is a function set once; nothing it reads is
         * published through this pointer. */
        strata_op_idle_fn idle = atomic_load_explicit(&strata_op_idle_hook, memory_order_relaxed);
        if (idle) idle();
        if (op->waits != waits) {
            waits = op->waits;
            strata_waiter_done(&w);
        }
        /* Recomputed per step: the op may wait for another flag now. */
        if (op->wait_flag) {
            /* The quick spin on the flag itself; progress again once set.
             * Not while a hook is set: nonblocking operations then progress
             * at every poll, as before. */
            if (!idle && strata_waiter_spin_quick(&w, op->wait_flag, op->wait_value)) continue;
            strata_plane_wait_target(op->wait_plane, op->wait_flag, op->wait_value,
                                     op->waiting_for, &t);
        } else {
            t = (struct strata_wait_target){NULL, 0, NULL,
                                            op->p ? &op->p->ctl[op->p->rank].wake : NULL,
                                            op->waiting_for};
        }
        strata_waiter_pause(&w, &t);
        /* A stalled wait: give up if the ranks disagree on the call (the
         * data waited for may never come; coll/agree.h).  Every few pauses:
         * each pause already spun, yielded or slept a while. */
        if ((++pauses & 7) == 0 && op->p && strata_agree_stalled(op->p)) {
            strata_waiter_done(&w);
            return STRATA_OP_DISAGREE;
        }
    }
}
