/* Messages to the user.  Each message is formatted into one buffer and written
 * with one write(2) so lines of different ranks do not interleave. */
#include "util/log.h"

#include <stdio.h>
#include <unistd.h>

#include "config/config.h"

static int log_rank = -1;

void strata_log_set_rank(int rank) { log_rank = rank; }

static void emit(const char *kind, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "strata[%d]: %s", log_rank, kind);
    if (n < 0) return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (m < 0) return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, len);
    (void)ignored; /* nothing useful to do if stderr is gone */
}

void strata_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void strata_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void strata_verbose(int level, const char *fmt, ...)
{
    const struct strata_config *cfg = strata_config();
    if (!cfg || cfg->verbose < level) return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}
