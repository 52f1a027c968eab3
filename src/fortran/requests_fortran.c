/* Open MPI's Fortran completion calls (mpif.h, use mpi, mpi_f08), which
 * call PMPI_Wait and the like directly: a Fortran program waiting there on
 * a request of strata's nonblocking collective (a host receive that only
 * strata's progress completes, request/nonblocking.c) would block in the
 * host forever.  strata's versions do what interpose/requests.c does for C
 * (strata's requests handed to the host first, the handles of its
 * nonblocking operations set to MPI_REQUEST_NULL where the host completed
 * them):
 * with nothing of strata's outstanding they are the host's own Fortran
 * call; otherwise a wait progresses strata's operations between calls of
 * the host's Fortran test form, until that completes or nothing of
 * strata's is left (then the host's wait).
 *
 * The host's Fortran functions (pmpi_wait_, pmpi_wait_f08_, ...) do the
 * rest unchanged: statuses and MPI_STATUS(ES)_IGNORE in each interface's
 * own layout, 1-based indices, LOGICAL flags.  They are found with dlsym in
 * the process (the program links the MPI's Fortran library); without them
 * the call fails visibly with MPI_ERR_INTERN.
 *
 * MPI_Request_free and MPI_Cancel go through strata's C calls, which know
 * strata's requests (an active collective freed still completes).
 *
 * MPICH needs none of this: its mpif.h and use mpi call the C MPI_Wait
 * (strata's), its mpi_f08 is fortran/requests_f08.c. */
#include <mpi.h>

#ifdef OPEN_MPI
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "request/nonblocking.h"
#include "request/persistent.h"
#include "util/log.h"

#define EXPORT __attribute__((visibility("default")))

/* The host's functions, [0] the mpif.h/use mpi one, [1] mpi_f08's. */
typedef void (*fn_wait)(MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_test)(MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_waitall)(MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_testall)(MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_waitany)(MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_testany)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);
typedef void (*fn_some)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *);

static struct {
    fn_wait wait[2];
    fn_test test[2], get_status[2];
    fn_waitall waitall[2];
    fn_testall testall[2];
    fn_waitany waitany[2];
    fn_testany testany[2];
    fn_some waitsome[2], testsome[2];
} host;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *find(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) strata_verbose(1, "Fortran completion call without the host's %s", name);
    return f;
}

#define FIND(field, name)                                       \
    do {                                                        \
        *(void **)&host.field[0] = find("pmpi_" name "_");      \
        *(void **)&host.field[1] = find("pmpi_" name "_f08_");  \
    } while (0)

static void resolve(void)
{
    FIND(wait, "wait");
    FIND(test, "test");
    FIND(get_status, "request_get_status");
    FIND(waitall, "waitall");
    FIND(testall, "testall");
    FIND(waitany, "waitany");
    FIND(testany, "testany");
    FIND(waitsome, "waitsome");
    FIND(testsome, "testsome");
}

/* The host's function f, or a visible failure: pthread_once orders the
 * table's writes before every reader's loads. */
#define HOST(f, ierror)                               \
    do {                                              \
        pthread_once(&once, resolve);                 \
        if (!(f)) {                                   \
            if (ierror) *(ierror) = MPI_ERR_INTERN;   \
            return;                                   \
        }                                             \
    } while (0)

/* strata's started persistent requests among those the host's call gets
 * are handed to it first (persistent.c: their host receive is started only
 * for a call the host serves). */
static void to_host(MPI_Fint count, const MPI_Fint *requests)
{
    if (strata_persist_unhosted())
        for (MPI_Fint i = 0; i < count; i++) strata_persist_to_host(MPI_Request_f2c(requests[i]));
    if (strata_nb_handles_live())
        for (MPI_Fint i = 0; i < count; i++) {
            MPI_Request r = MPI_Request_f2c(requests[i]);
            strata_nb_to_host_all(1, &r);
        }
}

/* After the host's call completed *request: the handle of a nonblocking
 * operation of strata's is taken back and set to MPI_REQUEST_NULL (the host
 * leaves the persistent receive behind it as it was; nonblocking.h). */
static void from_host(MPI_Fint *request)
{
    MPI_Request r = MPI_Request_f2c(*request);
    if (strata_nb_from_host(&r)) *request = MPI_Request_c2f(r);
}

