/* Nonblocking and persistent collectives (issue 17), checked against the
 * host MPI's blocking forms (PMPI_) on the same input:
 *   - every collective, several sizes and roots, many outstanding at once
 *     on one communicator, completed with each completion call (Wait in
 *     reverse, Waitall, Waitany, Waitsome, Test/Testall/Testany/Testsome
 *     polling, Request_get_status polling);
 *   - mixed arrays with point-to-point requests in one Waitall;
 *   - MPI_Request_free on an active operation, then a barrier;
 *   - two communicators with operations outstanding on both, and a blocking
 *     collective issued while nonblocking ones are pending;
 *   - a datatype with holes, freed right after posting;
 *   - persistent operations started many times with new contents (where the
 *     host defines them), and one request through every state (completed by
 *     strata's own calls, by the host's array calls beside point-to-point
 *     requests, freed after it finished, cancelled), and requests started
 *     again after MPI_Comm_free of their communicator (--after-free: that
 *     case alone);
 *   - STRATA_STATS counts under MPI_Ibcast, ... (with --stats);
 *   - --progress-thread (STRATA_PROGRESS=thread, MPI_THREAD_MULTIPLE): an
 *     operation completes on a peer while this rank computes without any
 *     MPI call (seen through a shared window, so no MPI call is needed to
 *     see it), then the checks above with the thread racing the
 *     application's own progress (TSan runs it); --progress-refused: the
 *     same variable at MPI_THREAD_SINGLE is refused and everything works. */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(STRATA_HAVE_PERSISTENT_COLL) && defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#include <mpi-ext.h>
#define INIT(name) MPIX_##name##_init
#elif defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT(name) MPI_##name##_init
#endif

#include "testutil.h"
#include "util/colls.h"
#include "util/stats.h"

enum { BCAST, REDUCE, ALLREDUCE, ALLGATHER, GATHER, SCATTER, ALLTOALL, BARRIER, NCOLL };

static int rank, size;

/* One operation: its buffers and the expected result. */
struct op {
    int coll, count, root;
    int *send, *recv, *want;
    size_t recv_elems;
};

static void fill(int *v, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) v[i] = (int)((seed * 7919 + (int)i * 31 + rank * 1000003) % 100003);
}

/* Sets up o (buffers filled from seed) and computes the expected result with
 * the host's blocking form. */
static void prepare(struct op *o, int coll, int count, int root, int seed, MPI_Comm comm)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    o->coll = coll;
    o->count = count;
    o->root = root;
    size_t big = (size_t)count * (size_t)n;
    o->send = malloc(sizeof(int) * (big ? big : 1));
    o->recv = malloc(sizeof(int) * (big ? big : 1));
    o->want = malloc(sizeof(int) * (big ? big : 1));
    o->recv_elems = big;
    fill(o->send, big, seed);
    fill(o->recv, big, seed + 1);
    memcpy(o->want, o->recv, sizeof(int) * big);
    switch (coll) {
    case BCAST:
        if (r == root) memcpy(o->recv, o->send, sizeof(int) * (size_t)count);
        memcpy(o->want, o->recv, sizeof(int) * big);
        PMPI_Bcast(o->want, count, MPI_INT, root, comm);
        break;
    case REDUCE: PMPI_Reduce(o->send, o->want, count, MPI_INT, MPI_SUM, root, comm); break;
    case ALLREDUCE: PMPI_Allreduce(o->send, o->want, count, MPI_INT, MPI_SUM, comm); break;
    case ALLGATHER:
        PMPI_Allgather(o->send, count, MPI_INT, o->want, count, MPI_INT, comm);
        break;
    case GATHER: PMPI_Gather(o->send, count, MPI_INT, o->want, count, MPI_INT, root, comm); break;
    case SCATTER: PMPI_Scatter(o->send, count, MPI_INT, o->want, count, MPI_INT, root, comm); break;
    case ALLTOALL: PMPI_Alltoall(o->send, count, MPI_INT, o->want, count, MPI_INT, comm); break;
    default: break;
    }
}

