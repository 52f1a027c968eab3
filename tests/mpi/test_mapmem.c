/* The map transport and the memory it maps (issue 19): collectives on
 * buffers from MPI_Alloc_mem or the shared heap, mixed with buffers outside
 * any arena, across sizes that cross every threshold, with the arena growing
 * while peers map it; MPI_Free_mem of foreign pointers; the shared heap's
 * malloc family and fork.  Results are checked against values computed here.
 *
 *   --mem=alloc   every rank's buffers from MPI_Alloc_mem (default)
 *   --mem=heap    from malloc/calloc/posix_memalign (run with STRATA_SHARED_HEAP=1)
 *   --mem=mixed   even ranks MPI_Alloc_mem, odd ranks private mmap (never an arena)
 *   --expect-fallback=0|1  whether some copies must go by CMA (mixed) or none may
 *
 * Run with STRATA_TRANSPORT=map (or STRATA_SHARED_HEAP=1, which implies it)
 * and STRATA_STATS set: the per-transport counters show which way bytes went. */
#include <mpi.h>

#include <dirent.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context/runtime.h"
#include "heap/heap.h"
#include "shm/arena.h"
#include "transport/mapped.h"
#include "util/stats.h"

static int rank, size, failures;
static const char *mem = "alloc";
static int expect_fallback = -1;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            if (++failures > 20) MPI_Abort(MPI_COMM_WORLD, 1);                              \
        }                                                                                  \
    } while (0)

/* ---- Buffers of the kind the run asks for. */

enum kind { K_ALLOC, K_HEAP, K_PRIVATE };

static enum kind my_kind(void)
{
    if (!strcmp(mem, "heap")) return K_HEAP;
    if (!strcmp(mem, "mixed")) return rank % 2 ? K_PRIVATE : K_ALLOC;
    return K_ALLOC;
}

static void *get(size_t n)
{
    void *p = NULL;
    switch (my_kind()) {
    case K_ALLOC:
        CHECK(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p) == MPI_SUCCESS, "MPI_Alloc_mem");
        CHECK(strata_arena_owns(p, STRATA_ARENA_MPI), "MPI_Alloc_mem(%zu) not from the arena", n);
        break;
    case K_HEAP:
        if (posix_memalign(&p, 64, n)) p = NULL;
        CHECK(p != NULL, "posix_memalign");
        if (n >= 64 << 10)
            CHECK(strata_arena_owns(p, STRATA_ARENA_HEAP), "malloc(%zu) not from the arena", n);
        break;
    case K_PRIVATE:
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(p != MAP_FAILED, "mmap");
        break;
    }
    return p;
}

static void put(void *p, size_t n)
{
    switch (my_kind()) {
    case K_ALLOC: CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "MPI_Free_mem"); break;
    case K_HEAP: free(p); break;
    case K_PRIVATE: munmap(p, n); break;
    }
}

/* The byte at i of rank r's data, for salt s. */
static unsigned char val(int r, size_t i, int s)
{
    return (unsigned char)(i * 131 + (size_t)r * 7 + (size_t)s * 29 + (i >> 12));
}

static int32_t ival(int r, size_t i) { return (int32_t)((i * 2654435761u) ^ (unsigned)(r * 40503)); }

/* ---- The collectives, one size each. */

static void bcast(size_t n, int root)
{
    unsigned char *b = get(n);
    for (size_t i = 0; i < n; i++) b[i] = rank == root ? val(root, i, 1) : 0xee;
    MPI_Bcast(b, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (b[i] != val(root, i, 1)) bad = i;
    CHECK(bad == n, "Bcast %zu bytes root %d: byte %zu wrong", n, root, bad);
    put(b, n);
}

static void allgather(size_t n)
{
    unsigned char *s = get(n), *r = get(n * (size_t)size);
    for (size_t i = 0; i < n; i++) s[i] = val(rank, i, 2);
    unsigned long long mapped0, mapped1, fallback;
    strata_map_counts(&mapped0, &fallback);
    MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    strata_map_counts(&mapped1, &fallback);
    /* Every rank's block in an arena (from 64 KiB in the heap): whatever the
     * model chose (copy-in/copy-out's direct read, or a single-copy read),
     * each rank reads every other block through its mapping (issue 19). */
    if (strcmp(mem, "mixed") && n >= 64 << 10)
        CHECK(mapped1 - mapped0 >= (unsigned long long)(size - 1) * n,
              "Allgather %zu bytes: %llu bytes read through mappings, expected at least %llu", n,
              mapped1 - mapped0, (unsigned long long)(size - 1) * n);
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < n; i++)
            if (r[(size_t)q * n + i] != val(q, i, 2)) {
                CHECK(0, "Allgather %zu bytes: block %d byte %zu wrong", n, q, i);
                q = size;
                break;
            }
    put(s, n);
    put(r, n * (size_t)size);
}

