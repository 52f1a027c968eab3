/* Running an operation to completion: the one place where a blocking
 * collective waits. */
#include "coll/op.h"

#include <mpi.h>
#include <stdatomic.h>

_Atomic(strata_op_idle_fn) strata_op_idle_hook;

int strata_op_run(struct strata_op *op)
{
    /* The same policy as strata_flag_wait_ge, per wait: a wait that the op
     * passes starts the next one's spin afresh (a pipeline waits once per
     * chunk, and each chunk deserves its spin before yielding). */
    unsigned long round = 0, waits = op->waits;
    for (;;) {
        int rc = op->progress(op);
        if (rc != STRATA_OP_PENDING) return rc;
        /* Relaxed: the hook is a function set once; nothing it reads is
         * published through this pointer. */
        strata_op_idle_fn idle = atomic_load_explicit(&strata_op_idle_hook, memory_order_relaxed);
        if (idle) idle();
        if (op->waits != waits) {
            waits = op->waits;
            round = 0;
        }
        strata_backoff(round++);
        if (strata_liveness_due(round)) strata_peer_check_alive(op->waiting_for);
    }
}
