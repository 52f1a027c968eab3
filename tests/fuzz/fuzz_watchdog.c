/* The watchdog and the crash report: whatever happens to a call, the
 * output names it (seed, index, every argument, communicator) and gives the
 * command that runs it alone.  A call that has not returned after
 * --call-timeout seconds ends the job with status 124 ("HANG"); a fatal
 * signal ("CRASH") is then left to the handler that was there before (the
 * host MPI's backtrace).  The messages are formatted before each phase, so
 * that the handlers only write(). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char hang_text[8192], crash_text[8192], context[4096];
static size_t hang_len, crash_len;
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction crash_previous[sizeof crash_signals / sizeof crash_signals[0]];

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t rc = write(2, hang_text, hang_len);
    (void)rc;
    _exit(124);
}

/* Names the call, then lets the handler that was there (the host MPI's
 * backtrace, or the default) take the signal. */
static void on_crash(int sig)
{
    ssize_t rc = write(2, crash_text, crash_len);
    (void)rc;
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        if (crash_signals[i] == sig) sigaction(sig, &crash_previous[i], NULL);
    raise(sig);
}

static void set_texts(const char *what)
{
    int n = snprintf(hang_text, sizeof hang_text,
                     "\nHANG (world rank %d, seed 0x%llx): no return within %u s from %s\n  %s\n",
                     fuzz_opt.world_rank, (unsigned long long)fuzz_opt.seed,
                     fuzz_opt.call_timeout, what, context);
    hang_len = n < 0 ? 0 : (size_t)n < sizeof hang_text ? (size_t)n : sizeof hang_text - 1;
    n = snprintf(crash_text, sizeof crash_text,
                 "\nCRASH (world rank %d, seed 0x%llx): a fatal signal in %s\n  %s\n",
                 fuzz_opt.world_rank, (unsigned long long)fuzz_opt.seed, what, context);
    crash_len = n < 0 ? 0 : (size_t)n < sizeof crash_text ? (size_t)n : sizeof crash_text - 1;
}

void fuzz_watchdog_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_crash;
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        sigaction(crash_signals[i], &sa, &crash_previous[i]);
}

void fuzz_watchdog_context(const char *text)
{
    snprintf(context, sizeof context, "%s", text);
    set_texts("the fuzzer (building or comparing buffers)");
}

void fuzz_watchdog_arm(const char *what)
{
    set_texts(what);
    if (fuzz_opt.call_timeout) alarm(fuzz_opt.call_timeout);
}

void fuzz_watchdog_disarm(void)
{
    alarm(0);
    set_texts("the fuzzer (building or comparing buffers)");
}
