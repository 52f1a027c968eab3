/* The contention-aware cost model (model.h): predictions for every
 * algorithm of the registry, the model file, and calibration at first use.
 *
 * The model file: one "key value..." per line, '#' starts a comment, times
 * in microseconds, costs per byte in microseconds per byte (1 GB/s is
 * 1e-3 us/byte: 31 GB/s is 3.2e-05).
 *
 *   alpha_us            CMA start-up per call: system call and access check
 *   beta_us_per_byte    CMA copy time per byte
 *   lock_us_per_page    l: locking and pinning one page, no contention
 *   page_bytes          s: bytes per page
 *   gamma               gamma_1 gamma_2 ...: measured contention factors for
 *                       1, 2, ... concurrent accessors of one process
 *   gamma_fit           a b: gamma_c = a c^2 + b c past the measured list
 *   shm_us_per_byte     one copy into or out of the shared segment
 *   memcpy_us_per_byte  a private memcpy
 *   flag_us             one flag hand-off between two ranks
 *   net_alpha_us        one message between node leaders: start-up
 *   net_beta_us_per_byte  ... per byte (both not measured by strata-calibrate)
 *   machine, date, cpus where, when and on how many CPUs it was measured
 *
 * Keys left out keep the value the caller had (the built-in defaults, for
 * strata).  Unknown keys, bad numbers and repeated keys are errors.
 *
 * What the predictions leave out, on purpose:
 *  - Oversubscription.  Every formula assumes each rank runs on its own
 *    core; with more ranks than cores (8 ranks on this 2-core machine) the
 *    copies that the model overlaps run one after another, and contention
 *    factors past the number of cores are the fit's extrapolation of
 *    readers that never actually run at once.
 *  - Whether the call is in place: the root's own memcpy is always counted.
 *  - Read against write: the paper's model does not tell them apart.
 * The paper's T^sm terms (tiny control data through shared flags) are
 * `flag` per hand-off; a rank that reads p-1 flags others have written pays
 * one hand-off for the first and half of one for each further line (the
 * processor overlaps those misses in part; an estimate, not a measurement). */
#include "coll/model.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/coll.h"
#include "transport/registry.h"

extern char **environ;

double strata_model_predict(const struct strata_model *m, const struct strata_algorithm *al,
                            const struct strata_model_shape *shape, size_t block, int k)
{
    int p = shape->size;
    double n = (double)block;
    if (p <= 1) return n * m->memcpy_beta;
    /* With more ranks than cores, at most `cores` of them copy at once:
     * measured at 4 ranks on 2 cores, the extrapolated gamma_3 made every
     * single-copy algorithm look 1.5-2.5x slower than it ran
     * (docs/notes/performance-history.md), and the model chose copy-in/copy-out. */
    struct strata_model capped;
    if (shape->cores > 0 && shape->cores < p && m->max_concurrent != shape->cores) {
        capped = *m;
        capped.max_concurrent = shape->cores;
        m = &capped;
    }
    /* Through peers' mappings every single copy is a memcpy after a lookup:
     * the same formulas with the mapped figures and no page pinning (the
     * pages are the owner's, already in its page tables and ours). */
    struct strata_model mapped;
    if (shape->mapped) {
        mapped = *m;
        mapped.alpha = m->map_alpha;
        mapped.beta = m->memcpy_beta;
        mapped.lock = 0;
        mapped.warm_beta = 0; /* memcpy_beta prices the copy, warm or not */
        m = &mapped;
    }
    return al->cost(m, shape, n, k);
}

/* ---- Which transport: map against cma. */

/* The fallback's lookup may cost at most this share of what a mapped copy
 * saves on the smallest copy: below it, a job whose buffers are all outside
 * arenas loses less than run-to-run noise, one with arena buffers gains the
 * whole CMA start-up and pinning. */
#define MAP_FALLBACK_SHARE 0.05

