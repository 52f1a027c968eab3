/* The node data plane of one communicator: its shared control segment, the
 * flag lines of every rank, the per-rank copy-in/copy-out regions, and the
 * flag base that all ranks advance identically.
 *
 * Flag values are never reset.  Every operation takes a base value larger
 * than any value used before (plane->pos + 1) and its flags take values in
 * [base, base + bytes]; a reader waits for "at least" a value, so a writer
 * that has moved on to a later operation still satisfies it.  All ranks
 * compute the same bases because every rank takes part in every collective
 * of the communicator, with the same byte count, and a call whose counts
 * differ after all takes the same share on every rank (coll/agree.h).
 *
 * Copy-in/copy-out regions are double-buffered by operation parity: a rank
 * writes a region of half (op % 2) only after every rank has entered the
 * previous operation, i.e. finished reading what operation op-2 left there. */
#ifndef STRATA_PLANE_H
#define STRATA_PLANE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "shm/flags.h"
#include "shm/segment.h"
#include "shm/wait.h"
#include "topology/hierarchy.h"
#include "transport/transport.h"
#include "util/colls.h"

#define STRATA_MAX_HIER (STRATA_MAX_LEVELS + 2)

/* One flag line: data, then the flag that vouches for it (the base of the
 * op the data is for).  Data first, at the line's alignment: element types
 * such as long double need 16-byte alignment for the vectorised kernels. */
struct strata_line {
    _Alignas(STRATA_CACHE_LINE) unsigned char data[STRATA_CACHE_LINE - sizeof(strata_flag)];
    strata_flag flag;
};

/* The ring of flag-line slots per rank.  More slots let a writer that reads
 * nothing from its readers (a Bcast, Scatter or Gather root's opposite
 * side) go longer without reading their seq lines to learn that a slot is
 * free again: once every STRATA_LINE_SLOTS - 1 ops at most, instead of every
 * op with two slots (issue 19 item 3). */
#define STRATA_LINE_SLOTS 8
#define STRATA_LINES_PER_SLOT 4

/* The ring of call signatures per rank (coll/agree.h), and how often a rank
 * starting a call makes sure nobody lags STRATA_SIG_GUARD calls behind. */
#define STRATA_SIG_SLOTS 16
#define STRATA_SIG_GUARD 8

/* Persistent requests per communicator that get a plane of their own (the
 * first ones by _init order; later ones share the communicator's queue). */
#define STRATA_PLANE_CHANNELS 8
_Static_assert(STRATA_SIG_GUARD * 2 <= STRATA_SIG_SLOTS, "a rank may lead by 2 * GUARD - 1 calls");
_Static_assert(STRATA_LINE_SLOTS >= 2, "a writer must be able to run one op ahead of its readers");

/* Flags of one rank; only that rank writes them.  Groups of flags polled by
 * different readers at different times sit on separate cache lines. */
