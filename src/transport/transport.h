/* The copy interface between the ranks of one node.
 *
 * A transport moves bytes between this process and a peer process of the
 * same machine.  Each is described by one constant struct: its name (what
 * STRATA_TRANSPORT, verbose output and strata-info say), what it can do
 * (feature bits), its copy calls, and the cost figures the model starts
 * from.  Nothing above this folder calls a transport's functions directly:
 * the node plane (coll/plane.h) holds a pointer to the one it uses and does
 * every copy, the traffic accounting and the failure report through it.
 *
 * Adding a transport: write its struct in a file of this folder, list it in
 * registry.c, and give it a probe if it can fail at run time.  Algorithms
 * need nothing new: they ask for a feature (STRATA_NEEDS_SINGLE_COPY), never
 * for a transport.
 *
 * The two transports today:
 *   cma      Cross-Memory Attach (process_vm_readv/writev): reads and writes
 *            any address of a peer, one copy, no registration.
 *   segment  through the node's shared segment: copies between memory this
 *            process maps and memory every rank maps (the segment), so it
 *            reaches no peer's private memory; algorithms that need that
 *            are refused and the copy-in/copy-out paths serve instead. */
#ifndef STRATA_TRANSPORT_H
#define STRATA_TRANSPORT_H

#include <mpi.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* What a transport can do.  If you add a bit, also update feature_names in
 * registry.c (strata-info prints them). */
enum strata_transport_feature {
    STRATA_XPORT_READ_PEER = 1 << 0,  /* copies from a peer's private memory */
    STRATA_XPORT_WRITE_PEER = 1 << 1, /* copies into a peer's private memory */
    STRATA_XPORT_MAP_PEER = 1 << 2,   /* maps a peer's memory into this process */
    STRATA_XPORT_NEEDS_REGISTRATION = 1 << 3, /* memory must be registered first */
};

/* A transport with both bits reaches a peer's user buffer in one copy: the
 * single-copy algorithms run on it. */
#define STRATA_XPORT_SINGLE_COPY (STRATA_XPORT_READ_PEER | STRATA_XPORT_WRITE_PEER)

/* Where the cost model starts when no calibration says otherwise (the
 * contention-aware paper's parameters; coll/model.h).  Times in us. */
struct strata_transport_cost {
    double alpha;      /* start-up per call */
    double beta;       /* per byte */
    double lock;       /* lock and pin one page, no contention (0: none) */
    double page;       /* bytes per page the lock cost applies to */
};

struct strata_transport {
    const char *name;    /* "cma" */
    const char *summary; /* one line for strata-info and the docs */
    unsigned features;   /* enum strata_transport_feature */
    struct strata_transport_cost cost;
    /* The transport the runtime tries next when this one fails its probe
     * (context/runtime.c's chain; the segment, which needs none, ends
     * every chain); NULL: straight to the segment. */
    const char *falls_back_to;

    /* Copies the bytes that remote[0..nremote) describe in process pid into
     * local[0..nlocal) (read), or local into remote (write), in list order;
     * both lists cover the same number of bytes.  Remote addresses are the
     * peer's own (READ_PEER/WRITE_PEER transports) or, for a transport
     * without them, memory this process maps too, at this process's address.
     * 0, or -1 with errno (and the failure remembered for
     * strata_transport_failed). */
    int (*read)(pid_t pid, const struct iovec *local, size_t nlocal,
                const struct iovec *remote, size_t nremote);
    int (*write)(pid_t pid, const struct iovec *local, size_t nlocal,
                 const struct iovec *remote, size_t nremote);

    /* MAP_PEER transports: makes len bytes at the peer's `remote` readable
     * and writable here; returns the local address and a handle for unmap,
     * or NULL with errno.  NULL pointers where the transport cannot map. */
    void *(*map)(pid_t pid, const void *remote, size_t len, void **handle);
    void (*unmap)(void *handle);

    /* Collective over node_comm (the ranks of one machine): does the
     * transport work between every pair?  1, or 0 with a reason a user can
     * act on.  NULL: nothing can go wrong at run time. */
    int (*probe)(MPI_Comm node_comm, char *why, size_t whylen);

    /* Local: does what the last probe found still hold for this process?
     * 1, or 0 with what changed.  NULL: always. */
    int (*unchanged)(char *why, size_t whylen);
};

/* Whether t reaches a peer's private memory in one copy both ways. */
static inline int strata_transport_single_copy(const struct strata_transport *t)
{
    return t && (t->features & STRATA_XPORT_SINGLE_COPY) == STRATA_XPORT_SINGLE_COPY;
}

/* Copies of one range each way (the common case), through t. */
static inline int strata_transport_read1(const struct strata_transport *t, pid_t pid,
                                         const void *remote, void *local, size_t len)
{
    struct iovec l = {local, len}, r = {(void *)remote, len};
    return t->read(pid, &l, 1, &r, 1);
}

static inline int strata_transport_write1(const struct strata_transport *t, pid_t pid,
                                          void *remote, const void *local, size_t len)
{
    struct iovec l = {(void *)local, len}, r = {remote, len};
    return t->write(pid, &l, 1, &r, 1);
}

/* Largest number of bytes one kernel call is asked to move, for transports
 * that call the kernel (default: 1 GiB, below the kernel's ~2 GiB limit);
 * STRATA_CMA_MAX_PER_CALL lowers it so tests exercise the resume loop. */
void strata_transport_set_max_per_call(size_t bytes);

/* ---- Failure reporting (transport/failure.c). */

/* Ends the job with a message when a copy fails mid-operation (the probe
 * said the transport works, so this is a bad buffer or a dead peer): names
 * the transport, the direction ("read from"), the peer's MPI_COMM_WORLD
 * rank (util/log's pid table) and pid, else its rank in the node plane,
 * and the error. */
_Noreturn void strata_transport_failed(const struct strata_transport *t, const char *what,
                                       int node_rank, pid_t pid, int err);

#endif
