/* Reductions of device data, dispatched to a reducer (the interface of
 * transport/device_reduce.h): the CUDA plugin libstrata_cuda.so where the
 * driver is a real one with a device and the plugin loads, the CPU reducer
 * (below the same interface) everywhere else and for the kinds the plugin
 * has no kernel for.  Every call goes through strata_device_reduce, so the
 * fake-device tests run the dispatch a GPU run takes. */
#ifndef STRATA_COLL_DEVICE_REDUCE_H
#define STRATA_COLL_DEVICE_REDUCE_H

#include <mpi.h>
#include <stddef.h>

#include "transport/device.h"
#include "transport/device_reduce.h"

/* This process's reducer, chosen once (thread-safe), and why (for
 * strata-info and STRATA_VERBOSE). */
const struct strata_device_reducer *strata_device_reducer(void);
const char *strata_device_reducer_why(void);
/* The CPU reducer: copies both operands to host memory through the lane's
 * copy calls, combines them with coll/ops.c's loops, copies the result back.
 * Its queue argument is the strata_device_lane. */
const struct strata_device_reducer *strata_device_cpu_reducer(void);

/* dst = a op b elementwise over count elements of type, all three device
 * addresses of the lane's context, ordered on the lane after what was
 * issued there (synchronise the lane before reading dst).  Returns 0, or -1
 * when strata has no kernel for (op, type) at all (nothing issued).  A
 * reducer failing ends the job with a message, as a failed copy does
 * (transport/device.c): the ranks are inside a collective. */
int strata_device_reduce(struct strata_device_lane *lane, MPI_Op op, MPI_Datatype type,
                         void *dst, const void *a, const void *b, size_t count);

/* Bytes of one element of a kind (transport/device_reduce.h), 0 if none. */
size_t strata_device_kind_size(int kind);

#endif
