/* What the two applications (asp.c, train.c) share: seeded pseudo-random
 * numbers that any rank can compute for any index, block distributions,
 * argument parsing, and the report every run ends with.
 *
 * The applications are plain MPI programs: they link MPI only, never
 * libstrata, so that strata reaches them the way it reaches any user's
 * program (LD_PRELOAD through strata-run) and `strata-run --native` runs
 * them on the host MPI alone. */
#ifndef STRATA_APP_COMMON_H
#define STRATA_APP_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* A well-mixed 64-bit value for key (splitmix64's finaliser): the random
 * inputs are functions of (seed, index), so each rank generates its own part
 * without communication and the inputs do not depend on the rank count. */
uint64_t app_mix64(uint64_t key);
uint64_t app_key(uint64_t seed, uint64_t a, uint64_t b);
/* Uniform in [-1, 1), from the top 53 bits of a mixed value. */
double app_uniform(uint64_t mixed);

/* FNV-1a over bytes, continuing from h (start with APP_FNV_START). */
#define APP_FNV_START 0xcbf29ce484222325ull
uint64_t app_fnv1a(uint64_t h, const void *bytes, size_t n);

/* Items [*lo, *hi) of n dealt in contiguous blocks over parts: the first
 * n % parts blocks hold one item more (blocks may be empty). */
void app_block(long n, int parts, int index, long *lo, long *hi);
/* The part whose block holds item i. */
int app_block_owner(long n, int parts, long i);

/* Bad arguments: every rank parses the same ones and comes here alike, so
 * rank 0 prints the message and the usage, and every rank finalizes and
 * exits with status 2. */
void app_die_usage(const char *app, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of argument `what`: a count with an optional K/M/G suffix
 * (powers of 1024) between min and max, or a finite number above zero.
 * Anything else stops the job through app_die_usage. */
long app_count_arg(const char *app, const char *usage, const char *what, const char *text,
                   long min, long max);
double app_positive_arg(const char *app, const char *usage, const char *what,
                        const char *text);

/* Allocates or stops the whole job (MPI_Abort). */
void *app_alloc(const char *app, size_t bytes);

/* The result of one run, reported identically by both applications. */
struct app_result {
    const char *app;          /* "asp", "train" */
    const char *collective;   /* the collective the workload is built on */
    long calls;               /* how many times each rank called it */
    size_t bytes_per_call;    /* payload of one call */
    double total_s;           /* this rank's time in the timed part */
    double coll_s;            /* this rank's time inside the collective */
    uint64_t checksum;        /* identical on every rank once computed */
    int verified;             /* 1 ok, 0 mismatch, -1 not asked */
    const char *params_json;  /* the run's own parameters, JSON members */
};

/* Collective over comm: reduces the times (max and mean over ranks) and, on
 * rank 0, prints the summary and the machine-readable RESULT line
 * (scripts/app-compare.sh reads it) and writes json_path when it is not
 * NULL.  Returns 0, or -1 if the JSON file could not be written. */
int app_report(MPI_Comm comm, const struct app_result *r, const char *json_path);

#endif
