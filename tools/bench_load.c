/* Busy processes beside a job: what each kind does and why, bench_load.h. */
#include "bench_load.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARENT_CHECK_NS 2000000L  /* a competitor looks at its parent every 2 ms */

int bench_load_parse_kind(const char *text, enum bench_load_kind *kind)
{
    if (text && !strcmp(text, "spin")) *kind = BENCH_LOAD_SPIN;
    else if (text && !strcmp(text, "noise")) *kind = BENCH_LOAD_NOISE;
    else return -1;
    return 0;
}

const char *bench_load_kind_name(enum bench_load_kind kind)
{
    return kind == BENCH_LOAD_NOISE ? "noise" : "spin";
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* splitmix64: a uniform in [0, 1) from the stream's next state. */
static double next_unit(uint64_t *state)
{
    uint64_t x = (*state += 0x9e3779b97f4a7c15u);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* Busy until `until_ns` (0: forever); leaves when the parent is gone. */
static void busy_until(long long until_ns, pid_t parent)
{
    for (long long check = now_ns() + PARENT_CHECK_NS;;) {
        long long t = now_ns();
        if (until_ns && t >= until_ns) return;
        if (t >= check) {
            if (getppid() != parent) _exit(0);
            check = t + PARENT_CHECK_NS;
        }
    }
}

/* The competitor's life; never returns. */
static void compete(pid_t parent, enum bench_load_kind kind, uint64_t state)
{
    /* Dies with the job; the check closes the window before prctl took hold. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++) dup2(null, fd);
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close(fd);
    if (kind == BENCH_LOAD_SPIN) busy_until(0, parent);
    const double max_ns = BENCH_LOAD_NOISE_MAX_MS * 1e6;
    for (;;) {
        busy_until(now_ns() + (long long)(next_unit(&state) * max_ns), parent);
        long long ns = (long long)(next_unit(&state) * max_ns);
        struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
        nanosleep(&ts, NULL);
        if (getppid() != parent) _exit(0);
    }
}

int bench_load_start(struct bench_load *l, int n, enum bench_load_kind kind, int pin,
                     uint64_t seed)
{
    *l = (struct bench_load){.kind = kind};
    if (n < 0 || n > BENCH_LOAD_MAX) {
        errno = EINVAL;
        return -1;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t parent = getpid();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            int e = errno;
            bench_load_stop(l);
            errno = e;
            return -1;
        }
        if (pid == 0) {
            if (pin && cpus > 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET((int)(i % cpus), &set);
                /* Said, not fatal: the load is still there, placed by the kernel. */
                if (sched_setaffinity(0, sizeof set, &set))
                    fprintf(stderr, "load: cannot pin competitor %d to CPU %ld (%s); unpinned\n",
                            i, i % cpus, strerror(errno));
            }
            compete(parent, kind, seed ^ (0x632be59bd9b4e019u * (uint64_t)(i + 1)));
        }
        l->pid[l->n++] = pid;
    }
    return 0;
}

int bench_load_stop(struct bench_load *l)
{
    int rc = 0;
    for (int i = 0; i < l->n; i++) {
        kill(l->pid[i], SIGKILL);
        while (waitpid(l->pid[i], NULL, 0) < 0)
            if (errno != EINTR) {
                rc = -1;
                break;
            }
    }
    l->n = 0;
    return rc;
}
