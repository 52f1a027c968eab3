/* Block collectives (Gather, Scatter, Allgather, Alltoall) and the
 * broadcast variants of the contention-aware paper, on a communicator's node
 * data plane.  Every algorithm is a function of (plane, arguments); the
 * registry (algorithm.h) names them and says where each can run.
 *
 * Arguments are byte runs: the entry points pack any datatype with holes
 * into a private buffer first, so an algorithm only ever sees contiguous
 * memory, and only the block size (equal on every rank, by the standard)
 * decides anything shared.
 *
 *   collective  send                          recv
 *   Gather      this rank's block;            root: size * block bytes
 *               NULL at the root: in place    (others: unused)
 *               (its block is already at
 *               recv + root * block)
 *   Scatter     root: size * block bytes      this rank's block;
 *               (others: unused)              NULL at the root: in place
 *   Allgather   this rank's block;            size * block bytes
 *               NULL: in place (at
 *               recv + rank * block)
 *   Alltoall    size * block bytes;           size * block bytes
 *               NULL: in place (recv holds
 *               the outgoing blocks)
 *   Bcast       the payload (== recv)         the payload; block = its bytes
 *
 * The flag protocol every CMA algorithm follows (see plane.h, flags.h):
 *  - Expose, then enter, in one call: base = strata_plane_enter(p, units,
 *    buf, acc) (or strata_plane_enter_progress, which also starts
 *    ctl[me].progress), units at least the largest offset the algorithm adds
 *    to base, identical on every rank; buf is where peers read from, acc
 *    where they write to, both published with ctl[me].seq = base.  A peer
 *    waits for seq >= base (acquire) before it reads buf/acc.  Every
 *    algorithm enters this way, even if it exposes nothing (NULL, NULL): the
 *    copy-in/copy-out regions rely on seq (strata_plane_wait_regions_free).
 *  - Steps: ctl[me].progress = base + step (release) after the data of that
 *    step is in place.
 *  - Completion: ctl[me].ack = base once this rank will touch no peer's
 *    memory again in this operation; before returning, a rank waits for the
 *    ack of every rank that may still read or write its buffers (the user
 *    may reuse them as soon as the call returns).
 *  - Waits are the operation's (STRATA_TASK_AWAIT_GE, coll/task.h): the policy
 *    of shm/wait.h (spin, then yield or block, notice dead peers, turn the
 *    host's progress in long waits).  Every copy from or into a peer goes
 *    through strata_plane_pull/push (plane.h): the plane's transport moves
 *    the bytes, STRATA_STATS counts them, a failure ends the job. */
#ifndef STRATA_BLOCK_H
#define STRATA_BLOCK_H

#include <stddef.h>

#include "coll/agree.h"
#include "coll/coll.h"
#include "coll/task.h"
#include "coll/plane.h"

struct strata_block_args {
    const unsigned char *send;
    unsigned char *recv;
    size_t block; /* bytes per rank (Bcast: the payload) */
    int root;     /* Gather, Scatter, Bcast; -1 otherwise */
    int k;        /* the algorithm's factor (throttle, radix, ring distance); >= 1 */
    /* The v-collectives (Gatherv, Scatterv, Allgatherv, Alltoallv): this
     * rank's own layout; NULL there means every rank's block is `block`
     * bytes in rank order (the uniform case).  Unused by the others. */
    const struct strata_vlayout *v;
};

/* What one rank of a v-collective moves, in bytes, from its own arguments
 * only ([size] arrays, the rank's counts times its type size and its
 * displacements times its extent, after packing: see vblock.c):
 *   out_len[r], out_off[r]  what it sends to rank r, where in send;
 *   in_len[q], in_off[q]    what it receives from rank q, where in recv.
 * Entries a rank has no argument for are 0 (Gatherv's non-roots receive
 * nothing, Scatterv's send nothing).  In place: send (or Scatterv's root's
 * recv) NULL, with both sides filled as the standard reads them. */