struct strata_rank_ctl {
    _Alignas(STRATA_CACHE_LINE) strata_flag seq; /* base of the op this rank entered */
    strata_flag buf;                    /* its exposed buffer for that op (CMA) */
    strata_flag acc;                    /* its accumulation buffer for that op (CMA) */
    _Alignas(STRATA_CACHE_LINE) strata_flag progress; /* bytes it holds of the op's data */
    /* Copy-in/copy-out exchange (cico_block.c): the base of the first round
     * of the call in which this rank's stream is read where it lies, at buf;
     * bases are never reused, so an older value means "not this call".  On
     * progress's line: every reader checks it right after acquiring
     * progress, and on seq's line it cost each reader one more line from
     * the writer's core per call (issue 14, 1 KiB rows). */
    strata_flag direct;
    _Alignas(STRATA_CACHE_LINE) strata_flag done[STRATA_MAX_HIER]; /* chunks reduced per level */
    _Alignas(STRATA_CACHE_LINE) strata_flag ack;     /* op finished here and below */
    _Alignas(STRATA_CACHE_LINE) strata_flag arrive;  /* barrier: subtree arrived */
    _Alignas(STRATA_CACHE_LINE) strata_flag release; /* barrier: released */
    /* The wake protocol of shm/wait.h: this rank's state, and the count and
     * futex word of waiters blocked on any flag above.  Written rarely (by
     * waiters about to block), read by this rank after each publish. */
    _Alignas(STRATA_CACHE_LINE) struct strata_wake wake;
    /* Small payloads travel with their flag in the same line (one hand-off
     * per line, and the reader's loads of flag and data hit one line): a
     * ring of STRATA_LINE_SLOTS slots, slot (op number % STRATA_LINE_SLOTS)
     * for an op, each of STRATA_LINES_PER_SLOT lines.  See "The flag lines"
     * below for when a slot may be written again. */
    struct strata_line line[STRATA_LINE_SLOTS][STRATA_LINES_PER_SLOT];
    /* What this rank brings to each call (coll/agree.h): a ring of
     * STRATA_SIG_SLOTS signatures, slot (call number % SLOTS), one cache
     * line each.  A receiving rank of a small call reads its sources' slot
     * after the operation: at 96 bytes a slot straddled two lines (the
     * stamp on the second), two hand-offs per source per call on the
     * reader's path and two lines for the writer to take back (issue 31).
     * What only some calls use is in sig_more below. */
    _Alignas(STRATA_CACHE_LINE) struct strata_call_sig {
        int64_t in;        /* bytes received per block; -2: unused, -1: host */
        int64_t out;       /* bytes sent per block; -2: unused, -1: host */
        int64_t vsent;     /* v-collectives: bytes this rank sends (all blocks) */
        int64_t vrecvd;    /* v-collectives: bytes it receives */
        uint64_t pos;      /* the plane's pos as the call found it (the same
                              everywhere, or the plane is out of step) */
        int32_t coll;      /* enum strata_coll */
        int32_t root;      /* -1: unrooted */
        strata_flag stamp; /* the call number these fields (and sig_more's
                              report) are for */
        unsigned char pad_to_line[STRATA_CACHE_LINE - 7 * 8];
    } sig[STRATA_SIG_SLOTS];
    /* The rest of each signature slot, on lines of its own: written by the
     * rounds and the planes that measure, read by full calls only. */
    _Alignas(STRATA_CACHE_LINE) struct strata_call_sig_more {
        /* Selection that corrects itself (coll/learn.h): this rank's
         * report of its measurements for the call's collective and size
         * class, written (before sig's stamp, which vouches for it) only
         * by a plane that measures anything (a slot never written holds
         * zeros, which no reader takes for a report). */
        int32_t learn_cand; /* the candidate measured (-1: no report) */
        int32_t learn_n;    /* calls measured (at most STRATA_LEARN_SAMPLES counted) */
        double learn_ratio; /* their mean measured / predicted time */
        /* The pairs' round (v-collectives): what this rank found against
         * its own counts, published with veto_stamp = the call number. */
        int32_t veto;      /* MPI error class of the cut receive, or MPI_SUCCESS */
        int32_t veto_rank; /* whose receive it is (-1: none) */
        strata_flag veto_stamp;
        /* Alltoallv: this rank's bytes for each peer lie in its region. */
        strata_flag counts_stamp;
        unsigned char pad_to_line[STRATA_CACHE_LINE - 5 * 8];
    } sig_more[STRATA_SIG_SLOTS];
    /* The planes of the communicator's persistent requests (context.h,
     * strata_ctx_channel): the communicator's rank 0 creates request k's
     * segment at its _init and writes how to attach it here, in its own
     * control lines (the other ranks' slots stay unused), then stamp =
     * STRATA_CHANNEL_READY or STRATA_CHANNEL_FAILED (release); the others
     * attach when their first start of the request runs, and count
     * themselves in attached (rank 0 keeps its descriptor open until all
     * have: context/channel.c). */
    _Alignas(STRATA_CACHE_LINE) struct strata_channel_slot {
        char name[STRATA_SEGMENT_NAME_MAX]; /* the segment (or why it failed) */
        uint64_t bytes;
        strata_flag stamp;
        strata_flag attached; /* ranks that opened it through rank 0's descriptor */
    } channel[STRATA_PLANE_CHANNELS];
};

