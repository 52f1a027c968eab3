/* Running an operation to completion: the one place where a blocking
 * collective waits. */
#include "coll/task.h"

#include "coll/agree.h"

#include <mpi.h>
#include <stdatomic.h>

_Atomic(strata_task_idle_fn) strata_task_idle_hook;

#include "shm/wait.h"
#include "util/hot.h"

STRATA_HOT int strata_task_run(struct strata_task *task)
{
    /* The policy of shm/wait.h, per wait: a wait that the task passes starts
     * the next one afresh (a pipeline waits once per chunk, and each chunk
     * deserves its spin before yielding or blocking). */
    struct strata_waiter w;
    struct strata_wait_target t;
    unsigned long waits = task->waits, pauses = 0;
    strata_waiter_init(&w);
    for (;;) {
        int rc = task->progress(task);
        if (rc != STRATA_TASK_PENDING) {
            strata_waiter_done(&w);
            return rc;
        }
        /* Relaxed: the hook is a function set once; nothing it reads is
         * published through this pointer. */
        strata_task_idle_fn idle = atomic_load_explicit(&strata_task_idle_hook, memory_order_relaxed);
        if (idle) idle();
        if (task->waits != waits) {
            waits = task->waits;
            strata_waiter_done(&w);
        }
        /* Recomputed per step: the task may wait for another flag now. */
        if (task->wait_flag) {
            /* The quick spin on the flag itself; progress again once set.
             * Not while a hook is set: nonblocking operations then progress
             * at every poll, as before. */
            if (!idle && strata_waiter_spin_quick(&w, task->wait_flag, task->wait_value)) continue;
            strata_plane_wait_target(task->wait_plane, task->wait_flag, task->wait_value,
                                     task->waiting_for, &t);
        } else {
            t = (struct strata_wait_target){NULL, 0, NULL,
                                            task->p ? &task->p->ctl[task->p->rank].wake : NULL,
                                            task->waiting_for};
        }
        strata_waiter_pause(&w, &t);
        /* A stalled wait: give up if the ranks disagree on the call (the
         * data waited for may never come; coll/agree.h).  Every few pauses:
         * each pause already spun, yielded or slept a while. */
        if ((++pauses & 7) == 0 && task->p && strata_agree_stalled(task->p)) {
            strata_waiter_done(&w);
            return STRATA_TASK_DISAGREE;
        }
    }
}
