/* MPI's progress rule across strata's waits: a rank that posted a receive
 * and then waits in a collective served by strata must let the host MPI
 * progress meanwhile, or a peer blocked in a synchronous send to it (which
 * the receive matches only when the receiver's host progresses) never
 * reaches the collective, and both hang.  The host MPIs' own collectives
 * progress as they wait; strata's waits call the host's progress engine
 * (shm/wait.h, "The host MPI's progress").
 *
 * Ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only takes part
 * in the collectives).  For each collective, blocking, nonblocking and (Bcast,
 * Allreduce, Barrier; MPI-4's or Open MPI 4.1's MPIX_ forms) persistent, and
 * for a small and a large synchronous send: the even rank posts MPI_Irecv,
 * enters the collective, then waits for the receive; the odd rank calls
 * MPI_Ssend first, then the collective.  The messages go on a duplicate of
 * MPI_COMM_WORLD (progress on the collective's communicator alone would not
 * do).  Results of both are checked, and every collective must have been
 * served by strata (STRATA_STATS on: counted served under its C name), or
 * the test would prove nothing.  A hang is the failure (the ctest timeout
 * ends it). */
#include <ctype.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/colls.h"
#include "util/stats.h"

/* MPI-4's persistent collectives, or Open MPI 4.1's MPIX_ forms. */
#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(name) MPI_##name##_init
#endif

#define CHECK(cond, ...)                                                               \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

enum { COUNT = 64 }; /* ints per rank in every collective */

static int rank, size;
static int *sendbuf, *recvbuf;

static int value(int r, int i) { return r * 1000 + i; }

/* Calls strata served on this rank so far, every collective and form. */
static unsigned long long served(void)
{
    unsigned long long n = 0;
    for (int id = 0; id < STRATA_NCALLS; id++) n += strata_stats_local_calls(id, 1);
    return n;
}

/* How a collective is called. */
enum form { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };

/* Runs collective `k` in `form` (nonblocking: then MPI_Wait; persistent:
 * init, start, wait, free) and checks its result; returns its name, NULL
 * past the last (persistent: Bcast, Allreduce and Barrier, where the host
 * MPI has the _init forms, MPI-4's or MPIX_). */
