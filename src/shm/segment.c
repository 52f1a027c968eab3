/* Creation, attachment and removal of shared segments. */
#include "shm/segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static size_t cap_bytes = (size_t)1 << 30;
/* Bytes held by segments: this process's own count until the ranks of the
 * machine share one (strata_segment_share_accounting), then the machine's. */
static _Atomic uint64_t local_held;
static _Atomic uint64_t *held = &local_held;

void strata_segment_set_cap(size_t bytes) { cap_bytes = bytes; }

void strata_segment_share_accounting(_Atomic uint64_t *counter) { held = counter; }

/* Creating a segment is rare and off the collectives' path, so a
 * compare-and-swap is fine here; it keeps concurrent creators on one
 * machine (other ranks, other threads) within the cap together. */
static int reserve(size_t bytes, char *why, size_t whylen)
{
    uint64_t now = atomic_load(held);
    do {
        if (now + bytes > cap_bytes) {
            snprintf(why, whylen, "a new %zu-byte segment would exceed STRATA_SHM_MAX (%zu "
                     "bytes per machine, %llu in use); raise STRATA_SHM_MAX or free "
                     "communicators", bytes, cap_bytes, (unsigned long long)now);
            return -1;
        }
    } while (!atomic_compare_exchange_weak(held, &now, now + bytes));
    return 0;
}

static void unreserve(size_t bytes) { atomic_fetch_sub(held, bytes); }

static int map(struct strata_segment *seg, int fd, size_t bytes, char *why, size_t whylen)
{
    void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        snprintf(why, whylen, "cannot map the shared segment: %s", strerror(errno));
        return -1;
    }
    seg->base = base;
    seg->bytes = bytes;
    return 0;
}

/* A memfd: memory with no name anywhere, reachable by peers that may open
 * this process's descriptors. */
static int create_anonymous(struct strata_segment *seg, size_t bytes, char *why, size_t whylen)
{
    int fd = memfd_create("strata-segment", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create an anonymous shared segment: %s", strerror(errno));
        return -1;
    }
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    if (rc) {
        snprintf(why, whylen, "no memory for a %zu-byte shared segment (%s)", bytes,
                 strerror(rc));
        close(fd);
        return -1;
    }
    if (map(seg, fd, bytes, why, whylen)) {
        close(fd);
        return -1;
    }
    seg->created = 1;
    seg->fd = fd;
    snprintf(seg->name, sizeof seg->name, "/proc/%d/fd/%d", (int)getpid(), fd);
    return 0;
}

static int make_named(struct strata_segment *seg, size_t bytes, unsigned long serial, char *why,
                      size_t whylen);

/* Makes the segment, counted against the cap or not. */
static int make(struct strata_segment *seg, size_t bytes, int anonymous, int accounted,
                unsigned long serial, char *why, size_t whylen)
{
    memset(seg, 0, sizeof *seg);
    seg->fd = -1;
    if (accounted && reserve(bytes, why, whylen)) return -1;
    int rc = anonymous ? create_anonymous(seg, bytes, why, whylen)
                       : make_named(seg, bytes, serial, why, whylen);
    if (rc && accounted) unreserve(bytes);
    seg->accounted = !rc && accounted;
    return rc;
}

int strata_segment_create(struct strata_segment *seg, size_t bytes, int anonymous,
                          unsigned long serial, char *why, size_t whylen)
{
    return make(seg, bytes, anonymous, 1, serial, why, whylen);
}

int strata_segment_create_uncounted(struct strata_segment *seg, size_t bytes, int anonymous,
                                    char *why, size_t whylen)
{
    return make(seg, bytes, anonymous, 0, (unsigned long)-1, why, whylen);
}

/* The inode of this process's PID namespace (0 if unknown): a pid in a
 * segment's name means that process only within the namespace that made it
 * (containers may share /dev/shm without sharing pids). */
static unsigned long long pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long long)st.st_ino;
}

/* A file in /dev/shm (where ranks cannot open each other's descriptors). */
static int make_named(struct strata_segment *seg, size_t bytes, unsigned long serial, char *why,
                      size_t whylen)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned salt = (unsigned)ts.tv_nsec ^ (unsigned)getpid() * 2654435761u;
    snprintf(seg->name, sizeof seg->name, "/strata-%u-%d-%lu-%08x-%llu", (unsigned)getuid(),
             (int)getpid(), serial, salt, pid_namespace());
    int fd = shm_open(seg->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create a shared segment in /dev/shm: %s", strerror(errno));
        return -1;
    }
    seg->created = seg->linked = 1;
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    if (rc) {
        snprintf(why, whylen, "/dev/shm cannot hold a %zu-byte segment (%s): free or enlarge "
                 "/dev/shm (a communicator's segment grows with its size and STRATA_CICO_MAX)",
                 bytes, strerror(rc));
        close(fd);
        strata_segment_seal(seg);
        return -1;
    }
    rc = map(seg, fd, bytes, why, whylen);
    close(fd);
    if (rc) strata_segment_seal(seg);
    return rc;
}

int strata_segment_attach(struct strata_segment *seg, const char *name, size_t bytes,
                          char *why, size_t whylen)
{
    memset(seg, 0, sizeof *seg);
    seg->fd = -1;
    snprintf(seg->name, sizeof seg->name, "%s", name);
    /* An anonymous segment is reached through its creator's descriptor. */
    int fd = strncmp(name, "/proc/", 6) ? shm_open(name, O_RDWR, 0600) : open(name, O_RDWR);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open the node's shared segment %s: %s", name,
                 strerror(errno));
        return -1;
    }
    int rc = map(seg, fd, bytes, why, whylen);
    close(fd);
    return rc;
}

/* Whether the /dev/shm entry `name` is a segment this user's process made
 * in this PID namespace, and that process is gone. */
static int stale(int dir, const char *name, unsigned long long ns)
{
    unsigned uid;
    int pid, end = 0;
    unsigned long serial;
    unsigned salt;
    unsigned long long its_ns;
    if (sscanf(name, "strata-%u-%d-%lu-%8x-%llu%n", &uid, &pid, &serial, &salt, &its_ns,
               &end) != 5 ||
        name[end] || uid != (unsigned)getuid() || its_ns != ns || pid <= 0)
        return 0;
    /* EPERM: alive, under other ids. */
    if (kill(pid, 0) == 0 || errno != ESRCH) return 0;
    /* Only this user's own files: /dev/shm is sticky, so nobody else can
     * swap the entry between this look and the unlink. */
    struct stat st;
    return !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
           st.st_uid == geteuid();
}

int strata_segment_remove_stale(void)
{
    unsigned long long ns = pid_namespace();
    DIR *d = ns ? opendir("/dev/shm") : NULL;
    /* Without a namespace to compare, no pid in a name can be judged. */
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    /* A failed unlink (another job's start removing it first) leaves
     * nothing to do. */
    while ((e = readdir(d)))
        if (stale(dirfd(d), e->d_name, ns) && !unlinkat(dirfd(d), e->d_name, 0)) removed++;
    closedir(d);
    return removed;
}

void strata_segment_seal(struct strata_segment *seg)
{
    if (seg->created && seg->linked) shm_unlink(seg->name);
    seg->linked = 0;
    if (seg->fd >= 0) close(seg->fd);
    seg->fd = -1;
}

void strata_segment_release(struct strata_segment *seg)
{
    strata_segment_seal(seg);
    if (seg->base) {
        munmap(seg->base, seg->bytes);
        if (seg->accounted) unreserve(seg->bytes);
    }
    seg->base = NULL;
}