static int post(struct op *o, MPI_Comm comm, MPI_Request *req)
{
    switch (o->coll) {
    case BCAST: return MPI_Ibcast(o->recv, o->count, MPI_INT, o->root, comm, req);
    case REDUCE:
        return MPI_Ireduce(o->send, o->recv, o->count, MPI_INT, MPI_SUM, o->root, comm, req);
    case ALLREDUCE: return MPI_Iallreduce(o->send, o->recv, o->count, MPI_INT, MPI_SUM, comm, req);
    case ALLGATHER:
        return MPI_Iallgather(o->send, o->count, MPI_INT, o->recv, o->count, MPI_INT, comm, req);
    case GATHER:
        return MPI_Igather(o->send, o->count, MPI_INT, o->recv, o->count, MPI_INT, o->root, comm,
                           req);
    case SCATTER:
        return MPI_Iscatter(o->send, o->count, MPI_INT, o->recv, o->count, MPI_INT, o->root, comm,
                            req);
    case ALLTOALL:
        return MPI_Ialltoall(o->send, o->count, MPI_INT, o->recv, o->count, MPI_INT, comm, req);
    default: return MPI_Ibarrier(comm, req);
    }
}

/* The elements of the result this rank holds. */
static size_t result_elems(const struct op *o, MPI_Comm comm)
{
    int r;
    MPI_Comm_rank(comm, &r);
    switch (o->coll) {
    case BCAST: case ALLREDUCE: case SCATTER: return (size_t)o->count;
    case REDUCE: return r == o->root ? (size_t)o->count : 0;
    case GATHER: return r == o->root ? o->recv_elems : 0;
    case ALLGATHER: case ALLTOALL: return o->recv_elems;
    default: return 0;
    }
}

static void check(struct op *o, MPI_Comm comm, const char *what)
{
    size_t n = result_elems(o, comm);
    for (size_t i = 0; i < n; i++)
        CHECK(o->recv[i] == o->want[i], "%s: coll %d count %d root %d: element %zu is %d, want %d",
              what, o->coll, o->count, o->root, i, o->recv[i], o->want[i]);
}

static void drop(struct op *o)
{
    free(o->send);
    free(o->recv);
    free(o->want);
}

/* Completes n requests with completion mode `mode`. */
static void complete(int mode, int n, MPI_Request *req, int persistent)
{
    int done = 0, flag, idx, out, *indices = malloc(sizeof(int) * (size_t)n);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)n);
    switch (mode % 8) {
    case 0:
        for (int i = n - 1; i >= 0; i--) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        break;
    case 1: MPI_Waitall(n, req, st); break;
    case 2:
        for (int i = 0; i < n; i++) {
            MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE);
            CHECK(idx != MPI_UNDEFINED, "Waitany found nothing with %d left", n - i);
        }
        MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE);
        CHECK(idx == MPI_UNDEFINED, "Waitany on inactive requests");
        break;
    case 3:
        while (done < n) {
            MPI_Testsome(n, req, &out, indices, st);
            CHECK(out != MPI_UNDEFINED, "Testsome: undefined with %d left", n - done);
            done += out;
        }
        break;
    case 4:
        do MPI_Testall(n, req, &flag, st);
        while (!flag);
        break;
    case 5:
        for (int i = 0; i < n; i++) {
            do MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
            while (!flag);
        }
        break;
    case 6:
        while (done < n) {
            MPI_Waitsome(n, req, &out, indices, st);
            CHECK(out != MPI_UNDEFINED && out > 0, "Waitsome returned %d", out);
            done += out;
        }
        break;
    default:
        for (int i = 0; i < n; i++) {
            do MPI_Request_get_status(req[i], &flag, MPI_STATUS_IGNORE);
            while (!flag);
            MPI_Wait(&req[i], MPI_STATUS_IGNORE);
        }
        while (done < n) {
            MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE);
            if (idx == MPI_UNDEFINED) break;
        }
        break;
    }
    /* Completed nonblocking requests are freed; persistent ones stay, inactive. */
    for (int i = 0; i < n; i++)
        CHECK((req[i] == MPI_REQUEST_NULL) == !persistent, "request %d after completion", i);
    free(indices);
    free(st);
}

/* Many outstanding operations on comm, then completed with `mode`. */
static void batch(MPI_Comm comm, int mode, int seed)
{
    static const int counts[] = {1, 3, 100, 2500, 40000};
    enum { N = 12 };
    int n;
    MPI_Comm_size(comm, &n);
    struct op o[N];
    MPI_Request req[N];
    for (int i = 0; i < N; i++) {
        int coll = (seed + i) % NCOLL;
        prepare(&o[i], coll, counts[(seed + 3 * i) % 5], (seed + i) % n, seed * 100 + i, comm);
    }
    for (int i = 0; i < N; i++) CHECK(post(&o[i], comm, &req[i]) == MPI_SUCCESS, "post %d", i);
    complete(mode, N, req, 0);
    for (int i = 0; i < N; i++) {
        check(&o[i], comm, "batch");
        drop(&o[i]);
    }
}