_Static_assert(sizeof(struct strata_call_sig) == STRATA_CACHE_LINE, "a signature is one line");
_Static_assert(sizeof(struct strata_call_sig_more) == STRATA_CACHE_LINE, "so is the rest of its slot");

/* The states of a channel slot's stamp (0: not published yet). */
enum { STRATA_CHANNEL_READY = 1, STRATA_CHANNEL_FAILED = 2 };

/* Payload bytes of one flag line, and of one slot of lines. */
#define STRATA_TINY_MAX (STRATA_CACHE_LINE - sizeof(strata_flag))
#define STRATA_LINE_SLOT_BYTES (STRATA_LINES_PER_SLOT * STRATA_TINY_MAX)

/* Regions of a rank's copy-in/copy-out area, per parity half. */
enum { STRATA_REGION_IN = 0, STRATA_REGION_ACC0 = 1 };

struct strata_learn;       /* coll/learn.h */
struct strata_learn_entry; /* coll/learn.h */

/* The cost model's last choice for one collective (select.c). */
struct strata_plane_choice {
    int valid;
    size_t block;
    int algo;                      /* enum strata_algo */
    int k;
    double predicted_us;
    const char *why;               /* strata_choice's why */
};

/* One rank's role at one level of a reduction (coll/reduce.c). */
struct level_role {
    int n;          /* participants */
    int *who;       /* participants, in combining order (the plane's part_buf) */
    int me;         /* this rank's index among them */
    int leader;     /* rank receiving the group's result */
};

/* This rank's part in the reductions of one root (coll/reduce.c), kept from
 * call to call while the root stays: the hierarchy never changes, and
 * working it out again took more instructions than an 8-byte reduction
 * itself (issue 14).  Its lists live in part_buf, which nothing else uses. */
struct strata_reduce_plan {
    int root;       /* the tree's root it is for; -1: none yet */
    int nlev;       /* levels this rank takes part in */
    struct level_role role[STRATA_MAX_HIER];
    int ntop;       /* participants of the root's group at the top level */
    int *top;       /* their ranks, in combining order */
};

/* This rank's links in the broadcast tree of one root (coll/bcast.c), kept
 * as the reduction plan is. */
struct strata_bcast_plan {
    int root;       /* -1: none yet */
    int parent;     /* -1 at the root */
    int nchildren;
    int *children;  /* in part_buf, after the reduction plan's lists */
};

