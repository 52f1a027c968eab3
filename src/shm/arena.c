/* The arena: a memfd mapped into a reserved range, carved into page runs.
 *
 * Bookkeeping, all in private pages from mmap (no malloc: the shared heap
 * calls in here from malloc):
 * - run_pages[page]: pages of the live allocation that starts at that page
 *   (0 elsewhere), its kind in the top bit, so free and the size of an
 *   allocation cost one load;
 * - a sorted array of free extents, merged with their neighbours on free,
 *   each marked dirty or known zero (fresh growth, punched holes), so
 *   calloc clears only what may hold old data.
 * Large allocations are few, so first fit over the array is cheap.  One
 * mutex guards it all: allocation is rare next to the copies it feeds. */
#include "shm/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE ((size_t)4096)
#define ALIGN_BASE ((size_t)2 << 20)  /* base and growth steps: 2 MiB */
#define EXT_CAP ((size_t)1 << 16)     /* free extents the array holds */
#define PUNCH_MIN ((size_t)1 << 20)   /* freed runs this big go back to the kernel */
#define KIND_BIT 0x80000000u          /* run_pages: an MPI_Alloc_mem block */

struct extent {
    size_t off, len; /* bytes from base */
    int dirty;       /* may hold old data */
};

static struct {
    unsigned char *base; /* NULL: no arena */
    size_t top;          /* bytes of the memfd, mapped at base */
    int fd;
    int forked_child;    /* a fork's child: private copy, no new allocations */
    uint32_t *run_pages; /* [STRATA_ARENA_RESERVE / PAGE] */
    struct extent *ext;  /* [EXT_CAP], sorted by off */
    size_t next;
    struct strata_arena_usage usage;
} A = {.fd = -1};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* A.base for readers that take no lock (free() asks on every call): set
 * once, after the reservation exists, never cleared. */
static _Atomic(unsigned char *) base_pub;

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* ---- Free extents. */

/* Index of the first extent at or after off. */
static size_t ext_find(size_t off)
{
    size_t lo = 0, hi = A.next;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (A.ext[mid].off < off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Gives [off, off + len) back to the free extents, merged with neighbours.
 * With the array full and nothing to merge, the run is lost to the arena
 * (still counted as mapped): rare enough to accept over failing free. */
static void ext_insert(size_t off, size_t len, int dirty)
{
    size_t i = ext_find(off);
    int left = i > 0 && A.ext[i - 1].off + A.ext[i - 1].len == off;
    int right = i < A.next && off + len == A.ext[i].off;
    if (left && right) {
        A.ext[i - 1].len += len + A.ext[i].len;
        A.ext[i - 1].dirty |= dirty | A.ext[i].dirty;
        memmove(&A.ext[i], &A.ext[i + 1], (A.next - i - 1) * sizeof *A.ext);
        A.next--;
    } else if (left) {
        A.ext[i - 1].len += len;
        A.ext[i - 1].dirty |= dirty;
    } else if (right) {
        A.ext[i].off = off;
        A.ext[i].len += len;
        A.ext[i].dirty |= dirty;
    } else if (A.next < EXT_CAP) {
        memmove(&A.ext[i + 1], &A.ext[i], (A.next - i) * sizeof *A.ext);
        A.ext[i] = (struct extent){off, len, dirty};
        A.next++;
    }
}

/* Takes `len` bytes at an address aligned to `align` from the first extent
 * that holds them.  The offset, or (size_t)-1; *dirty says whether the run
 * may hold old data. */
static size_t ext_take(size_t len, size_t align, int *dirty)
{
    for (size_t i = 0; i < A.next; i++) {
        struct extent e = A.ext[i];
        uintptr_t at = round_up((uintptr_t)A.base + e.off, align);
        size_t start = at - (uintptr_t)A.base;
        if (start + len > e.off + e.len) continue;
        *dirty = e.dirty;
        /* The extent keeps what lies before the run; what lies after goes
         * back in (that insert cannot need a new slot when head is empty). */
        size_t head = start - e.off, tail = e.off + e.len - (start + len);
        if (head) A.ext[i].len = head;
        else {
            memmove(&A.ext[i], &A.ext[i + 1], (A.next - i - 1) * sizeof *A.ext);
            A.next--;
        }
        if (tail) ext_insert(start + len, tail, e.dirty);
        return start;
    }
    return (size_t)-1;
}

/* ---- Growth. */

/* Extends the memfd and its mapping so a run of `len` at `align` fits at
 * the end.  0, or -1 with errno. */
static int grow(size_t len, size_t align)
{
    size_t want = A.top + len + (align > PAGE ? align : 0);
    size_t step = A.top / 4 > ALIGN_BASE ? A.top / 4 : ALIGN_BASE;
    size_t new_top = round_up(want > A.top + step ? want : A.top + step, ALIGN_BASE);
    if (new_top > STRATA_ARENA_RESERVE) new_top = round_up(want, PAGE);
    if (new_top > STRATA_ARENA_RESERVE) {
        errno = ENOMEM;
        return -1;
    }
    /* The size first: a peer that sees the new size may map up to it. */
    if (ftruncate(A.fd, (off_t)new_top)) return -1;
    if (mmap(A.base + A.top, new_top - A.top, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
             A.fd, (off_t)A.top) == MAP_FAILED)
        return -1;
    ext_insert(A.top, new_top - A.top, 0); /* fresh memfd pages read as zero */
    A.top = new_top;
    A.usage.mapped = new_top;
    A.usage.grows++;
    return 0;
}

/* ---- fork: the child gets private copies of the live allocations, at the
 * same addresses, and stops serving new ones. */

static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&lock); }