int strata_model_map_wins(const struct strata_model *m, char *why, size_t whylen)
{
    /* Both costs are linear in n (CMA's pinning is lock/page per byte on
     * average): one wins at every size when it wins at n = 0 and per byte.
     * Both per-byte figures are from cold sources (memcpy_beta is), so the
     * comparison leaves CMA's warm slope out. */
    double cma_per_byte = m->beta + m->lock / m->page;
    double saved = m->alpha - m->map_alpha;
    if (m->map_alpha >= m->alpha) {
        snprintf(why, whylen, "a mapped copy starts slower than CMA (map_alpha %.3g us >= alpha "
                 "%.3g us)", m->map_alpha, m->alpha);
        return 0;
    }
    if (m->memcpy_beta >= cma_per_byte) {
        snprintf(why, whylen, "a mapped copy is slower per byte than CMA (memcpy %.3g us/B >= "
                 "CMA %.3g us/B with pinning)", m->memcpy_beta, cma_per_byte);
        return 0;
    }
    if (m->map_lookup > MAP_FALLBACK_SHARE * saved) {
        snprintf(why, whylen, "the lookup before each CMA copy of a buffer outside an arena "
                 "(map_lookup %.3g us) costs more than %.0f%% of what a mapped copy saves "
                 "(%.3g us)", m->map_lookup, 100 * MAP_FALLBACK_SHARE, saved);
        return 0;
    }
    snprintf(why, whylen, "a mapped copy costs %.3g us + n*%.3g us/B against CMA's %.3g us + "
             "n*%.3g us/B; buffers outside arenas pay %.3g us more per CMA copy",
             m->map_alpha, m->memcpy_beta, m->alpha, cma_per_byte, m->map_lookup);
    return 1;
}

/* ---- Defaults, and the model file. */

void strata_model_defaults(struct strata_model *m)
{
    /* strata-calibrate on the development VM (2 vCPUs, AMD EPYC, kernel
     * 6.18), rounded medians of 14 runs, 2026-11-21; tests/data/model.conf
     * holds the same figures.  Most runs met the host's slow vCPU placement
     * (flag 0.24 us; 0.06 us and gamma_2 1.5 in the fast one). */
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "built-in defaults (calibrated on the development VM)");
    snprintf(m->machine, sizeof m->machine, "development VM, 2 vCPUs");
    snprintf(m->date, sizeof m->date, "2026-11-21");
    m->cpus = 2;
    /* The transports' own figures (transport/cma.c, segcopy.c). */
    const struct strata_transport *cma = strata_transport_find("cma");
    const struct strata_transport *seg = strata_transport_find("segment");
    m->alpha = cma->cost.alpha; /* 1.9 */
    m->beta = cma->cost.beta;   /* 6.7e-5: 15 GB/s */
    m->lock = cma->cost.lock;   /* 0.34 */
    m->page = cma->cost.page;
    /* strata-calibrate's warm reads on the development VM, 2026-11-28
     * (five runs: 7.28-7.41e-5 us/B; warm up to 4 MiB, 8 MiB cold). */
    m->warm_beta = 7.3e-5;
    m->warm_bytes = 4 << 20;
    m->ngamma = 2;
    m->gamma[0] = 1;
    m->gamma[1] = 1.96;
    m->gamma_a = 0;     /* two points with gamma_2 < 2: the fit with a >= 0 is linear */
    m->gamma_b = 0.98;
    m->shm_beta = seg->cost.beta; /* 1.3e-4: 7.7 GB/s per copy */
    m->memcpy_beta = 6.2e-5; /* 16 GB/s, cold source */
    /* transport/mapped.c's figure: a lookup and a subtraction, not measured. */
    m->map_alpha = strata_transport_find("map")->cost.alpha;
    m->map_lookup = 0.005; /* a pid table probe and a range check, hot in cache */
    m->flag = 0.24;
    /* Not measured on the development VM: no overlap assumed, so the
     * segment pipeline is never the model's choice until a calibration
     * shows its two copies overlap. */
    m->shm_pipe_beta = 2 * m->shm_beta + m->flag / 16384; /* and a hand-off per 16 KiB round */
    /* Not measured by strata-calibrate (no MPI there): a typical cluster
     * network, InfiniBand-like 2 us and 10 GB/s; a model file sets them. */
    m->net_alpha = 2.0;
    m->net_beta = 1e-4;
}

