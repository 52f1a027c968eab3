/* Process-wide state, set up once in MPI_Init: configuration, the machine's
 * topology (discovered once per node), the node layout (real or virtual), and
 * the location of every rank of MPI_COMM_WORLD, so that any communicator's
 * hierarchy is computed locally without communication. */
#ifndef STRATA_RUNTIME_H
#define STRATA_RUNTIME_H

#include <hwloc.h>
#include <mpi.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "config/config.h"
#include "topology/location.h"
#include "transport/transport.h"

struct strata_runtime {
    int ready;                  /* 1 once init succeeded */
    int disabled;               /* STRATA_DISABLE or a failed init */
    char why_disabled[512];
    int thread_level;           /* as granted by the host MPI */
    int world_rank, world_size;
    int node, nnodes;           /* this rank's (virtual) node */
    int local_rank, local_size; /* inside the (virtual) node */
    int host_local_size;        /* ranks on this real machine */
    hwloc_topology_t topo;
    struct strata_levels levels;
    struct strata_location *world_loc; /* [world_size] */
    /* [world_size] each rank's pid where this process can watch it (same
     * machine and PID namespace: kill(pid, 0) says whether it lives), else 0. */
    pid_t *world_pid;
    char binding[128];          /* this rank's binding, as a cpuset string */
    /* Moves data between the ranks of a node (transport/registry.h): the
     * one STRATA_TRANSPORT names when it works between every pair of node
     * peers of the job, else the segment. */
    const struct strata_transport *transport;
    char transport_why[512];    /* why the one asked for is not used ("" if it is) */
    /* STRATA_TRANSPORT=auto: what the cost model said of map against cma
     * ("" when a transport was named). */
    char transport_choice[320];
    /* Whether any rank of the job has a CUDA device (transport/device.h):
     * agreed at set-up, so that every rank, with or without a device of its
     * own, cuts a large Bcast/Reduce/Allreduce into the same pieces when
     * device buffers may take part (device/device_calls.c). */
    int device_world;
};

/* Sets strata up, once per process whoever calls first (thread-safe):
 * right after PMPI_Init/PMPI_Init_thread, or late (below).  Collective over
 * MPI_COMM_WORLD.  Never fails the application: if strata cannot set up,
 * it says why and passes through.  A bad STRATA_ variable stops the job with
 * a message naming it. */
void strata_runtime_start(void);

/* For a collective on comm when MPI_Init never passed through strata (an
 * application that calls PMPI_Init, Open MPI's Fortran bindings, MPICH's
 * mpi_f08): starts strata if MPI is initialised and not finalised and comm
 * spans all of MPI_COMM_WORLD, so that every rank is in this call and the
 * set-up's agreement over the world cannot wait for a rank that is not.  A
 * collective on a smaller communicator before that goes to the host MPI.
 * Costs one atomic load once strata has started: that load is inline
 * (every intercepted call makes it, issue 14), the rest out of line. */
extern _Atomic int strata_runtime_started;
void strata_runtime_start_late_slow(MPI_Comm comm);
static inline void strata_runtime_start_late(MPI_Comm comm)
{
    /* Acquire: pairs with the release that sets it (runtime.c), so the
     * runtime it set up is visible. */
    if (!atomic_load_explicit(&strata_runtime_started, memory_order_acquire))
        strata_runtime_start_late_slow(comm);
}

/* Whether strata_runtime_init ran in this process at all, successfully or
 * not (never: MPI_Init reached the host MPI without strata). */
int strata_runtime_attempted(void);

/* Registers what MPI_Finalize must release of the layers above the runtime
 * (every live context) before the runtime tears itself down. */
void strata_runtime_at_finalize(void (*release)(void));

/* Tears everything down (from the MPI_COMM_SELF attribute at finalize). */
void strata_runtime_finalize(void);

/* The runtime, or NULL when strata is off (disabled, not initialised,
 * finalised). */
const struct strata_runtime *strata_runtime(void);

/* Even when disabled: the state with the reason why. */
const struct strata_runtime *strata_runtime_state(void);

#endif
