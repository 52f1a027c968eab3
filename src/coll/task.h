/* Collectives as resumable operations.
 *
 * A node algorithm is an operation object: a start step fills it (the
 * arguments, the per-call tree, the operation's base) and a progress step
 * advances it as far as the flags allow, then returns
 *   MPI_SUCCESS         done: the user's buffers are free again,
 *   STRATA_TASK_PENDING   not yet: call progress again later,
 *   an MPI error code   failed.
 * Progress never spins: where a straight-through algorithm would wait for a
 * flag, it returns PENDING, and the next call resumes at the same wait.  So
 * one thread can drive several operations (on different communicators) by
 * alternating their progress steps, and a blocking
 * collective is start + strata_task_run, the one place with the waiting
 * policy (spin, then yield, and check that the awaited peer still lives).
 *
 * The resume points are written with the macros below, a protothread in
 * the style of Duff's device: a progress function is one switch on
 * task->resume, and STRATA_TASK_AWAIT_GE leaves a case label at its line.
 * Hence the rules for a progress function:
 *   - everything that must survive an AWAIT lives in the operation struct
 *     (loop counters included), never in a local variable: locals are
 *     garbage after a resume;
 *   - at most one AWAIT per source line; no AWAIT inside a nested switch;
 *   - the body sits between STRATA_TASK_BEGIN and STRATA_TASK_END and ends by
 *     falling into STRATA_TASK_END (or returns an error code).
 *
 * One operation at a time per plane: the plane's flag bases and scratch
 * buffers belong to the operation in progress (MPI orders the collectives
 * of one communicator; two communicators have two planes).
 *
 * XHC's init/start/work/ack/fini split maps onto it: init is the
 * operation's start function (plane base, tree), "start" the publication of
 * seq (entering), "work" the awaits and copies of progress, "ack" the last
 * flag published, "fini" the end of progress (nothing to free: the
 * operation owns no memory). */
#ifndef STRATA_TASK_H
#define STRATA_TASK_H

#include <mpi.h>
#include <stdint.h>
#include <sys/types.h>

#include "coll/plane.h"
#include "shm/flags.h"

/* Not done yet (MPI error codes are >= 0). */
#define STRATA_TASK_PENDING (-1)
/* strata_task_run gave the operation up: a wait stalled and another rank's
 * signature for the call differs from this rank's (coll/agree.h).  The
 * operation is abandoned; the entry layer rewinds the plane and reports. */
#define STRATA_TASK_DISAGREE (-2)

struct strata_task {
    /* Advances the operation: MPI_SUCCESS, STRATA_TASK_PENDING or an error. */
    int (*progress)(struct strata_task *task);
    struct strata_plane *p;
    int resume;          /* where progress goes on: 0 first, else an AWAIT's line */
    unsigned long waits; /* awaits passed so far (a new wait starts a new spin) */
    pid_t waiting_for;   /* pid of the peer whose flag the task waits for (0: none) */
    /* The flag the task waits for (NULL: not a flag, e.g. a host MPI request),
     * the value it awaits and the plane that holds it: strata_task_run blocks
     * on it when the wait is long (shm/wait.h). */
    strata_flag *wait_flag;
    uint64_t wait_value;
    struct strata_plane *wait_plane;
};

/* Sets up the common part; the operation's own start function calls it. */
static inline void strata_task_init(struct strata_task *task, struct strata_plane *p,
                                    int (*progress)(struct strata_task *task))
{
    task->progress = progress;
    task->p = p;
    task->resume = 0;
    task->waits = 0;
    task->waiting_for = 0;
    task->wait_flag = NULL;
    task->wait_value = 0;
    task->wait_plane = NULL;
}

/* One progress step (what a test alternating two operations calls). */
static inline int strata_task_step(struct strata_task *task) { return task->progress(task); }

/* Runs task to completion: progress, and between unsuccessful steps the
 * adaptive waiting policy of shm/wait.h (spin while it pays, yield, block
 * on the awaited flag's owner when the wait is long or the cores are
 * shared; check the awaited peer's liveness every few ms).  MPI_SUCCESS or
 * the operation's error. */
int strata_task_run(struct strata_task *task);

/* Called by strata_task_run between unsuccessful steps when set: the layer
 * above (request/nonblocking.c) sets it once the application has posted a
 * nonblocking collective, so that those progress while a blocking collective
 * of another communicator waits (MPI's progress rule: a rank blocked in one
 * collective must not stall another that a peer waits for).  Set once,
 * never cleared; an atomic because other threads may be running
 * collectives when it is set. */
typedef void (*strata_task_idle_fn)(void);
extern _Atomic(strata_task_idle_fn) strata_task_idle_hook;

/* ---- The resume macros (see the rules above). */

