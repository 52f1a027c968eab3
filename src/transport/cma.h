/* Cross-Memory Attach transport: one copy between the address spaces of two
 * processes of the same node (process_vm_readv / process_vm_writev).
 *
 * Only the transport folder includes this header (and the registry lists
 * the transport): everything else reaches CMA through
 * strata_transport_cma's calls (transport.h).
 *
 * Feature bits: reads and writes a peer's memory, any byte alignment, any
 * length (calls are split below the kernel's per-call limit and partial
 * transfers are resumed). */
#ifndef STRATA_CMA_H
#define STRATA_CMA_H

#include <mpi.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "transport/transport.h"

extern const struct strata_transport strata_transport_cma;

/* Copies len bytes from (pid, remote) into local.  0, or -1 with errno. */
int strata_cma_read(pid_t pid, const void *remote, void *local, size_t len);

/* Copies len bytes from local into (pid, remote).  0, or -1 with errno. */
int strata_cma_write(pid_t pid, void *remote, const void *local, size_t len);

/* One copy of len bytes between (pid, remote) and local, either way. */
typedef int (*strata_cma_piece_fn)(pid_t pid, void *remote, void *local, size_t len);

/* Walks the two lists pairwise and calls piece once for each stretch where
 * one local and one remote range overlap (the cma transport's read and
 * write; the map transport walks the same way with its own piece, which
 * falls back to strata_cma_read/write outside an arena).  Stops at the
 * shorter list.  0, or -1 with errno from the first piece that failed. */
int strata_cma_walk(pid_t pid, const struct iovec *local, size_t nlocal,
                    const struct iovec *remote, size_t nremote, strata_cma_piece_fn piece);

/* Collective over node_comm (ranks of one machine): every rank reads a
 * buffer of every other rank with process_vm_readv and checks its content.
 * Returns 1 if every pair works on every rank, else 0 with the reason
 * (probe.c). */
int strata_cma_probe(MPI_Comm node_comm, char *why, size_t whylen);

/* Local: whether this process still passes the kernel's ptrace check as it
 * did at the last strata_cma_probe (same credentials, still dumpable, same
 * CAP_SYS_PTRACE), so that what the probe found still holds for it.  1
 * (also when nothing was probed), or 0 with what changed.  A communicator
 * set up after a change must not rely on CMA nor on peers opening its
 * descriptors (an anonymous segment). */
int strata_cma_unchanged(char *why, size_t whylen);

#endif
