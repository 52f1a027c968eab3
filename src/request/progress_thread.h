/* STRATA_PROGRESS=thread: the optional progress thread (progress_thread.c). */
#ifndef STRATA_PROGRESS_THREAD_H
#define STRATA_PROGRESS_THREAD_H

/* Starts the thread if STRATA_PROGRESS=thread and the host MPI runs at
 * MPI_THREAD_MULTIPLE (otherwise rank 0 warns once and nothing starts).
 * Called once, when the first nonblocking or persistent operation is set
 * up. */
void strata_progress_thread_start(void);

/* The count of outstanding operations left zero: wakes the sleeping thread. */
void strata_progress_thread_wake(void);

/* MPI_Finalize, after the outstanding operations completed: ends and joins
 * the thread. */
void strata_progress_thread_stop(void);

#endif
