/* Traffic counters and their report at MPI_Finalize. */
#include "util/stats.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/colls.h"
#include "util/log.h"
#include "util/hot.h"

static const char *dist_names[STRATA_NDIST] = {"same_l3", "same_numa", "other_numa",
                                               "other_socket", "other_node"};

/* Counters are per process; relaxed atomics keep concurrent collectives of
 * different threads (on different communicators) from losing counts. */
static _Atomic unsigned long long bytes_moved[STRATA_NCALLS][STRATA_NDIST];
static _Atomic unsigned long long messages[STRATA_NCALLS][STRATA_NDIST];
static _Atomic unsigned long long calls[STRATA_NCALLS][2];
static _Atomic unsigned long long switches[STRATA_NCALLS];
static _Atomic unsigned long long waits[STRATA_NWAIT];
static const char *wait_names[STRATA_NWAIT] = {"waits",  "polls",          "yields", "blocks",
                                               "timeouts", "busy_or_idle_peer", "wakes"};
static _Atomic unsigned long long device_bytes[STRATA_STATS_DEVICE_PATHS];
static const char *const device_names[STRATA_STATS_DEVICE_PATHS] = {"staged", "ipc", "network"};

/* Bytes per copy mechanism: the names of src/transport/registry.c (keep
 * both in step); fixed, so that every rank sums the same slots. */
#define NXPORTS 3
static const char *const xport_names[NXPORTS] = {"segment", "cma", "map"};
static _Atomic unsigned long long xport_bytes[NXPORTS];

static int xport_slot(const char *name)
{
    for (int i = 0; i < NXPORTS; i++)
        if (!strcmp(xport_names[i], name)) return i;
    return -1;
}

void strata_stats_transport_bytes(const char *name, size_t bytes)
{
    int i = xport_slot(name);
    if (i >= 0) atomic_fetch_add_explicit(&xport_bytes[i], bytes, memory_order_relaxed);
}

unsigned long long strata_stats_local_transport_bytes(const char *name)
{
    int i = xport_slot(name);
    return i < 0 ? 0 : atomic_load_explicit(&xport_bytes[i], memory_order_relaxed);
}

/* Calls per (collective, algorithm name), and host calls per (collective,
 * reason).  Names are whatever the router reports, so the table fills as
 * calls come; entries are appended under a lock and never removed, so
 * readers scan the published prefix without it. */
#define MAX_ALGOS 128
#define ALGO_NAME 256
struct algo_count {
    int coll;
    int host; /* 1: a reason the host MPI served calls, 0: an algorithm */
    char name[ALGO_NAME];
    _Atomic unsigned long long calls;
};
static struct algo_count algos[MAX_ALGOS];
static _Atomic int nalgos;
static pthread_mutex_t algos_lock = PTHREAD_MUTEX_INITIALIZER;

/* The collective the application called on this thread (-1: none yet, or
 * the last call went to the host MPI).  initial-exec: libstrata is linked
 * or preloaded, never dlopen'ed, so this sits at a fixed offset from the
 * thread pointer; the default model called __tls_get_addr at every
 * strata_stats_serve_as, twice per poll of a nonblocking operation. */
static _Thread_local int serving __attribute__((tls_model("initial-exec"))) = -1;

const char *strata_distance_name(enum strata_distance d) { return dist_names[d]; }

/* Set at MPI_Init only (one thread, before any collective). */
static int stats_enabled;

void strata_stats_set_enabled(int on) { stats_enabled = on; }

STRATA_HOT int strata_stats_enabled(void) { return stats_enabled; }

void strata_stats_bytes(int coll, enum strata_distance d, size_t bytes)
{
    int as = serving >= 0 ? serving : coll;
    atomic_fetch_add_explicit(&bytes_moved[as][d], bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&messages[as][d], 1, memory_order_relaxed);
}

void strata_stats_call(int coll, int served)
{
    atomic_fetch_add_explicit(&calls[coll][served ? 1 : 0], 1, memory_order_relaxed);
    serving = served ? coll : -1;
}