/* Collectives and point-to-point requests in one Waitall. */
static void mixed(MPI_Comm comm, int seed)
{
    struct op a, b;
    prepare(&a, ALLREDUCE, 777, 0, seed, comm);
    prepare(&b, ALLGATHER, 50, 0, seed + 1, comm);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[64], in[64];
    for (int i = 0; i < 64; i++) out[i] = rank * 64 + i + seed;
    MPI_Request req[4];
    MPI_Irecv(in, 64, MPI_INT, left, 5, MPI_COMM_WORLD, &req[0]);
    post(&a, comm, &req[1]);
    MPI_Isend(out, 64, MPI_INT, right, 5, MPI_COMM_WORLD, &req[2]);
    post(&b, comm, &req[3]);
    MPI_Status st[4];
    MPI_Waitall(4, req, st);
    for (int i = 0; i < 64; i++) CHECK(in[i] == left * 64 + i + seed, "p2p element %d", i);
    check(&a, comm, "mixed");
    check(&b, comm, "mixed");
    drop(&a);
    drop(&b);
}

/* An active operation freed: it still completes; a barrier orders it. */
static void freed(MPI_Comm comm, int seed)
{
    struct op a;
    prepare(&a, ALLREDUCE, 5000, 0, seed, comm);
    MPI_Request r;
    post(&a, comm, &r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
    /* A collective cannot be cancelled: it completes, and is not cancelled. */
    struct op c;
    prepare(&c, BCAST, 4000, size - 1, seed + 1, comm);
    post(&c, comm, &r);
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS, "MPI_Cancel");
    MPI_Status st;
    int cancelled = 1;
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(!cancelled, "a collective reported cancelled");
    check(&c, comm, "cancel");
    drop(&c);
    MPI_Barrier(comm); /* blocking on the same communicator: the Iallreduce first */
    check(&a, comm, "freed");
    drop(&a);
}

/* The handles of strata's operations (request/nb_handle.h) in every state
 * a program may hand them to a completion call: finished before an array
 * call gets them (Waitany, Testany, Testsome mixed with point-to-point
 * requests), freed after they finished, through the Fortran handle, and
 * many outstanding at once then reused (the pool grows, handles come back). */
static void handles(MPI_Comm comm, int seed)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, flag = 0, idx, out;
    int sendv = rank + seed, recvv = -1, indices[3];
    struct op a, b;
    /* Finished before the array call: Waitany then Testany. */
    prepare(&a, ALLREDUCE, 3, 0, seed, comm);
    prepare(&b, BCAST, 5, size - 1, seed + 1, comm);
    MPI_Request req[3];
    post(&a, comm, &req[0]);
    post(&b, comm, &req[2]);
    MPI_Irecv(&recvv, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &req[1]);
    for (int i = 0; i < 2; i++) {
        do MPI_Request_get_status(req[2 * i], &flag, MPI_STATUS_IGNORE);
        while (!flag);
    }
    MPI_Send(&sendv, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    MPI_Status st[3];
    MPI_Waitany(3, req, &idx, &st[0]);
    CHECK(idx >= 0 && idx < 3 && req[idx] == MPI_REQUEST_NULL, "Waitany: index %d", idx);
    for (int left_n = 2; left_n > 0;) {
        MPI_Testany(3, req, &idx, &flag, &st[0]);
        if (flag && idx != MPI_UNDEFINED) {
            CHECK(req[idx] == MPI_REQUEST_NULL, "Testany left request %d", idx);
            left_n--;
        }
    }
    for (int i = 0; i < 3; i++) CHECK(req[i] == MPI_REQUEST_NULL, "request %d after Testany", i);
    CHECK(recvv == left + seed, "p2p beside the handles: %d", recvv);
    check(&a, comm, "handles Waitany");
    check(&b, comm, "handles Waitany");
    /* Testsome over one running, one finished and a point-to-point pair. */
    post(&a, comm, &req[0]);
    MPI_Irecv(&recvv, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&sendv, 1, MPI_INT, right, 10, MPI_COMM_WORLD, &req[2]);
    for (int done = 0; done < 3;) {
        MPI_Testsome(3, req, &out, indices, st);
        CHECK(out != MPI_UNDEFINED, "Testsome: undefined with %d left", 3 - done);
        for (int i = 0; i < out; i++)
            CHECK(req[indices[i]] == MPI_REQUEST_NULL, "Testsome left request %d", indices[i]);
        done += out;
    }
    check(&a, comm, "handles Testsome");
    /* Freed once finished; and through its Fortran handle. */
    post(&b, comm, &req[0]);
    do MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
    while (!flag);
    CHECK(req[0] == MPI_REQUEST_NULL, "MPI_Test left the handle");
    post(&a, comm, &req[0]);
    do MPI_Request_get_status(req[0], &flag, MPI_STATUS_IGNORE);
    while (!flag);
    MPI_Request_free(&req[0]);
    CHECK(req[0] == MPI_REQUEST_NULL, "Request_free left a finished handle");
    post(&b, comm, &req[0]);
#ifdef MPI_ABI_VERSION
    /* The standard ABI has no MPI_Request_c2f (MPI_Request_toint instead,
     * which is not a Fortran handle): waited on directly. */
    MPI_Request back = req[0];
#else
    MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(req[0]));