/* Keys with one number: it must be above 0, or 0 or more when zero_ok. */
static const struct scalar_key {
    const char *name;
    size_t offset;
    int zero_ok;
    const char *meaning;
} scalars[] = {
    {"alpha_us", offsetof(struct strata_model, alpha), 1,
     "CMA start-up per call: system call and access check (us)"},
    {"beta_us_per_byte", offsetof(struct strata_model, beta), 0,
     "CMA copy per byte (us/byte; 1 GB/s = 1e-3)"},
    {"lock_us_per_page", offsetof(struct strata_model, lock), 1,
     "l: lock and pin one page, no contention (us)"},
    {"page_bytes", offsetof(struct strata_model, page), 0, "s: bytes per page"},
    {"warm_us_per_byte", offsetof(struct strata_model, warm_beta), 1,
     "CMA copy per byte from a source in the caches, one reader's pinning included (us/byte; 0: "
     "every copy priced cold)"},
    {"warm_bytes", offsetof(struct strata_model, warm_bytes), 1,
     "the largest CMA copy priced warm; larger ones are priced cold (bytes)"},
    {"shm_us_per_byte", offsetof(struct strata_model, shm_beta), 0,
     "one copy into or out of the shared segment, per byte (us/byte)"},
    {"shm_pipe_us_per_byte", offsetof(struct strata_model, shm_pipe_beta), 0,
     "the segment pipeline: a copy in and a copy out at once, per byte of the stream (us/byte)"},
    {"memcpy_us_per_byte", offsetof(struct strata_model, memcpy_beta), 0,
     "a private memcpy, per byte (us/byte)"},
    {"map_alpha_us", offsetof(struct strata_model, map_alpha), 1,
     "a copy through a peer's mapped arena (transport map): start-up; per byte memcpy (us)"},
    {"map_lookup_us", offsetof(struct strata_model, map_lookup), 1,
     "transport map: the lookup before a CMA copy of a buffer outside every arena (us)"},
    {"flag_us", offsetof(struct strata_model, flag), 1,
     "one flag hand-off between two ranks (half a cache-line ping-pong, us)"},
    {"net_alpha_us", offsetof(struct strata_model, net_alpha), 1,
     "one message between node leaders over the host MPI: start-up (us)"},
    {"net_beta_us_per_byte", offsetof(struct strata_model, net_beta), 0,
     "one message between node leaders: per byte (us/byte)"},
};
#define NSCALARS (int)(sizeof scalars / sizeof scalars[0])

/* Keys past the scalars, by index (for the repeated-key check). */
enum { KEY_GAMMA = NSCALARS, KEY_GAMMA_FIT, KEY_MACHINE, KEY_DATE, KEY_CPUS, NKEYS };
static const char *const other_keys[] = {"gamma", "gamma_fit", "machine", "date", "cpus"};

static const char *key_name(int i) { return i < NSCALARS ? scalars[i].name : other_keys[i - NSCALARS]; }

static int parse_number(const char *text, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return end != text && !*end && !errno && isfinite(*out) ? 0 : -1;
}

/* Copies the line's text after the key, trimmed. */
static void rest_of_line(const char *after_key, char *out, size_t outlen)
{
    while (isspace((unsigned char)*after_key)) after_key++;
    snprintf(out, outlen, "%s", after_key);
}