/* The call succeeded (ierror is optional in mpi_f08). */
#define OK(ierror) (!(ierror) || *(ierror) == MPI_SUCCESS)

/* The requests at 1-based indices[0..outcount). */
static void from_host_some(const MPI_Fint *outcount, const MPI_Fint *indices,
                           MPI_Fint *requests)
{
    if (!strata_nb_handles_live() || *outcount == MPI_UNDEFINED) return;
    for (MPI_Fint i = 0; i < *outcount; i++) from_host(&requests[indices[i] - 1]);
}

/* A wait: the host's wait once nothing of strata's is outstanding, else
 * progress and the host's test until `done` (set by test_call); then what
 * follows the loop. */
#define WAIT_LOOP(wait_call, test_call, done)                         \
    for (unsigned long round = 0;; round++) {                         \
        if (!strata_nb_outstanding()) {                               \
            wait_call;                                                \
            break;                                                    \
        }                                                             \
        strata_nb_progress();                                         \
        MPI_Fint err_ = MPI_SUCCESS;                                  \
        test_call;                                                    \
        if (err_ != MPI_SUCCESS || (done)) {                          \
            if (ierror) *ierror = err_;                               \
            break;                                                    \
        }                                                             \
        strata_nb_idle(round);                                        \
    }

static void f_wait(int f08, MPI_Fint *request, void *status, MPI_Fint *ierror)
{
    HOST(host.wait[f08] && host.test[f08], ierror);
    to_host(1, request);
    MPI_Fint flag = 0;
    WAIT_LOOP(host.wait[f08](request, status, ierror),
              host.test[f08](request, &flag, status, &err_), flag)
    if (OK(ierror) && strata_nb_handles_live()) from_host(request);
}

static void f_test(int f08, MPI_Fint *request, MPI_Fint *flag, void *status, MPI_Fint *ierror)
{
    HOST(host.test[f08], ierror);
    to_host(1, request);
    strata_nb_progress();
    host.test[f08](request, flag, status, ierror);
    if (OK(ierror) && *flag && strata_nb_handles_live()) from_host(request);
}

static void f_request_get_status(int f08, MPI_Fint *request, MPI_Fint *flag, void *status,
                         MPI_Fint *ierror)
{
    HOST(host.get_status[f08], ierror);
    to_host(1, request);
    strata_nb_progress();
    host.get_status[f08](request, flag, status, ierror);
}

static void f_waitall(int f08, MPI_Fint *count, MPI_Fint *requests, void *statuses,
                      MPI_Fint *ierror)
{
    HOST(host.waitall[f08] && host.testall[f08], ierror);
    to_host(*count, requests);
    MPI_Fint flag = 0;
    WAIT_LOOP(host.waitall[f08](count, requests, statuses, ierror),
              host.testall[f08](count, requests, &flag, statuses, &err_), flag)
    if (OK(ierror) && strata_nb_handles_live())
        for (MPI_Fint i = 0; i < *count; i++) from_host(&requests[i]);
}

static void f_testall(int f08, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag,
                      void *statuses, MPI_Fint *ierror)
{
    HOST(host.testall[f08], ierror);
    to_host(*count, requests);
    strata_nb_progress();
    host.testall[f08](count, requests, flag, statuses, ierror);
    if (OK(ierror) && *flag && strata_nb_handles_live())
        for (MPI_Fint i = 0; i < *count; i++) from_host(&requests[i]);
}

static void f_waitany(int f08, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                      void *status, MPI_Fint *ierror)
{
    HOST(host.waitany[f08] && host.testany[f08], ierror);
    to_host(*count, requests);
    MPI_Fint flag = 0;
    WAIT_LOOP(host.waitany[f08](count, requests, index, status, ierror),
              host.testany[f08](count, requests, index, &flag, status, &err_), flag)
    if (OK(ierror) && *index != MPI_UNDEFINED && strata_nb_handles_live())
        from_host(&requests[*index - 1]);
}

static void f_testany(int f08, MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
                      MPI_Fint *flag, void *status, MPI_Fint *ierror)
{
    HOST(host.testany[f08], ierror);
    to_host(*count, requests);
    strata_nb_progress();
    host.testany[f08](count, requests, index, flag, status, ierror);
    if (OK(ierror) && *flag && *index != MPI_UNDEFINED && strata_nb_handles_live())
        from_host(&requests[*index - 1]);
}

