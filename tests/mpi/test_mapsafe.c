/* The safety of memory that peers map (issue 19, Safety): blocks freed and
 * handed out again while the other ranks keep their mappings of the arena,
 * and fork in an application whose shared heap is on.
 *
 * 1. Reuse.  Each rank in turn is the owner: it allocates a block, the
 *    other ranks read it through their mapping (Bcast from it, Allreduce and
 *    Gather with it as an operand), the owner frees it and allocates again
 *    (the arena hands out the same range: checked, or the case would test
 *    nothing) with new contents, and the collectives run again: every rank
 *    must see the new contents, never the old ones nor the zero pages of a
 *    range the free gave back to the kernel.  Then the freed range is split
 *    (two half blocks, the second at an offset no block had before).  Both
 *    kinds: MPI_Alloc_mem/MPI_Free_mem and malloc/free of the shared heap;
 *    a size kept for reuse (256 KiB) and one punched back at free (2 MiB).
 * 2. fork (docs/USAGE.md): every rank forks while its arena holds blocks
 *    that peers have mapped.  The child (no MPI calls, ends with _exit)
 *    writes into its copies of the blocks, allocates and frees large blocks
 *    (from the C library: a forked child's arena serves nothing) and frees
 *    the inherited heap block (which must not give the parent's pages back
 *    to the kernel).  The parent's blocks keep their contents, its arena
 *    still serves, and collectives on old and new blocks are right.
 *
 * Run with STRATA_SHARED_HEAP=1 STRATA_SHARED_HEAP_MIN=16K.  In a
 * sanitizer build the heap must be refused with a reason (MPI_Init prints
 * it); the heap cases then check only results.  Every copy from a peer must
 * have gone through a mapping (no CMA fallback: all buffers are arena
 * blocks). */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "context/runtime.h"
#include "heap/heap.h"
#include "shm/arena.h"
#include "transport/mapped.h"

static int rank, size, failures, heap_on;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            if (++failures > 20) MPI_Abort(MPI_COMM_WORLD, 1);                              \
        }                                                                                  \
    } while (0)

enum kind { K_MPI, K_HEAP };
static const char *kind_name[] = {"MPI_Alloc_mem", "malloc"};

static void *get(enum kind k, size_t n)
{
    void *p = NULL;
    if (k == K_MPI) {
        CHECK(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p) == MPI_SUCCESS, "MPI_Alloc_mem");
        CHECK(strata_arena_owns(p, STRATA_ARENA_MPI), "MPI_Alloc_mem(%zu) not from the arena", n);
    } else {
        p = malloc(n);
        CHECK(p != NULL, "malloc(%zu)", n);
        if (heap_on) CHECK(strata_arena_owns(p, STRATA_ARENA_HEAP), "malloc(%zu) not from the arena", n);
    }
    return p;
}

static void put(enum kind k, void *p)
{
    if (k == K_MPI) CHECK(MPI_Free_mem(p) == MPI_SUCCESS, "MPI_Free_mem");
    else free(p);
}

/* Element i of rank r's data for salt s: int32 so that sums are exact. */
static int32_t val(int r, size_t i, int s)
{
    return (int32_t)(((uint32_t)i * 2654435761u) ^ (uint32_t)(r * 40503 + s * 977 + 1));
}

static void fill(int32_t *b, size_t count, int r, int s)
{
    for (size_t i = 0; i < count; i++) b[i] = val(r, i, s);
}

/* First element of b that is not rank r's data for salt s, or count. */
static size_t first_bad(const int32_t *b, size_t count, int r, int s)
{
    for (size_t i = 0; i < count; i++)
        if (b[i] != val(r, i, s)) return i;
    return count;
}

/* Collectives on `data` (the owner's block, salt s, count elements): peers
 * read it through their mappings.  Every rank's own buffers are of kind k. */
static void use(enum kind k, int owner, int32_t *data, size_t count, int s, const char *what)
{
    size_t bytes = count * sizeof(int32_t);
    int32_t *mine = rank == owner ? data : get(k, bytes);
    if (rank != owner) memset(mine, 0xee, bytes);
    MPI_Bcast(mine, (int)count, MPI_INT32_T, owner, MPI_COMM_WORLD);
    size_t bad = first_bad(mine, count, owner, s);
    CHECK(bad == count, "%s, %s %zu B owner %d: Bcast element %zu is %d, expected %d", what,
          kind_name[k], bytes, owner, bad, bad < count ? mine[bad] : 0,
          bad < count ? val(owner, bad, s) : 0);

    /* Allreduce: every rank's operand is the owner's data (Bcast above),
     * so the sum is size times it; the owner's operand is its own block. */
    int32_t *sum = get(k, bytes);
    MPI_Allreduce(mine, sum, (int)count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < count; i++)
        if ((uint32_t)sum[i] != (uint32_t)val(owner, i, s) * (uint32_t)size) {
            CHECK(0, "%s, %s %zu B owner %d: Allreduce element %zu wrong", what, kind_name[k],
                  bytes, owner, i);
            break;
        }
    put(k, sum);

    /* Gather to the next rank: it reads the owner's block as one operand. */
    int root = (owner + 1) % size;
    int32_t *all = rank == root ? get(k, bytes * (size_t)size) : NULL;
    MPI_Gather(mine, (int)count, MPI_INT32_T, all, (int)count, MPI_INT32_T, root, MPI_COMM_WORLD);
    for (int q = 0; rank == root && q < size; q++) {
        bad = first_bad(all + (size_t)q * count, count, owner, s);
        CHECK(bad == count, "%s, %s %zu B owner %d: Gather block %d element %zu wrong", what,
              kind_name[k], bytes, owner, q, bad);
    }
    if (all) put(k, all);
    if (rank != owner) put(k, mine);
}

