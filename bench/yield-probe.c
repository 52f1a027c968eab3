/* Where does a sched_yield send the core?  (issue 15, docs/PERFORMANCE.md)
 *
 * A "peer" process P works (a busy loop that counts), "competitors" C spin,
 * and a "waiter" W waits for P the way a rank can: spinning, yielding in a
 * loop, or blocked (here: sleeping, as a futex wait would).  For each mode,
 * one second each, it prints from /proc/PID/schedstat how much CPU P, the
 * competitors and W got, and W's yields and context switches: counts that
 * say who received the core, not how fast anything was.
 *   cc -O2 -o /tmp/yield-probe bench/yield-probe.c
 *   /tmp/yield-probe [competitors (default 1)] [pinned]
 * pinned: W and competitor 0 on CPU 0, P and competitor 1 on CPU 1 (the
 * awaited rank queued behind a competitor on another CPU); otherwise all
 * unpinned. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

static pid_t spawn_spinner(int cpu)
{
    pid_t p = fork();
    if (p == 0) {
        if (cpu >= 0) pin(cpu);
        for (volatile unsigned long x = 0;; x++) {
        }
    }
    return p;
}

static double run_ms(pid_t pid) /* CPU time so far, from schedstat */
{
    char path[64];
    unsigned long long run = 0, q, n;
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%llu %llu %llu", &run, &q, &n) != 3) run = 0;
    if (f) fclose(f);
    return run / 1e6;
}

int main(int argc, char **argv)
{
    int ncomp = argc > 1 ? atoi(argv[1]) : 1;
    int pinned = argc > 2 && !strcmp(argv[2], "pinned");
    if (ncomp > 16) ncomp = 16;
    pid_t peer = spawn_spinner(pinned ? 1 : -1), comp[16];
    for (int i = 0; i < ncomp; i++) comp[i] = spawn_spinner(pinned ? i % 2 : -1);
    if (pinned) pin(0);
    const char *modes[3] = {"spin", "yield", "block"};
    printf("%d competitor(s), %s; CPU ms per 1000 ms of wall time\n", ncomp,
           pinned ? "W+C0 on CPU 0, P+C1 on CPU 1" : "unpinned");
    printf("%-6s %8s %12s %8s %10s %10s %10s\n", "waiter", "peer", "competitors", "waiter",
           "yields", "vol.sw", "invol.sw");
    for (int m = 0; m < 3; m++) {
        double p0 = run_ms(peer), c0 = 0, w0 = run_ms(getpid());
        for (int i = 0; i < ncomp; i++) c0 += run_ms(comp[i]);
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0);
        unsigned long yields = 0;
        double t0 = now(), end = t0 + 1.0;
        while (now() < end) {
            if (m == 0) continue;
            if (m == 1) {
                sched_yield();
                yields++;
            } else {
                struct timespec ts = {0, 20 * 1000000L}; /* a blocked wait */
                nanosleep(&ts, NULL);
            }
        }
        double wall = now() - t0;
        getrusage(RUSAGE_SELF, &r1);
        double c1 = 0;
        for (int i = 0; i < ncomp; i++) c1 += run_ms(comp[i]);
        printf("%-6s %8.0f %12.0f %8.0f %10lu %10ld %10ld\n", modes[m],
               (run_ms(peer) - p0) / wall, (c1 - c0) / wall, (run_ms(getpid()) - w0) / wall,
               yields, r1.ru_nvcsw - r0.ru_nvcsw, r1.ru_nivcsw - r0.ru_nivcsw);
    }
    kill(peer, SIGKILL);
    for (int i = 0; i < ncomp; i++) kill(comp[i], SIGKILL);
    while (wait(NULL) > 0) {
    }
    return 0;
}
