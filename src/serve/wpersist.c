/* The persistent requests of Alltoallw and the neighbourhood collectives
 * (MPI_Alltoallw_init, MPI_Neighbor_*_init; Open MPI 4.1: MPIX_): a request
 * of request/persistent.c's whose arguments live here (its args' kept).
 * The request owns copies of the arrays and derived datatypes, since an
 * application may free its own right after _init; every start hands them to
 * the blocking form's decision (wcollectives.c), or, for a request strata
 * left to the host at _init, to the host's nonblocking form. */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "context/topo.h"
#include "request/persistent.h"
#include "serve/wcollectives.h"

#if defined(STRATA_HAVE_PERSISTENT_COLL) || defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)

struct wargs {
    struct strata_wpersist_args a; /* its pointers into the block below */
    int ns, nr;                    /* the arrays' lengths: send and receive blocks */
    int owned_stype, owned_rtype;
    int *owned;                    /* [ns + nr]: stypes[i] / rtypes[j] duplicated */
    /* the copies follow, in one block with the struct */
};

static void release(void *args)
{
    struct wargs *w = args;
    if (!w) return;
    if (w->owned_stype) PMPI_Type_free(&w->a.stype);
    if (w->owned_rtype) PMPI_Type_free(&w->a.rtype);
    for (int i = 0; w->owned && i < w->ns + w->nr; i++) {
        if (!w->owned[i]) continue;
        MPI_Datatype *t = (MPI_Datatype *)(i < w->ns ? &w->a.stypes[i] : &w->a.rtypes[i - w->ns]);
        PMPI_Type_free(t);
    }
    free(w);
}

static int decide(const struct strata_persist_args *args, struct strata_build *build)
{
    const struct strata_wpersist_args *a = &((const struct wargs *)args->kept)->a;
    switch (a->coll) {
    case STRATA_COLL_ALLTOALLW:
        return strata_call_alltoallw(a->sendbuf, a->scounts, a->sdispls, a->stypes, a->recvbuf,
                                     a->rcounts, a->rdispls, a->rtypes, a->comm, a->large, build);
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
        return strata_call_neighbor_allgather(a->sendbuf, a->scount, a->stype, a->recvbuf,
                                              a->rcount, a->rtype, a->comm, a->large, build);
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
        return strata_call_neighbor_allgatherv(a->sendbuf, a->scount, a->stype, a->recvbuf,
                                               a->rcounts, a->rdispls, a->rtype, a->comm,
                                               a->large, build);
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
        return strata_call_neighbor_alltoall(a->sendbuf, a->scount, a->stype, a->recvbuf,
                                             a->rcount, a->rtype, a->comm, a->large, build);
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
        return strata_call_neighbor_alltoallv(a->sendbuf, a->scounts, a->sdispls, a->stype,
                                              a->recvbuf, a->rcounts, a->rdispls, a->rtype,
                                              a->comm, a->large, build);
    case STRATA_COLL_NEIGHBOR_ALLTOALLW:
        return strata_call_neighbor_alltoallw(a->sendbuf, a->scounts, a->sdispls_a, a->stypes,
                                              a->recvbuf, a->rcounts, a->rdispls_a, a->rtypes,
                                              a->comm, a->large, build);
    default: return MPI_ERR_INTERN;
    }
}

/* The host's nonblocking form of the request's call: its _c one for a
 * request made by _init_c (the arguments as that form passed them). */
