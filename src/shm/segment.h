/* Shared segments in /dev/shm for the ranks of one node.
 *
 * One rank creates the segment (mode 0600, a name made of the user id, the
 * creator's pid, a serial and random bits, so another user's or another
 * job's segment can never collide), sizes it with posix_fallocate so a full
 * /dev/shm is an error now rather than a bus error later, and the others
 * attach by name.  The creator unlinks it as soon as everyone has attached:
 * from then on only the mappings keep it alive, and a crash leaves nothing
 * in /dev/shm. */
#ifndef STRATA_SEGMENT_H
#define STRATA_SEGMENT_H

#include <stddef.h>

#define STRATA_SEGMENT_NAME_MAX 96

struct strata_segment {
    void *base;
    size_t bytes;
    char name[STRATA_SEGMENT_NAME_MAX];
    int created;   /* this process created it (and so must unlink it) */
    int linked;    /* the name still exists in /dev/shm */
};

/* Creates and maps a segment of `bytes`.  0, or -1 with the reason. */
int strata_segment_create(struct strata_segment *seg, size_t bytes, unsigned long serial,
                          char *why, size_t whylen);

/* Maps the segment another rank created.  0, or -1 with the reason. */
int strata_segment_attach(struct strata_segment *seg, const char *name, size_t bytes,
                          char *why, size_t whylen);

/* Removes the name (creator only; harmless to repeat). */
void strata_segment_unlink(struct strata_segment *seg);

/* Unmaps (and unlinks if still linked). */
void strata_segment_release(struct strata_segment *seg);

/* Cap on the bytes of segments this process holds at once (STRATA_SHM_MAX). */
void strata_segment_set_cap(size_t bytes);

#endif
