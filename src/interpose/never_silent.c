/* Never silent: a process that loaded strata and initialised MPI without
 * strata ever being set up says so once, at exit, when the user asked
 * strata to talk (STRATA_VERBOSE or STRATA_STATS): otherwise such a run
 * looks like strata served nothing for no reason.
 *
 * The cause is MPI_Init reaching the host MPI directly (a program or library
 * calling PMPI_Init) with no collective over MPI_COMM_WORLD afterwards, where
 * strata would set itself up late (runtime.h).  Processes that never
 * initialised MPI (the launcher, a shell under LD_PRELOAD) stay quiet. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context/runtime.h"

/* A variable set to something other than "" or "0". */
static int asked(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0");
}

__attribute__((destructor)) static void strata_never_set_up(void)
{
    if (strata_runtime_attempted() || (!asked("STRATA_VERBOSE") && !asked("STRATA_STATS")))
        return;
    int initialized = 0;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
    /* One write: the ranks' messages do not interleave mid-line. */
    char msg[1024];
    int len = snprintf(msg, sizeof msg,
        "strata: process %d loaded strata, but strata was never set up: MPI_Init reached the "
        "host MPI without passing through strata (through the PMPI layer: a program or library "
        "calling PMPI_Init), and no collective spanned MPI_COMM_WORLD, where strata would have "
        "set itself up, so every collective went to the host MPI%s.  To use strata, have "
        "MPI_Init resolve to libstrata (launch with strata-run or LD_PRELOAD=libstrata.so, or "
        "link -lstrata before the MPI library), or make the first collective one over "
        "MPI_COMM_WORLD.\n",
        (int)getpid(), asked("STRATA_STATS") ? " and no STRATA_STATS report was written" : "");
    if (len > 0) {
        ssize_t ignored = write(STDERR_FILENO, msg, (size_t)len < sizeof msg ? (size_t)len : sizeof msg - 1);
        (void)ignored;
    }
}