#endif
    MPI_Wait(&back, MPI_STATUS_IGNORE);
    CHECK(back == MPI_REQUEST_NULL, "MPI_Wait through the Fortran handle");
    check(&a, comm, "handles freed");
    check(&b, comm, "handles Fortran");
    drop(&a);
    drop(&b);
    /* Many at once, twice (the second round reuses the pool's handles). */
    enum { MANY = 300 };
    int *x = malloc(sizeof(int) * MANY), *y = malloc(sizeof(int) * MANY);
    MPI_Request *many = malloc(sizeof(MPI_Request) * MANY);
    /* An array, not MPI_STATUSES_IGNORE: gcc 12 takes MPICH's for an empty one. */
    MPI_Status *sts = malloc(sizeof(MPI_Status) * MANY);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < MANY; i++) {
            x[i] = rank + i + round;
            MPI_Iallreduce(&x[i], &y[i], 1, MPI_INT, MPI_SUM, comm, &many[i]);
        }
        if (round == 0) MPI_Waitall(MANY, many, sts);
        else
            for (int i = MANY - 1; i >= 0; i--) MPI_Wait(&many[i], MPI_STATUS_IGNORE);
        for (int i = 0; i < MANY; i++) {
            CHECK(many[i] == MPI_REQUEST_NULL, "many: request %d", i);
            CHECK(y[i] == size * (size - 1) / 2 + size * (i + round), "many: element %d: %d", i,
                  y[i]);
        }
    }
    free(x);
    free(y);
    free(many);
    free(sts);
}

/* Two communicators, and blocking collectives between the posts. */
static void two_comms(MPI_Comm c1, MPI_Comm c2, int seed)
{
    struct op a, b, c, d;
    prepare(&a, BCAST, 3000, size - 1, seed, c1);
    prepare(&b, ALLREDUCE, 3000, 0, seed + 1, c2);
    prepare(&c, ALLTOALL, 20, 0, seed + 2, c1);
    prepare(&d, REDUCE, 9, 0, seed + 3, c2);
    MPI_Request req[3];
    post(&a, c1, &req[0]);
    post(&b, c2, &req[1]);
    /* Blocking Allreduce on c1 while a is pending there and b on c2. */
    int x = rank + seed, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c1);
    CHECK(sum == size * (size - 1) / 2 + size * seed, "blocking Allreduce between posts: %d", sum);
    post(&c, c1, &req[2]);
    MPI_Reduce(d.send, d.recv, d.count, MPI_INT, MPI_SUM, 0, c2);
    MPI_Status st[3];
    MPI_Waitall(3, req, st);
    check(&a, c1, "two_comms");
    check(&b, c2, "two_comms");
    check(&c, c1, "two_comms");
    check(&d, c2, "two_comms");
    drop(&a);
    drop(&b);
    drop(&c);
    drop(&d);
}

/* A datatype with holes (every other int), freed right after posting. */
static void holes(MPI_Comm comm, int seed)
{
    enum { N = 500 };
    int *buf = malloc(sizeof(int) * 2 * N), *want = malloc(sizeof(int) * 2 * N);
    int *all = malloc(sizeof(int) * 2 * N * (size_t)size);
    int *allwant = malloc(sizeof(int) * 2 * N * (size_t)size);
    for (int i = 0; i < 2 * N; i++) buf[i] = want[i] = rank == 1 % size ? i + seed : -1;
    for (int i = 0; i < 2 * N * size; i++) all[i] = allwant[i] = -7;
    MPI_Datatype every_other, t2;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    PMPI_Bcast(want, 1, every_other, 1 % size, comm);
    MPI_Type_dup(every_other, &t2);
    MPI_Type_commit(&t2);
    PMPI_Allgather(want, 1, t2, allwant, 1, t2, comm);
    MPI_Request r[2];
    MPI_Ibcast(buf, 1, every_other, 1 % size, comm, &r[0]);
    MPI_Type_free(&every_other);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Iallgather(buf, 1, t2, all, 1, t2, comm, &r[1]);
    MPI_Type_free(&t2);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * N; i++) CHECK(buf[i] == want[i], "holes Ibcast element %d", i);
    for (int i = 0; i < 2 * N * size; i++)
        CHECK(all[i] == allwant[i], "holes Iallgather element %d: %d vs %d", i, all[i], allwant[i]);
    free(buf);
    free(want);
    free(all);
    free(allwant);
}