static void gather_scatter(size_t n, int root)
{
    unsigned char *s = get(n), *r = get(n * (size_t)size);
    for (size_t i = 0; i < n; i++) s[i] = val(rank, i, 3);
    MPI_Gather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rank == root)
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < n; i++)
                if (r[(size_t)q * n + i] != val(q, i, 3)) {
                    CHECK(0, "Gather %zu bytes root %d: block %d byte %zu wrong", n, root, q, i);
                    q = size;
                    break;
                }
    if (rank == root)
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < n; i++) r[(size_t)q * n + i] = val(q, i, 4);
    memset(s, 0xee, n);
    MPI_Scatter(r, (int)n, MPI_BYTE, s, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; i++)
        if (s[i] != val(rank, i, 4)) {
            CHECK(0, "Scatter %zu bytes root %d: byte %zu wrong", n, root, i);
            break;
        }
    put(s, n);
    put(r, n * (size_t)size);
}

static void alltoall(size_t n)
{
    size_t all = n * (size_t)size;
    unsigned char *s = get(all), *r = get(all);
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < n; i++) s[(size_t)q * n + i] = val(rank * 16 + q, i, 5);
    MPI_Alltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < n; i++)
            if (r[(size_t)q * n + i] != val(q * 16 + rank, i, 5)) {
                CHECK(0, "Alltoall %zu bytes: block from %d byte %zu wrong", n, q, i);
                q = size;
                break;
            }
    put(s, all);
    put(r, all);
}