int strata_stats_serve_as(int call)
{
    int was = serving;
    serving = call;
    return was;
}

void strata_stats_call_unserve(int coll)
{
    atomic_fetch_sub_explicit(&calls[coll][1], 1, memory_order_relaxed);
}

void strata_stats_switch(int coll)
{
    atomic_fetch_add_explicit(&switches[coll], 1, memory_order_relaxed);
}

unsigned long long strata_stats_local_switches(int coll)
{
    return atomic_load_explicit(&switches[coll], memory_order_relaxed);
}

void strata_stats_wait(enum strata_wait_count which, unsigned long n)
{
    atomic_fetch_add_explicit(&waits[which], n, memory_order_relaxed);
}

unsigned long long strata_stats_local_wait(enum strata_wait_count which)
{
    return atomic_load_explicit(&waits[which], memory_order_relaxed);
}

const char *strata_stats_wait_name(enum strata_wait_count which) { return wait_names[which]; }

static int find_algo(int coll, int host, const char *name, int n)
{
    /* nalgos is MAX_ALGOS + 1 once the table overflowed (the warning's
     * mark), one past the last entry. */
    if (n > MAX_ALGOS) n = MAX_ALGOS;
    for (int i = 0; i < n; i++)
        if (algos[i].coll == coll && algos[i].host == host &&
            !strncmp(algos[i].name, name, ALGO_NAME - 1))
            return i;
    return -1;
}

static void count_name(int coll, int host, const char *algorithm)
{
    int i = find_algo(coll, host, algorithm, atomic_load_explicit(&nalgos, memory_order_acquire));
    if (i < 0) {
        pthread_mutex_lock(&algos_lock);
        int n = atomic_load_explicit(&nalgos, memory_order_relaxed);
        i = find_algo(coll, host, algorithm, n);
        if (i < 0 && n < MAX_ALGOS) {
            algos[n].coll = coll;
            algos[n].host = host;
            snprintf(algos[n].name, sizeof algos[n].name, "%s", algorithm);
            atomic_store_explicit(&nalgos, n + 1, memory_order_release);
            i = n;
        } else if (i < 0 && n == MAX_ALGOS) {
            atomic_store_explicit(&nalgos, n + 1, memory_order_release); /* say it once */
            strata_warn("STRATA_STATS: more than %d algorithm names and reasons; \"%s\" and "
                        "later ones are not counted by name", MAX_ALGOS, algorithm);
        }
        pthread_mutex_unlock(&algos_lock);
        if (i < 0) return;
    }
    atomic_fetch_add_explicit(&algos[i].calls, 1, memory_order_relaxed);
}

void strata_stats_algorithm(int coll, const char *algorithm) { count_name(coll, 0, algorithm); }

void strata_stats_host_reason(int coll, const char *reason) { count_name(coll, 1, reason); }

void strata_stats_device_bytes(int path, size_t bytes)
{
    /* A count, read only at the report: no ordering needed. */
    atomic_fetch_add_explicit(&device_bytes[path], bytes, memory_order_relaxed);
}

unsigned long long strata_stats_local_device_bytes(int path)
{
    return atomic_load_explicit(&device_bytes[path], memory_order_relaxed);
}

unsigned long long strata_stats_local_bytes(int coll, enum strata_distance d)
{
    return atomic_load_explicit(&bytes_moved[coll][d], memory_order_relaxed);
}

unsigned long long strata_stats_local_messages(int coll, enum strata_distance d)
{
    return atomic_load_explicit(&messages[coll][d], memory_order_relaxed);
}

unsigned long long strata_stats_local_calls(int coll, int served)
{
    return atomic_load_explicit(&calls[coll][served ? 1 : 0], memory_order_relaxed);
}

static unsigned long long local_named(int coll, int host, const char *name)
{
    int n = atomic_load_explicit(&nalgos, memory_order_acquire);
    int i = find_algo(coll, host, name, n < MAX_ALGOS ? n : MAX_ALGOS);
    return i < 0 ? 0 : atomic_load_explicit(&algos[i].calls, memory_order_relaxed);
}

