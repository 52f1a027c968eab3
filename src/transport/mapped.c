/* The mapping transport.
 *
 * At MPI_Init (the probe, collective over the machine's ranks) every rank
 * creates its arena, the ranks exchange where theirs lie (pid, base address,
 * reserved length, memfd number), and each opens every peer's memfd through
 * /proc/PID/fd/N and reserves as much address space for it as the peer
 * reserved: the peer's arena then appears at a fixed distance from its own
 * addresses, so translating an address is one subtraction.  The mapping is
 * extended, never moved, when an address lies past what is mapped and the
 * memfd (which only grows) has grown that far: the peer's arena grew.
 *
 * Every copy is decided per range, on the rank that copies: inside the
 * owner's arena, memcpy through the mapping; outside it, Cross-Memory
 * Attach, as the cma transport.  The algorithm is the same on every rank
 * either way (it was chosen before anyone looked at a buffer), so ranks
 * whose buffers differ in kind still agree on every step; only the copy
 * underneath differs.  The first range a rank copies by CMA from each peer
 * is reported at STRATA_VERBOSE=1, and STRATA_STATS counts the bytes of
 * each kind. */
#include "transport/mapped.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/arena.h"
#include "transport/cma.h"
#include "util/log.h"
#include "util/stats.h"

struct peer {
    pid_t pid;              /* 0: empty slot */
    uintptr_t base;         /* the peer's arena, at its addresses */
    size_t reserved;
    int fd;                 /* our descriptor of its memfd */
    unsigned char *local;   /* where its arena appears here */
    _Atomic size_t mapped;  /* bytes of it mapped here */
    _Atomic int said;       /* a CMA fallback from it was reported */
};

/* Open addressing by pid; sized at the probe to at least twice the peers. */
static struct peer *peers;
static size_t npeers_cap;
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long bytes_mapped, bytes_fallback;

/* This process's counts, and STRATA_STATS's per-transport bytes. */
static void count(int mapped, size_t len)
{
    atomic_fetch_add_explicit(mapped ? &bytes_mapped : &bytes_fallback, len, memory_order_relaxed);
    if (strata_stats_enabled()) strata_stats_transport_bytes(mapped ? "map" : "cma", len);
}

void strata_map_counts(unsigned long long *mapped, unsigned long long *fallback)
{
    *mapped = atomic_load_explicit(&bytes_mapped, memory_order_relaxed);
    *fallback = atomic_load_explicit(&bytes_fallback, memory_order_relaxed);
}

static struct peer *lookup(pid_t pid)
{
    if (!npeers_cap) return NULL;
    for (size_t i = (size_t)pid % npeers_cap, n = 0; n < npeers_cap; n++, i = (i + 1) % npeers_cap) {
        if (peers[i].pid == pid) return &peers[i];
        if (!peers[i].pid) return NULL;
    }
    return NULL;
}

/* Maps more of the peer's arena, up to the memfd's size, so that `need`
 * bytes from its start are mapped.  0, or -1 (not that far: the range is
 * not the peer's arena memory). */
static int extend(struct peer *pe, size_t need)
{
    pthread_mutex_lock(&grow_lock);
    /* Relaxed: the lock orders this with the extension that set it. */
    size_t have = atomic_load_explicit(&pe->mapped, memory_order_relaxed);
    int rc = 0;
    if (need > have) {
        struct stat st;
        size_t size = !fstat(pe->fd, &st) && st.st_size > 0 ? (size_t)st.st_size : 0;
        if (size > pe->reserved) size = pe->reserved;
        if (size < need ||
            mmap(pe->local + have, size - have, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                 pe->fd, (off_t)have) == MAP_FAILED)
            rc = -1;
        else
            /* Release: a thread that sees the new length sees the mapping. */
            atomic_store_explicit(&pe->mapped, size, memory_order_release);
    }
    pthread_mutex_unlock(&grow_lock);
    return rc;
}

/* The local address of len bytes at the peer's `remote`, or NULL if they
 * are not all in its arena. */
static void *translate(pid_t pid, const void *remote, size_t len)
{
    struct peer *pe = lookup(pid);
    uintptr_t r = (uintptr_t)remote;
    if (!pe || r < pe->base || r - pe->base > pe->reserved || len > pe->reserved - (r - pe->base))
        return NULL;
    size_t end = r - pe->base + len;
    /* Acquire: pairs with extend's release (the mapping is in place). */
    if (end > atomic_load_explicit(&pe->mapped, memory_order_acquire) && extend(pe, end))
        return NULL;
    return pe->local + (r - pe->base);
}

static void fallback_said(pid_t pid, const void *remote)
{
    struct peer *pe = lookup(pid);
    if (pe && atomic_exchange_explicit(&pe->said, 1, memory_order_relaxed)) return;
    strata_verbose(1, "transport map: a buffer of pid %d at %p is outside its arena "
                   "(not from MPI_Alloc_mem or the shared heap): copied by CMA instead "
                   "(said once per peer)", (int)pid, remote);
}

static int read_piece(pid_t pid, void *remote, void *local, size_t len)
{
    void *at = translate(pid, remote, len);
    if (at) {
        memcpy(local, at, len);
        count(1, len);
        return 0;
    }
    fallback_said(pid, remote);
    count(0, len);
    return strata_cma_read(pid, remote, local, len);
}