/* Integer sums: exact, so the expected value is computed here. */
static void reduce(size_t n, int root)
{
    size_t count = n / sizeof(int32_t) ? n / sizeof(int32_t) : 1, bytes = count * sizeof(int32_t);
    int32_t *s = get(bytes), *r = get(bytes);
    for (size_t i = 0; i < count; i++) s[i] = ival(rank, i);
    for (int allr = 0; allr < 2; allr++) {
        memset(r, 0xee, bytes);
        if (allr) MPI_Allreduce(s, r, (int)count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        else MPI_Reduce(s, r, (int)count, MPI_INT32_T, MPI_SUM, root, MPI_COMM_WORLD);
        if (!allr && rank != root) continue;
        for (size_t i = 0; i < count; i++) {
            uint32_t want = 0;
            for (int q = 0; q < size; q++) want += (uint32_t)ival(q, i);
            if ((uint32_t)r[i] != want) {
                CHECK(0, "%s of %zu ints root %d: element %zu is %d, expected %d",
                      allr ? "Allreduce" : "Reduce", count, root, i, r[i], (int32_t)want);
                break;
            }
        }
    }
    put(s, bytes);
    put(r, bytes);
}

static void all_colls(size_t n)
{
    int roots[2] = {0, size - 1};
    for (int k = 0; k < (size > 1 ? 2 : 1); k++) {
        bcast(n, roots[k]);
        gather_scatter(n, roots[k]);
        reduce(n, roots[k]);
    }
    allgather(n);
    alltoall(n);
}

/* ---- The arena grows while peers map it: a block far larger than
 * anything so far, then collectives on it and on an older block. */
static void growth(void)
{
    struct strata_arena_usage before, after;
    strata_arena_usage(&before);
    unsigned long long want = before.mapped + (24 << 20), big;
    MPI_Allreduce(&want, &big, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    bcast(big, size - 1);
    reduce(8 << 20, 0);
    strata_arena_usage(&after);
    if (my_kind() != K_PRIVATE)
        CHECK(after.grows > before.grows && after.mapped > before.mapped,
              "the arena did not grow (%zu -> %zu bytes mapped)", before.mapped, after.mapped);
}

/* ---- MPI_Free_mem of pointers that are not MPI_Alloc_mem blocks gives
 * what the host MPI gives for the same kind of pointer. */
static void free_mem_foreign(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ours, host;
#ifndef MPICH_VERSION
    /* Open MPI hands a pointer it does not know to free(); MPICH asserts
     * (ends the process), so only Open MPI's answer can be compared here. */
    void *a = malloc(100), *b = malloc(100);
    ours = MPI_Free_mem(a);
    host = PMPI_Free_mem(b);
    CHECK(ours == host, "MPI_Free_mem(malloc'd) gives %d, the host MPI %d", ours, host);
#endif
    /* A block of the host's own goes back to the host. */
    void *h = NULL;
    CHECK(PMPI_Alloc_mem(4096, MPI_INFO_NULL, &h) == MPI_SUCCESS, "PMPI_Alloc_mem");
    CHECK(!strata_arena_contains(h), "the host's MPI_Alloc_mem block lies in the arena");
    CHECK(MPI_Free_mem(h) == MPI_SUCCESS, "MPI_Free_mem of the host's block failed");
    ours = MPI_Free_mem(NULL);
    host = PMPI_Free_mem(NULL);
    CHECK(ours == host, "MPI_Free_mem(NULL) gives %d, the host MPI %d", ours, host);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* Size 0 is the host's to judge (and to give back). */
    void *z = NULL;
    if (MPI_Alloc_mem(0, MPI_INFO_NULL, &z) == MPI_SUCCESS) {
        CHECK(!strata_arena_contains(z) || !z, "MPI_Alloc_mem(0) came from the arena");
        MPI_Free_mem(z);
    }
}

/* ---- The shared heap's malloc family, and fork (before MPI_Init: the
 * heap serves from the first allocation on). */
static int heap_family(void)
{
    int bad = 0, first_bad_line = 0;
#define NOTE_BAD(x) do { if ((x) && !first_bad_line) first_bad_line = __LINE__; bad |= (x); } while (0)
    size_t min;
    if (!strata_heap_enabled(&min, NULL)) return 0;
    unsigned char *p = malloc(1 << 20);
    NOTE_BAD(!strata_arena_owns(p, STRATA_ARENA_HEAP));
    memset(p, 'A', 1 << 20);
    free(p);
    unsigned char *z = calloc(1, 1 << 20); /* likely the same, dirty, pages: must be zero */
    for (size_t i = 0; z && i < (1 << 20); i++) NOTE_BAD(z[i] != 0);
    NOTE_BAD(!strata_arena_owns(z, STRATA_ARENA_HEAP));
    unsigned char *small = malloc(min / 2);
    bad |= strata_arena_contains(small); /* below the threshold: the C library's */
    free(small);
    memset(z, 'Z', 1 << 20);
    z = realloc(z, 3 << 20); /* grows: moves, keeps the contents */
    for (size_t i = 0; z && i < (1 << 20); i++) NOTE_BAD(z[i] != 'Z');
    NOTE_BAD(malloc_usable_size(z) < (3 << 20));
    void *al = NULL;
    NOTE_BAD(posix_memalign(&al, 1 << 21, 1 << 20) || ((uintptr_t)al & ((1 << 21) - 1)));
    NOTE_BAD(!strata_arena_owns(al, STRATA_ARENA_HEAP));
    void *aa = aligned_alloc(1 << 16, 1 << 17);
    NOTE_BAD(!aa || ((uintptr_t)aa & ((1 << 16) - 1)));
    free(aa);
    free(al);
    /* fork: the child writes its copy; the parent's stays as it was. */
    memset(z, 'P', 1 << 20);
    pid_t child = fork();
    if (child == 0) {
        memset(z, 'C', 1 << 20);
        unsigned char *more = malloc(1 << 20); /* served by the C library in the child */
        int ok = more && z[12345] == 'C' && !strata_arena_contains(more);
        free(more);
        free(z);
        _exit(ok ? 0 : 1);
    }
    int status = 1;
    waitpid(child, &status, 0);
    NOTE_BAD(!WIFEXITED(status) || WEXITSTATUS(status) != 0);
    for (size_t i = 0; i < (1 << 20); i++) NOTE_BAD(z[i] != 'P');
    free(z);
    if (bad) fprintf(stderr, "FAIL: the shared heap's malloc family or fork (line %d)\n", first_bad_line);
#undef NOTE_BAD
    return bad;
}

/* The arena's memfd is this user's alone, mode 0600 (docs/USAGE.md says so;
 * memfd_create makes it 0777). */
static void arena_mode(void)
{
    struct strata_arena_where w;
    struct stat st;
    strata_arena_where(&w);
    CHECK(w.base && w.fd >= 0, "this rank has no arena to examine");
    if (!w.base || w.fd < 0) return;
    CHECK(fstat((int)w.fd, &st) == 0, "cannot examine the arena's memfd");
    CHECK((st.st_mode & 0777) == 0600, "the arena's memfd has mode %03o, not 600",
          (unsigned)(st.st_mode & 0777));
}

/* Nothing of this job in /dev/shm. */
static void nothing_in_dev_shm(void)
{
    int pid = getpid(), pids[256];
    MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (rank == 0 && d && (e = readdir(d)))
        for (int q = 0; q < size && q < 256; q++) {
            char tag[32];
            snprintf(tag, sizeof tag, "-%d-", pids[q]);
            CHECK(!(strstr(e->d_name, "strata") && strstr(e->d_name, tag)),
                  "/dev/shm/%s left behind", e->d_name);
        }
    if (d) closedir(d);
}

int main(int argc, char **argv)
{
    int heap_bad = heap_family();
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--mem=", 6)) mem = argv[i] + 6;
        else if (!strncmp(argv[i], "--expect-fallback=", 18)) expect_fallback = atoi(argv[i] + 18);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(!heap_bad, "the shared heap before MPI_Init");
    const struct strata_runtime *rt = strata_runtime();
    CHECK(rt && !strcmp(rt->transport->name, "map"), "transport is %s, expected map",
          rt ? rt->transport->name : "none (strata off)");
    if (!strcmp(mem, "heap")) CHECK(strata_heap_enabled(NULL, NULL), "the shared heap is off");
    arena_mode();

    /* Sizes around the thresholds: the tiny path, the copy-in/copy-out
     * limit (16 KiB), pages, the shared heap's 64 KiB, chunks (256 KiB). */
    const size_t sizes[] = {8, 1000, 4096, 16383, 16385, 65536, 65537, 262145, 1 << 20,
                            (3 << 20) + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) all_colls(sizes[i]);
    growth();
    free_mem_foreign();

    unsigned long long mapped, fallback, any_mapped, any_fallback;
    strata_map_counts(&mapped, &fallback);
    MPI_Allreduce(&mapped, &any_mapped, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&fallback, &any_fallback, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (size > 1) {
        CHECK(any_mapped > 0, "no byte went through a mapping");
        if (expect_fallback == 0)
            CHECK(any_fallback == 0, "%llu bytes went by CMA (expected none)", any_fallback);
        if (expect_fallback == 1)
            CHECK(any_fallback > 0, "no byte went by CMA (expected some: mixed buffers)");
        if (strata_stats_enabled())
            CHECK(strata_stats_local_transport_bytes("map") == mapped,
                  "STRATA_STATS counts %llu mapped bytes, the transport %llu",
                  strata_stats_local_transport_bytes("map"), mapped);
    }
    nothing_in_dev_shm();
    int all_failures;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s mapmem --mem=%s on %d ranks: %llu bytes mapped, %llu by CMA\n",
               all_failures ? "FAIL" : "PASS", mem, size, any_mapped, any_fallback);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