#ifdef STRATA_HAVE_LARGE_COUNT
#define HOST_NB(large, name, ...) \
    ((large) ? PMPI_I##name##_c(__VA_ARGS__) : PMPI_I##name(__VA_ARGS__))
#else
#define HOST_NB(large, name, ...) PMPI_I##name(__VA_ARGS__)
#endif

static int host(const struct strata_persist_args *args, MPI_Request *r)
{
    const struct strata_wpersist_args *a = &((const struct wargs *)args->kept)->a;
    switch (a->coll) {
    case STRATA_COLL_ALLTOALLW:
        return HOST_NB(a->large, alltoallw, a->sendbuf, a->scounts, a->sdispls, a->stypes,
                       a->recvbuf, a->rcounts, a->rdispls, a->rtypes, a->comm, r);
    case STRATA_COLL_NEIGHBOR_ALLGATHER:
        return HOST_NB(a->large, neighbor_allgather, a->sendbuf, a->scount, a->stype,
                       a->recvbuf, a->rcount, a->rtype, a->comm, r);
    case STRATA_COLL_NEIGHBOR_ALLGATHERV:
        return HOST_NB(a->large, neighbor_allgatherv, a->sendbuf, a->scount, a->stype,
                       a->recvbuf, a->rcounts, a->rdispls, a->rtype, a->comm, r);
    case STRATA_COLL_NEIGHBOR_ALLTOALL:
        return HOST_NB(a->large, neighbor_alltoall, a->sendbuf, a->scount, a->stype, a->recvbuf,
                       a->rcount, a->rtype, a->comm, r);
    case STRATA_COLL_NEIGHBOR_ALLTOALLV:
        return HOST_NB(a->large, neighbor_alltoallv, a->sendbuf, a->scounts, a->sdispls,
                       a->stype, a->recvbuf, a->rcounts, a->rdispls, a->rtype, a->comm, r);
    case STRATA_COLL_NEIGHBOR_ALLTOALLW:
        return HOST_NB(a->large, neighbor_alltoallw, a->sendbuf, a->scounts, a->sdispls_a,
                       a->stypes, a->recvbuf, a->rcounts, a->rdispls_a, a->rtypes, a->comm, r);
    default: return MPI_ERR_INTERN;
    }
}

/* Bytes a copy of n elements of `elem` bytes takes in the block: each copy
 * starts on a boundary any element type needs. */
static size_t room(size_t elem, int n)
{
    const size_t align = _Alignof(max_align_t);
    return (elem * (size_t)n + align - 1) / align * align;
}

/* Copies n elements of `elem` bytes from *p (if any) to *at, and points *p there. */
static void own(const void **p, size_t elem, int n, unsigned char **at)
{
    if (!*p) return;
    memcpy(*at, *p, elem * (size_t)n);
    *p = *at;
    *at += room(elem, n);
}

static int own_types(struct wargs *w)
{
    int rc = MPI_SUCCESS;
    struct strata_wpersist_args *a = &w->a;
    if (a->stype != MPI_DATATYPE_NULL && a->sendbuf != MPI_IN_PLACE)
        rc = strata_persist_own_type(&a->stype, &w->owned_stype);
    if (rc == MPI_SUCCESS && a->rtype != MPI_DATATYPE_NULL)
        rc = strata_persist_own_type(&a->rtype, &w->owned_rtype);
    for (int i = 0; rc == MPI_SUCCESS && a->stypes && i < w->ns; i++)
        rc = strata_persist_own_type((MPI_Datatype *)&a->stypes[i], &w->owned[i]);
    for (int j = 0; rc == MPI_SUCCESS && a->rtypes && j < w->nr; j++)
        rc = strata_persist_own_type((MPI_Datatype *)&a->rtypes[j], &w->owned[w->ns + j]);
    return rc;
}

/* The request's own copy of the arguments, or NULL. */
static struct wargs *copy_args(const struct strata_wpersist_args *given)
{
    int ns, nr;
    if (given->coll == STRATA_COLL_ALLTOALLW) {
        PMPI_Comm_size(given->comm, &ns);
        nr = ns;
    } else if (strata_topo_degrees(given->comm, &nr, &ns) != MPI_SUCCESS) {
        return NULL; /* no topology: the host reports the erroneous call */
    }
    /* The struct, then at most: counts, displacements of the form's width
     * and MPI_Aint ones, and types per side, and the owned flags of both
     * sides' types. */
    size_t count_w = sizeof(int), displ_w = sizeof(int);
#ifdef STRATA_HAVE_LARGE_COUNT
    if (given->large) count_w = sizeof(MPI_Count), displ_w = sizeof(MPI_Aint);
#endif
    size_t bytes = room(sizeof(struct wargs), 1);
    for (int side = 0; side < 2; side++) {
        int n = side ? nr : ns;
        bytes += room(count_w, n) + room(displ_w, n) + room(sizeof(MPI_Aint), n) +
                 room(sizeof(MPI_Datatype), n);
    }
    bytes += room(sizeof(int), ns + nr);
    struct wargs *w = calloc(1, bytes);
    if (!w) return NULL;
    w->a = *given;
    /* A datatype per block: the one-datatype fields are unused (the entry
     * point, calls.def's row, records only the parameters its form has). */
    if (w->a.stypes) w->a.stype = MPI_DATATYPE_NULL;
    if (w->a.rtypes) w->a.rtype = MPI_DATATYPE_NULL;
    w->ns = ns;
    w->nr = nr;
    unsigned char *at = (unsigned char *)w + room(sizeof(struct wargs), 1);
    struct strata_wpersist_args *a = &w->a;
    int send_used = a->sendbuf != MPI_IN_PLACE;
    if (!send_used) a->scounts = NULL, a->sdispls = NULL, a->stypes = NULL;
    own(&a->scounts, count_w, ns, &at);
    own(&a->sdispls, displ_w, ns, &at);
    own((const void **)&a->sdispls_a, sizeof(MPI_Aint), ns, &at);
    own((const void **)&a->stypes, sizeof(MPI_Datatype), ns, &at);
    own(&a->rcounts, count_w, nr, &at);
    own(&a->rdispls, displ_w, nr, &at);
    own((const void **)&a->rdispls_a, sizeof(MPI_Aint), nr, &at);
    own((const void **)&a->rtypes, sizeof(MPI_Datatype), nr, &at);
    w->owned = (int *)(void *)at;
    if (own_types(w) != MPI_SUCCESS) {
        release(w);
        return NULL;
    }
    return w;
}

int strata_wpersist_init(const struct strata_wpersist_args *given, MPI_Request *request,
                         int *to_host)
{
    static const struct strata_persist_calls calls = {decide, host};
    struct wargs *w = copy_args(given);
    *to_host = 1;
    if (!w) return MPI_SUCCESS;
    struct strata_persist_args args = {.coll = given->coll, .comm = given->comm, .root = -1,
                                       .stype = MPI_DATATYPE_NULL, .rtype = MPI_DATATYPE_NULL,
                                       .kept = w, .release = release};
    int rc = strata_persist_init(&args, &calls, request, to_host);
    if (*to_host) release(w);
    return rc;
}

#endif