#ifdef INIT
/* Persistent operations, each started `starts` times with new contents. */
static void persistent(MPI_Comm comm, int starts)
{
    enum { NP = 4 };
    struct op o[NP];
    MPI_Request req[NP];
    int colls[NP] = {ALLREDUCE, BCAST, ALLGATHER, BARRIER}, counts[NP] = {1000, 20000, 33, 0};
    for (int i = 0; i < NP; i++) prepare(&o[i], colls[i], counts[i], i % size, i, comm);
    INIT(Allreduce)(o[0].send, o[0].recv, o[0].count, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[0]);
    INIT(Bcast)(o[1].recv, o[1].count, MPI_INT, o[1].root, comm, MPI_INFO_NULL, &req[1]);
    INIT(Allgather)(o[2].send, o[2].count, MPI_INT, o[2].recv, o[2].count, MPI_INT, comm,
                    MPI_INFO_NULL, &req[2]);
    INIT(Barrier)(comm, MPI_INFO_NULL, &req[3]);
    for (int s = 0; s < starts; s++) {
        for (int i = 0; i < NP; i++) {
            struct op fresh;
            prepare(&fresh, colls[i], counts[i], i % size, s * 10 + i, comm);
            /* Keep the registered buffers: copy the new contents into them. */
            free(o[i].want);
            o[i].want = fresh.want;
            memcpy(o[i].send, fresh.send, sizeof(int) * (fresh.recv_elems ? fresh.recv_elems : 1));
            memcpy(o[i].recv, fresh.recv, sizeof(int) * (fresh.recv_elems ? fresh.recv_elems : 1));
            free(fresh.send);
            free(fresh.recv);
        }
        if (s % 2) {
            MPI_Startall(NP, req);
        } else {
            for (int i = NP - 1; i >= 0; i--) MPI_Start(&req[i]);
        }
        complete(s, NP, req, 1);
        for (int i = 0; i < NP; i++) check(&o[i], comm, "persistent");
    }
    for (int i = 0; i < NP; i++) {
        MPI_Request_free(&req[i]);
        drop(&o[i]);
    }
}
#endif

#ifdef INIT
/* Persistent requests outlive their communicator: MPI_Comm_free marks it for
 * deallocation, and an inactive persistent request may still be started
 * (MPI keeps the communicator while a request refers to it).  strata's kept
 * operation must not point into the freed communicator's context. */
static void persistent_after_free(int starts)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    struct op a, b;
    MPI_Request req[2];
    prepare(&a, ALLREDUCE, 3000, 0, 71, MPI_COMM_WORLD);
    prepare(&b, BCAST, 5000, size - 1, 72, MPI_COMM_WORLD);
    INIT(Allreduce)(a.send, a.recv, a.count, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &req[0]);
    INIT(Bcast)(b.recv, b.count, MPI_INT, b.root, c, MPI_INFO_NULL, &req[1]);
    for (int s = 0; s < starts; s++) {
        if (s == 1) MPI_Comm_free(&c); /* after one start: the requests were kept */
        if (s > 0) {
            /* The same inputs again, into results made stale (the bcast's
             * root keeps its data). */
            for (int i = 0; i < a.count; i++) a.recv[i] = -1;
            if (rank != b.root)
                for (int i = 0; i < b.count; i++) b.recv[i] = -1;
        }
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: MPICH's header annotations warn */
        MPI_Startall(2, req);
        MPI_Waitall(2, req, st);
        check(&a, MPI_COMM_WORLD, "persistent after MPI_Comm_free");
        check(&b, MPI_COMM_WORLD, "persistent after MPI_Comm_free");
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    drop(&a);
    drop(&b);
}

/* Persistent forms whose operation cannot be kept whole at _init (a
 * datatype with holes: packed at each start) beside one that is (in place
 * at the root), started with new contents each time. */
