/* This process's arena: memory that the other ranks of the node can map.
 *
 * One memfd (no name anywhere, mode 0600, gone with the last process that
 * holds it: nothing is ever left in /dev/shm) backs a range of address
 * space reserved once, so the arena grows in place and an address handed
 * out never moves.  Peers reach the memfd through /proc/PID/fd/N (the
 * kernel allows that exactly where Cross-Memory Attach works, as for the
 * anonymous segments), map it once and extend their mapping when an
 * address lies beyond it: the file's size, which only grows, tells them how
 * far the arena reaches (transport/mapped.c).
 *
 * It serves MPI_Alloc_mem (interpose/alloc_mem.c) and, with
 * STRATA_SHARED_HEAP=1, the large allocations of the malloc family
 * (heap/heap.c).  Allocations are whole pages; the bookkeeping lives
 * outside the arena in private pages taken from mmap, never from malloc (the
 * shared heap calls in here from malloc itself).
 *
 * After fork the child gets a private copy of the arena's contents at the
 * same addresses (pthread_atfork), so parent and child never write into
 * each other's memory; the child's arena serves no new allocations. */
#ifndef STRATA_ARENA_H
#define STRATA_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Address space reserved for the arena (bytes): the most it can hold. */
#define STRATA_ARENA_RESERVE ((size_t)64 << 30)

/* How peers find this process's arena (exchanged once at MPI_Init). */
struct strata_arena_where {
    int64_t pid;
    uint64_t base;     /* 0: this process has no arena */
    uint64_t reserved; /* bytes of address space from base */
    int64_t fd;        /* the memfd, for /proc/PID/fd/N */
};

/* Creates the arena if it does not exist yet.  0, or -1 with the reason
 * (the address space or memfd_create was refused). */
int strata_arena_create(char *why, size_t whylen);

/* Where the arena lies; base 0 if there is none (or this is a forked child). */
void strata_arena_where(struct strata_arena_where *out);

/* Who asked for an allocation: freeing it takes the same kind, so that
 * MPI_Free_mem of a malloc'd block (or free of an MPI_Alloc_mem block) is
 * not taken for a valid call. */
enum strata_arena_kind { STRATA_ARENA_HEAP = 0, STRATA_ARENA_MPI = 1 };

/* `bytes` from the arena at an alignment (a power of two; page alignment at
 * least), zero-filled if `zero`.  NULL with errno when the arena is full,
 * cannot grow, or does not exist. */
void *strata_arena_alloc(size_t bytes, size_t align, int zero, enum strata_arena_kind kind);

/* Whether ptr is the start of a live arena allocation of that kind. */
int strata_arena_owns(const void *ptr, enum strata_arena_kind kind);

/* Whether ptr lies in the arena's address range at all. */
int strata_arena_contains(const void *ptr);

/* Frees an allocation: 1 if it was one (the start of a live allocation of
 * that kind), 0 if not (nothing done). */
int strata_arena_free(void *ptr, enum strata_arena_kind kind);

/* Usable bytes of the allocation of that kind at ptr (whole pages), 0 if
 * not one. */
size_t strata_arena_size_of(const void *ptr, enum strata_arena_kind kind);

/* What the arena holds, for strata-info and verbose output. */
struct strata_arena_usage {
    size_t mapped;      /* bytes of the memfd (grown so far) */
    size_t in_use;      /* bytes in live allocations */
    size_t allocations; /* live allocations */
    size_t grows;       /* times it grew */
};
void strata_arena_usage(struct strata_arena_usage *out);

#endif
