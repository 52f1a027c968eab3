/* Per-call agreement on a node's plane: what every rank brings to a call,
 * published before any data moves, so that ranks whose counts disagree (an
 * erroneous program) get an error instead of a hang or a write past a
 * buffer (issue 29).
 *
 * The protocol, stated once:
 *
 *  - Every blocking call on a plane has a number (plane->call.number, the
 *    same on every rank: MPI makes every rank call the same collectives in
 *    the same order).  At its start each rank writes what it brings (struct
 *    strata_call_sig: the collective, the root, the bytes it receives and
 *    sends per block) into slot number % STRATA_SIG_SLOTS of its own ring,
 *    then the slot's stamp = number (release).  A writer only.
 *
 *  - Slot reuse: a rank starting call n with n % STRATA_SIG_GUARD == 0
 *    first waits until every other rank has stamped call n -
 *    STRATA_SIG_GUARD.  So no rank is ever STRATA_SIG_SLOTS calls ahead of
 *    another, and a reader of slot n % SLOTS finds call n's values there or
 *    a stamp below n (that rank has not started call n yet), never a later
 *    call's.  The plane's own protocols already keep ranks within
 *    STRATA_LINE_SLOTS operations of each other, so the wait is almost
 *    always satisfied at once: one read of each rank's line every
 *    STRATA_SIG_GUARD calls.
 *
 *  - Who reads, by the rank's own class for the call (strata_agree_class):
 *    * a *small* call (at most one region of data per rank, through the
 *      segment only, in exactly one plane operation) reads nothing before
 *      it runs: nothing of a user buffer is exposed, so whatever a peer
 *      brings, its copies stay inside its own buffers and the segment.
 *      After its operation a rank that receives reads every signature
 *      stamped so far (its sources' are among them: they stamped before
 *      publishing the data it acquired; one that read nothing, a count of
 *      0, waits for all of them) and reports any difference (a rank that
 *      relayed its data may have held less; at 2 ranks lines that carried
 *      its own call's code stand for that look: plane.h, "The signature in
 *      the line"); and a wait that
 *      stalls (strata_task_run, past its quick spin) looks at every stamped
 *      signature, so a rank waiting for data a disagreeing peer will never
 *      send gives up instead of hanging.
 *    * a *full* call (anything else: single-copy transports expose user
 *      buffers to peers, and larger calls run several operations) waits
 *      for every rank's signature before it starts, and starts only if all
 *      agree.
 *
 *  - Every rank must reach the same calls in the same order, so nothing may
 *    make a different number of them, or a host MPI collective, out of a
 *    count of its own before the agreement saw it.  In a job with devices
 *    (device/device_calls.c) a call above STRATA_CUDA_CHUNK is cut into
 *    one call per piece and may first try a CUDA IPC path that opens with a
 *    host reduction; a rank about to do either first takes the agreement of
 *    the whole call, as a full call of its own (strata_serve_agree_whole,
 *    serve/collectives.h).  Where counts differ across the cut it meets
 *    the one call of a rank below it (the same number) and both refuse as
 *    below; agreed (every rank asked, the counts being equal) it ends
 *    having taken no operation anywhere, and the pieces are calls of their
 *    own.
 *
 *  - A call that disagrees consumes exactly one plane operation on every
 *    rank: a small call always takes exactly one (an empty one when it
 *    moves nothing), so one that ran to the end has; a rank that
 *    gave up (stalled, or full and refused) rewinds its plane to where the
 *    call found it and takes one empty operation (strata_agree_skip).  Every
 *    operation takes at least plane->region flag values (plane.c), the most
 *    a small call's operation uses, so the empty one leaves the plane
 *    exactly where a completed small one does, and the next call's bases
 *    are the same on every rank again.  Flags a given-up operation
 *    published carry values of its range only, below every later base.
 *
 * If you add a field to struct strata_call_sig, set it in strata_agree_open
 * and compare it in strata_agree_compare. */
#ifndef STRATA_COLL_AGREE_H
#define STRATA_COLL_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "coll/plane.h"

/* A side of the call this rank does not use (a Gather non-root's receive
 * side, a Bcast root's ...), or its bytes are left to the host MPI. */
#define STRATA_SIG_UNUSED (-2)
#define STRATA_SIG_HOST (-1)

/* What this rank brings. */
struct strata_sig_args {
    long long in;   /* bytes it receives per block, or STRATA_SIG_UNUSED */
    long long out;  /* bytes it sends per block, or STRATA_SIG_UNUSED */
    int coll;       /* enum strata_coll */
    int root;       /* -1: unrooted */
    int host;       /* this rank leaves the call to the host MPI */
    long long vsent, vrecvd; /* v-collectives: bytes sent and received in all
                                (STRATA_SIG_UNUSED elsewhere) */
};

/* The two classes of strata_agree_class. */
enum strata_agree_mode {
    STRATA_AGREE_SMALL, /* run at once; read the sources' signatures after */
    STRATA_AGREE_FULL   /* every rank's signature before anything moves */
};

/* The outcome for this rank. */
struct strata_agree_verdict {
    int agreed;     /* every rank (that stamped) brought the same call */
    int host;       /* some rank leaves the call to the host MPI */
    int error;      /* this rank's error class (MPI_SUCCESS: its receive is whole) */
    char why[240];  /* what differs, naming ranks (empty when agreed) */
};

/* Publishes this rank's signature for the plane's next call (the ring
 * guard above may wait), and keeps where the plane stands for a rewind.
 * `small`: the call is small (below), whose stamp only looks read: it
 * wakes nobody (a full rank of a call that disagrees, blocked on it,
 * wakes at its timeout), which spares the publish's barrier. */
void strata_agree_open(struct strata_plane *p, const struct strata_sig_args *mine, int small);