struct strata_vlayout {
    const size_t *out_len, *out_off;
    const size_t *in_len, *in_off;
    /* NULL, or where each incoming stream lands when it is not one run of
     * recv (the neighbourhood collectives' duplicate edges, paired in
     * another order than they lie in memory): in_off is then unused.  Not
     * copied: it must outlive the operation.  Inside a node only. */
    const struct strata_vpieces *pieces;
    /* NULL, or the four arrays above as one block of 4 * size, in their
     * order, that the operation may change and that outlives it: used in
     * place rather than copied (a blocking v-collective's own, whose copies
     * were a tenth of a small call's engine).  Inside a node only. */
    size_t *lent;
};

/* The stream from rank q lands in pieces first[q] .. first[q + 1] - 1, in
 * stream order: piece k is len[k] bytes at recv + at[k].
 *
 * once: every writer's stream is its one block, the same for all its
 * readers (out_off 0 for each), and each piece from q is a copy of the
 * start of q's block, not the next part of a stream (the neighbourhood
 * allgathers: a block crosses once per reader, however many edges join
 * the pair).  Set alike on every rank of a call: it decides what writers
 * expose and publish. */
struct strata_vpieces {
    const size_t *first; /* [size + 1] */
    const size_t *len, *at;
    int once;
};

struct strata_algorithm;
struct strata_block_task;

/* The single-copy data paths of the v-collectives (vblock.c): readers pull
 * their pieces, or (Gatherv) writers push theirs into the root. */
enum { STRATA_VBLOCK_READS = 1, STRATA_VBLOCK_WRITES = 2 };

/* The data path (0: copy-in/copy-out) of a v-collective algorithm of the
 * table, for a `choose` callback. */
int strata_vblock_path(const struct strata_algorithm *al);

/* What a v-collective's operation returns when it found that the counts
 * differ (v.found says what; the caller reports it, serve/check.h). */
#define STRATA_VBLOCK_FOUND (-3)

/* Ranks whose v-collective layout fits inside the operation (vblock.c). */
#define STRATA_VBLOCK_INLINE 8

/* The v-collectives' part of a block operation (vblock.c). */
struct strata_vblock_state {
    int coll;         /* enum strata_coll: the engine's (strata_coll_engine) */
    int counted;      /* the call's, under which STRATA_STATS counts bytes */
    int single_copy;  /* the data path: STRATA_VBLOCK_READS or _WRITES (single copy),
                       * 0 copy-in/copy-out, -1 not chosen yet */
    int fused;        /* copy-in/copy-out done with the layout, in one operation */
    /* Chooses once the layout is read (v.agreed known, the same on every
     * rank): sets single_copy, the operation's k, and what it reports
     * below.  A callback, so that the node engine does not call up into
     * selection, which lists the engine's algorithms. */
    void (*choose)(struct strata_block_task *o);
    const struct strata_algorithm *al; /* what choose chose (NULL: a named one ran) */
    double predicted_us;
    const char *why;
    int rule;
    size_t agreed;   /* largest block, the same on every rank: what selection sees */
    size_t longest;  /* longest stream of the copy-in/copy-out rounds */
    size_t *arrays;  /* from_addr and from_stream, then (unless lent, strata_vlayout.lent)
                      * the four layout arrays: `small`, or owned */
    size_t *out_len, *out_off, *in_len, *in_off;
    /* [q]: this rank's piece in q's buffer / stream (Gatherv's writes: in
     * the root's receive buffer) */
    size_t *from_addr, *from_stream;
    const struct strata_vpieces *pieces; /* the layout's (NULL: each stream one run) */
    int once;        /* pieces->once: each writer's stream is its one block */
    /* This rank's own block, copied once peers can start on theirs. */
    const unsigned char *own_src;
    unsigned char *own_dst;
    size_t own_len;
    /* Set by the caller after the start: the counts were not compared
     * before the call (a blocking call under STRATA_CHECK_ARGS=auto), so the
     * operation checks them itself (coll/agree.h). */
    int verify;
    struct strata_agree_vfinding found; /* what the layout showed against this rank's counts */
    /* Last (not zeroed at the start): the arrays of up to
     * STRATA_VBLOCK_INLINE ranks, so that a small call allocates nothing. */
    size_t small[6 * STRATA_VBLOCK_INLINE];
};

