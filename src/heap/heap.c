/* The shared heap (STRATA_SHARED_HEAP=1, off by default): allocations of
 * the malloc family of at least STRATA_SHARED_HEAP_MIN bytes (64 KiB) come
 * from this process's arena (shm/arena.h), so the big buffers of an
 * unmodified application become memory that the node's ranks map, and its
 * collectives copy with memcpy and reduce in place (the map transport).
 *
 * These definitions replace glibc's malloc family in the whole process (as
 * glibc documents for replacement allocators); everything that is not a
 * large allocation with the heap on goes to glibc's own entry points
 * (__libc_malloc & co.), which needs no dlsym and so no bootstrap: the
 * first malloc of the dynamic loader works like any other.  Internal
 * calls never allocate: the arena's bookkeeping comes from mmap.
 *
 * Trade-offs (docs/USAGE.md): the arena's pages are shared memory (counted
 * as shmem, not anonymous memory; a big block freed is punched back at
 * once); allocations are whole pages; fork gives the child private copies
 * of live blocks (a copy of their contents at fork time); a block that
 * grows past the threshold by realloc stays in glibc's heap; with a
 * sanitizer or valgrind, which replace malloc themselves, the heap is off
 * and MPI_Init says so. */
#include "heap/heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/arena.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern char **environ;

#define DEFAULT_MIN ((size_t)64 << 10)

/* 0: not decided yet; 1 on; -1 off.  Relaxed: every thread that decides
 * reaches the same answer from the same environment. */
static _Atomic int state;
static _Atomic size_t min_bytes = DEFAULT_MIN;
static const char *refused; /* why the heap is off though asked for, or NULL */

/* A size as the configuration reads it (digits, then K, M or G), without
 * allocating; 0 if malformed. */
static size_t parse_size(const char *s)
{
    size_t v = 0;
    if (!s || !*s) return 0;
    for (; *s >= '0' && *s <= '9'; s++) v = v * 10 + (size_t)(*s - '0');
    if (*s == 'K' || *s == 'k') v <<= 10, s++;
    else if (*s == 'M' || *s == 'm') v <<= 20, s++;
    else if (*s == 'G' || *s == 'g') v <<= 30, s++;
    return *s ? 0 : v;
}

/* The one reader of strata's variables besides config/: the heap must
 * decide at the process's first malloc, before MPI_Init parses the
 * configuration, and without allocating. */
static int decide(void)
{
    /* Before the loader has set the environment up, ask again later. */
    if (!environ) return -1;
    const char *on = getenv("STRATA_SHARED_HEAP");
    int v = -1;
    if (on && !strcmp(on, "1")) {
        const char *pre = getenv("LD_PRELOAD");
        size_t m = parse_size(getenv("STRATA_SHARED_HEAP_MIN"));
        if (m) atomic_store_explicit(&min_bytes, m, memory_order_relaxed);
        /* valgrind's replacements do not reach this library's malloc, so
         * its blocks would escape memcheck: refuse under it.  Sanitizers
         * are found by strata_heap_enabled (their malloc is not this one). */
        if (pre && strstr(pre, "vgpreload"))
            refused = "valgrind replaces malloc (LD_PRELOAD)";
        else
            v = 1;
    }
    atomic_store_explicit(&state, v, memory_order_relaxed);
    return v;
}

/* A sanitizer's runtime allocates before it is set up, through whatever
 * malloc the process has: this library's, if it defined one, which then
 * runs before the sanitizer can and crashes every process the library is
 * preloaded into (mpirun included).  Sanitizer builds therefore replace
 * nothing, and the heap is refused there as it would be anyway. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STRATA_HEAP_REPLACES_MALLOC 0
#else
#define STRATA_HEAP_REPLACES_MALLOC 1
#endif

#if STRATA_HEAP_REPLACES_MALLOC
static inline int heap_on(size_t bytes)
{
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(s == 0, 0)) s = decide();
    return s > 0 && bytes >= atomic_load_explicit(&min_bytes, memory_order_relaxed);
}

void *malloc(size_t n)
{
    if (heap_on(n)) {
        void *p = strata_arena_alloc(n, 0, 0, STRATA_ARENA_HEAP);
        if (p) return p;
    }
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (heap_on(bytes)) {
        void *p = strata_arena_alloc(bytes, 0, 1, STRATA_ARENA_HEAP);
        if (p) return p;
    }
    return __libc_calloc(n, size);
}

void free(void *p)
{
    /* Blocks of the arena that are not heap blocks (MPI_Alloc_mem's, or no
     * block at all) go to glibc, which reports the bad free as it would. */
    if (strata_arena_contains(p) && strata_arena_free(p, STRATA_ARENA_HEAP)) return;
    __libc_free(p);
}

