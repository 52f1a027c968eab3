/* Every C entry point of the collectives strata intercepts, generated from
 * one table (calls.def): for each row its blocking, nonblocking and
 * persistent forms, then, where the host MPI defines them, the same three
 * with MPI-4 large counts (_c).  Adding a collective is a row there; adding
 * a form is one generator here.
 *
 * Every form takes the blocking form's path (strata_call_<coll>), whose
 * last argument says what to do with the decision (route/build.h):
 *  - blocking: NULL, run it to completion;
 *  - nonblocking (MPI_I<coll>): the build of an operation (nonblocking.h),
 *    which the call fills instead of running and the queue then starts; the
 *    host's PMPI_I<coll> for a call strata leaves;
 *  - persistent (MPI_<Coll>_init; MPIX_ on Open MPI 4.1): the arguments
 *    recorded in a request (persistent.h), whose every start passes the
 *    same call its build; the host's own _init for a call strata leaves at
 *    _init.
 * A large-count form (STRATA_HAVE_LARGE_COUNT: MPICH 4.0 has them, Open MPI
 * 4.1 does not; mpi4py 4 calls these and nothing else when its MPI has them)
 * passes large 1, so that a call strata leaves reaches the host's _c
 * function unchanged and the v-collectives' MPI_Count / MPI_Aint arrays are
 * read as such; it is counted (STRATA_STATS) and reported (STRATA_VERBOSE)
 * under the C name.  A count beyond int takes strata's path too rather than
 * going straight to the host: another rank of the same call may pass its
 * count within int (a larger datatype, or the int function), and the ranks
 * must agree on the route. */
#include <mpi.h>

#include "device/calls.h"
#include "request/nonblocking.h"
#include "request/persistent.h"
#include "serve/collectives.h"
#include "serve/wcollectives.h"
#include "util/hot.h"

#if defined(STRATA_HAVE_MPIX_PERSISTENT_COLL) && !defined(STRATA_HAVE_PERSISTENT_COLL)
#include <mpi-ext.h>
#endif

/* ---- List macros: a row's parameters and arguments are parenthesized
 * lists, unwrapped where a form adds its own (the request), and mapped
 * element by element where a persistent request records them. */
#define UNPAREN(...) __VA_ARGS__
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
/* f applied to each element of the list, comma-separated (up to 10). */
#define MAP(f, list) MAP_N(f, UNPAREN list)
#define MAP_N(f, ...) \
    MAP_PICK(__VA_ARGS__, MAP10, MAP9, MAP8, MAP7, MAP6, MAP5, MAP4, MAP3, MAP2, MAP1)(f, __VA_ARGS__)
#define MAP_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, m, ...) m
#define MAP1(f, x) f(x)
#define MAP2(f, x, ...) f(x), MAP1(f, __VA_ARGS__)
#define MAP3(f, x, ...) f(x), MAP2(f, __VA_ARGS__)
#define MAP4(f, x, ...) f(x), MAP3(f, __VA_ARGS__)
#define MAP5(f, x, ...) f(x), MAP4(f, __VA_ARGS__)
#define MAP6(f, x, ...) f(x), MAP5(f, __VA_ARGS__)
#define MAP7(f, x, ...) f(x), MAP6(f, __VA_ARGS__)
#define MAP8(f, x, ...) f(x), MAP7(f, __VA_ARGS__)
#define MAP9(f, x, ...) f(x), MAP8(f, __VA_ARGS__)
#define MAP10(f, x, ...) f(x), MAP9(f, __VA_ARGS__)
/* An argument into the request's record, and back out of it. */
#define RECORD(x) .x = x
#define RECORDED(x) a->x

/* ---- The generators.  Each pass below defines the names of its form
 * (ENTRY, I_ENTRY, INIT_ENTRY and their host functions) and LARGE. */

/* strata is the row's strata_call_<coll>, call_args its arguments but the
 * build (a parenthesized list), which each form appends. */
#define BLOCKING(Name, params, strata, call_args) \
    STRATA_HOT int ENTRY(Name) params { return strata(UNPAREN call_args, NULL); }

/* Begin an operation, fill its build, queue it (nonblocking.h); the host's
 * nonblocking form where strata leaves the call. */
#define NONBLOCKING(lower, COLL, params, args, strata, call_args)                      \
    int I_ENTRY(lower)(UNPAREN params, MPI_Request *request)                           \
    {                                                                                  \
        struct strata_nb *nb = strata_nb_begin(STRATA_COLL_##COLL,                     \
                                               STRATA_FORM_NONBLOCKING);               \
        if (!nb) return I_HOST(lower)(UNPAREN args, request);                          \
        int out, rc = strata(UNPAREN call_args, strata_nb_build(nb));                  \
        return strata_nb_end(nb, rc, request, &out) ? I_HOST(lower)(UNPAREN args, request) \
                                                    : out;                             \
    }

/* The request's two calls (its start's decision, the host's nonblocking
 * form) and its _init. */
