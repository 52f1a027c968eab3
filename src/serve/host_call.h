/* A call strata leaves to the host MPI: the one rule every file of serve/
 * follows, so that blocking, nonblocking and persistent calls take the host
 * the same way whichever collective they are.
 *  - the agreement refused the call (STRATA_CHECK_ARGS): its error;
 *  - a nonblocking or persistent call (a build, route/build.h): the build
 *    is only marked, and its entry point calls the host's form;
 *  - a blocking call with int counts while operations are outstanding: the
 *    host's nonblocking form on nonblocking.c's request, waited for with
 *    progress (a blocking host call could wait for a peer that first needs
 *    strata's progress);
 *  - else the host's blocking call.
 * `call` and `nb_call` are evaluated only on their branch; `build` is the
 * call's (NULL: blocking). */
#ifndef STRATA_SERVE_HOST_CALL_H
#define STRATA_SERVE_HOST_CALL_H

#include <mpi.h>

#include "request/nonblocking.h"
#include "route/build.h"
#include "serve/check.h"

#define STRATA_HOST_CALL(build, large, call, nb_call)                                      \
    (strata_check_refused                   ? strata_check_take_refused()                  \
     : (build)                              ? strata_build_to_host(build)                  \
     : !(large) && strata_nb_outstanding() ? strata_nb_host_wait(nb_call)                  \
                                           : (call))

/* The host's blocking entry point of MPI function `name`: its large-count
 * form (name_c) for a call that came in through it (`large`), so that the
 * host sees exactly what the application passed. */
#ifdef STRATA_HAVE_LARGE_COUNT
#define STRATA_HOST_BLOCKING(large, name, ...) \
    ((large) ? PMPI_##name##_c(__VA_ARGS__) : PMPI_##name(__VA_ARGS__))
#else
#define STRATA_HOST_BLOCKING(large, name, ...) PMPI_##name(__VA_ARGS__)
#endif

/* The same rule for a collective whose nonblocking host form is named
 * HOST_NB_<name> by the including file. */
#define STRATA_HOST_CALL_NAMED(build, large, name, ...)                                    \
    STRATA_HOST_CALL(build, large, STRATA_HOST_BLOCKING(large, name, __VA_ARGS__),                \
                     HOST_NB_##name(__VA_ARGS__, strata_nb_host_request()))

#endif