void *realloc(void *p, size_t n)
{
    size_t have = p ? strata_arena_size_of(p, STRATA_ARENA_HEAP) : 0;
    if (!have) return __libc_realloc(p, n); /* glibc's block (or none) stays glibc's */
    if (n == 0) {
        free(p);
        return NULL;
    }
    if (n <= have) return p; /* whole pages: it fits where it is */
    void *q = malloc(n);
    if (!q) return NULL;
    memcpy(q, p, have);
    free(p);
    return q;
}

void *reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

/* Aligned forms: arena blocks are page-aligned already; larger alignments
 * are carved from the arena as asked. */
static void *aligned(size_t align, size_t n)
{
    if (heap_on(n)) {
        void *p = strata_arena_alloc(n, align, 0, STRATA_ARENA_HEAP);
        if (p) return p;
    }
    return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (!align || (align & (align - 1)) || align % sizeof(void *)) return EINVAL;
    void *p = aligned(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (!align || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

void *memalign(size_t align, size_t n)
{
    /* glibc rounds a bad alignment up to a power of two; so does its own. */
    if (!align || (align & (align - 1))) return __libc_memalign(align, n);
    return aligned(align, n);
}

void *valloc(size_t n) { return heap_on(n) ? aligned(4096, n) : __libc_valloc(n); }

void *pvalloc(size_t n)
{
    size_t up = (n + 4095) / 4096 * 4096;
    return heap_on(up) ? aligned(4096, up ? up : 4096) : __libc_pvalloc(n);
}

size_t malloc_usable_size(void *p)
{
    size_t have = p ? strata_arena_size_of(p, STRATA_ARENA_HEAP) : 0;
    if (have) return have;
    /* glibc's own, found once; dlsym allocates nothing when it succeeds. */
    typedef size_t (*usable_fn)(void *);
    static _Atomic(usable_fn) libc_usable;
    usable_fn f = atomic_load_explicit(&libc_usable, memory_order_relaxed);
    if (!f) {
        f = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
        atomic_store_explicit(&libc_usable, f, memory_order_relaxed);
    }
    return f && p ? f(p) : 0;
}

/* This library's malloc itself, whoever else defines one. */
extern __typeof(malloc) strata_heap_own_malloc
    __attribute__((alias("malloc"), visibility("hidden"), copy(malloc)));

#endif

int strata_heap_enabled(size_t *min, const char **why_off)
{
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) s = decide();
    /* A sanitizer linked into the program defines malloc ahead of this
     * library: then nothing reaches the heap.  Asked here, never from
     * malloc (dlsym may allocate), and only once the heap was asked for. */
    static _Atomic int checked;
    if (s > 0 && !atomic_exchange_explicit(&checked, 1, memory_order_relaxed)) {
#if STRATA_HEAP_REPLACES_MALLOC
        void *used = dlsym(RTLD_DEFAULT, "malloc");
        if (used && used != (void *)strata_heap_own_malloc) {
#else
        {
#endif
            refused = "another allocator (a sanitizer?) replaces malloc ahead of strata";
            atomic_store_explicit(&state, -1, memory_order_relaxed);
            s = -1;
        }
    }
    if (min) *min = atomic_load_explicit(&min_bytes, memory_order_relaxed);
    if (why_off) *why_off = refused;
    return s > 0;
}