/* Parses one line's values for key i into m; NULL, or what is wrong. */
static const char *parse_values(struct strata_model *m, int i, char *values, const char *raw_rest,
                                char *why, size_t whylen)
{
    double v[STRATA_MODEL_MAX_GAMMA + 1];
    int n = 0;
    if (i == KEY_MACHINE || i == KEY_DATE) {
        if (i == KEY_MACHINE) rest_of_line(raw_rest, m->machine, sizeof m->machine);
        else rest_of_line(raw_rest, m->date, sizeof m->date);
        return NULL;
    }
    char *save = NULL;
    for (char *tok = strtok_r(values, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (n == STRATA_MODEL_MAX_GAMMA + 1) break;
        if (parse_number(tok, &v[n])) {
            snprintf(why, whylen, "%s: \"%s\" is not a number", key_name(i), tok);
            return why;
        }
        n++;
    }
    if (i < NSCALARS || i == KEY_CPUS) {
        if (n != 1) {
            snprintf(why, whylen, "%s takes one number, found %d", key_name(i), n);
            return why;
        }
        if (i == KEY_CPUS) {
            if (v[0] < 1 || v[0] > 1e6 || v[0] != floor(v[0])) return "cpus must be a positive integer";
            m->cpus = (int)v[0];
            return NULL;
        }
        const struct scalar_key *k = &scalars[i];
        if (v[0] < 0 || (v[0] == 0 && !k->zero_ok)) {
            snprintf(why, whylen, "%s must be %s", k->name, k->zero_ok ? "0 or more" : "above 0");
            return why;
        }
        if (!strcmp(k->name, "page_bytes") && v[0] != floor(v[0])) return "page_bytes must be a whole number of bytes";
        *(double *)((char *)m + k->offset) = v[0];
        return NULL;
    }
    if (i == KEY_GAMMA_FIT) {
        if (n != 2) {
            snprintf(why, whylen, "gamma_fit takes two numbers (a b: gamma_c = a c^2 + b c), found %d", n);
            return why;
        }
        if (v[0] < 0 || v[1] < 0 || v[0] + v[1] <= 0)
            return "gamma_fit: a and b must be 0 or more, not both 0";
        m->gamma_a = v[0];
        m->gamma_b = v[1];
        return NULL;
    }
    /* KEY_GAMMA */
    if (n < 1 || n > STRATA_MODEL_MAX_GAMMA) {
        snprintf(why, whylen, "gamma takes 1 to %d numbers (gamma_1 gamma_2 ...)", STRATA_MODEL_MAX_GAMMA);
        return why;
    }
    for (int c = 0; c < n; c++)
        if (v[c] <= 0) return "gamma: contention factors must be above 0";
    m->ngamma = n;
    memcpy(m->gamma, v, sizeof v[0] * (size_t)n);
    return NULL;
}

/* Reads the model file open as f (closed here), named path in messages. */
/* unknown_ok: a key this build does not know is skipped (named in
 * m->skipped), not an error: the cache, which a newer strata-calibrate on
 * the same machine may have written. */
static int load_stream(struct strata_model *m, FILE *f, const char *path, int unknown_ok,
                       char *err, size_t errlen)
{
    struct strata_model in = *m;
    in.skipped[0] = 0;
    /* Where and when describe this file, not the values it leaves out. */
    in.machine[0] = in.date[0] = 0;
    in.cpus = 0;
    char line[1024], why[512];
    int seen[NKEYS] = {0}, lineno = 0;
    const char *problem = NULL;
    while (!problem && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
            problem = "line too long";
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *key = line;
        while (isspace((unsigned char)*key)) key++;
        char *end = key + strlen(key);
        while (end > key && isspace((unsigned char)end[-1])) *--end = 0;
        if (!*key) continue;
        char *values = key + strcspn(key, " \t");
        if (*values) *values++ = 0;
        int i = 0;
        while (i < NKEYS && strcmp(key_name(i), key)) i++;
        if (!strcmp(key, "measured")) {
            /* One line per record: the key repeats. */
            problem = strata_model_parse_measured(&in, values, why, sizeof why);
        } else if (i == NKEYS && unknown_ok) {
            size_t at = strlen(in.skipped);
            snprintf(in.skipped + at, sizeof in.skipped - at, "%s%.40s", at ? ", " : "", key);
        } else if (i == NKEYS) {
            int at = snprintf(why, sizeof why, "unknown key \"%.64s\" (known:", key);
            for (int k = 0; k < NKEYS && at > 0 && (size_t)at < sizeof why; k++)
                at += snprintf(why + at, sizeof why - (size_t)at, " %s,", key_name(k));
            if (at > 0 && (size_t)at < sizeof why)
                snprintf(why + at, sizeof why - (size_t)at, " measured)");
            problem = why;
        } else if (seen[i]++) {
            snprintf(why, sizeof why, "%s is given twice", key);
            problem = why;
        } else {
            problem = parse_values(&in, i, values, values, why, sizeof why);
        }
    }
    int read_error = ferror(f);
    fclose(f);
    if (!problem && read_error) {
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    if (problem) {
        snprintf(err, errlen, "%s:%d: %s", path, lineno, problem);
        return -1;
    }
    *m = in;
    snprintf(m->source, sizeof m->source, "%s", path);
    return 0;
}

int strata_model_load(struct strata_model *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    return load_stream(m, f, path, 0, err, errlen);
}

/* ---- The cache: this user's alone.
 *
 * A file another user could have written must not decide anything: its
 * unknown keys would stop the job, its valid values would steer every choice
 * silently.  So the cache and its directory must be owned by this process's
 * effective user and writable by nobody else; the directory is checked
 * without following a symbolic link (its entries, the file among them, can
 * then change only by this user's hand), the file is opened without
 * following one. */

/* 0 if st, of `what` at path, is this user's alone; -1 with why. */
static int owned_privately(const struct stat *st, const char *what, const char *path, char *why,
                           size_t whylen)
{
    if (st->st_uid != geteuid()) {
        snprintf(why, whylen, "%s %s belongs to uid %ld, not to this user (uid %ld)", what, path,
                 (long)st->st_uid, (long)geteuid());
        return -1;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, whylen, "%s %s can be written by other users (mode %03o; chmod go-w "
                 "fixes it)", what, path, (unsigned)(st->st_mode & 0777));
        return -1;
    }
    return 0;
}

/* The directory part of path ("." for none). */
static void parent_dir(const char *path, char *dir, size_t dirlen)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, dirlen, ".");
    else if (slash == path) snprintf(dir, dirlen, "/");
    else snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
}