static void after_fork_child(void)
{
    if (A.base && !A.forked_child) {
        size_t at = 0;
        for (size_t i = 0; i <= A.next; i++) {
            size_t end = i < A.next ? A.ext[i].off : A.top;
            if (end > at) {
                size_t len = end - at;
                void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (copy != MAP_FAILED) {
                    memcpy(copy, A.base + at, len);
                    /* The system call itself: some libraries (UCX's memory
                     * hooks, under MPICH) replace mremap with a version
                     * that drops the new address of MREMAP_FIXED. */
                    syscall(SYS_mremap, copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
                            A.base + at);
                }
            }
            if (i < A.next) at = A.ext[i].off + A.ext[i].len;
        }
        close(A.fd);
        A.fd = -1;
        A.forked_child = 1;
    }
    pthread_mutex_unlock(&lock);
}

/* ---- Creation. */

static void *private_pages(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int create_locked(char *why, size_t whylen)
{
    if (A.base) return 0;
    if (A.forked_child) {
        snprintf(why, whylen, "a forked child has no arena of its own");
        return -1;
    }
    A.run_pages = private_pages(STRATA_ARENA_RESERVE / PAGE * sizeof *A.run_pages);
    A.ext = private_pages(EXT_CAP * sizeof *A.ext);
    unsigned char *r = mmap(NULL, STRATA_ARENA_RESERVE + ALIGN_BASE, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int fd = memfd_create("strata-arena", MFD_CLOEXEC);
    /* A memfd is made mode 0777; peers reach it through /proc/PID/fd, which
     * the kernel guards with ptrace's checks, and 0600 adds the file's own:
     * what docs/USAGE.md promises. */
    if (!A.run_pages || !A.ext || r == MAP_FAILED || fd < 0 || fchmod(fd, 0600)) {
        snprintf(why, whylen, "cannot set up the shared arena: %s", strerror(errno));
        if (r != MAP_FAILED) munmap(r, STRATA_ARENA_RESERVE + ALIGN_BASE);
        if (fd >= 0) close(fd);
        return -1;
    }
    /* Keep a 2 MiB-aligned reservation (so are the growth steps: huge pages
     * stay possible), give the rest back. */
    unsigned char *base = (unsigned char *)round_up((uintptr_t)r, ALIGN_BASE);
    if (base > r) munmap(r, (size_t)(base - r));
    munmap(base + STRATA_ARENA_RESERVE, ALIGN_BASE - (size_t)(base - r));
    A.base = base;
    A.fd = fd;
    A.top = 0;
    /* Relaxed: a thread that sees it holds no block of the arena yet, and
     * one that got a block got it through the lock. */
    atomic_store_explicit(&base_pub, base, memory_order_relaxed);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    return 0;
}

int strata_arena_create(char *why, size_t whylen)
{
    pthread_mutex_lock(&lock);
    int rc = create_locked(why, whylen);
    pthread_mutex_unlock(&lock);
    return rc;
}

void strata_arena_where(struct strata_arena_where *out)
{
    pthread_mutex_lock(&lock);
    int usable = A.base && !A.forked_child;
    out->pid = getpid();
    out->base = usable ? (uint64_t)(uintptr_t)A.base : 0;
    out->reserved = usable ? STRATA_ARENA_RESERVE : 0;
    out->fd = usable ? A.fd : -1;
    pthread_mutex_unlock(&lock);
}

/* ---- Allocation. */

void *strata_arena_alloc(size_t bytes, size_t align, int zero, enum strata_arena_kind kind)
{
    if (align < PAGE) align = PAGE;
    if ((align & (align - 1)) || bytes > STRATA_ARENA_RESERVE || bytes >= (size_t)KIND_BIT * PAGE) {
        errno = bytes > STRATA_ARENA_RESERVE ? ENOMEM : EINVAL;
        return NULL;
    }
    size_t len = round_up(bytes ? bytes : 1, PAGE);
    pthread_mutex_lock(&lock);
    char why[128];
    int dirty = 0;
    size_t off = (size_t)-1;
    if (!A.forked_child && !create_locked(why, sizeof why)) {
        off = ext_take(len, align, &dirty);
        if (off == (size_t)-1 && !grow(len, align)) off = ext_take(len, align, &dirty);
    }
    if (off != (size_t)-1) {
        A.run_pages[off / PAGE] = (uint32_t)(len / PAGE) | (kind ? KIND_BIT : 0);
        A.usage.in_use += len;
        A.usage.allocations++;
    }
    pthread_mutex_unlock(&lock);
    if (off == (size_t)-1) {
        if (!errno) errno = ENOMEM;
        return NULL;
    }
    if (zero && dirty) memset(A.base + off, 0, len);
    return A.base + off;
}

int strata_arena_contains(const void *ptr)
{
    const unsigned char *p = ptr, *b = atomic_load_explicit(&base_pub, memory_order_relaxed);
    return b && p >= b && p < b + STRATA_ARENA_RESERVE;
}

/* Pages of the live allocation of that kind starting at ptr, 0 if none
 * (lock held). */
static size_t run_of(const void *ptr, enum strata_arena_kind kind)
{
    if (!strata_arena_contains(ptr)) return 0;
    size_t off = (size_t)((const unsigned char *)ptr - A.base);
    if (off % PAGE || off >= A.top) return 0;
    uint32_t v = A.run_pages[off / PAGE];
    if (!v || !(v & KIND_BIT) != !kind) return 0;
    return v & ~KIND_BIT;
}

int strata_arena_owns(const void *ptr, enum strata_arena_kind kind)
{
    if (!strata_arena_contains(ptr)) return 0;
    pthread_mutex_lock(&lock);
    int owned = run_of(ptr, kind) != 0;
    pthread_mutex_unlock(&lock);
    return owned;
}

size_t strata_arena_size_of(const void *ptr, enum strata_arena_kind kind)
{
    if (!strata_arena_contains(ptr)) return 0;
    pthread_mutex_lock(&lock);
    size_t n = run_of(ptr, kind);
    pthread_mutex_unlock(&lock);
    return n * PAGE;
}

int strata_arena_free(void *ptr, enum strata_arena_kind kind)
{
    if (!strata_arena_contains(ptr)) return 0;
    pthread_mutex_lock(&lock);
    size_t n = run_of(ptr, kind);
    if (n) {
        size_t off = (size_t)((unsigned char *)ptr - A.base), len = n * PAGE;
        A.run_pages[off / PAGE] = 0;
        A.usage.in_use -= len;
        A.usage.allocations--;
        /* Big runs go back to the kernel; the pages then read as zero, here
         * and in peers' mappings (no peer reads them: the call that exposed
         * them has returned on every rank before the owner can free). */
        int punched = len >= PUNCH_MIN && A.fd >= 0 &&
                      !fallocate(A.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
                                 (off_t)len);
        ext_insert(off, len, !punched);
    }
    pthread_mutex_unlock(&lock);
    return n != 0;
}

void strata_arena_usage(struct strata_arena_usage *out)
{
    pthread_mutex_lock(&lock);
    *out = A.usage;
    pthread_mutex_unlock(&lock);
}
