/* Run-time checks of the intra-node transports, with reasons a user can act
 * on when they fail. */
#ifndef STRATA_PROBE_H
#define STRATA_PROBE_H

#include <mpi.h>
#include <stddef.h>

/* Collective over node_comm (ranks of one machine): every rank reads a
 * buffer of every other rank with process_vm_readv and checks its content.
 * Returns 1 if every pair works on every rank, else 0 with the reason. */
int strata_cma_probe(MPI_Comm node_comm, char *why, size_t whylen);

/* Local: whether this process still passes the kernel's ptrace check as it
 * did at the last strata_cma_probe (same credentials, still dumpable, same
 * CAP_SYS_PTRACE), so that what the probe found still holds for it.  1
 * (also when nothing was probed), or 0 with what changed.  A communicator
 * set up after a change must not rely on CMA nor on peers opening its
 * descriptors (an anonymous segment). */
int strata_cma_unchanged(char *why, size_t whylen);

/* Local: can a shared segment of `bytes` be created in /dev/shm here? */
int strata_shm_probe(size_t bytes, char *why, size_t whylen);

#endif
