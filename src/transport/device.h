/* Device (GPU) memory: the CUDA driver loaded at run time, buffer
 * classification, and the staging lane that moves device data to and from
 * pinned host memory with asynchronous copies.
 *
 * strata never links against CUDA: the first call loads STRATA_CUDA_LIB
 * (libcuda.so.1) with dlopen; no library, a missing symbol, cuInit failing or
 * no device means "no device support", and every function below then says
 * "host memory" / does nothing, so strata behaves exactly as without this
 * file.  Nothing here ever dereferences device memory: all access goes
 * through the driver's copy calls. */
#ifndef STRATA_DEVICE_H
#define STRATA_DEVICE_H

#include <stddef.h>
#include <sys/types.h>

/* Whether the driver loaded and sees at least one device (loads it on first
 * call; thread-safe).  why: what was found, for verbose output and
 * strata-info ("libcuda.so.1: 1 device (NVIDIA ...)" or why none). */
int strata_device_available(void);
const char *strata_device_why(void);
/* Whether that driver is a real one (not tests/fake_cuda): only then may
 * GPU code (the reduction plugin) be handed device addresses. */
int strata_device_real(void);

/* Whether p (the first byte of a buffer) is device memory.  0 when device
 * support is off, for NULL and for host memory (pageable, pinned or
 * registered).  Managed (unified) memory counts as host: the CPU may touch
 * it. */
int strata_device_is_device(const void *p);

/* A lane: one communicator's CUDA stream, its events and its pinned staging
 * buffers (grown on demand, kept for the next call).  Lanes are created on
 * the first device-buffer call on a communicator and freed with it. */
struct strata_device_lane;

#define STRATA_DEVICE_EVENTS 64 /* events per lane: pipeline depth bound */
#define STRATA_DEVICE_PINNED 3  /* staging buffers per lane */

/* Makes the lane ready to copy for device buffer p: creates it (in *lane)
 * on first use, and makes its context current on this thread (the
 * application's, when one is current; else the context p was allocated in).
 * Returns 0, or a CUDA error after reporting it.  strata_device_leave
 * restores the thread's previous context. */
int strata_device_enter(struct strata_device_lane **lane, const void *p);
void strata_device_leave(struct strata_device_lane *lane);
void strata_device_lane_free(struct strata_device_lane *lane);

/* Pinned host memory of at least bytes, buffer `which` (0..PINNED-1) of the
 * lane, its contents undefined.  NULL (reported) when it cannot be had. */
void *strata_device_pinned(struct strata_device_lane *lane, int which, size_t bytes);

/* Asynchronous copies on the lane's stream, in issue order.  A failure is
 * reported with the CUDA error's name and ends the job: the ranks are in a
 * collective that cannot complete correctly (see device.c). */
void strata_device_to_host(struct strata_device_lane *lane, void *host, const void *dev,
                           size_t n);
void strata_device_to_device(struct strata_device_lane *lane, void *dst, const void *src,
                             size_t n);
void strata_device_from_host(struct strata_device_lane *lane, void *dev, const void *host,
                             size_t n);
/* Marks event e (0..EVENTS-1) after what was issued so far; waits for it. */
void strata_device_mark(struct strata_device_lane *lane, int e);
void strata_device_wait(struct strata_device_lane *lane, int e);
/* Waits for everything issued on the lane. */
void strata_device_sync(struct strata_device_lane *lane);
/* Waits until the work the application gave the legacy default stream
 * before the call has finished (a synchronous cuMemcpyHtoD from pageable
 * memory returns before its bytes land): before other processes read or
 * write this rank's buffers through CUDA IPC, which no stream of this
 * process orders.  Event 0 of the lane; nothing else may be in flight. */
void strata_device_settle(struct strata_device_lane *lane);
/* The lane's CUstream, for GPU work ordered with its copies. */
void *strata_device_stream(struct strata_device_lane *lane);

/* CUDA IPC, inside a machine.  The handle of the allocation holding p and
 * p's offset in it; 0, or -1 if p cannot be exported. */
struct strata_device_handle {
    unsigned char bytes[64];
    size_t offset; /* of the buffer inside the allocation */
};
int strata_device_export(const void *p, struct strata_device_handle *h);
/* The local address of a peer's exported buffer (opened once per peer
 * allocation, cached until strata_device_ipc_forget), or NULL (reported at
 * verbose level 1) when it cannot be opened. */
void *strata_device_import(const struct strata_device_handle *h);
/* Closes every cached import (MPI_Finalize). */
void strata_device_ipc_forget(void);

/* STRATA_STATS: bytes of device data by path. */
enum strata_device_path {
    STRATA_DEVICE_STAGED,  /* copied device <-> pinned host by strata */
    STRATA_DEVICE_IPC,     /* device to device through CUDA IPC */
    STRATA_DEVICE_NETWORK, /* sent across nodes from pinned memory by a node leader */
    STRATA_DEVICE_PATHS
};
void strata_device_count(enum strata_device_path path, size_t bytes);
unsigned long long strata_device_counted(enum strata_device_path path);
const char *strata_device_path_name(enum strata_device_path path);

#endif