/* 0 if path's directory is a directory (not a link to one) of this user's
 * alone; 1 if it does not exist; -1 with why otherwise. */
static int private_parent(const char *path, char *why, size_t whylen)
{
    char dir[PATH_MAX];
    struct stat st;
    parent_dir(path, dir, sizeof dir);
    if (lstat(dir, &st)) {
        if (errno == ENOENT) return 1;
        snprintf(why, whylen, "cannot examine the directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "%s is not a directory (a symbolic link?)", dir);
        return -1;
    }
    return owned_privately(&st, "the directory", dir, why, whylen);
}

int strata_model_load_cache(struct strata_model *m, const char *path, char *err, size_t errlen)
{
    int dir = private_parent(path, err, errlen);
    if (dir) return dir > 0 ? 1 : 2;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path,
                 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return 2;
    }
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st)) snprintf(err, errlen, "cannot examine %s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode)) snprintf(err, errlen, "%s is not a regular file", path);
    else if (!owned_privately(&st, "the file", path, err, errlen) && !(f = fdopen(fd, "r")))
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    if (!f) {
        close(fd);
        return 2;
    }
    return load_stream(m, f, path, 1, err, errlen) ? -1 : 0;
}

int strata_model_write(const struct strata_model *m, FILE *f)
{
    fprintf(f, "# strata cost model (the contention-aware CMA paper, section II).\n"
               "# A CMA copy of n bytes while c ranks access the same process costs\n"
               "#   alpha_us + n * beta_us_per_byte + lock_us_per_page * gamma_c * ceil(n / page_bytes)\n"
               "# Times in microseconds; per-byte costs in us/byte (1 GB/s = 1e-3 us/byte).\n"
               "# Keys left out keep strata's built-in values.  Written by strata-calibrate;\n"
               "# strata reads it from STRATA_MODEL, else from its per-host cache file.\n#\n");
    for (int i = 0; i < NSCALARS; i++)
        fprintf(f, "# %-19s %s\n", scalars[i].name, scalars[i].meaning);
    fprintf(f, "# %-19s %s\n# %-19s %s\n# %-19s %s\n\n", "gamma",
            "gamma_1 gamma_2 ...: measured contention factors, c = 1, 2, ...", "gamma_fit",
            "a b: gamma_c = a c^2 + b c past the measured list", "machine, date, cpus",
            "where, when and on how many CPUs it was measured");
    if (m->machine[0]) fprintf(f, "machine %s\n", m->machine);
    if (m->date[0]) fprintf(f, "date %s\n", m->date);
    if (m->cpus > 0) fprintf(f, "cpus %d\n", m->cpus);
    for (int i = 0; i < NSCALARS; i++) {
        double v = *(const double *)((const char *)m + scalars[i].offset);
        if (strstr(scalars[i].name, "per_byte") && v > 0)
            fprintf(f, "%-19s %-12.6g # %.1f GB/s\n", scalars[i].name, v, 1e-3 / v);
        else fprintf(f, "%-19s %.6g\n", scalars[i].name, v);
    }
    fprintf(f, "gamma              ");
    for (int c = 0; c < m->ngamma; c++) fprintf(f, " %.4g", m->gamma[c]);
    fprintf(f, "\ngamma_fit           %.6g %.6g\n", m->gamma_a, m->gamma_b);
    strata_model_write_measured(m, f);
    return ferror(f) ? -1 : 0;
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        /* Private from the start: the cache's directory must be. */
        if (mkdir(dir, 0700) && errno != EEXIST) return -1;
        *s = '/';
    }
    return 0;
}

