/* The progress engine of the across-nodes compositions (the ADAPT paper's
 * event-driven model, on the host MPI's non-blocking point-to-point).
 *
 * A collective's network traffic is a set of streams: one stream moves one
 * run of bytes to or from one peer, cut into segments.  A receive stream
 * keeps up to `limit` segment receives posted ahead of the data; a send
 * stream keeps up to `limit` segment sends in flight, each posted the moment
 * the caller says its bytes are ready (a child is served as soon as its
 * segment exists, independently of its siblings).  One call,
 * strata_engine_progress, tests every outstanding request at once
 * (PMPI_Testsome), retires what finished and posts what became possible;
 * a composition (a resumable operation) calls it once per progress step,
 * between its node parts' steps, so nothing waits on one request while
 * another could move (no Waitall).
 *
 * Both ends of a stream cut it identically (same bytes, same segment size),
 * and the segments of one stream match in order because MPI does not let
 * messages of one sender, tag and communicator overtake each other; a
 * composition gives two streams between the same pair in the same direction
 * different tags. */
#ifndef STRATA_ENGINE_H
#define STRATA_ENGINE_H

#include <mpi.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/colls.h"

struct strata_stream {
    int peer, tag, is_send, limit;
    unsigned char *buf;
    size_t bytes, seg;
    size_t ready;      /* sends: bytes the caller has made ready (recvs: all) */
    size_t posted;     /* bytes handed to the host MPI */
    size_t done;       /* bytes of the completed prefix */
    int inflight;
    size_t first_open; /* first segment not yet completed */
    unsigned long finished; /* bit i: segment first_open + i completed early */
};

struct strata_engine {
    MPI_Comm comm;
    struct strata_stream *s;
    int nstreams, cap_streams;
    MPI_Request *req;  /* free slots hold MPI_REQUEST_NULL */
    int *req_stream;
    size_t *req_seg;
    int cap_req;
    int *indices;
    MPI_Status *statuses; /* unread, but MPICH's headers make GCC reject MPI_STATUSES_IGNORE */
    int open_streams;  /* streams not yet complete */
    int stats_coll;    /* STRATA_STATS: the collective segment sends count for; -1: none */
    int stats_dist;    /* ... and their distance (enum strata_distance) */
    /* [size of comm] pid of each peer this process can watch, else 0: a
     * waiting operation checks the peer strata_engine_waiting_for names
     * every few ms, so a peer killed on this machine ends the job instead of
     * hanging it.  Peers on other machines are the host MPI's and the
     * launcher's to watch. */
    const pid_t *peer_pid;
};

/* Most segments one stream keeps in flight (the completion bitmap's width). */
#define STRATA_STREAM_MAX_LIMIT 64

/* Forgets every stream (the arrays are kept for the next collective) and
 * counts nothing until strata_engine_count_as says for which collective. */
void strata_engine_reset(struct strata_engine *e, MPI_Comm comm);

/* With STRATA_STATS, counts each segment sent from now on as one message of
 * `coll` (enum strata_coll) to another node (util/stats.h); -1: not at all. */
void strata_engine_count_as(struct strata_engine *e, int coll);

/* The same for an engine whose sends all go `distance` away (enum
 * strata_distance): a second leader streaming to its own node's leader. */
void strata_engine_count_at(struct strata_engine *e, int coll, int distance);

void strata_engine_free(struct strata_engine *e);

/* Adds a stream; returns its index, or -1 if memory runs out.  A send
 * stream starts with nothing ready (strata_stream_ready). */
int strata_engine_add(struct strata_engine *e, int is_send, int peer, int tag, void *buf,
                      size_t bytes, size_t seg, int limit);

/* A send stream's bytes [0, ready) may go. */
static inline void strata_stream_ready(struct strata_engine *e, int stream, size_t ready)
{
    if (ready > e->s[stream].ready) e->s[stream].ready = ready;
}

/* Tests what is in flight, retires what completed, posts what can go.
 * Sets *moved when anything completed.  MPI_SUCCESS or the host's error. */
int strata_engine_progress(struct strata_engine *e, int *moved);

/* Every stream has completed. */
static inline int strata_engine_complete(const struct strata_engine *e)
{
    return e->open_streams == 0;
}

/* The pid of the peer of the first stream still open, where this process
 * can watch it (0: none): what a waiting operation checks for liveness. */
pid_t strata_engine_waiting_for(const struct strata_engine *e);

/* Waiting for the engine is the operation's (coll/task.h): a composition
 * calls strata_engine_progress once per progress step and returns "not yet"
 * when nothing moved, so strata_task_run's spin-then-yield policy applies. */

#endif