/* Waitsome is done when the host's Testsome reports some (or
 * MPI_UNDEFINED: no active request), i.e. any outcount but 0. */
static void f_waitsome(int f08, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                       MPI_Fint *indices, void *statuses, MPI_Fint *ierror)
{
    HOST(host.waitsome[f08] && host.testsome[f08], ierror);
    to_host(*incount, requests);
    WAIT_LOOP(host.waitsome[f08](incount, requests, outcount, indices, statuses, ierror),
              host.testsome[f08](incount, requests, outcount, indices, statuses, &err_),
              *outcount != 0)
    if (OK(ierror)) from_host_some(outcount, indices, requests);
}

static void f_testsome(int f08, MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                       MPI_Fint *indices, void *statuses, MPI_Fint *ierror)
{
    HOST(host.testsome[f08], ierror);
    to_host(*incount, requests);
    strata_nb_progress();
    host.testsome[f08](incount, requests, outcount, indices, statuses, ierror);
    if (OK(ierror)) from_host_some(outcount, indices, requests);
}

/* Through strata's C calls, which tell strata's requests from others. */
static void f_request_free(int f08, MPI_Fint *request, MPI_Fint *ierror)
{
    (void)f08;
    MPI_Request r = MPI_Request_f2c(*request);
    int rc = MPI_Request_free(&r);
    if (rc == MPI_SUCCESS) *request = MPI_Request_c2f(r);
    if (ierror) *ierror = rc;
}

static void f_cancel(int f08, MPI_Fint *request, MPI_Fint *ierror)
{
    (void)f08;
    MPI_Request r = MPI_Request_f2c(*request);
    int rc = MPI_Cancel(&r);
    if (ierror) *ierror = rc;
}

/* Every name a Fortran compiler gives `lower` (its mpi_f08 one with f08 set). */
#define NAMES(lower, upper, params, args)                                        \
    EXPORT void mpi_##lower##_ params { f_##lower(0, args); }                    \
    EXPORT void mpi_##lower##__ params { f_##lower(0, args); }                   \
    EXPORT void mpi_##lower params { f_##lower(0, args); }                       \
    EXPORT void MPI_##upper params { f_##lower(0, args); }                       \
    EXPORT void mpi_##lower##_f08_ params { f_##lower(1, args); }

#define P_REQ_ST (MPI_Fint *request, void *status, MPI_Fint *ierror)
#define P_REQ_FLAG_ST (MPI_Fint *request, MPI_Fint *flag, void *status, MPI_Fint *ierror)
#define P_ALL (MPI_Fint *count, MPI_Fint *requests, void *statuses, MPI_Fint *ierror)
#define P_ALL_FLAG \
    (MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, void *statuses, MPI_Fint *ierror)
#define P_ANY \
    (MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, void *status, MPI_Fint *ierror)
#define P_ANY_FLAG                                                                  \
    (MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, void *status, \
     MPI_Fint *ierror)
#define P_SOME                                                                       \
    (MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices, \
     void *statuses, MPI_Fint *ierror)
#define P_REQ (MPI_Fint *request, MPI_Fint *ierror)

#define A(...) __VA_ARGS__
NAMES(wait, WAIT, P_REQ_ST, A(request, status, ierror))
NAMES(test, TEST, P_REQ_FLAG_ST, A(request, flag, status, ierror))
NAMES(request_get_status, REQUEST_GET_STATUS, P_REQ_FLAG_ST, A(request, flag, status, ierror))
NAMES(waitall, WAITALL, P_ALL, A(count, requests, statuses, ierror))
NAMES(testall, TESTALL, P_ALL_FLAG, A(count, requests, flag, statuses, ierror))
NAMES(waitany, WAITANY, P_ANY, A(count, requests, index, status, ierror))
NAMES(testany, TESTANY, P_ANY_FLAG, A(count, requests, index, flag, status, ierror))
NAMES(waitsome, WAITSOME, P_SOME, A(incount, requests, outcount, indices, statuses, ierror))
NAMES(testsome, TESTSOME, P_SOME, A(incount, requests, outcount, indices, statuses, ierror))
NAMES(request_free, REQUEST_FREE, P_REQ, A(request, ierror))
NAMES(cancel, CANCEL, P_REQ, A(request, ierror))
#endif
