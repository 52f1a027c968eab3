/* Where the code of a small collective's per-call path goes (issue 14).
 *
 * An 8-byte call on a quiet machine costs less in instructions than in the
 * code lines it fetches again: between two strata calls, strata-bench (and
 * an application) runs the host MPI and its own code, which evict strata's
 * from the 32 KiB instruction cache, so every line of strata's path is
 * fetched anew per call (scripts/icache-count.sh counts them).  The
 * functions of that path are marked STRATA_HOT: the compiler places them
 * together (.text.hot), so the path is fewer, fuller, adjacent lines that
 * the hardware prefetches in a run.  The error reports they may call are
 * STRATA_COLD, so the branches to them move out of the hot lines. */
#ifndef STRATA_UTIL_HOT_H
#define STRATA_UTIL_HOT_H

#define STRATA_HOT __attribute__((hot))
#define STRATA_COLD __attribute__((cold))

#endif