static int write_piece(pid_t pid, void *remote, void *local, size_t len)
{
    void *at = translate(pid, remote, len);
    if (at) {
        memcpy(at, local, len);
        count(1, len);
        return 0;
    }
    fallback_said(pid, remote);
    count(0, len);
    return strata_cma_write(pid, remote, local, len);
}

static int map_readv(pid_t pid, const struct iovec *local, size_t nlocal,
                     const struct iovec *remote, size_t nremote)
{
    /* The lists pairwise, as the cma transport walks them (its walk, with
     * this transport's pieces). */
    return strata_cma_walk(pid, local, nlocal, remote, nremote, read_piece);
}

static int map_writev(pid_t pid, const struct iovec *local, size_t nlocal,
                      const struct iovec *remote, size_t nremote)
{
    return strata_cma_walk(pid, local, nlocal, remote, nremote, write_piece);
}

/* Mappings are kept for the process's life (a registration cache that
 * never misses twice), so there is nothing to hand back per call. */
static void *map_map(pid_t pid, const void *remote, size_t len, void **handle)
{
    *handle = NULL;
    void *at = translate(pid, remote, len);
    if (!at) errno = EFAULT;
    else count(1, len);
    return at;
}

static void map_unmap(void *handle) { (void)handle; }

/* Opens and reserves one peer's arena.  0, or -1 with the reason. */
static int attach(const struct strata_arena_where *w, char *why, size_t whylen)
{
    struct peer *pe = NULL;
    for (size_t i = (size_t)w->pid % npeers_cap;; i = (i + 1) % npeers_cap)
        if (!peers[i].pid || peers[i].pid == (pid_t)w->pid) {
            pe = &peers[i];
            break;
        }
    if (pe->pid) return 0; /* attached by an earlier probe */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)w->pid, (int)w->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "cannot open the arena of pid %d (%s: %s)", (int)w->pid, path,
                 strerror(errno));
        return -1;
    }
    void *local = mmap(NULL, w->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
    if (local == MAP_FAILED) {
        snprintf(why, whylen, "cannot reserve %llu bytes of address space for the arena of pid "
                 "%d: %s", (unsigned long long)w->reserved, (int)w->pid, strerror(errno));
        close(fd);
        return -1;
    }
    pe->fd = fd;
    pe->base = (uintptr_t)w->base;
    pe->reserved = w->reserved;
    pe->local = local;
    atomic_init(&pe->mapped, 0);
    atomic_init(&pe->said, 0);
    pe->pid = (pid_t)w->pid;
    return 0;
}

/* CMA must work (it serves every buffer outside an arena), then every rank
 * must reach every other's arena. */
static int map_probe(MPI_Comm node_comm, char *why, size_t whylen)
{
    int ok = strata_cma_probe(node_comm, why, whylen);
    int size;
    PMPI_Comm_size(node_comm, &size);
    struct strata_arena_where mine = {0};
    char arena_why[160] = "";
    if (strata_arena_create(arena_why, sizeof arena_why) == 0) strata_arena_where(&mine);
    else mine.pid = getpid();
    struct strata_arena_where *all = calloc((size_t)size, sizeof *all);
    size_t cap = 16;
    while (cap < 2 * (size_t)size) cap *= 2;
    if (!peers && all) {
        peers = calloc(cap, sizeof *peers);
        npeers_cap = peers ? cap : 0;
    }
    /* Every rank joins the exchange whatever happened above. */
    int rc = PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all ? all : &mine,
                            all ? (int)sizeof mine : 0, MPI_BYTE, node_comm);
    if (!all || !peers || rc != MPI_SUCCESS) {
        free(all);
        if (ok) snprintf(why, whylen, "out of memory for the arenas' table");
        return 0;
    }
    if (!mine.base && ok) {
        snprintf(why, whylen, "%s", arena_why);
        ok = 0;
    }
    for (int r = 0; ok && r < size; r++) {
        if (all[r].pid == mine.pid) continue;
        if (!all[r].base) {
            snprintf(why, whylen, "another rank (pid %d) has no arena", (int)all[r].pid);
            ok = 0;
        } else if (attach(&all[r], why, whylen)) {
            ok = 0;
        }
    }
    free(all);
    return ok;
}

/* A copy through the mapping is one memcpy (the machine's cold memcpy,
 * coll/model.c's memcpy_beta) after a translation of a few instructions;
 * the first touch of each page of a fresh mapping adds a minor fault,
 * once.  Ranges outside arenas cost what cma costs. */
const struct strata_transport strata_transport_map = {
    .name = "map",
    .summary = "peers' arenas (MPI_Alloc_mem, STRATA_SHARED_HEAP) mapped once, copied with "
               "memcpy; other buffers by Cross-Memory Attach",
    .features = STRATA_XPORT_READ_PEER | STRATA_XPORT_WRITE_PEER | STRATA_XPORT_MAP_PEER,
    .cost = {.alpha = 0.02, .beta = 5e-5, .lock = 0, .page = 4096},
    .falls_back_to = "cma", /* which serves its buffers outside arenas already */
    .read = map_readv,
    .write = map_writev,
    .map = map_map,
    .unmap = map_unmap,
    .probe = map_probe,
    .unchanged = strata_cma_unchanged,
};