typedef int (*strata_block_fn)(struct strata_plane *p, const struct strata_block_args *a);

/* The copy-in/copy-out exchange of cico_block.c: rank q exposes a stream of
 * bytes; every reader copies the part of each stream it wants. */
struct strata_block_task;
struct strata_cico_exchange {
    int coll;
    size_t (*stream_len)(const struct strata_block_task *o, int q);
    /* What this rank wants of q's stream: [lo, lo + len) to dst (len 0: none). */
    void (*want)(const struct strata_block_task *o, int q, size_t *lo, size_t *len,
                 unsigned char **dst);
    const unsigned char *my_stream; /* this rank's stream (may be a private copy) */
    /* The stream is my_stream less the bytes [skip_at, skip_at + skip_len)
     * (Alltoall leaves out the block a rank keeps; skip_len 0: none). */
    size_t skip_at, skip_len;
    /* This rank's own block, copied from own_src to own_dst a slice per
     * round, after the round's copy-in, while the others copy theirs in
     * (own_len 0: none). */
    const unsigned char *own_src;
    unsigned char *own_dst;
    size_t own_len;
    /* This rank's stream lies in memory its peers map (transport map): it
     * copies nothing in, and they read all of it from there in round 0 (it
     * waits for their acks before returning).  Needs skip_len 0. */
    int direct;
    /* Some writer may be direct (Allgather on a mapping transport): every
     * rank acknowledges its last read. */
    int acks;
    /* The base of the call's first round: what a direct writer marks. */
    uint64_t first_base;
};

/* Every block algorithm as a resumable operation (coll/task.h): start, then
 * strata_task_step(&o->op) until MPI_SUCCESS.  The fields past `op` are the
 * running algorithm's private state (loop positions that survive a wait);
 * each algorithm uses the ones it needs. */
struct strata_block_task {
    struct strata_task op;
    struct strata_block_args a; /* the call (a copy) */
    uint64_t base;
    int k, i, t, n;
    size_t j, rounds, mine;
    uint64_t ahead;             /* Alltoall pairwise: steps 1..63 read ahead of their turn */
    int slot;                   /* the flag lines' slot of this op (line_block.c) */
    const unsigned char *send;  /* what peers read (the send buffer or a private copy) */
    void *owned;                /* memory the operation frees when it completes */
    struct strata_cico_exchange x;
    struct strata_bcast_task bcast; /* the pipelined Bcast (coll.h), run as a sub-step */
    struct strata_vblock_state v; /* the v-collectives */
};

typedef void (*strata_block_start_fn)(struct strata_block_task *o, struct strata_plane *p,
                                      const struct strata_block_args *a);

/* The start function of a block algorithm (enum strata_algo): its row of
 * the algorithm table (algorithm.c); NULL for a value out of range. */
strata_block_start_fn strata_block_starter(int algo);

/* Blocking: start, then run to completion (coll/task.h).  Inline, so that
 * the algorithm files do not call back into algorithm.c, which lists them. */
static inline int strata_block_run(strata_block_start_fn start, struct strata_plane *p,
                                   const struct strata_block_args *a)
{
    struct strata_block_task o;
    start(&o, p, a);
    return strata_task_run(&o.op);
}

/* Shared memory, two copies, in rounds of the regions (small data; the only
 * way when CMA is off).  One function serves all four block collectives. */