/* The class of a call whose largest per-rank payload is `bytes`, whose
 * collective's node path for such a call is (one_operation) or is not one
 * plane operation.  An algorithm that turns out to expose user buffers
 * makes a small call full after all (serve/check.h). */
enum strata_agree_mode strata_agree_class(const struct strata_plane *p, size_t bytes,
                                          int one_operation);

/* Waits for every rank's signature of the open call and judges it. */
void strata_agree_all(struct strata_plane *p, struct strata_agree_verdict *v);

/* Judges the open call from the signatures stamped so far, without
 * waiting (after a small call's operation: its sources' are among them,
 * since they stamped before publishing what it read).  v->error counts only
 * what this rank receives; the others' differences only name the cause.
 * Returns v->agreed. */
int strata_agree_look(struct strata_plane *p, struct strata_agree_verdict *v);

/* The nonblocking form of strata_agree_all: 1 with the verdict once every
 * rank has stamped the open call, else 0 (call again). */
int strata_agree_poll(struct strata_plane *p, struct strata_agree_verdict *v);

/* For a poll that waits long: ends the job (as every strata wait does) if a
 * rank that has not stamped the open call is gone. */
void strata_agree_check_alive(const struct strata_plane *p);

/* A stalled wait's question (strata_task_run): does any stamped signature of
 * the open call differ from this rank's?  0 when no call is open. */
int strata_agree_stalled(struct strata_plane *p);

/* Rewinds the plane to where the open call found it and takes one empty
 * operation (the call's share on every rank, see above). */
void strata_agree_skip(struct strata_plane *p);

/* One empty operation: what a small call that moved nothing (a count of 0)
 * takes, so that every small call takes exactly one. */
void strata_agree_null_task(struct strata_plane *p);

/* ---- The v-collectives' rounds.  Their counts differ per rank by design,
 * so the first round compares only the call and the root; then every rank
 * publishes, in its region, the bytes it sends each rank (free: every rank
 * has finished the operations before this call, which the first round
 * saw), compares what each rank sends it with what it expects, publishes
 * what it found, and reads what everyone found: all reach the same
 * verdict.  Where the region cannot hold one count per rank (more than
 * region / 8 ranks), the totals (vsent, vrecvd of the signatures) are
 * compared instead.  Resumable, for the nonblocking forms. */
struct strata_agree_vround {
    const long long *to;    /* [size] bytes this rank sends each rank (< 0: none) */
    const long long *from;  /* [size] bytes it expects from each rank (< 0: none) */
    int receives;           /* it receives anything (an error if the call is refused) */
    int step;               /* 0: counts not published; 1: published; 2: finding published */
    int error, cut;         /* what it found: the class of rank cut's receive */
};

/* Advances the rounds once the first round agreed.  `wait`: blocks until
 * done; otherwise returns 0 while some rank has not published.  Returns 1
 * when done, with *result MPI_SUCCESS if nobody found anything, else 1 is
 * returned with *result this rank's class (its own finding's where it is
 * the cut rank, else MPI_ERR_OTHER if it receives, else MPI_SUCCESS) and
 * *refused set, the first finding described in why. */
int strata_agree_vround_step(struct strata_plane *p, struct strata_agree_vround *v, int wait,
                             int *result, int *refused, char *why, size_t whylen);

/* ---- The blocking v-collectives under STRATA_CHECK_ARGS=auto (issue 31):
 * no rounds before the call.  The signature is stamped as a small call's;
 * the layout operation's records carry the bytes each writer sends each
 * reader, and each reader compares them with its own counts as it reads
 * (coll/vblock.c).  A call whose data goes through the regions with the
 * layout (the fused path) ends there: a reader that found a difference
 * copied at most the smaller count and reports it (a rank that only sends
 * is not told, as for the small calls above).  Any other call first reads
 * every signature (stamped at the call's start), then publishes what it
 * found in its slot (veto, veto_rank, veto_stamp) and reads everyone's,
 * before any byte moves: all reach the same verdict. */

/* What the v-collectives' engine found against this rank's counts. */
struct strata_agree_vfinding {
    int error;            /* this rank's class (MPI_SUCCESS: nothing found) */
    int refused;          /* the finding round refused the call: nothing moved */
    int from;             /* the writer whose bytes differ from this rank's count */
    long long sent;       /* what it publishes for this rank */
    long long expected;   /* what this rank's count says */
    int finder, cut;      /* refused: the first rank that found, and whose receive */
};

/* Rank r's stamp of its signature for the open call (to wait for). */
strata_flag *strata_agree_stamp_of(struct strata_plane *p, int r);

/* Rank r's stamp of its finding for the open call (to wait for). */
strata_flag *strata_agree_veto_of(struct strata_plane *p, int r);

/* Publishes this rank's finding for the open call: error (MPI_SUCCESS:
 * nothing), cut (whose receive: -1 none). */
void strata_agree_veto_publish(struct strata_plane *p, int error, int cut);

/* Once every rank's finding is stamped: 1 if any rank found something,
 * with *result this rank's class (its own finding's where it is the cut
 * rank, else MPI_ERR_OTHER if it `receives`, else MPI_SUCCESS), *finder and
 * *cut the first finding's; 0 if nobody did. */
int strata_agree_veto_read(struct strata_plane *p, int receives, int *result, int *finder,
                           int *cut);

/* The text of a refusal found by `finder` about rank cut's receive. */
void strata_agree_describe_veto(char *why, size_t whylen, int finder, int cut);

/* Ends the open call (nothing is published). */
static inline void strata_agree_close(struct strata_plane *p)
{
    p->call.open = 0;
    p->call.line_tag = 0; /* later operations' lines carry no call's code */
}

#endif
