/* The starts of persistent requests (request/persistent.c) and the
 * completion calls, wrapped so that strata's outstanding operations
 * progress while the application waits or tests (nonblocking.h).  A
 * started persistent request of strata's is completed by strata itself in
 * the one-request calls (MPI_Wait, MPI_Test, MPI_Request_get_status) and
 * handed to the host before an array call (persistent.c); so is the
 * handle of a nonblocking operation, which the array calls then set to
 * MPI_REQUEST_NULL where the host completed it (nonblocking.h).  The other
 * requests are the host MPI's: with nothing of strata's
 * outstanding every call goes straight to the host; otherwise a wait polls
 * the host's test form between progress steps of strata's operations, with
 * the same spin-then-yield policy as a blocking collective, and goes back to
 * the host's blocking form as soon as nothing of strata's is left. */
#include <mpi.h>

#include "request/nonblocking.h"
#include "request/persistent.h"

int MPI_Start(MPI_Request *request) { return strata_persist_start(request); }

int MPI_Startall(int count, MPI_Request requests[])
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) rc = MPI_Start(&requests[i]);
    return rc;
}

/* Every handle of strata's nonblocking operations among requests[] that
 * the host's call completed is taken back (nonblocking.h,
 * strata_nb_from_host): all of them when the call completed all (rc and
 * flag), else those whose status says success. */
static void from_host_all(int rc, int all, int count, MPI_Request requests[],
                          const MPI_Status statuses[])
{
    if (!strata_nb_handles_live() || !all) return;
    for (int i = 0; i < count; i++)
        if (rc == MPI_SUCCESS ||
            (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE &&
             statuses[i].MPI_ERROR == MPI_SUCCESS))
            strata_nb_from_host(&requests[i]);
}

/* The one request at index (MPI_UNDEFINED: none). */
static void from_host_one(int index, MPI_Request requests[])
{
    if (strata_nb_handles_live() && index >= 0) strata_nb_from_host(&requests[index]);
}

/* The requests at indices[0..outcount). */
static void from_host_some(int outcount, const int indices[], MPI_Request requests[])
{
    if (!strata_nb_handles_live() || outcount == MPI_UNDEFINED) return;
    for (int i = 0; i < outcount; i++) strata_nb_from_host(&requests[indices[i]]);
}

/* Both kinds of strata's requests handed to the host before an array call. */
static void to_host_all(int count, MPI_Request requests[])
{
    strata_persist_to_host_all(count, requests);
    strata_nb_to_host_all(count, requests);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    int flag;
    if (strata_persist_unhosted() && request &&
        strata_persist_complete(*request, STRATA_PERSIST_WAIT, &flag, status))
        return MPI_SUCCESS;
    /* One of strata's operations: progress alone until it finished (no
     * host call unless a host call got it before). */
    int rc;
    if (strata_nb_handles_live() && request &&
        (rc = strata_nb_complete(request, STRATA_NB_WAIT, &flag, status)) >= 0)
        return rc;
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding()) return PMPI_Wait(request, status);
        strata_nb_progress();
        flag = 0;
        rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag) return rc;
        strata_nb_idle(round);
    }
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (strata_persist_unhosted() && request && flag &&
        strata_persist_complete(*request, STRATA_PERSIST_TEST, flag, status))
        return MPI_SUCCESS;
    int rc;
    if (strata_nb_handles_live() && request && flag &&
        (rc = strata_nb_complete(request, STRATA_NB_TEST, flag, status)) >= 0)
        return rc;
    strata_nb_progress();
    return PMPI_Test(request, flag, status);
}

static int waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding()) return PMPI_Waitall(count, requests, statuses);
        strata_nb_progress();
        int flag = 0, rc = PMPI_Testall(count, requests, &flag, statuses);
        if (rc != MPI_SUCCESS || flag) return rc;
        strata_nb_idle(round);
    }
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    to_host_all(count, requests);
    int rc = waitall(count, requests, statuses);
    from_host_all(rc, 1, count, requests, statuses);
    return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    to_host_all(count, requests);
    strata_nb_progress();
    int rc = PMPI_Testall(count, requests, flag, statuses);
    from_host_all(rc, *flag, count, requests, statuses);
    return rc;
}