static void persistent_rebuilt(MPI_Comm comm, int starts)
{
    enum { N = 300 };
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int *buf = malloc(sizeof(int) * 2 * N), *want = malloc(sizeof(int) * 2 * N);
    int *red = malloc(sizeof(int) * N), *redwant = malloc(sizeof(int) * N);
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int root = n - 1;
    MPI_Request req[2];
    INIT(Bcast)(buf, 1, every_other, root, comm, MPI_INFO_NULL, &req[0]);
    if (r == 0)
        INIT(Reduce)(MPI_IN_PLACE, red, N, MPI_INT, MPI_SUM, 0, comm, MPI_INFO_NULL, &req[1]);
    else
        INIT(Reduce)(red, NULL, N, MPI_INT, MPI_SUM, 0, comm, MPI_INFO_NULL, &req[1]);
    for (int s = 0; s < starts; s++) {
        for (int i = 0; i < 2 * N; i++) buf[i] = want[i] = r == root ? i * 3 + s : -1 - i;
        for (int i = 0; i < N; i++) red[i] = redwant[i] = i + s * 7 + r * 11;
        PMPI_Bcast(want, 1, every_other, root, comm);
        PMPI_Allreduce(MPI_IN_PLACE, redwant, N, MPI_INT, MPI_SUM, comm);
        MPI_Startall(2, req);
        complete(s, 2, req, 1);
        for (int i = 0; i < 2 * N; i++)
            CHECK(buf[i] == want[i], "persistent holes Bcast start %d element %d: %d, want %d", s,
                  i, buf[i], want[i]);
        if (r == 0)
            for (int i = 0; i < N; i++)
                CHECK(red[i] == redwant[i], "persistent in-place Reduce start %d element %d", s, i);
    }
    for (int i = 0; i < 2; i++) MPI_Request_free(&req[i]);
    MPI_Type_free(&every_other);
    /* Freed while active (MPI 4.0 allows it): the start still completes
     * (the application cannot wait for it: the ranks poll, with blocking
     * collectives that progress it, until all see their results, at most
     * 30 s), and the operation kept at _init goes with the request.  A
     * blocking collective alone need not complete it: the request runs on
     * its own plane, ordered against no other call (DESIGN.md, "Order of
     * persistent starts"). */
    struct op a;
    prepare(&a, ALLREDUCE, 3000, 0, 77, comm);
    MPI_Request q;
    INIT(Allreduce)(a.send, a.recv, a.count, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    MPI_Request_free(&q);
    CHECK(q == MPI_REQUEST_NULL, "Request_free of an active persistent request left the handle");
    double until = MPI_Wtime() + 30;
    for (int all = 0; !all && MPI_Wtime() < until;) {
        MPI_Barrier(comm);
        int mine = 1;
        for (size_t i = 0; i < result_elems(&a, comm); i++) mine &= a.recv[i] == a.want[i];
        PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    }
    check(&a, comm, "persistent freed while active");
    drop(&a);
    free(buf);
    free(want);
    free(red);
    free(redwant);
}
#endif

#ifdef INIT
/* One persistent request through every state strata keeps it in
 * (persistent.c): completed by strata's own one-request calls, handed to
 * the host by an array call before and after its operation finished (in
 * one array with point-to-point requests), freed after its operation
 * finished but before any completion call, and cancelled (collectives are
 * not: it completes, uncancelled, with an empty status). */
static void persistent_states(MPI_Comm comm, int rounds)
{
    enum { N = 700 };
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int *buf = malloc(sizeof(int) * N), *want = malloc(sizeof(int) * N);
    int root = n - 1, right = (r + 1) % n, left = (r + n - 1) % n;
    MPI_Request q;
    INIT(Bcast)(buf, N, MPI_INT, root, comm, MPI_INFO_NULL, &q);
    for (int s = 0; s < rounds; s++) {
        for (int i = 0; i < N; i++) buf[i] = want[i] = r == root ? i * 5 + s : -1 - i;
        PMPI_Bcast(want, N, MPI_INT, root, comm);
        int out = r * 10 + s, in = -1, flag = 0, count = -1;
        MPI_Request a[3];
        MPI_Status st[3];
        MPI_Start(&q);
        if (s == 0 && test_errors_return()) {
            /* Started again while active: MPICH's error (class
             * MPI_ERR_REQUEST through MPI_COMM_WORLD's handler); the
             * request stays as it was. */
            MPI_Errhandler old;
            MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_Start(&q), cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active request: error class %d, want %d",
                  cls, MPI_ERR_REQUEST);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
            MPI_Errhandler_free(&old);
        }
        switch (s % 6) {
        case 0:
            CHECK(MPI_Cancel(&q) == MPI_SUCCESS, "MPI_Cancel of a persistent start");
            MPI_Wait(&q, &st[0]);
            MPI_Test_cancelled(&st[0], &flag);
            CHECK(!flag, "a persistent collective reported cancelled");
            MPI_Get_count(&st[0], MPI_INT, &count);
            CHECK(count == 0, "a persistent collective's status holds %d elements", count);
            break;
        case 1: /* finished, then an array call with point-to-point requests */
        case 2: /* an array call while it may still run */
            if (s % 6 == 1)
                do MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE);
                while (!flag);
            a[0] = q;
            MPI_Irecv(&in, 1, MPI_INT, left, 9, comm, &a[1]);
            MPI_Isend(&out, 1, MPI_INT, right, 9, comm, &a[2]);
            if (s % 12 < 6) {
                MPI_Waitall(3, a, st);
            } else {
                do MPI_Testall(3, a, &flag, st);
                while (!flag);
            }
            CHECK(a[0] == q, "a completed persistent request was not left inactive");
            CHECK(a[1] == MPI_REQUEST_NULL && a[2] == MPI_REQUEST_NULL, "p2p requests left");
            CHECK(in == left * 10 + s, "p2p beside a persistent start: %d", in);
            break;
        case 3: /* finished, freed before any completion call, made again */
            do MPI_Request_get_status(q, &flag, MPI_STATUS_IGNORE);
            while (!flag);
            MPI_Request_free(&q);
            CHECK(q == MPI_REQUEST_NULL, "Request_free of a finished start left the handle");
            INIT(Bcast)(buf, N, MPI_INT, root, comm, MPI_INFO_NULL, &q);
            break;
        case 4:
            do MPI_Test(&q, &flag, &st[0]);
            while (!flag);
            MPI_Test(&q, &flag, MPI_STATUS_IGNORE); /* inactive: true at once */
            CHECK(flag, "MPI_Test of an inactive persistent request");
            break;
        default: /* Waitany and Testsome over it and a receive */
            a[0] = q;
            MPI_Irecv(&in, 1, MPI_INT, left, 9, comm, &a[1]);
            MPI_Send(&out, 1, MPI_INT, right, 9, comm);
            for (int done = 0, idx; done < 2; done++) {
                MPI_Waitany(2, a, &idx, MPI_STATUS_IGNORE);
                CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
            }
            CHECK(in == left * 10 + s, "p2p beside a persistent start: %d", in);
            break;
        }
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == want[i], "persistent states round %d element %d: %d, want %d", s, i,
                  buf[i], want[i]);
    }
    MPI_Request_free(&q);
    free(buf);
    free(want);
}
#endif

