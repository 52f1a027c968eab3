/* The node data plane of one communicator: its shared control segment, the
 * flag lines of every rank, the per-rank copy-in/copy-out regions, and the
 * flag base that all ranks advance identically.
 *
 * Flag values are never reset.  Every operation takes a base value larger
 * than any value used before (plane->pos + 1) and its flags take values in
 * [base, base + bytes]; a reader waits for "at least" a value, so a writer
 * that has moved on to a later operation still satisfies it.  All ranks
 * compute the same bases because every rank takes part in every collective
 * of the communicator, with the same byte count.
 *
 * Copy-in/copy-out regions are double-buffered by operation parity: a rank
 * writes a region of half (op % 2) only after every rank has entered the
 * previous operation, i.e. finished reading what operation op-2 left there. */
#ifndef STRATA_PLANE_H
#define STRATA_PLANE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shm/flags.h"
#include "shm/segment.h"
#include "shm/wait.h"
#include "topology/hierarchy.h"
#include "transport/transport.h"
#include "util/colls.h"

#define STRATA_MAX_HIER (STRATA_MAX_LEVELS + 2)

/* Flags of one rank; only that rank writes them.  Groups of flags polled by
 * different readers at different times sit on separate cache lines. */
struct strata_rank_ctl {
    _Alignas(STRATA_CACHE_LINE) strata_flag seq; /* base of the op this rank entered */
    strata_flag buf;                    /* its exposed buffer for that op (CMA) */
    strata_flag acc;                    /* its accumulation buffer for that op (CMA) */
    /* Copy-in/copy-out Allgather: the base of the first round of the call
     * in which this rank's block is read where it lies, at buf (cico_block.c);
     * bases are never reused, so an older value means "not this call". */
    strata_flag direct;
    _Alignas(STRATA_CACHE_LINE) strata_flag progress; /* bytes it holds of the op's data */
    _Alignas(STRATA_CACHE_LINE) strata_flag done[STRATA_MAX_HIER]; /* chunks reduced per level */
    _Alignas(STRATA_CACHE_LINE) strata_flag ack;     /* op finished here and below */
    _Alignas(STRATA_CACHE_LINE) strata_flag arrive;  /* barrier: subtree arrived */
    _Alignas(STRATA_CACHE_LINE) strata_flag release; /* barrier: released */
    /* The wake protocol of shm/wait.h: this rank's state, and the count and
     * futex word of waiters blocked on any flag above.  Written rarely (by
     * waiters about to block), read by this rank after each publish. */
    _Alignas(STRATA_CACHE_LINE) struct strata_wake wake;
    /* Tiny payloads travel with their flag in one line (one hand-off),
     * double-buffered by op parity like the copy-in/copy-out regions. */
    struct {
        /* Data first, at the line's alignment: element types such as long
         * double need 16-byte alignment for the vectorised kernels. */
        _Alignas(STRATA_CACHE_LINE) unsigned char data[STRATA_CACHE_LINE - sizeof(strata_flag)];
        strata_flag flag; /* base of the op the data is for */
    } tiny[2];
    /* STRATA_CHECK_ARGS: what this rank brought to a call (check.c),
     * double-buffered by the parity of the plane's checked calls. */
    _Alignas(STRATA_CACHE_LINE) struct strata_call_sig {
        int64_t bytes;  /* type signature (per block); -1: for the host MPI */
        int32_t coll;   /* enum strata_coll */
        int32_t root;   /* -1: unrooted */
        strata_flag stamp; /* the checked call these fields are for */
    } sig[2];
};

#define STRATA_TINY_MAX (STRATA_CACHE_LINE - sizeof(strata_flag))

/* Regions of a rank's copy-in/copy-out area, per parity half. */
enum { STRATA_REGION_IN = 0, STRATA_REGION_ACC0 = 1 };

/* The cost model's last choice for one collective (select.c). */
struct strata_plane_choice {
    int valid;
    size_t block;
    int algo;                      /* enum strata_algo */
    int k;
    double predicted_us;
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
    uint64_t checks;               /* calls checked so far (STRATA_CHECK_ARGS) */
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
 * its base.  Identical on every rank. */
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