static const char *collective(int k, enum form form)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *r = form == NONBLOCKING ? &req : NULL;
    const char *name;
    for (int i = 0; i < COUNT; i++) sendbuf[i] = value(rank, i);
    memset(recvbuf, 0xff, sizeof(int) * COUNT * (size_t)size);
    if (form == PERSISTENT) {
#ifdef INIT
        if (k == 0) {
            if (rank == 0) memcpy(recvbuf, sendbuf, sizeof(int) * COUNT);
            INIT(Bcast)(recvbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        } else if (k == 1)
            INIT(Allreduce)(sendbuf, recvbuf, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &req);
        else if (k == 2)
            INIT(Barrier)(MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        else if (k > 2)
            return NULL;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
#else
        return NULL;
#endif
    }
    switch (form == PERSISTENT ? -1 - k : k) {
    case -1: name = "Bcast"; k = 0; break;
    case -2: name = "Allreduce"; k = 1; break;
    case -3: name = "Barrier"; k = 2; break;
    case 0:
        name = "Bcast";
        if (rank == 0) memcpy(recvbuf, sendbuf, sizeof(int) * COUNT);
        if (r) MPI_Ibcast(recvbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD, r);
        else MPI_Bcast(recvbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    case 1:
        name = "Allreduce";
        if (r) MPI_Iallreduce(sendbuf, recvbuf, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r);
        else MPI_Allreduce(sendbuf, recvbuf, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 2:
        name = "Barrier";
        if (r) MPI_Ibarrier(MPI_COMM_WORLD, r);
        else MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 3:
        name = "Gather";
        if (r) MPI_Igather(sendbuf, COUNT, MPI_INT, recvbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD, r);
        else MPI_Gather(sendbuf, COUNT, MPI_INT, recvbuf, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    case 4:
        name = "Allgather";
        if (r) MPI_Iallgather(sendbuf, COUNT, MPI_INT, recvbuf, COUNT, MPI_INT, MPI_COMM_WORLD, r);
        else MPI_Allgather(sendbuf, COUNT, MPI_INT, recvbuf, COUNT, MPI_INT, MPI_COMM_WORLD);
        break;
    case 5:
        name = "Reduce";
        if (r) MPI_Ireduce(sendbuf, recvbuf, COUNT, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD, r);
        else MPI_Reduce(sendbuf, recvbuf, COUNT, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
        break;
    default: return NULL;
    }
    if (r) MPI_Wait(r, MPI_STATUS_IGNORE);
    for (int i = 0; i < COUNT; i++) {
        long sum = 0;
        for (int p = 0; p < size; p++) sum += value(p, i);
        switch (k) {
        case 0: CHECK(recvbuf[i] == value(0, i), "%s: element %d", name, i); break;
        case 1: CHECK(recvbuf[i] == (int)sum, "%s: element %d", name, i); break;
        case 3:
        case 4:
            if (k == 3 && rank != 0) break;
            for (int p = 0; p < size; p++)
                CHECK(recvbuf[p * COUNT + i] == value(p, i), "%s: block %d element %d", name, p, i);
            break;
        case 5:
            if (rank == size - 1) CHECK(recvbuf[i] == (int)sum, "%s: element %d", name, i);
            break;
        }
    }
    return name;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sendbuf = malloc(sizeof(int) * COUNT);
    recvbuf = malloc(sizeof(int) * COUNT * (size_t)size);
    const size_t big = 1u << 20;
    char *msg = malloc(big);
    CHECK(sendbuf && recvbuf && msg, "out of memory");
    CHECK(strata_stats_enabled(), "run with STRATA_STATS set (the served counts are checked)");
    MPI_Comm msgs;
    MPI_Comm_dup(MPI_COMM_WORLD, &msgs);
    const int partner = rank % 2 ? rank - 1 : rank + 1;
    const int paired = partner < size;
    int cases = 0;
    for (int form = 0; form < NFORMS; form++) {
        for (int k = 0; collective(k, form); k++) { /* a first call sets everything up */
            for (size_t len = 8; len <= big; len = len < big ? big : 2 * big) {
                const char *name = NULL;
                const unsigned long long before = served();
                if (!paired) {
                    name = collective(k, form);
                } else if (rank % 2 == 0) {
                    MPI_Request rq;
                    memset(msg, 0, len);
                    MPI_Irecv(msg, (int)len, MPI_BYTE, partner, 7, msgs, &rq);
                    name = collective(k, form); /* the partner is in MPI_Ssend */
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                    for (size_t i = 0; i < len; i++)
                        CHECK(msg[i] == (char)(i * 7 + (size_t)partner), "message byte %zu", i);
                } else {
                    for (size_t i = 0; i < len; i++) msg[i] = (char)(i * 7 + (size_t)rank);
                    MPI_Ssend(msg, (int)len, MPI_BYTE, partner, 7, msgs);
                    name = collective(k, form);
                }
                CHECK(served() == before + 1, "MPI_%s (form %d) was not served by strata", name, form);
                char label[32];
                if (form == NONBLOCKING)
                    snprintf(label, sizeof label, "MPI_I%c%s", tolower(name[0]), name + 1);
                else
                    snprintf(label, sizeof label, "MPI_%s%s", name, form == PERSISTENT ? "_init" : "");
                if (rank == 0) printf("ok: %s across a %zu-byte MPI_Ssend\n", label, len);
                cases++;
            }
        }
    }
    if (rank == 0) printf("PASS host progress (%d cases)\n", cases);
    MPI_Comm_free(&msgs);
    free(msg);
    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return 0;
}