struct strata_plane {
    struct strata_segment seg;
    int rank, size;
    const struct strata_hier *hier;
    struct strata_rank_ctl *ctl;   /* [size], in the segment */
    unsigned char *areas;          /* per-rank copy-in/copy-out areas */
    size_t region;                 /* bytes of one region (STRATA_CICO_MAX) */
    int nregions;                  /* per half: IN + one ACC per level */
    size_t area_stride;            /* bytes per rank */
    pid_t *pid;                    /* [size] */
    /* Moves the bytes of every copy between ranks (pull/push below); the
     * segment transport when no single-copy transport works for the whole
     * communicator. */
    const struct strata_transport *xport;
    uint64_t pos;                  /* largest flag value used so far */
    uint64_t cur_base;             /* base of the current op */
    uint64_t all_entered;          /* every rank is known to have entered this op */
    uint64_t prev_base;            /* base of the previous op (0: none) */
    uint64_t ops;                  /* ops so far (region parity) */
    uint64_t slot_base[STRATA_LINE_SLOTS]; /* [n % SLOTS]: base of op number n */
    /* The blocking call in progress, for the agreement (coll/agree.h):
     * its number, whether it published a signature, and the plane as the
     * call found it (a call that disagrees rewinds to it). */
    struct strata_plane_call {
        uint64_t number;
        int open;
        int small;   /* run without waiting for the others' signatures */
        /* A blocking small call at 2 ranks: its signature's code, carried
         * in the flags of the lines it writes (below, "The signature in
         * the line"); 0: none; STRATA_LINE_TAG_LATER: not worked out
         * yet.  lines/good: lines read / whose writer's
         * code was this one. */
        uint64_t line_tag;
        unsigned lines, good;
        struct strata_call_sig mine;
        uint64_t pos, ops, cur_base, prev_base;
    } call;
    void *scratch;                 /* private, for CMA reductions */
    size_t scratch_bytes;
    int *tree_buf;                 /* [4 * size] ints for per-call trees */
    int *part_buf;                 /* [(STRATA_MAX_HIER + 2) * size]: the plans' lists */
    struct strata_reduce_plan plan;
    struct strata_bcast_plan bcast_plan;
    void *acc_scratch;             /* private accumulation buffer (Reduce leaders) */
    unsigned char *dist;           /* [size] enum strata_distance to each rank */
    int stats;                     /* STRATA_STATS is on: count traffic */
    size_t acc_scratch_bytes;
    int acc_scratch_arena;         /* acc_scratch is in the arena (peers map it) */
    struct strata_plane_choice chosen[STRATA_NCOLLS]; /* per enum strata_coll */
    struct strata_learn *learn;    /* what selection measured (coll/learn.h); NULL: nothing yet */
    struct strata_learn_entry *learn_armed; /* the entry this blocking call times, or NULL */
    /* Frees learn (strata_learn_release), set with it: the plane sits below
     * selection, and a direct call from strata_plane_fini closed a loop of
     * files (plane -> learn -> algorithms -> plane). */
    void (*learn_release)(struct strata_plane *p);
};

/* The rank_ctl that holds `flag`, a flag of p's segment. */
static inline struct strata_rank_ctl *strata_plane_ctl_of(const struct strata_plane *p,
                                                          const void *flag)
{
    return &p->ctl[((const char *)flag - (const char *)p->ctl) / sizeof *p->ctl];
}

/* A plane's flags are published with strata_plane_publish (below), which
 * wakes blocked waiters; strata_flag_publish would leave them asleep until
 * their timeout.  Past this point it does not compile. */
#define strata_flag_publish(flag, value) \
    strata_flag_publish_wakes_nobody__use_strata_plane_publish(flag, value)

/* Whether `flag` lies in p's rank_ctl lines (a flag the wake protocol
 * covers). */
static inline int strata_plane_owns(const struct strata_plane *p, const void *flag)
{
    return p && (const char *)flag >= (const char *)p->ctl &&
           (const char *)flag < (const char *)(p->ctl + p->size);
}

/* Publishes a flag of this plane (release, as strata_flag_publish) and
 * wakes the ranks blocked on its owner's flags (shm/wait.h).  Every flag of
 * a plane is published this way, or a blocked waiter would sleep until its
 * timeout. */
static inline void strata_plane_publish(struct strata_plane *p, strata_flag *flag,
                                        uint64_t value)
{
    strata_wake_publish(&strata_plane_ctl_of(p, flag)->wake, flag, value);
}

/* Fills a wait target for `flag` >= value, written by the rank whose pid is
 * `pid` (shm/wait.h); a flag outside the plane's lines is polled, never
 * blocked on. */
static inline void strata_plane_wait_target(const struct strata_plane *p, strata_flag *flag,
                                            uint64_t value, pid_t pid,
                                            struct strata_wait_target *t)
{
    int ours = strata_plane_owns(p, flag);
    t->flag = flag;
    t->value = value;
    t->owner = ours ? &strata_plane_ctl_of(p, flag)->wake : NULL;
    t->self = p ? &p->ctl[p->rank].wake : NULL;
    t->pid = pid;
}

