/* Traffic accounting (STRATA_STATS): per collective, how many calls strata
 * served (and by which algorithm) or handed to the host MPI, and the bytes
 * and messages it moved, split by the hardware distance between the rank
 * that held the bytes and the rank that received them.  Each rank counts
 * what it copies in (pulls) or pushes out itself, one message per counted
 * transfer, so summing over ranks counts every transfer once.
 *
 * Bytes are counted under the collective the application called on this
 * thread: the node broadcast that ends an Allgather across nodes, or the
 * broadcast half of an Allreduce across nodes, count as Allgather and
 * Allreduce, whatever the algorithm code passes. */
#ifndef STRATA_STATS_H
#define STRATA_STATS_H

#include <stddef.h>

/* If you add a value here, also update: dist_names in src/util/stats.c (the
 * report's keys, sized STRATA_NDIST), strata_distance (src/topology/location.c),
 * the report's example in docs/USAGE.md, and the tests that read the report (tests/scripts/stats_json.sh, tests/mpi/test_node_stats.c). */
enum strata_distance {
    STRATA_DIST_L3,       /* same L3 cache (or same core) */
    STRATA_DIST_NUMA,     /* same NUMA node, another L3 */
    STRATA_DIST_SOCKET,   /* same package, another NUMA node */
    STRATA_DIST_MACHINE,  /* same machine, another package */
    STRATA_DIST_NODE,     /* another node */
    STRATA_NDIST
};

/* The algorithm name counted for calls composed across nodes. */
#define STRATA_STATS_ACROSS_NODES "across nodes"
/* A call whose host MPI's time selection took (coll/learn.h): the host
 * moved its bytes, on every rank at the same call. */
#define STRATA_STATS_HOST_SAMPLE "host MPI, timed by selection"
/* A call selection handed to the host MPI because the host measured faster
 * than every algorithm it tried (coll/learn.h), on every rank alike. */
#define STRATA_STATS_HOST_CHOSEN "host MPI, chosen by selection"
/* A call the ranks disagreed on (coll/agree.h): nothing moved. */
#define STRATA_STATS_DISAGREED "ranks disagree: nothing moved"

/* "same_l3", "same_numa", "other_numa", "other_socket", "other_node": the
 * keys of the report. */
const char *strata_distance_name(enum strata_distance d);

/* Counts one message of `bytes` (zero for a bare synchronisation message)
 * at distance d, for the collective this thread is serving, or for `coll`
 * (enum strata_coll) outside any call. */
void strata_stats_bytes(int coll, enum strata_distance d, size_t bytes);

/* Counts `bytes` moved between ranks by a transport's copy mechanism:
 * "segment", "cma" or "map" (memcpy through a peer's mapped arena); the
 * map transport counts its CMA fallbacks under "cma".  The report's
 * "transport_bytes".  Unknown names are not counted. */
void strata_stats_transport_bytes(const char *name, size_t bytes);
unsigned long long strata_stats_local_transport_bytes(const char *name);

/* Counts one call of `coll`, served by strata or not; a served call makes
 * `coll` the collective this thread's transfers count for until its next
 * call. */
void strata_stats_call(int coll, int served);

/* Makes `call` (a call id, util/colls.h; -1: none) the collective this
 * thread's transfers count for, and returns the previous one: a nonblocking
 * collective progresses inside whatever MPI call the application makes, and
 * its bytes count under its own name. */
int strata_stats_serve_as(int call);

/* Takes back one served call of `coll` (the router counted it before the
 * per-call checks sent it to the host MPI after all). */
void strata_stats_call_unserve(int coll);

/* Counts one served call of `coll` as run by `algorithm`: the name
 * STRATA_VERBOSE=2 gives ("pipelined", "ring-source-read", ...), or
 * STRATA_STATS_ACROSS_NODES. */
void strata_stats_algorithm(int coll, const char *algorithm);

/* Counts one switch of algorithm by selection's measurements (coll/learn.h)
 * for `coll` on this rank; the report's "switches". */
void strata_stats_switch(int coll);
unsigned long long strata_stats_local_switches(int coll);

/* Counts one call of `coll` handed to the host MPI for `reason` (the
 * sentence STRATA_VERBOSE=2 prints); the report groups host calls by it. */
void strata_stats_host_reason(int coll, const char *reason);

/* Bytes of device (GPU) data by path (transport/device.h): 0 staged between
 * device and pinned host memory, 1 copied device to device through CUDA IPC,
 * 2 sent across nodes from pinned host memory by node leaders. */
#define STRATA_STATS_DEVICE_PATHS 3
void strata_stats_device_bytes(int path, size_t bytes);
unsigned long long strata_stats_local_device_bytes(int path);

/* Whether counting is on (STRATA_STATS set), as the runtime set it at
 * MPI_Init (off before). */
int strata_stats_enabled(void);
void strata_stats_set_enabled(int on);

/* Whether the report's file `path` can be written, tried at MPI_Init so
 * that a bad path stops the job there rather than losing the report at
 * MPI_Finalize: the file is opened for writing, without truncating it; one
 * that did not exist is created and removed again, so a job that ends early
 * leaves nothing behind.  0, or -1 with errno. */
int strata_stats_try_destination(const char *path);

/* At finalize: sums every rank's counters and has world rank 0 write them
 * (JSON to the file dest, the value of STRATA_STATS, or a table on stderr for
 * "stderr").  Collective over MPI_COMM_WORLD; nothing when counting is off. */
void strata_stats_report(const char *dest, int world_rank, int world_size);

/* This process's counters (tests). */
unsigned long long strata_stats_local_bytes(int coll, enum strata_distance d);
unsigned long long strata_stats_local_messages(int coll, enum strata_distance d);
unsigned long long strata_stats_local_calls(int coll, int served);
/* Calls of coll counted for `algorithm` (0 if none). */
unsigned long long strata_stats_local_algorithm(int coll, const char *algorithm);
/* Calls of coll handed to the host MPI for `reason` (0 if none). */
unsigned long long strata_stats_local_host_reason(int coll, const char *reason);

/* How ranks waited (src/shm/wait.c), summed over every wait of the process.
 * If you add a value here, also update wait_names in src/util/stats.c and
 * the report's example in docs/USAGE.md. */
enum strata_wait_count {
    STRATA_WAIT_WAITS,    /* waits that polled at least once */
    STRATA_WAIT_POLLS,    /* unsuccessful polls (spins, yields and blocks) */
    STRATA_WAIT_YIELDS,   /* sched_yield calls */
    STRATA_WAIT_BLOCKS,   /* FUTEX_WAIT calls (blocked in the kernel) */
    STRATA_WAIT_TIMEOUTS, /* blocks that ended by their timeout (liveness check) */
    STRATA_WAIT_BUSY,     /* waits that found the machine busy or the peer idle */
    STRATA_WAIT_WAKES,    /* FUTEX_WAKE calls of writers */
    STRATA_NWAIT
};

/* Adds n to a wait counter (callers check strata_stats_enabled first). */
void strata_stats_wait(enum strata_wait_count which, unsigned long n);
unsigned long long strata_stats_local_wait(enum strata_wait_count which);
/* "waits", "polls", ...: the report's keys. */
const char *strata_stats_wait_name(enum strata_wait_count which);

#endif