int strata_model_save(const struct strata_model *m, const char *path)
{
    char tmp[PATH_MAX];
    if (make_parent_dirs(path)) return -1;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* A new file of this user's, never one planted at this name (nor a
     * symbolic link's target). */
    int fd = open(tmp, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    int bad = strata_model_write(m, f);
    int saved = errno;
    if (fclose(f)) bad = -1, saved = errno;
    /* Two jobs calibrating at once each rename a whole file: a reader never
     * sees half of one. */
    if (!bad && rename(tmp, path)) bad = -1, saved = errno;
    if (bad) {
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int strata_model_save_cache(const struct strata_model *m, const char *path, char *why,
                            size_t whylen)
{
    if (make_parent_dirs(path)) {
        snprintf(why, whylen, "cannot create the directory of %s: %s", path, strerror(errno));
        return -1;
    }
    if (private_parent(path, why, whylen)) return -1;
    if (strata_model_save(m, path)) {
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void strata_model_default_path(char *out, size_t outlen)
{
    char host[256] = "unknown";
    if (gethostname(host, sizeof host) == 0) host[sizeof host - 1] = 0;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME"), *tmp = getenv("TMPDIR");
    if (xdg && xdg[0] == '/') snprintf(out, outlen, "%s/strata/model-%s.conf", xdg, host);
    else if (home && *home) snprintf(out, outlen, "%s/.cache/strata/model-%s.conf", home, host);
    else
        /* A directory of the user's own in the shared one, never a shared
         * name: strata_model_load_cache refuses it if it is not private. */
        snprintf(out, outlen, "%s/strata-%ld/model-%s.conf", tmp && tmp[0] == '/' ? tmp : "/tmp",
                 (long)geteuid(), host);
}

/* ---- Calibration at first use. */

/* Any object of the library: dladdr on it names the file it was loaded from. */
static const char library_anchor;

static int find_calibrator(char *exe, size_t exelen)
{
    Dl_info info;
    char lib[PATH_MAX];
    if (!dladdr(&library_anchor, &info) || !info.dli_fname || !realpath(info.dli_fname, lib))
        return -1;
    char *slash = strrchr(lib, '/');
    if (!slash) return -1;
    *slash = 0;
    static const char *const rel[] = {"/../bin/strata-calibrate", "/bin/strata-calibrate"};
    for (int i = 0; i < 2; i++) {
        snprintf(exe, exelen, "%s%s", lib, rel[i]);
        if (access(exe, X_OK) == 0) return 0;
    }
    snprintf(exe, exelen, "%s", lib);
    return -1;
}

int strata_model_calibrate_now(const char *path, char *err, size_t errlen)
{
    char exe[PATH_MAX + 32];
    if (find_calibrator(exe, sizeof exe)) {
        snprintf(err, errlen, "strata-calibrate not found next to libstrata (looked in %s/../bin "
                 "and %s/bin)", exe, exe);
        return -1;
    }
    char *argv[] = {exe, "--quiet", "--output", (char *)path, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, exe, NULL, NULL, argv, environ);
    if (rc) {
        snprintf(err, errlen, "cannot start %s: %s", exe, strerror(rc));
        return -1;
    }
    int status;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) continue;
    if (got < 0) {
        /* SIGCHLD ignored by the process: the child was reaped for us, so
         * only the file it leaves tells how it went. */
        if (errno == ECHILD && access(path, R_OK) == 0) return 0;
        snprintf(err, errlen, "waiting for %s: %s", exe, strerror(errno));
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status))
        snprintf(err, errlen, "%s exited with status %d", exe, WEXITSTATUS(status));
    else
        snprintf(err, errlen, "%s was killed by signal %d", exe, WTERMSIG(status));
    return -1;
}