#if defined(__GNUC__)
#define STRATA_FALLTHROUGH __attribute__((fallthrough))
#else
#define STRATA_FALLTHROUGH ((void)0)
#endif

#define STRATA_TASK_BEGIN(task)                                                              \
    switch ((task)->resume) {                                                              \
    case 0:

/* Waits, without blocking, until *flag >= value (acquire, as
 * strata_flag_read): returns STRATA_TASK_PENDING from the progress function
 * until then.  owner: the flag writer's pid, for the liveness check. */
#define STRATA_TASK_AWAIT_GE(task, flag, value, owner)                                       \
    do {                                                                                   \
        (task)->resume = __LINE__;                                                         \
        STRATA_FALLTHROUGH;                                                                \
    case __LINE__:                                                                         \
        if (strata_flag_read(flag) < (value)) {                                            \
            (task)->waiting_for = (owner);                                                 \
            (task)->wait_flag = (flag);                                                    \
            (task)->wait_value = (value);                                                  \
            (task)->wait_plane = (task)->p;                                                \
            return STRATA_TASK_PENDING;                                                    \
        }                                                                                  \
        (task)->waits++;                                                                   \
    } while (0)

/* Runs a sub-step (`call`, a progress function of the nested state `sub`,
 * a struct strata_task with its own resume point) until it is done, as one
 * await: PENDING while it is pending, its error if it fails. */
#define STRATA_TASK_AWAIT_STEPS(task, sub, call)                                             \
    do {                                                                                   \
        (task)->resume = __LINE__;                                                         \
        STRATA_FALLTHROUGH;                                                                \
    case __LINE__: {                                                                       \
        int rc_ = (call);                                                                  \
        (task)->waits += (sub)->waits;                                                     \
        (sub)->waits = 0;                                                                  \
        if (rc_ == STRATA_TASK_PENDING) {                                                  \
            (task)->waiting_for = (sub)->waiting_for;                                      \
            (task)->wait_flag = (sub)->wait_flag;                                          \
            (task)->wait_value = (sub)->wait_value;                                        \
            (task)->wait_plane = (sub)->wait_plane;                                        \
        }                                                                                  \
        if (rc_ != MPI_SUCCESS) return rc_;                                                \
    }                                                                                      \
    } while (0)

/* Waits until every rank has entered the plane's previous operation, so
 * this operation's half of the copy-in/copy-out regions is free again (the
 * resumable strata_plane_wait_regions_free).  idx: an int field of the
 * operation, the rank the wait is at. */
#define STRATA_TASK_AWAIT_REGIONS_FREE(task, p, idx)                                         \
    if ((p)->prev_base != 0 && (p)->all_entered < (p)->prev_base) {                        \
        for ((idx) = 0; (idx) < (p)->size; (idx)++)                                        \
            if ((idx) != (p)->rank)                                                        \
                STRATA_TASK_AWAIT_GE(task, &(p)->ctl[idx].seq, (p)->prev_base, (p)->pid[idx]); \
        (p)->all_entered = (p)->prev_base;                                                 \
    }

/* Waits until this task's slot of flag lines may be written (plane.h, "The
 * flag lines"): every rank has entered task n - SLOTS + 1.  Free when the
 * plane already knows it; otherwise waits for every other rank's seq and
 * learns the most they show.  idx: an int field of the operation. */
#define STRATA_TASK_AWAIT_SLOT_FREE(task, p, idx)                                            \
    if ((p)->all_entered < strata_plane_slot_need(p)) {                                    \
        for ((idx) = 0; (idx) < (p)->size; (idx)++)                                        \
            if ((idx) != (p)->rank)                                                        \
                STRATA_TASK_AWAIT_GE(task, &(p)->ctl[idx].seq, strata_plane_slot_need(p),  \
                                     (p)->pid[idx]);                                       \
        strata_plane_learn_entered(p);                                                     \
    }

/* Returns "not yet" once and resumes after it on the next step: for waits
 * that are not a flag (host MPI requests, the engine of src/net/engine.c).
 * Set task->waiting_for first (the peer whose liveness matters). */
#define STRATA_TASK_YIELD(task)                                                              \
    do {                                                                                   \
        (task)->resume = __LINE__;                                                         \
        (task)->wait_flag = NULL;                                                          \
        return STRATA_TASK_PENDING;                                                        \
    case __LINE__:;                                                                        \
    } while (0)

/* A progress call after completion does nothing and reports done. */
#define STRATA_TASK_FINISHED (-1)

#define STRATA_TASK_END(task)                                                                \
    STRATA_FALLTHROUGH;                                                                    \
    default:                                                                               \
        break;                                                                             \
        }                                                                                  \
        (task)->resume = STRATA_TASK_FINISHED;                                             \
        return MPI_SUCCESS

#endif
