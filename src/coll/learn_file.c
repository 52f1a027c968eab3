/* What selection measured (coll/learn.h), kept in a file of its own beside
 * the per-host model cache: learned-HOST.conf next to model-HOST.conf.
 *
 * The model cache stays in the format every strata build reads: a build
 * older than self-correcting selection refuses a model file with a key it
 * does not know at MPI_Init, and one machine may hold both (a distribution's
 * package beside a newer build).  Older builds never open this file.  It
 * holds "measured" lines only (coll/model_measured.c's format) and is
 * written whole, under a new name, and renamed over the old, as the model
 * cache is. */
#include "coll/learn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/model.h"

static const char model_prefix[] = "model-";
static const char learned_prefix[] = "learned-";

int strata_learn_file_path(const char *model_path, char *out, size_t outlen)
{
    const char *slash = strrchr(model_path, '/');
    const char *base = slash ? slash + 1 : model_path;
    /* Only the cache's own name has a sibling: any other model file is
     * the user's, named by STRATA_MODEL, and learning never writes there. */
    if (strncmp(base, model_prefix, sizeof model_prefix - 1)) return -1;
    int n = snprintf(out, outlen, "%.*s%s%s", (int)(base - model_path), model_path,
                     learned_prefix, base + sizeof model_prefix - 1);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

int strata_learn_file_load(struct strata_model *m, const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path,
                 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
        return -1;
    }
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st)) snprintf(err, errlen, "cannot examine %s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode)) snprintf(err, errlen, "%s is not a regular file", path);
    /* Its ratios steer selection: only the user's own file, as the cache. */
    else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        snprintf(err, errlen, "%s is not this user's alone", path);
    else if (!(f = fdopen(fd, "r")))
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    if (!f) {
        close(fd);
        return -1;
    }
    char line[1024], why[512];
    int lineno = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *key = line + strspn(line, " \t\r\n");
        if (!*key) continue;
        char *values = key + strcspn(key, " \t\r\n");
        if (*values) *values++ = 0;
        values[strcspn(values, "\r\n")] = 0;
        const char *problem = strcmp(key, "measured")
                                  ? "only \"measured\" lines belong here"
                                  : strata_model_parse_measured(m, values, why, sizeof why);
        if (problem) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, problem);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

int strata_learn_file_save(const struct strata_model *m, const char *path, char *why,
                           size_t whylen)
{
    char tmp[1024];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(why, whylen, "%s: name too long", path);
        return -1;
    }
    /* A new file of this user's, never one planted at this name. */
    int fd = open(tmp, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return -1;
    }
    fprintf(f, "# What strata's selection measured (STRATA_LEARN), beside the cost model\n"
               "# of this machine; read by strata builds that learn, never by older ones.\n");
    strata_model_write_measured(m, f);
    int bad = ferror(f);
    if (fclose(f)) bad = 1;
    /* Two jobs ending at once each rename a whole file. */
    if (bad || rename(tmp, path)) {
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
