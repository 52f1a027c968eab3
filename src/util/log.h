/* Messages to the user on stderr, prefixed with "strata[rank]". */
#ifndef STRATA_LOG_H
#define STRATA_LOG_H

#include <stdarg.h>

/* The rank shown in messages (world rank once known, -1 before). */
void strata_log_set_rank(int rank);

/* Always printed: errors and warnings the user must see. */
void strata_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void strata_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Printed when STRATA_VERBOSE >= level. */
void strata_verbose(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
