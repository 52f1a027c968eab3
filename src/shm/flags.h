/* The flag protocol: how ranks of one node signal each other through the
 * shared control segment.
 *
 * Every flag is a 64-bit word with exactly one writer; readers never write
 * it.  Flags hold values that only grow (operation sequence numbers, or
 * progress counts that a writer resets only before publishing a new
 * sequence number), so nothing is reset between operations and no atomic
 * read-modify-write is ever needed.  A writer publishes with a release
 * store, after the data the flag vouches for; a reader polls with acquire
 * loads, so once it sees the value it also sees that data.  Each rank's
 * flags live on cache lines of their own (struct strata_rank_ctl), so
 * writers never share a line.
 *
 * A flag may share its line with the data it vouches for (the flag lines
 * of coll/plane.h: data first, the flag last in the line): a reader then
 * needs one line for both, one hand-off instead of two in a row.  The
 * rules stay the same (one writer, the flag written after the data with a
 * release store, the reader's acquire load first); the writer fills such a
 * line again only after every reader is known to have moved past the op
 * that read it (for the flag lines: entered a later op, seen in its seq).
 * Several lines published together may take plain release stores but for
 * the last, which goes through the wake check (coll/plane.h,
 * strata_plane_publish_lines): the check follows every store.
 *
 * Waiting spins a bounded number of polls, then yields the CPU between
 * polls, so that more ranks than cores still make progress; every so often
 * a waiter checks that the peer it waits for is still alive, so a rank
 * killed mid-collective ends the job instead of hanging it.  That is the
 * plain policy of strata_backoff (loops over strata's own requests);
 * collectives wait with the adaptive one of shm/wait.h (spin while it pays,
 * block in the kernel when the cores are shared), whose writers publish
 * through strata_wake_publish. */
#ifndef STRATA_FLAGS_H
#define STRATA_FLAGS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define STRATA_CACHE_LINE 64

typedef _Atomic uint64_t strata_flag;

/* Publish: everything this rank wrote before (data, other flags) becomes
 * visible to a reader that observes `value`. */
static inline void strata_flag_publish(strata_flag *flag, uint64_t value)
{
    atomic_store_explicit(flag, value, memory_order_release);
}

/* Plain store for a value that is published later by a release store of
 * another flag of the same writer (e.g. a progress count reset before the
 * sequence number that makes it meaningful): ordering comes from that
 * later release, so none is needed here. */
static inline void strata_flag_set_relaxed(strata_flag *flag, uint64_t value)
{
    atomic_store_explicit(flag, value, memory_order_relaxed);
}

/* Read: pairs with strata_flag_publish, making the writer's earlier writes
 * visible to this rank. */
static inline uint64_t strata_flag_read(strata_flag *flag)
{
    return atomic_load_explicit(flag, memory_order_acquire);
}

/* One unsuccessful poll of a wait loop (round counts them from 0): spins
 * for the first STRATA_SPIN polls, then yields the CPU. */
void strata_backoff(unsigned long round);

/* Polls a waiter spins before it yields, when its machine has a core for
 * every rank: about 400 us of PAUSEs (25 ns each on Zen 4).  A waiter that
 * yields sooner loses its core to whatever else runs there for a scheduler
 * slice (milliseconds): with 1024 polls (25 us), a 1 MiB Bcast at 2 ranks
 * on this 2-core machine under load took 25x the host MPI's time (its
 * waits never yield); with 20000, level with it. */
#define STRATA_SPIN_DEFAULT 16384

/* The waiting policy (STRATA_SPIN polls before yielding), and its value. */
void strata_flag_set_spin(unsigned polls);
unsigned strata_flag_spin(void);

/* Checks that a peer process still exists; ends the job if it does not.
 * pid 0: a process this one cannot watch (nothing is checked). */
void strata_peer_check_alive(pid_t pid);

/* Whether a wait loop at poll `round` (counted as for strata_backoff) is due
 * to check its peers' liveness: every few milliseconds once it yields. */
int strata_liveness_due(unsigned long round);

#endif