int strata_gather_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_scatter_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_alltoall_cico(struct strata_plane *p, const struct strata_block_args *a);
void strata_gather_cico_start(struct strata_block_task *o, struct strata_plane *p,
                              const struct strata_block_args *a);
void strata_scatter_cico_start(struct strata_block_task *o, struct strata_plane *p,
                               const struct strata_block_args *a);
void strata_allgather_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                 const struct strata_block_args *a);
void strata_alltoall_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                const struct strata_block_args *a);

/* The copy-in/copy-out algorithms' path for small blocks (line_block.c):
 * through the flag lines instead of the regions, when every rank's stream
 * fits one slot of lines.  strata_lines_fit says when (the same on every
 * rank: it depends on the collective, the ranks and the block only); start
 * sets o up with `send`, where this rank's outgoing bytes are (its block,
 * or all its blocks for Scatter's root and Alltoall; unused where it sends
 * nothing), after the caller placed its own block. */
int strata_lines_fit(int coll, int size, size_t block);
void strata_lines_start(struct strata_block_task *o, struct strata_plane *p, int coll,
                        const struct strata_block_args *a, const unsigned char *send);

/* Scatter (paper IV-A): every non-root reads its block from the root at
 * once; the root writes each block in turn; at most k read at once. */
int strata_scatter_parallel_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_scatter_sequential_write(struct strata_plane *p, const struct strata_block_args *a);
int strata_scatter_throttled_read(struct strata_plane *p, const struct strata_block_args *a);
void strata_scatter_parallel_read_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a);
void strata_scatter_sequential_write_start(struct strata_block_task *o, struct strata_plane *p,
                                           const struct strata_block_args *a);
void strata_scatter_throttled_read_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a);

/* Gather (paper IV-B): mirror images of the Scatter algorithms. */
int strata_gather_parallel_write(struct strata_plane *p, const struct strata_block_args *a);
int strata_gather_sequential_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_gather_throttled_write(struct strata_plane *p, const struct strata_block_args *a);
void strata_gather_parallel_write_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a);
void strata_gather_sequential_read_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a);
void strata_gather_throttled_write_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a);

/* Alltoall (paper IV-C): pairwise exchange, partner rank XOR i for a power
 * of two, (rank - i) mod size otherwise; no per-message handshake. */
int strata_alltoall_pairwise(struct strata_plane *p, const struct strata_block_args *a);
void strata_alltoall_pairwise_start(struct strata_block_task *o, struct strata_plane *p,
                                    const struct strata_block_args *a);

