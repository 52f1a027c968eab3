/* Streams of segments over the host MPI's non-blocking point-to-point. */
#include "net/engine.h"

#include <stdlib.h>
#include <string.h>

#include "shm/flags.h"
#include "util/stats.h"

void strata_engine_reset(struct strata_engine *e, MPI_Comm comm)
{
    e->comm = comm;
    e->nstreams = 0;
    e->open_streams = 0;
    e->stats_coll = -1;
}

void strata_engine_count_as(struct strata_engine *e, int coll)
{
    strata_engine_count_at(e, coll, STRATA_DIST_NODE);
}

void strata_engine_count_at(struct strata_engine *e, int coll, int distance)
{
    e->stats_coll = strata_stats_enabled() ? coll : -1;
    e->stats_dist = distance;
}

void strata_engine_free(struct strata_engine *e)
{
    free(e->s);
    free(e->req);
    free(e->req_stream);
    free(e->req_seg);
    free(e->indices);
    free(e->statuses);
    memset(e, 0, sizeof *e);
}

/* Room for `want` requests in flight at once. */
static int grow_requests(struct strata_engine *e, int want)
{
    if (want <= e->cap_req) return 0;
    int cap = e->cap_req ? e->cap_req : 16;
    while (cap < want) cap *= 2;
    MPI_Request *req = realloc(e->req, sizeof *req * (size_t)cap);
    if (req) e->req = req;
    int *rs = realloc(e->req_stream, sizeof *rs * (size_t)cap);
    if (rs) e->req_stream = rs;
    size_t *seg = realloc(e->req_seg, sizeof *seg * (size_t)cap);
    if (seg) e->req_seg = seg;
    int *idx = realloc(e->indices, sizeof *idx * (size_t)cap);
    if (idx) e->indices = idx;
    MPI_Status *st = realloc(e->statuses, sizeof *st * (size_t)cap);
    if (st) e->statuses = st;
    if (!req || !rs || !seg || !idx || !st) return -1;
    for (int i = e->cap_req; i < cap; i++) e->req[i] = MPI_REQUEST_NULL;
    e->cap_req = cap;
    return 0;
}

int strata_engine_add(struct strata_engine *e, int is_send, int peer, int tag, void *buf,
                      size_t bytes, size_t seg, int limit)
{
    if (e->nstreams == e->cap_streams) {
        int cap = e->cap_streams ? 2 * e->cap_streams : 8;
        struct strata_stream *s = realloc(e->s, sizeof *s * (size_t)cap);
        if (!s) return -1;
        e->s = s;
        e->cap_streams = cap;
    }
    if (limit < 1) limit = 1;
    if (limit > STRATA_STREAM_MAX_LIMIT) limit = STRATA_STREAM_MAX_LIMIT;
    int total = limit;
    for (int i = 0; i < e->nstreams; i++) total += e->s[i].limit;
    if (grow_requests(e, total)) return -1;
    struct strata_stream *s = &e->s[e->nstreams];
    *s = (struct strata_stream){.peer = peer, .tag = tag, .is_send = is_send, .limit = limit,
                                .buf = buf, .bytes = bytes, .seg = seg ? seg : bytes,
                                .ready = is_send ? 0 : bytes};
    if (bytes) e->open_streams++;
    return e->nstreams++;
}

static int free_slot(const struct strata_engine *e)
{
    for (int i = 0; i < e->cap_req; i++)
        if (e->req[i] == MPI_REQUEST_NULL) return i;
    return -1; /* cannot happen: slots cover every stream's limit */
}

/* Posts every segment of stream i that may go now. */
static int post_stream(struct strata_engine *e, int i)
{
    struct strata_stream *s = &e->s[i];
    while (s->inflight < s->limit && s->posted < s->bytes) {
        size_t len = s->bytes - s->posted < s->seg ? s->bytes - s->posted : s->seg;
        /* Whole segments only: the receiver cut the stream the same way. */
        if (s->posted + len > s->ready) break;
        int slot = free_slot(e);
        int rc = s->is_send
                     ? PMPI_Isend(s->buf + s->posted, (int)len, MPI_BYTE, s->peer, s->tag,
                                  e->comm, &e->req[slot])
                     : PMPI_Irecv(s->buf + s->posted, (int)len, MPI_BYTE, s->peer, s->tag,
                                  e->comm, &e->req[slot]);
        if (rc != MPI_SUCCESS) return rc;
        if (s->is_send && e->stats_coll >= 0)
            strata_stats_bytes(e->stats_coll, (enum strata_distance)e->stats_dist, len);
        e->req_stream[slot] = i;
        e->req_seg[slot] = s->posted / s->seg;
        s->posted += len;
        s->inflight++;
    }
    return MPI_SUCCESS;
}

/* Segment `seg` of stream i completed: advance the completed prefix. */
static void retire(struct strata_engine *e, int i, size_t seg)
{
    struct strata_stream *s = &e->s[i];
    s->inflight--;
    s->finished |= 1UL << (seg - s->first_open);
    while (s->finished & 1UL) {
        s->finished >>= 1;
        s->first_open++;
    }
    size_t done = s->first_open * s->seg;
    s->done = done < s->bytes ? done : s->bytes;
    if (s->done == s->bytes) e->open_streams--;
}

int strata_engine_progress(struct strata_engine *e, int *moved)
{
    *moved = 0;
    for (int i = 0; i < e->nstreams; i++) {
        int rc = post_stream(e, i);
        if (rc != MPI_SUCCESS) return rc;
    }
    int count = 0;
    int rc = PMPI_Testsome(e->cap_req, e->req, &count, e->indices, e->statuses);
    if (rc != MPI_SUCCESS) return rc;
    if (count == MPI_UNDEFINED || count == 0) return MPI_SUCCESS;
    for (int k = 0; k < count; k++) {
        int slot = e->indices[k];
        retire(e, e->req_stream[slot], e->req_seg[slot]);
    }
    *moved = 1;
    /* Refill at once: the slots just freed are the pipeline's gaps. */
    for (int i = 0; i < e->nstreams; i++) {
        rc = post_stream(e, i);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

pid_t strata_engine_waiting_for(const struct strata_engine *e)
{
    for (int i = 0; e->peer_pid && i < e->nstreams; i++)
        if (e->s[i].done < e->s[i].bytes) return e->peer_pid[e->s[i].peer];
    return 0;
}