unsigned long long strata_stats_local_algorithm(int coll, const char *algorithm)
{
    return local_named(coll, 0, algorithm);
}

unsigned long long strata_stats_local_host_reason(int coll, const char *reason)
{
    return local_named(coll, 1, reason);
}

/* ---- The report: every rank's counters summed at world rank 0. */

/* After the wait counters in the report: getrusage (whole process) and
 * /proc/self/schedstat (the main thread: time on a CPU, time runnable but
 * waiting in a run queue, and the number of times it was given a CPU). */
#define NUSAGE 6
static const char *usage_names[NUSAGE] = {"voluntary_switches", "involuntary_switches", "cpu_us",
                                          "run_us", "runqueue_us", "timeslices"};

struct totals {
    unsigned long long bytes[STRATA_NCALLS][STRATA_NDIST];
    unsigned long long messages[STRATA_NCALLS][STRATA_NDIST];
    unsigned long long calls[STRATA_NCALLS][2];
    unsigned long long switches[STRATA_NCALLS];
    /* The wait counters, then this process's context switches and CPU
     * time from getrusage, and its main thread's scheduler figures from
     * /proc/self/schedstat (usage_names). */
    unsigned long long waits[STRATA_NWAIT + NUSAGE];
    unsigned long long device[STRATA_STATS_DEVICE_PATHS];
    unsigned long long xport[NXPORTS];
    struct merged_algo {
        int coll, host;
        char name[ALGO_NAME];
        unsigned long long calls;
    } *algos;
    int nalgos;
};

static void snapshot(struct totals *t)
{
    for (int k = 0; k < STRATA_NCALLS; k++) {
        for (int d = 0; d < STRATA_NDIST; d++) {
            t->bytes[k][d] = strata_stats_local_bytes(k, d);
            t->messages[k][d] = strata_stats_local_messages(k, d);
        }
        t->calls[k][0] = strata_stats_local_calls(k, 0);
        t->calls[k][1] = strata_stats_local_calls(k, 1);
        t->switches[k] = strata_stats_local_switches(k);
    }
    memset(t->waits, 0, sizeof t->waits);
    for (int w = 0; w < STRATA_NWAIT; w++) t->waits[w] = strata_stats_local_wait(w);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        t->waits[STRATA_NWAIT] = (unsigned long long)ru.ru_nvcsw;
        t->waits[STRATA_NWAIT + 1] = (unsigned long long)ru.ru_nivcsw;
        t->waits[STRATA_NWAIT + 2] =
            (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ULL +
            (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    }
    FILE *f = fopen("/proc/self/schedstat", "r");
    unsigned long long run_ns, queue_ns, slices;
    if (f && fscanf(f, "%llu %llu %llu", &run_ns, &queue_ns, &slices) == 3) {
        t->waits[STRATA_NWAIT + 3] = run_ns / 1000;
        t->waits[STRATA_NWAIT + 4] = queue_ns / 1000;
        t->waits[STRATA_NWAIT + 5] = slices;
    }
    if (f) fclose(f);
    for (int p = 0; p < STRATA_STATS_DEVICE_PATHS; p++)
        t->device[p] = strata_stats_local_device_bytes(p);
    for (int i = 0; i < NXPORTS; i++)
        t->xport[i] = atomic_load_explicit(&xport_bytes[i], memory_order_relaxed);
}

static const char *waits_key(int w)
{
    return w < STRATA_NWAIT ? wait_names[w] : usage_names[w - STRATA_NWAIT];
}

/* This process's algorithm and reason counts as text, one "coll host calls
 * name" per line (names vary between ranks, so they travel as text). */
static char *algos_text(int *len)
{
    int n = atomic_load_explicit(&nalgos, memory_order_acquire);
    if (n > MAX_ALGOS) n = MAX_ALGOS;
    size_t cap = (size_t)n * (ALGO_NAME + 56) + 1, used = 0;
    char *text = malloc(cap);
    if (!text) return NULL;
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, cap - used, "%d %d %llu %s\n", algos[i].coll,
                                 algos[i].host,
                                 atomic_load_explicit(&algos[i].calls, memory_order_relaxed),
                                 algos[i].name);
    *len = (int)used;
    return text;
}

