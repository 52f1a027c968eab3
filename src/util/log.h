/* Messages to the user on stderr, prefixed with "strata[rank]". */
#ifndef STRATA_LOG_H
#define STRATA_LOG_H

#include <stdarg.h>
#include <sys/types.h>

#include "util/hot.h"

/* The rank shown in messages (world rank once known, -1 before). */
void strata_log_set_rank(int rank);

/* The level of strata_verbose (STRATA_VERBOSE, parsed by the configuration
 * at MPI_Init; 0, nothing verbose, before). */
void strata_log_set_verbose(int level);

/* The pid of each rank of MPI_COMM_WORLD this process can watch (else 0),
 * so that a message about a peer process names its world rank; NULL, 0 to
 * forget it.  Set at MPI_Init and MPI_Finalize only; the table stays the
 * caller's. */
void strata_log_set_world_pids(const pid_t *pid, int world_size);

/* The MPI_COMM_WORLD rank of the process with this pid, or -1 if unknown. */
int strata_log_world_rank(pid_t pid);

/* Always printed: errors and warnings the user must see. */
STRATA_COLD void strata_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
STRATA_COLD void strata_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Printed when STRATA_VERBOSE >= level. */
STRATA_COLD void strata_verbose(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