/* ---- 1. Free and allocate again while peers map the arena. */
static void reuse(enum kind k, int owner, size_t bytes)
{
    size_t count = bytes / sizeof(int32_t);
    int32_t *p = NULL, *q = NULL;
    if (rank == owner) fill(p = get(k, bytes), count, owner, 1);
    use(k, owner, p, count, 1, "before free");
    if (rank == owner) {
        put(k, p);
        q = get(k, bytes);
        if (k == K_MPI || heap_on)
            CHECK(q == p, "%s of %zu B after a free came at %p, not the freed %p (first fit "
                  "should reuse it: the case tests nothing)", kind_name[k], bytes, (void *)q,
                  (void *)p);
        fill(q, count, owner, 2);
    }
    use(k, owner, q, count, 2, "reallocated");

    /* The freed range split: a half block at the start, another after it. */
    int32_t *h1 = NULL, *h2 = NULL;
    if (rank == owner) {
        put(k, q);
        h1 = get(k, bytes / 2);
        h2 = get(k, bytes / 2);
        fill(h1, count / 2, owner, 3);
        fill(h2, count / 2, owner, 4);
    }
    use(k, owner, h2, count / 2, 4, "second half block");
    use(k, owner, h1, count / 2, 3, "first half block");
    if (rank == owner) {
        put(k, h1);
        put(k, h2);
    }
}

/* ---- 2. fork with blocks that peers map. */
static void fork_case(void)
{
    const size_t bytes = 1 << 20, count = bytes / sizeof(int32_t);
    int32_t *m = get(K_MPI, bytes), *h = get(K_HEAP, bytes);
    fill(m, count, rank, 5);
    fill(h, count, rank, 6);
    for (int owner = 0; owner < size; owner++) use(K_MPI, owner, owner == rank ? m : NULL, count, 5, "before fork");

    fflush(NULL); /* the child must not write the parent's buffered output again */
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        int bad = 0;
        struct strata_arena_where w;
        strata_arena_where(&w);
        bad |= w.base != 0;        /* 1: the child has no arena to offer */
        memset(m, 'C', bytes);     /* its private copies, */
        memset(h, 'C', bytes);
        for (int i = 0; i < 4; i++) { /* its own allocations from the C library */
            char *b = malloc(bytes * 2);
            bad |= !b ? 2 : strata_arena_contains(b) ? 4 : 0;
            if (b) memset(b, i, bytes * 2), free(b);
        }
        free(h);                   /* must not punch the parent's pages */
        _exit(bad);
    }
    int status = -1;
    if (child > 0) CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the forked child failed (status %#x: 1 it has an arena, 2/4 its malloc failed or came "
          "from the arena)", status);
    size_t bad = first_bad(m, count, rank, 5);
    CHECK(bad == count, "after fork: the parent's MPI_Alloc_mem block changed at element %zu", bad);
    bad = first_bad(h, count, rank, 6);
    CHECK(bad == count, "after fork: the parent's heap block changed at element %zu", bad);

    /* The parent's arena still serves; old and new blocks in collectives. */
    int32_t *fresh = get(K_MPI, bytes);
    fill(fresh, count, rank, 7);
    for (int owner = 0; owner < size; owner++) {
        use(K_HEAP, owner, owner == rank ? h : NULL, count, 6, "after fork, heap block");
        use(K_MPI, owner, owner == rank ? fresh : NULL, count, 7, "after fork, new block");
    }
    put(K_MPI, fresh);
    put(K_MPI, m);
    put(K_HEAP, h);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const struct strata_runtime *rt = strata_runtime();
    CHECK(rt && !strcmp(rt->transport->name, "map"), "transport is %s, expected map",
          rt ? rt->transport->name : "none (strata off)");
    const char *why = NULL;
    heap_on = strata_heap_enabled(NULL, &why);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    CHECK(!heap_on && why, "a sanitizer build: the shared heap must be refused with a reason");
#else
    CHECK(heap_on, "the shared heap is off (%s): run with STRATA_SHARED_HEAP=1", why ? why : "not asked");
#endif

    const size_t sizes[] = {256 << 10, 2 << 20}; /* kept for reuse; punched at free */
    for (int k = K_MPI; k <= K_HEAP; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int owner = 0; owner < size; owner++) reuse((enum kind)k, owner, sizes[i]);
    fork_case();

    unsigned long long mapped, fallback, any_mapped, any_fallback;
    strata_map_counts(&mapped, &fallback);
    MPI_Allreduce(&mapped, &any_mapped, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&fallback, &any_fallback, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (size > 1) {
        CHECK(any_mapped > 0, "no byte went through a mapping");
        if (heap_on) CHECK(any_fallback == 0, "%llu bytes went by CMA (all buffers are arena blocks)",
                           any_fallback);
    }
    int all_failures;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s mapsafe on %d ranks (heap %s): %llu bytes mapped, %llu by CMA\n",
               all_failures ? "FAIL" : "PASS", size, heap_on ? "on" : "refused", any_mapped,
               any_fallback);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