/* Allgather (paper V-A; HierKNEM III-D for the hierarchical ones). */
int strata_allgather_ring_neighbour(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_ring_source_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_ring_source_write(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_recursive_doubling(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_bruck(struct strata_plane *p, const struct strata_block_args *a);
void strata_allgather_ring_neighbour_start(struct strata_block_task *o, struct strata_plane *p,
                                           const struct strata_block_args *a);
void strata_allgather_ring_source_read_start(struct strata_block_task *o, struct strata_plane *p,
                                             const struct strata_block_args *a);
void strata_allgather_ring_source_write_start(struct strata_block_task *o, struct strata_plane *p,
                                              const struct strata_block_args *a);
void strata_allgather_recursive_doubling_start(struct strata_block_task *o, struct strata_plane *p,
                                               const struct strata_block_args *a);
void strata_allgather_bruck_start(struct strata_block_task *o, struct strata_plane *p,
                                  const struct strata_block_args *a);
int strata_allgather_hier_leader(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgather_hier_ring(struct strata_plane *p, const struct strata_block_args *a);
void strata_allgather_hier_leader_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a);
void strata_allgather_hier_ring_start(struct strata_block_task *o, struct strata_plane *p,
                                      const struct strata_block_args *a);

/* Bcast variants (paper V-B), beside XHC's pipelined pull (bcast.c). */
int strata_bcast_pipelined(struct strata_plane *p, const struct strata_block_args *a);
int strata_bcast_direct_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_bcast_direct_write(struct strata_plane *p, const struct strata_block_args *a);
int strata_bcast_knomial(struct strata_plane *p, const struct strata_block_args *a);
int strata_bcast_scatter_allgather(struct strata_plane *p, const struct strata_block_args *a);
void strata_bcast_pipelined_start(struct strata_block_task *o, struct strata_plane *p,
                                  const struct strata_block_args *a);
void strata_bcast_direct_read_start(struct strata_block_task *o, struct strata_plane *p,
                                    const struct strata_block_args *a);
void strata_bcast_direct_write_start(struct strata_block_task *o, struct strata_plane *p,
                                     const struct strata_block_args *a);
void strata_bcast_knomial_start(struct strata_block_task *o, struct strata_plane *p,
                                const struct strata_block_args *a);
void strata_bcast_scatter_allgather_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a);
/* Through the segment in rounds whatever the transport (bcast.c). */
int strata_bcast_segment_pipeline(struct strata_plane *p, const struct strata_block_args *a);
void strata_bcast_segment_pipeline_start(struct strata_block_task *o, struct strata_plane *p,
                                         const struct strata_block_args *a);

/* The v-collectives (vblock.c): Gatherv, Scatterv, Allgatherv and
 * Alltoallv (coll, enum strata_coll) on the data path single_copy (1, or 0
 * for copy-in/copy-out) with factor a->k; or, with single_copy -1, the path
 * and factor `choose` picks from the block size the ranks agree on while
 * they read each other's layouts. */
void strata_vblock_start(struct strata_block_task *o, struct strata_plane *p, int coll,
                         const struct strata_block_args *a, int single_copy,
                         void (*choose)(struct strata_block_task *o));

/* What STRATA_STATS and STRATA_VERBOSE call a v-collective's
 * copy-in/copy-out when it ran fused with the layout (vblock.c). */
#define STRATA_VBLOCK_FUSED_NAME "fused-copy-in-copy-out"

/* Why the v-collectives cannot run on plane p (their layout records do not
 * fit one rank's copy-in/copy-out area), or NULL.  The same on every rank. */
const char *strata_vblock_refusal(const struct strata_plane *p);
/* The same for planes of `size` ranks whose copy-in/copy-out rounds hold
 * `round` bytes (across nodes: the largest node, the smallest round). */
const char *strata_vblock_refusal_size(int size, size_t round);

/* The named algorithms of the table (algorithm.c). */
int strata_gatherv_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_gatherv_sequential_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_gatherv_throttled_write(struct strata_plane *p, const struct strata_block_args *a);
int strata_scatterv_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_scatterv_throttled_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgatherv_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_allgatherv_ring_read(struct strata_plane *p, const struct strata_block_args *a);
int strata_alltoallv_cico(struct strata_plane *p, const struct strata_block_args *a);
int strata_alltoallv_ring_read(struct strata_plane *p, const struct strata_block_args *a);
void strata_gatherv_cico_start(struct strata_block_task *o, struct strata_plane *p,
                               const struct strata_block_args *a);
void strata_gatherv_sequential_read_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a);
void strata_gatherv_throttled_write_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a);
void strata_scatterv_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                const struct strata_block_args *a);
void strata_scatterv_throttled_read_start(struct strata_block_task *o, struct strata_plane *p,
                                          const struct strata_block_args *a);
void strata_allgatherv_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                  const struct strata_block_args *a);
void strata_allgatherv_ring_read_start(struct strata_block_task *o, struct strata_plane *p,
                                       const struct strata_block_args *a);
void strata_alltoallv_cico_start(struct strata_block_task *o, struct strata_plane *p,
                                 const struct strata_block_args *a);
void strata_alltoallv_ring_read_start(struct strata_block_task *o, struct strata_plane *p,
                                      const struct strata_block_args *a);

#endif