/* Waits until flag >= value with the adaptive policy (shm/wait.h): the
 * blocking form, for waits outside a resumable operation. */
void strata_plane_wait_ge(struct strata_plane *p, strata_flag *flag, uint64_t value, pid_t pid);

/* Bytes of the segment for `size` ranks and `nlevels` hierarchy levels. */
size_t strata_plane_segment_bytes(int size, int nlevels, size_t region);

/* Lays the plane out over an attached segment (every rank, same result). */
int strata_plane_init(struct strata_plane *p, const struct strata_hier *h, int rank, int size,
                      const pid_t *pids, const struct strata_transport *xport, size_t region);

void strata_plane_fini(struct strata_plane *p);

/* Starts an operation that moves `units` bytes (or fewer chunks): returns
 * its base.  Identical on every rank.  Every operation takes at least
 * p->region + 1 flag values, whatever its units, so that an operation of at
 * most one region moves the plane as far as any other (coll/agree.h: a call
 * that disagrees takes an empty one on the ranks that gave it up). */
uint64_t strata_plane_begin(struct strata_plane *p, size_t units);

/* Starts an operation of a single-copy algorithm: exposes where peers read
 * from (buf) and write to (acc), then enters it (publishes seq).  Returns
 * the base, as strata_plane_begin. */
uint64_t strata_plane_enter(struct strata_plane *p, size_t units, const void *buf, void *acc);

/* As strata_plane_enter, also starting this rank's progress at base + done
 * (what it holds of the op's data from the start: 0, or all of it at a
 * root), published with seq.  Progress sits on a line of its own: the
 * operations that never use it call strata_plane_enter, which spares the
 * store. */
uint64_t strata_plane_enter_progress(struct strata_plane *p, size_t units, const void *buf,
                                     void *acc, uint64_t done);

/* Every operation publishes ctl[rank].seq = base once this rank has entered
 * it (and exposed what it exposes).
 *
 * Waits until every rank has entered the previous operation, so this
 * operation's half of the copy-in/copy-out regions is free again. */
void strata_plane_wait_regions_free(struct strata_plane *p);

/* Region `region` of rank r's area, in this operation's parity half. */
unsigned char *strata_plane_region(const struct strata_plane *p, int r, int region);

/* ---- The flag lines (struct strata_line): payloads of at most
 * STRATA_LINE_SLOT_BYTES per rank, with no region, no progress flag and no
 * acknowledgement.
 *
 * Op number n (the same on every rank) uses slot n % STRATA_LINE_SLOTS of
 * every rank's ring.  A writer fills the lines its readers need, data
 * first, then publishes each line's flag = the op's base (release); a
 * reader waits for flag >= base (acquire) and copies the data out of that
 * same line: one hand-off per line, and a line's reads never wait for
 * another line's.  A flag of slot s only grows, and its writer writes it
 * again only in op n + SLOTS, which cannot start before the reader entered
 * op n + 1 (below): so ">= base" means "this op's data".
 *
 * Slot reuse: a rank writes slot s in op n only once every rank has entered
 * op n - SLOTS + 1, i.e. has finished reading what op n - SLOTS left in s
 * (strata_plane_slot_need: that op's base, 0 if the slot is fresh).  What a
 * rank knows of that is plane->all_entered, which grows two ways: reading
 * every other rank's line of an op says they all entered it
 * (strata_plane_known_entered), and when that is not enough the writer
 * waits for every other rank's seq (STRATA_TASK_AWAIT_SLOT_FREE, coll/task.h)
 * and keeps the least it saw (strata_plane_learn_entered).  A writer whose
 * readers never write back (a Bcast or Scatter root, a Gather non-root)
 * thus reads their seq lines once per SLOTS - 1 ops at most. */

/* This op's slot. */
static inline int strata_plane_slot(const struct strata_plane *p)
{
    return (int)((p->ops - 1) % STRATA_LINE_SLOTS);
}