#define PERSISTENT(Name, lower, COLL, params, args, strata, recorded_args)             \
    static int CAT(decide_, INIT_ENTRY(Name))(const struct strata_persist_args *a,     \
                                              struct strata_build *build)              \
    {                                                                                  \
        return strata(UNPAREN recorded_args, build);                                   \
    }                                                                                  \
    static int CAT(host_, INIT_ENTRY(Name))(const struct strata_persist_args *a,       \
                                            MPI_Request *request)                      \
    {                                                                                  \
        return I_HOST(lower)(MAP(RECORDED, args), request);                            \
    }                                                                                  \
    int INIT_ENTRY(Name)(UNPAREN params, MPI_Info info, MPI_Request *request)          \
    {                                                                                  \
        static const struct strata_persist_calls calls = {                             \
            CAT(decide_, INIT_ENTRY(Name)), CAT(host_, INIT_ENTRY(Name))};             \
        const struct strata_persist_args recorded = {                                  \
            .coll = STRATA_COLL_##COLL, .large = LARGE, MAP(RECORD, args)};            \
        int host, rc = strata_persist_init(&recorded, &calls, request, &host);         \
        return host ? INIT_HOST(Name)(UNPAREN args, info, request) : rc;               \
    }

/* A _W row's persistent form: wpersist.c keeps the arguments (a datatype
 * per block, arrays sized by the topology) and makes the request's calls. */
#define WPERSISTENT(Name, lower, COLL, params, args)                                   \
    int INIT_ENTRY(Name)(UNPAREN params, MPI_Info info, MPI_Request *request)          \
    {                                                                                  \
        const struct strata_wpersist_args recorded = {.coll = STRATA_COLL_##COLL,      \
                                                      .large = LARGE, MAP(RECORD, args)}; \
        int host, rc = strata_wpersist_init(&recorded, request, &host);                \
        return host ? INIT_HOST(Name)(UNPAREN args, info, request) : rc;               \
    }

#define FORMS(Name, lower, COLL, params, args, strata, call_args, recorded_args) \
    BLOCKING(Name, params, strata, call_args)                                   \
    NONBLOCKING(lower, COLL, params, args, strata, call_args)                   \
    PERSISTENT_FORM(Name, lower, COLL, params, args, strata, recorded_args)

/* A row: the forms with strata's call on the arguments as given, and as a
 * request recorded them; a collective without counts has no `large`. */
#define STRATA_CCALL(Name, lower, COLL, strata, params, args)          \
    FORMS(Name, lower, COLL, params, args, strata, (UNPAREN args, LARGE), \
          (MAP(RECORDED, args), LARGE))
#define STRATA_CCALL_NOCOUNT(Name, lower, COLL, strata, params, args) \
    FORMS(Name, lower, COLL, params, args, strata, args, (MAP(RECORDED, args)))
/* A _W row: the blocking and nonblocking forms as above, the persistent
 * form through wpersist.c. */
#define STRATA_CCALL_W(Name, lower, COLL, strata, params, args)               \
    BLOCKING(Name, params, strata, (UNPAREN args, LARGE))                     \
    NONBLOCKING(lower, COLL, params, args, strata, (UNPAREN args, LARGE))     \
    WPERSISTENT_FORM(Name, lower, COLL, params, args)

/* ---- int counts: MPI_<Name>, MPI_I<lower>, MPI_<Name>_init (MPI-4) or
 * MPIX_<Name>_init (Open MPI 4.1's extension). */
#define COUNT int
#define DISPL int
#define ADISPL MPI_Aint
#define LARGE 0
#define ENTRY(Name) MPI_##Name
#define I_ENTRY(lower) MPI_I##lower
#define I_HOST(lower) PMPI_I##lower
#if defined(STRATA_HAVE_PERSISTENT_COLL)
#define INIT_ENTRY(Name) MPI_##Name##_init
#define INIT_HOST(Name) PMPI_##Name##_init
#define PERSISTENT_FORM PERSISTENT
#define WPERSISTENT_FORM WPERSISTENT
#elif defined(STRATA_HAVE_MPIX_PERSISTENT_COLL)
#define INIT_ENTRY(Name) MPIX_##Name##_init
#define INIT_HOST(Name) PMPIX_##Name##_init
#define PERSISTENT_FORM PERSISTENT
#define WPERSISTENT_FORM WPERSISTENT
#else
#define PERSISTENT_FORM(...)
#define WPERSISTENT_FORM(...)
#endif

#include "interpose/calls.def"

#undef COUNT
#undef DISPL
#undef LARGE
#undef ENTRY
#undef I_ENTRY
#undef I_HOST
#undef INIT_ENTRY
#undef INIT_HOST
#undef PERSISTENT_FORM
#undef WPERSISTENT_FORM
#undef STRATA_CCALL_NOCOUNT

/* ---- MPI-4 large counts: MPI_<Name>_c, MPI_I<lower>_c, MPI_<Name>_init_c
 * (Open MPI 4.1 has none of them, MPIX_ included).  A collective without
 * counts has no _c form. */
#ifdef STRATA_HAVE_LARGE_COUNT
#define COUNT MPI_Count
#define DISPL MPI_Aint
#define LARGE 1
#define ENTRY(Name) MPI_##Name##_c
#define I_ENTRY(lower) MPI_I##lower##_c
#define I_HOST(lower) PMPI_I##lower##_c
#ifdef STRATA_HAVE_PERSISTENT_COLL
#define INIT_ENTRY(Name) MPI_##Name##_init_c
#define INIT_HOST(Name) PMPI_##Name##_init_c
#define PERSISTENT_FORM PERSISTENT
#define WPERSISTENT_FORM WPERSISTENT
#else
#define PERSISTENT_FORM(...)
#define WPERSISTENT_FORM(...)
#endif
#define STRATA_CCALL_NOCOUNT(...)

#include "interpose/calls.def"
#endif