/* Whether two reasons are the same but for handle values ("0x..."): an
 * op's handle is an address in Open MPI, different on every rank. */
static int same_but_handles(const char *a, const char *b)
{
    for (;;) {
        if (a[0] == '0' && a[1] == 'x' && b[0] == '0' && b[1] == 'x') {
            a += 2;
            b += 2;
            /* "0x..." (UTF-8 ellipsis) is a handle already merged. */
            if (!strncmp(a, "\u2026", 3)) a += 3;
            else while (isxdigit((unsigned char)*a)) a++;
            if (!strncmp(b, "\u2026", 3)) b += 3;
            else while (isxdigit((unsigned char)*b)) b++;
            continue;
        }
        if (*a != *b) return 0;
        if (!*a) return 1;
        a++;
        b++;
    }
}

/* name with every handle value written "0x..." (they differ between ranks). */
static void blank_handles(char *name)
{
    char out[ALGO_NAME];
    size_t o = 0;
    for (const char *p = name; *p && o + 6 < sizeof out;) {
        if (p[0] == '0' && p[1] == 'x') {
            memcpy(out + o, "0x\u2026", 5);
            o += 5;
            p += 2;
            if (!strncmp(p, "\u2026", 3)) p += 3;
            else while (isxdigit((unsigned char)*p)) p++;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    memcpy(name, out, o + 1);
}

static int merge_algo(struct totals *t, int coll, int host, const char *name,
                      unsigned long long calls)
{
    for (int i = 0; i < t->nalgos; i++)
        if (t->algos[i].coll == coll && t->algos[i].host == host &&
            (!strcmp(t->algos[i].name, name) ||
             (host && same_but_handles(t->algos[i].name, name)))) {
            if (strcmp(t->algos[i].name, name)) blank_handles(t->algos[i].name);
            t->algos[i].calls += calls;
            return 0;
        }
    struct merged_algo *grown = realloc(t->algos, sizeof *grown * (size_t)(t->nalgos + 1));
    if (!grown) return -1;
    t->algos = grown;
    grown[t->nalgos].coll = coll;
    grown[t->nalgos].host = host;
    snprintf(grown[t->nalgos].name, sizeof grown[t->nalgos].name, "%s", name);
    grown[t->nalgos++].calls = calls;
    return 0;
}

static int by_coll_then_name(const void *a, const void *b)
{
    const struct merged_algo *x = a, *y = b;
    if (x->coll != y->coll) return x->coll - y->coll;
    return x->host != y->host ? x->host - y->host : strcmp(x->name, y->name);
}

/* Gathers every rank's algorithm lines to rank 0 and sums them there.
 * Collective; -1 if memory ran out somewhere (then no algorithm counts). */
static int gather_algos(struct totals *t, int rank, int size)
{
    int len = 0, ok = 1, all_ok;
    char *mine = algos_text(&len);
    if (!mine) ok = 0;
    int *lens = rank == 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
    int *offsets = rank == 0 ? malloc(sizeof(int) * (size_t)size) : NULL;
    if (rank == 0 && (!lens || !offsets)) ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char *all = NULL;
    if (all_ok) {
        PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
        long long total = 0;
        if (rank == 0)
            for (int r = 0; r < size; r++) {
                offsets[r] = (int)total;
                total += lens[r];
            }
        all = rank == 0 ? malloc((size_t)total + 1) : NULL;
        ok = rank != 0 || (all && total < (1LL << 31));
        PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (ok) {
            PMPI_Gatherv(mine, len, MPI_CHAR, all, lens, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
            if (rank == 0) all[total] = '\0';
        }
        all_ok = ok;
    }
    for (char *line = all, *end; all_ok && line && *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end) break;
        *end = '\0';
        int coll, host, at = 0;
        unsigned long long n;
        if (sscanf(line, "%d %d %llu %n", &coll, &host, &n, &at) == 3 && at > 0 && coll >= 0 &&
            coll < STRATA_NCALLS && merge_algo(t, coll, host, line + at, n))
            all_ok = 0;
    }
    if (t->algos) qsort(t->algos, (size_t)t->nalgos, sizeof *t->algos, by_coll_then_name);
    free(all);
    free(lens);
    free(offsets);
    free(mine);
    return all_ok ? 0 : -1;
}

static unsigned long long across_nodes(const struct totals *t, int coll)
{
    for (int i = 0; i < t->nalgos; i++)
        if (t->algos[i].coll == coll && !t->algos[i].host &&
            !strcmp(t->algos[i].name, STRATA_STATS_ACROSS_NODES))
            return t->algos[i].calls;
    return 0;
}

/* A JSON string: names are strata's own, but reasons quote the names an
 * application gave its datatypes: escaped. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_distances(FILE *f, const char *key, const unsigned long long *v)
{
    fprintf(f, "      \"%s\": {", key);
    for (int d = 0; d < STRATA_NDIST; d++)
        fprintf(f, "%s\"%s\": %llu", d ? ", " : "", dist_names[d], v[d]);
    fprintf(f, "}");
}

/* The blocking forms always appear in the report; a nonblocking or
 * persistent form only once it was called (most programs use none). */
static int shown(const struct totals *t, int k)
{
    return k < STRATA_NCOLLS || t->calls[k][0] || t->calls[k][1];
}

static void write_json(FILE *f, const struct totals *t, int ranks)
{
    int printed = 0;
    fprintf(f, "{\n  \"ranks\": %d,\n  \"host_mpi\": \"%s\",\n  \"device_bytes\": {", ranks,
            STRATA_HOST_MPI);
    for (int p = 0; p < STRATA_STATS_DEVICE_PATHS; p++)
        fprintf(f, "%s\"%s\": %llu", p ? ", " : "", device_names[p], t->device[p]);
    fprintf(f, "},\n  \"transport_bytes\": {");
    for (int i = 0; i < NXPORTS; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", xport_names[i], t->xport[i]);
    fprintf(f, "},\n  \"collectives\": {\n");
    for (int k = 0; k < STRATA_NCALLS; k++) {
        if (!shown(t, k)) continue;
        fprintf(f, "%s    \"%s\": {\n      \"calls_strata\": %llu, \"calls_host\": %llu, "
                "\"calls_across_nodes\": %llu, \"switches\": %llu,\n      \"algorithms\": {",
                printed++ ? ",\n" : "", strata_call_name(k), t->calls[k][1], t->calls[k][0],
                across_nodes(t, k), t->switches[k]);
        for (int host = 0; host < 2; host++) {
            if (host) fprintf(f, "\n      \"host_reasons\": {");
            int first = 1;
            for (int i = 0; i < t->nalgos; i++) {
                if (t->algos[i].coll != k || t->algos[i].host != host) continue;
                fprintf(f, "%s", first ? "" : host ? ",\n        " : ", ");
                json_string(f, t->algos[i].name);
                fprintf(f, ": %llu", t->algos[i].calls);
                first = 0;
            }
            fprintf(f, "},");
        }
        fprintf(f, "\n");
        json_distances(f, "bytes", t->bytes[k]);
        fprintf(f, ",\n");
        json_distances(f, "messages", t->messages[k]);
        fprintf(f, "\n    }");
    }
    fprintf(f, "\n  },\n  \"waits\": {");
    for (int w = 0; w < STRATA_NWAIT + NUSAGE; w++)
        fprintf(f, "%s\"%s\": %llu", w ? ", " : "", waits_key(w), t->waits[w]);
    fprintf(f, "}\n}\n");
}

static void write_table(FILE *f, const struct totals *t, int ranks)
{
    fprintf(f, "strata traffic, summed over %d ranks (calls count once per rank)\n"
            "%-14s %9s %9s %9s %9s", ranks, "collective", "strata", "host", "across", "");
    for (int d = 0; d < STRATA_NDIST; d++) fprintf(f, " %13s", dist_names[d]);
    fprintf(f, "\n");
    for (int k = 0; k < STRATA_NCALLS; k++) {
        if (!shown(t, k)) continue;
        fprintf(f, "%-14s %9llu %9llu %9llu %9s", strata_call_name(k), t->calls[k][1],
                t->calls[k][0], across_nodes(t, k), "bytes");
        for (int d = 0; d < STRATA_NDIST; d++) fprintf(f, " %13llu", t->bytes[k][d]);
        fprintf(f, "\n%-14s %9s %9s %9s %9s", "", "", "", "", "messages");
        for (int d = 0; d < STRATA_NDIST; d++) fprintf(f, " %13llu", t->messages[k][d]);
        fprintf(f, "\n");
        int first = 1;
        for (int i = 0; i < t->nalgos; i++) {
            if (t->algos[i].coll != k || t->algos[i].host) continue;
            fprintf(f, "%s%s %llu", first ? "  served by: " : ", ", t->algos[i].name,
                    t->algos[i].calls);
            first = 0;
        }
        if (!first) fprintf(f, "\n");
        if (t->switches[k])
            fprintf(f, "  switches of algorithm by measurement: %llu (summed over ranks)\n",
                    t->switches[k]);
        /* One line per reason: they are sentences. */
        for (int i = 0; i < t->nalgos; i++)
            if (t->algos[i].coll == k && t->algos[i].host)
                fprintf(f, "  host MPI, %llu: %s\n", t->algos[i].calls, t->algos[i].name);
    }
    fprintf(f, "waits (summed over ranks; wait.h):");
    for (int w = 0; w < STRATA_NWAIT + NUSAGE; w++)
        fprintf(f, " %s %llu", waits_key(w), t->waits[w]);
    fprintf(f, "\n");
    if (t->device[0] || t->device[1] || t->device[2])
        fprintf(f, "device bytes: %llu staged through pinned host memory, %llu through CUDA IPC, "
                   "%llu across nodes by node leaders\n",
                t->device[0], t->device[1], t->device[2]);
    fprintf(f, "bytes by transport:");
    for (int i = 0; i < NXPORTS; i++) fprintf(f, " %s %llu", xport_names[i], t->xport[i]);
    fprintf(f, "\n");
}

int strata_stats_try_destination(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
        close(fd);
        return unlink(path);
    }
    if (errno != EEXIST) return -1;
    /* It exists (a file, /dev/null, ...).  O_NONBLOCK: a FIFO without a
     * reader fails (ENXIO) rather than blocking MPI_Init. */
    fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

void strata_stats_report(const char *dest, int world_rank, int world_size)
{
    if (!strata_stats_enabled()) return;
    struct totals mine, sum;
    memset(&sum, 0, sizeof sum);
    snapshot(&mine);
    PMPI_Reduce(mine.bytes, sum.bytes, STRATA_NCALLS * STRATA_NDIST, MPI_UNSIGNED_LONG_LONG,
                MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine.messages, sum.messages, STRATA_NCALLS * STRATA_NDIST,
                MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine.calls, sum.calls, STRATA_NCALLS * 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(mine.switches, sum.switches, STRATA_NCALLS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(mine.waits, sum.waits, STRATA_NWAIT + NUSAGE, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                MPI_COMM_WORLD);
    PMPI_Reduce(mine.device, sum.device, STRATA_STATS_DEVICE_PATHS, MPI_UNSIGNED_LONG_LONG,
                MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(mine.xport, sum.xport, NXPORTS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                MPI_COMM_WORLD);
    if (gather_algos(&sum, world_rank, world_size) && world_rank == 0)
        strata_warn("STRATA_STATS: out of memory summing the algorithm counts; they are left out");
    if (world_rank == 0) {
        FILE *f = strcmp(dest, "stderr") ? fopen(dest, "w") : stderr;
        if (!f) {
            strata_error("STRATA_STATS: cannot write %s", dest);
        } else if (f == stderr) {
            write_table(f, &sum, world_size);
        } else {
            write_json(f, &sum, world_size);
            if (fclose(f)) strata_error("STRATA_STATS: cannot write %s", dest);
        }
    }
    free(sum.algos);
}