static int waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding()) return PMPI_Waitany(count, requests, index, status);
        strata_nb_progress();
        int flag = 0, rc = PMPI_Testany(count, requests, index, &flag, status);
        if (rc != MPI_SUCCESS || flag) return rc;
        strata_nb_idle(round);
    }
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    to_host_all(count, requests);
    int rc = waitany(count, requests, index, status);
    if (rc == MPI_SUCCESS) from_host_one(*index, requests);
    return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    to_host_all(count, requests);
    strata_nb_progress();
    int rc = PMPI_Testany(count, requests, index, flag, status);
    if (rc == MPI_SUCCESS && *flag) from_host_one(*index, requests);
    return rc;
}

static int waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                    MPI_Status statuses[])
{
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding())
            return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
        strata_nb_progress();
        int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
        if (rc != MPI_SUCCESS || *outcount != 0) return rc; /* some, or MPI_UNDEFINED */
        strata_nb_idle(round);
    }
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    to_host_all(incount, requests);
    int rc = waitsome(incount, requests, outcount, indices, statuses);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) from_host_some(*outcount, indices, requests);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    to_host_all(incount, requests);
    strata_nb_progress();
    int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) from_host_some(*outcount, indices, requests);
    return rc;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (strata_persist_unhosted() && flag &&
        strata_persist_complete(request, STRATA_PERSIST_PEEK, flag, status))
        return MPI_SUCCESS;
    int rc;
    if (strata_nb_handles_live() && flag &&
        (rc = strata_nb_complete(&request, STRATA_NB_PEEK, flag, status)) >= 0)
        return rc;
    strata_nb_progress();
    return PMPI_Request_get_status(request, flag, status);
}

/* An active operation's request freed: the operation still completes (and
 * strata takes its handle back then). */
int MPI_Request_free(MPI_Request *request)
{
    if (request && *request != MPI_REQUEST_NULL) {
        int rc;
        if (strata_nb_handles_live() && (rc = strata_nb_free(request)) >= 0) return rc;
        if (strata_persist_free(request)) return MPI_SUCCESS;
    }
    return PMPI_Request_free(request);
}

/* A collective cannot be cancelled (MPI 4.0, 6.12): strata's keeps running
 * and completes; MPI_Test_cancelled then says false, as it does for any
 * request whose cancel failed. */
int MPI_Cancel(MPI_Request *request)
{
    if (request && ((strata_nb_handles_live() && strata_nb_owns(*request)) ||
                    strata_persist_owns(*request, 1)))
        return MPI_SUCCESS;
    return PMPI_Cancel(request);
}

/* Progress while the application polls for messages, and a blocking probe
 * that leaves strata's operations moving. */
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    strata_nb_progress();
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    for (unsigned long round = 0;; round++) {
        if (!strata_nb_outstanding()) return PMPI_Probe(source, tag, comm, status);
        strata_nb_progress();
        int flag = 0, rc = PMPI_Iprobe(source, tag, comm, &flag, status);
        if (rc != MPI_SUCCESS || flag) return rc;
        strata_nb_idle(round);
    }
}

/* Blocking point-to-point while strata's operations are outstanding: the
 * nonblocking form and a wait with progress (a rank blocked in the host's
 * receive while its peer waits for strata's operation would hang both). */
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    if (!strata_nb_outstanding()) return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, status);
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (!strata_nb_outstanding()) return PMPI_Send(buf, count, datatype, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    if (!strata_nb_outstanding())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Request r[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS) return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    rc = MPI_Waitall(2, r, st);
    if (status != MPI_STATUS_IGNORE) *status = st[0];
    return rc;
}