/* The base every rank must have entered before this rank writes this op's
 * slot (0: the slot was never written). */
static inline uint64_t strata_plane_slot_need(const struct strata_plane *p)
{
    uint64_t n = p->ops - 1; /* this op's number */
    return n >= STRATA_LINE_SLOTS ? p->slot_base[(n + 1) % STRATA_LINE_SLOTS] : 0;
}

/* Every other rank is known to have entered the op of `base`. */
static inline void strata_plane_known_entered(struct strata_plane *p, uint64_t base)
{
    if (base > p->all_entered) p->all_entered = base;
}

/* After seeing every other rank's seq reach something: keeps the least seq
 * they show now (acquire: what they did before entering, their reads of
 * this rank's lines included, happens before this rank's next writes). */
void strata_plane_learn_entered(struct strata_plane *p);

/* Copies len bytes of src to bytes [off, off + len) of the stream a slot's
 * lines carry (STRATA_TINY_MAX bytes per line). */
static inline void strata_lines_put(struct strata_line *slot, size_t off, const void *src,
                                    size_t len)
{
    const unsigned char *from = src;
    while (len) {
        size_t i = off / STRATA_TINY_MAX, at = off % STRATA_TINY_MAX;
        size_t n = STRATA_TINY_MAX - at < len ? STRATA_TINY_MAX - at : len;
        memcpy(slot[i].data + at, from, n);
        from += n;
        off += n;
        len -= n;
    }
}

/* Publishes the first n lines of this rank's slot with `value`.  All but
 * the last with a plain release store (each line's data goes with its
 * flag), the last with strata_plane_publish: its wake check comes after
 * every one of the stores, so a waiter blocked on any of the lines is woken
 * (shm/wait.h: the writer's barrier P2 follows all of them). */
static inline void strata_plane_publish_lines(struct strata_plane *p, struct strata_line *slot,
                                              size_t n, uint64_t value)
{
    if (n == 0) n = 1; /* an empty payload still publishes its slot's first line */
    for (size_t i = 0; i + 1 < n; i++)
        atomic_store_explicit(&slot[i].flag, value, memory_order_release);
    strata_plane_publish(p, &slot[n - 1].flag, value);
}

/* ---- The signature in the line (issue 31).  A small call's receiver
 * compares its sources' signatures with its own after the operation
 * (coll/agree.h); reading a source's signature slot is one more cache line
 * from its core per call, where the data's own line is the only hand-off
 * the call needs.  So at 2 ranks, where the one other rank is the source of
 * everything a receiver reads, a blocking small call's writer publishes
 * its flag lines with base + tag instead of base, tag the code of its
 * signature (strata_sig_tag: collective, root and bytes per block, one
 * number each, none of them lost; 0 where they do not fit): every value of
 * [base, base + region] is this operation's (strata_plane_begin), so every
 * wait for ">= base" is unchanged.  A reader notes for each line it read
 * whether the tag is its own call's (strata_plane_line_read); when all
 * were, the look after the operation would have read exactly that
 * signature, and finds nothing: it is skipped (serve/check.c).  Any other
 * tag (a writer that disagrees, a nonblocking writer, a code that did not
 * fit) leaves the look as it was. */

/* The code of signature s on plane p, or 0. */
static inline uint64_t strata_sig_tag(const struct strata_plane *p,
                                      const struct strata_call_sig *s)
{
    long long ref = s->in >= 0 ? s->in : s->out;
    if (p->size != 2 || ref < 0 || ref > (long long)STRATA_LINE_SLOT_BYTES ||
        (s->in >= 0 && s->out >= 0 && s->in != s->out) || s->root < -1 || s->root > 1 ||
        s->coll < 0 || s->coll >= STRATA_NCOLLS || s->vsent != -2 || s->vrecvd != -2)
        return 0;
    uint64_t tag = 1 + ((uint64_t)s->coll * 3 + (uint64_t)(s->root + 1)) *
                           (STRATA_LINE_SLOT_BYTES + 1) + (uint64_t)ref;
    return tag <= p->region ? tag : 0;
}

