/* Messages to the user.  Each message is formatted into one buffer and written
 * with one write(2) so lines of different ranks do not interleave. */
#include "util/log.h"

#include <stdio.h>
#include <unistd.h>

static int log_rank = -1;
/* STRATA_VERBOSE, set once at MPI_Init before any other thread calls in. */
static int log_verbose;

void strata_log_set_rank(int rank) { log_rank = rank; }

void strata_log_set_verbose(int level) { log_verbose = level; }

/* The runtime's table of world pids (set at init, cleared at finalize). */
static const pid_t *world_pid;
static int world_pids;

void strata_log_set_world_pids(const pid_t *pid, int world_size)
{
    world_pid = pid;
    world_pids = pid ? world_size : 0;
}

int strata_log_world_rank(pid_t pid)
{
    for (int r = 0; pid > 0 && r < world_pids; r++)
        if (world_pid[r] == pid) return r;
    return -1;
}

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
    if (log_verbose < level) return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}
