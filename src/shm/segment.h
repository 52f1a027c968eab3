/* Shared segments for the ranks of one node.
 *
 * One rank creates the segment and sizes it with posix_fallocate, so a lack
 * of memory is an error now rather than a bus error later; the others
 * attach.  Two ways, so that nothing can be left behind:
 *
 * - anonymous (where ranks may open each other's descriptors, which the
 *   kernel allows exactly where Cross-Memory Attach works): a memfd that
 *   never has a name; peers open it through /proc/PID/fd/N.  A crash at any
 *   moment leaves nothing anywhere.
 * - named (otherwise): a file in /dev/shm, mode 0600, named after the user
 *   id, the creator's pid, a serial, random bits (no other user's or job's
 *   segment can collide) and the creator's PID namespace, unlinked as soon
 *   as every rank has attached.  A job killed in that window leaves it
 *   behind, until the next start of strata on the machine removes it
 *   (strata_segment_remove_stale). */
#ifndef STRATA_SEGMENT_H
#define STRATA_SEGMENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define STRATA_SEGMENT_NAME_MAX 96

struct strata_segment {
    void *base;
    size_t bytes;
    char name[STRATA_SEGMENT_NAME_MAX]; /* how peers attach: a /dev/shm name, or
                                           /proc/PID/fd/N of an anonymous one */
    int created;   /* this process created it */
    int linked;    /* the /dev/shm name still exists */
    int fd;        /* creator's descriptor of an anonymous segment, or -1 */
    int accounted; /* counted against STRATA_SHM_MAX */
};

/* Creates and maps a segment of `bytes`, anonymous or named.  0, or -1
 * with the reason. */
int strata_segment_create(struct strata_segment *seg, size_t bytes, int anonymous,
                          unsigned long serial, char *why, size_t whylen);

/* Maps the segment another rank created, by seg->name as the creator set
 * it.  0, or -1 with the reason. */
int strata_segment_attach(struct strata_segment *seg, const char *name, size_t bytes,
                          char *why, size_t whylen);

/* Once every rank has attached: removes the name, or closes the descriptor
 * peers attached through (harmless to repeat). */
void strata_segment_seal(struct strata_segment *seg);

/* Removes the named segments of /dev/shm that this user's processes made in
 * this PID namespace and that outlived their creator (a job killed before
 * every rank had attached): owned by this user, the pid in the name gone.
 * Returns how many. */
int strata_segment_remove_stale(void);

/* Unmaps (and unlinks if still linked). */
void strata_segment_release(struct strata_segment *seg);

/* The same, not counted against the cap (the accounting segment itself). */
int strata_segment_create_uncounted(struct strata_segment *seg, size_t bytes, int anonymous,
                                    char *why, size_t whylen);

/* Cap on the bytes of segments held at once (STRATA_SHM_MAX), per process
 * until the machine's ranks share a counter, then per machine. */
void strata_segment_set_cap(size_t bytes);

/* Counts segments in `counter`, a word the machine's ranks share. */
void strata_segment_share_accounting(_Atomic uint64_t *counter);

#endif
