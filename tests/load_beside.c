/* Runs a command with busy processes beside it (issue 15's "node matrix
 * under load"): the competitors come from tools/bench_load.c, the same as
 * strata-bench --load, and are killed and reaped when the command ends
 * (or with this process, if it is killed first).
 *   load_beside N spin|noise COMMAND [ARG...]
 * Exit status: the command's (128 + signal if a signal ended it); 2 on a bad
 * command line, 1 if the load or the command could not be started. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_load.h"

int main(int argc, char **argv)
{
    enum bench_load_kind kind;
    char *end;
    long n = argc > 3 ? strtol(argv[1], &end, 10) : -1;
    if (argc < 4 || *end || n < 0 || n > BENCH_LOAD_MAX || bench_load_parse_kind(argv[2], &kind)) {
        fprintf(stderr, "usage: load_beside N(0..%d) spin|noise COMMAND [ARG...]\n",
                BENCH_LOAD_MAX);
        return 2;
    }
    struct bench_load load;
    if (bench_load_start(&load, (int)n, kind, 0, 0x10adu)) {
        fprintf(stderr, "load_beside: cannot start the load: %s\n", strerror(errno));
        return 1;
    }
    fprintf(stderr, "load_beside: %ld %s process%s beside %s\n", n, bench_load_kind_name(kind),
            n == 1 ? "" : "es", argv[3]);
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        /* The command (mpirun) ends too if this wrapper is killed (a test timeout). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        execvp(argv[3], argv + 3);
        fprintf(stderr, "load_beside: cannot run %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    int status = 0, rc;
    if (child < 0) {
        fprintf(stderr, "load_beside: fork: %s\n", strerror(errno));
        rc = 1;
    } else {
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) continue;
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (bench_load_stop(&load)) {
        fprintf(stderr, "load_beside: a load process was not reaped\n");
        if (!rc) rc = 1;
    }
    return rc;
}