/* call.line_tag of a blocking small call before its first line: worked
 * out there, so that calls that move no line (Barrier, Reduce) do not. */
#define STRATA_LINE_TAG_LATER UINT64_MAX

/* The open call's tag (0: none). */
static inline uint64_t strata_plane_call_tag(struct strata_plane *p)
{
    if (p->call.line_tag == STRATA_LINE_TAG_LATER)
        p->call.line_tag = strata_sig_tag(p, &p->call.mine);
    return p->call.line_tag;
}

/* The value this rank's flag lines of the operation at `base` carry. */
static inline uint64_t strata_plane_line_value(struct strata_plane *p, uint64_t base)
{
    return base + strata_plane_call_tag(p);
}

/* A reader that has acquired a line's flag (>= base): notes whether its
 * writer's tag is this call's. */
static inline void strata_plane_line_read(struct strata_plane *p, strata_flag *flag,
                                          uint64_t base)
{
    uint64_t tag = strata_plane_call_tag(p);
    if (!tag) return;
    p->call.lines++;
    p->call.good += atomic_load_explicit(flag, memory_order_relaxed) - base == tag;
}

/* Lines a stream of `bytes` occupies. */
static inline size_t strata_lines_of(size_t bytes)
{
    return (bytes + STRATA_TINY_MAX - 1) / STRATA_TINY_MAX;
}

/* ---- Copies between ranks, through the plane's transport.
 *
 * Each copies, counts the bytes for collective `coll` (enum strata_coll)
 * at the distance to `peer` when STRATA_STATS is on, and ends the job with
 * a message naming the peer and the transport if the copy fails (the probe
 * said it works, so a peer died or a buffer is bad).  `remote` is an
 * address the peer exposed (its ctl[].buf or .acc).  Called only on a plane
 * whose transport can reach peers (strata_plane_single_copy), which is what
 * STRATA_NEEDS_SINGLE_COPY in the algorithm registry guarantees. */

/* Whether the plane's transport reaches a peer's memory in one copy. */
static inline int strata_plane_single_copy(const struct strata_plane *p)
{
    return strata_transport_single_copy(p->xport);
}

/* len bytes at `remote` in rank peer into local. */
void strata_plane_pull(struct strata_plane *p, int coll, int peer, const void *remote,
                       void *local, size_t len);

/* len bytes of local to `remote` in rank peer. */
void strata_plane_push(struct strata_plane *p, int coll, int peer, void *remote,
                       const void *local, size_t len);

/* The batched forms: the lists cover the same number of bytes. */
void strata_plane_pullv(struct strata_plane *p, int coll, int peer, const struct iovec *remote,
                        int nremote, const struct iovec *local, int nlocal);
void strata_plane_pushv(struct strata_plane *p, int coll, int peer, const struct iovec *remote,
                        int nremote, const struct iovec *local, int nlocal);

/* The len bytes at `remote` in rank peer, addressable here without a copy
 * (reductions combine straight from them), when the plane's transport maps
 * peers' memory and the whole range is mappable; NULL otherwise, and the
 * caller copies with strata_plane_pull instead.  Counts the bytes as read
 * from the peer.  The answer depends on where the peer's buffer lies, so a
 * caller may take either path but must not let other ranks' steps depend
 * on which. */
const void *strata_plane_map(struct strata_plane *p, int coll, int peer, const void *remote,
                             size_t len);

/* Private scratch of at least `bytes`; NULL if memory runs out. */
void *strata_plane_scratch(struct strata_plane *p, size_t bytes);

/* Private accumulation buffer of at least `bytes`; NULL if memory runs out. */
void *strata_plane_acc_scratch(struct strata_plane *p, size_t bytes);

#endif