/* --threads: two threads per rank, each with operations outstanding on its
 * own communicator at once. */
static void *thread_main(void *arg)
{
    MPI_Comm comm = *(MPI_Comm *)arg;
    for (int mode = 0; mode < 8; mode++) batch(comm, mode, mode + 11);
    two_comms(comm, comm, 7);
    return NULL;
}

static void threads(void)
{
    MPI_Comm comm[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) MPI_Comm_dup(MPI_COMM_WORLD, &comm[i]);
    for (int i = 0; i < 2; i++) CHECK(!pthread_create(&t[i], NULL, thread_main, &comm[i]), "thread");
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) MPI_Comm_free(&comm[i]);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 0 posts an Ibarrier and an Iallreduce and then makes no MPI call;
 * the other ranks post theirs only once they see (in a shared window, read
 * with plain loads) that rank 0 has, so rank 0's first steps at posting
 * cannot have finished its part: its barrier needs the others' arrival and
 * its Allreduce starts only after that.  The others wait for both and raise
 * a flag rank 0 reads.  Only a progress thread moves rank 0 meanwhile.  The
 * deadline (NB_PROGRESS_DEADLINE seconds, 60 by default) is generous for a
 * loaded machine, never a measured time. */
static void progress_without_calls(MPI_Comm comm, int seed)
{
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    _Atomic int *flags;
    MPI_Win win;
    MPI_Win_allocate_shared(nr == 0 ? (MPI_Aint)(sizeof(_Atomic int) * (size_t)(ns + 1)) : 0,
                            sizeof(_Atomic int), MPI_INFO_NULL, node, &flags, &win);
    MPI_Aint sz;
    int disp;
    MPI_Win_shared_query(win, 0, &sz, &disp, &flags);
    if (nr == 0)
        for (int i = 0; i <= ns; i++) atomic_store(&flags[i], 0);
    MPI_Barrier(node);
    struct op a;
    prepare(&a, ALLREDUCE, 20000, 0, seed, node);
    MPI_Request r[2];
    if (nr != 0)
        while (!atomic_load(&flags[ns])) sched_yield(); /* rank 0 has posted */
    MPI_Ibarrier(node, &r[0]);
    post(&a, node, &r[1]);
    if (nr == 0) {
        atomic_store(&flags[ns], 1);
        const char *e = getenv("NB_PROGRESS_DEADLINE");
        double deadline = now() + (e ? atof(e) : 60);
        int seen = 0;
        while (seen < ns - 1 && now() < deadline) {
            seen = 0;
            for (int i = 1; i < ns; i++) seen += atomic_load(&flags[i]);
            sched_yield(); /* computing, politely: 2 cores shared here */
        }
        CHECK(seen == ns - 1, "progress thread: %d of %d peers completed while rank 0 made "
              "no MPI call", seen, ns - 1);
    }
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: MPICH's headers warn of it */
    MPI_Waitall(2, r, st);
    if (nr != 0) atomic_store(&flags[nr], 1);
    check(&a, node, "progress thread");
    drop(&a);
    MPI_Barrier(node);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--progress-thread") || !strcmp(argv[1], "--progress-refused"))) {
        int thread = !strcmp(argv[1], "--progress-thread"), provided;
        MPI_Init_thread(&argc, &argv, thread ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (thread) {
            CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
            progress_without_calls(MPI_COMM_WORLD, 3);
        }
        for (int mode = 0; mode < 8; mode++) batch(MPI_COMM_WORLD, mode, mode + 20);
        freed(MPI_COMM_WORLD, 9);
        handles(MPI_COMM_WORLD, 11);
#ifdef INIT
        persistent(MPI_COMM_WORLD, 10);
        persistent_states(MPI_COMM_WORLD, 12);
#endif
        if (thread) threads();
        test_pass("nonblocking");
        MPI_Finalize();
        return 0;
    }
    int provided, want_threads = argc > 1 && !strcmp(argv[1], "--threads");
    MPI_Init_thread(&argc, &argv, want_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    if (want_threads) {
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        threads();
        test_pass("nonblocking");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int stats = argc > 1 && !strcmp(argv[1], "--stats");
#ifdef INIT
    if (argc > 1 && !strcmp(argv[1], "--after-free")) {
        /* That case alone (under valgrind, say). */
        persistent_after_free(6);
        test_pass("nonblocking");
        MPI_Finalize();
        return 0;
    }
#endif
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    for (int mode = 0; mode < 8; mode++) batch(MPI_COMM_WORLD, mode, mode);
    for (int mode = 0; mode < 8; mode += 3) batch(half, mode, mode + 5);
    mixed(dup, 1);
    freed(MPI_COMM_WORLD, 2);
    handles(dup, 3);
    for (int s = 0; s < 3; s++) two_comms(dup, MPI_COMM_WORLD, s);
    holes(dup, 4);
    printf("rank %d: nonblocking checks passed\n", rank);
#ifdef INIT
    persistent(dup, 60);
    persistent(MPI_COMM_WORLD, 5);
    persistent_rebuilt(dup, 20);
    persistent_states(dup, 24);
    persistent_after_free(6);
#endif
    if (stats) {
        unsigned long long ib = strata_stats_local_calls(
            strata_call_id(STRATA_COLL_BCAST, STRATA_FORM_NONBLOCKING), 1);
        unsigned long long ibar = strata_stats_local_calls(
            strata_call_id(STRATA_COLL_BARRIER, STRATA_FORM_NONBLOCKING), 1);
        unsigned long long b = strata_stats_local_calls(STRATA_COLL_BCAST, 1);
        CHECK(ib >= 10 && ibar >= 10, "STRATA_STATS: MPI_Ibcast %llu, MPI_Ibarrier %llu", ib, ibar);
        CHECK(!strcmp(strata_call_name(strata_call_id(STRATA_COLL_ALLREDUCE,
                                                      STRATA_FORM_PERSISTENT)),
                      "MPI_Allreduce_init"), "name of Allreduce_init");
        CHECK(b == 0, "MPI_Bcast counted %llu blocking calls (none were made)", b);
#ifdef INIT
        unsigned long long pa = strata_stats_local_calls(
            strata_call_id(STRATA_COLL_ALLREDUCE, STRATA_FORM_PERSISTENT), 1);
        CHECK(pa == 4, "MPI_Allreduce_init counted %llu, want 4 (one per request)", pa);
#endif
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    test_pass("nonblocking");
    MPI_Finalize();
    return 0;
}
