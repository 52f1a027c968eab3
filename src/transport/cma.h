/* Cross-Memory Attach transport: one copy between the address spaces of two
 * processes of the same node (process_vm_readv / process_vm_writev).
 *
 * Feature bits a caller may rely on: single copy in either direction,
 * any byte alignment, any length (calls are split below the kernel's
 * per-call limit and partial transfers are resumed). */
#ifndef STRATA_CMA_H
#define STRATA_CMA_H

#include <stddef.h>
#include <sys/types.h>

/* Copies len bytes from (pid, remote) into local.  0, or -1 with errno. */
int strata_cma_read(pid_t pid, const void *remote, void *local, size_t len);

/* Copies len bytes from local into (pid, remote).  0, or -1 with errno. */
int strata_cma_write(pid_t pid, void *remote, const void *local, size_t len);

/* The pid the calling thread's last failed strata_cma_read/write addressed
 * (0 if none failed). */
pid_t strata_cma_failed_pid(void);

/* Largest number of bytes one system call is asked to move (default: 1 GiB,
 * below the kernel's ~2 GiB limit); tests lower it to exercise the loop. */
void strata_cma_set_max_per_call(size_t bytes);

#endif
