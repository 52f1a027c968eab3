/* Per-call agreement on a node's plane (the protocol: agree.h). */
#include "coll/agree.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>

#include "coll/coll.h"
#include "coll/learn.h"
#include "util/colls.h"
#include "util/log.h"
#include "util/hot.h"

static struct strata_call_sig *slot_of(const struct strata_plane *p, int r, uint64_t number)
{
    return &p->ctl[r].sig[number % STRATA_SIG_SLOTS];
}

/* The rest of that slot (plane.h): the report and the rounds' findings. */
static struct strata_call_sig_more *more_of(const struct strata_plane *p, int r, uint64_t number)
{
    return &p->ctl[r].sig_more[number % STRATA_SIG_SLOTS];
}

STRATA_HOT void strata_agree_open(struct strata_plane *p, const struct strata_sig_args *mine,
                                  int small)
{
    uint64_t n = ++p->call.number;
    /* The ring guard (agree.h): nobody lags STRATA_SIG_GUARD calls. */
    if (n % STRATA_SIG_GUARD == 0 && n > STRATA_SIG_GUARD)
        for (int r = 0; r < p->size; r++)
            if (r != p->rank)
                strata_plane_wait_ge(p, &slot_of(p, r, n - STRATA_SIG_GUARD)->stamp,
                                     n - STRATA_SIG_GUARD, p->pid[r]);
    struct strata_call_sig *s = slot_of(p, p->rank, n);
    s->in = mine->host ? STRATA_SIG_HOST : mine->in;
    s->out = mine->host ? STRATA_SIG_HOST : mine->out;
    s->coll = mine->coll;
    s->root = mine->root;
    s->vsent = mine->vsent;
    s->vrecvd = mine->vrecvd;
    s->pos = p->pos;
    /* A plane that never measured anything (every small-only program)
     * writes no report: nobody reads one there (learn.h). */
    if (__builtin_expect(p->learn != NULL, 0)) strata_learn_fill(p, s, more_of(p, p->rank, n));
    p->call.mine = *s;
    p->call.mine.stamp = n;
    p->call.open = 1;
    p->call.pos = p->pos;
    p->call.ops = p->ops;
    p->call.cur_base = p->cur_base;
    p->call.prev_base = p->prev_base;
    p->call.small = small;
    p->call.line_tag = 0; /* set by a blocking small call (serve/check.c) */
    p->call.lines = p->call.good = 0;
    /* Release: the fields above go with the stamp. */
    if (small) atomic_store_explicit(&s->stamp, n, memory_order_release);
    else strata_plane_publish(p, &s->stamp, n);
}

STRATA_HOT enum strata_agree_mode strata_agree_class(const struct strata_plane *p, size_t bytes,
                                                     int one_operation)
{
    /* The node paths' own limit for one operation through the segment. */
    size_t cico = strata_tuning()->cico_max, one_region = p->region < cico ? p->region : cico;
    return one_operation && bytes <= one_region ? STRATA_AGREE_SMALL
                                                 : STRATA_AGREE_FULL;
}

/* The verdict over the signatures read so far; `seen` flags which ranks'. */
struct judging {
    const struct strata_call_sig *mine;
    int me;
    struct strata_agree_verdict *v;
    int first_size_rank;            /* the first rank whose sizes set the reference */
    long long ref;                  /* the reference size: every used side must equal it */
};

static void describe_sizes(char *why, size_t len, int a, const struct strata_call_sig *sa, int b,
                           const struct strata_call_sig *sb)
{
    char x[80], y[80];
    if (sa->out >= 0)
        snprintf(x, sizeof x, "rank %d sends %lld bytes per block", a, (long long)sa->out);
    else
        snprintf(x, sizeof x, "rank %d receives %lld bytes per block", a, (long long)sa->in);
    if (sb->out >= 0 && sb->out != sa->out)
        snprintf(y, sizeof y, "rank %d sends %lld", b, (long long)sb->out);
    else
        snprintf(y, sizeof y, "rank %d receives %lld", b, (long long)sb->in);
    snprintf(why, len, "type signatures differ across ranks: %s, %s", x, y);
}

/* Folds rank r's signature into the verdict. */
static void judge_one(struct judging *j, int r, const struct strata_call_sig *s)
{
    struct strata_agree_verdict *v = j->v;
    const struct strata_call_sig *m = j->mine;
    /* Every rank's plane stands where the others' does at a call's start
     * (agree.h): anything else is strata's own fault, said once. */
    static _Atomic int out_of_step;
    if (s->pos != m->pos && !atomic_exchange(&out_of_step, 1))
        strata_error("internal: the plane of call %llu is out of step: rank %d's flag base %llu, "
                     "rank %d's %llu (please report)",
                     (unsigned long long)m->stamp, r, (unsigned long long)s->pos, j->me,
                     (unsigned long long)m->pos);
    if (s->in == STRATA_SIG_HOST || s->out == STRATA_SIG_HOST) {
        if (!v->host)
            snprintf(v->why, sizeof v->why, "rank %d leaves its arguments to the host MPI", r);
        v->host = 1;
        v->agreed = 0;
        return;
    }
    if (s->coll != m->coll || s->root != m->root) {
        if (v->agreed || !v->why[0]) {
            if (s->coll != m->coll)
                snprintf(v->why, sizeof v->why,
                         "ranks disagree on the call: rank %d calls %s, rank %d %s", j->me,
                         strata_coll_name((enum strata_coll)m->coll), r,
                         strata_coll_name((enum strata_coll)s->coll));
            else
                snprintf(v->why, sizeof v->why,
                         "ranks disagree on the root: rank %d names %d, rank %d names %d", j->me,
                         m->root, r, s->root);
        }
        v->agreed = 0;
        if (v->error == MPI_SUCCESS) v->error = s->coll != m->coll ? MPI_ERR_OTHER : MPI_ERR_ROOT;
        return;
    }
    /* Sizes: every side in use must carry the same bytes per block. */
    const long long side[2] = {s->in, s->out};
    for (int k = 0; k < 2; k++) {
        if (side[k] < 0) continue;
        if (j->first_size_rank < 0) {
            j->first_size_rank = r;
            j->ref = side[k];
        } else if (side[k] != j->ref && v->agreed) {
            v->agreed = 0;
        }
    }
    /* This rank's own receive against what r sends it. */
    if (m->in >= 0 && s->out >= 0 && s->out != m->in) {
        if (s->out > m->in) v->error = MPI_ERR_TRUNCATE;
        else if (v->error == MPI_SUCCESS) v->error = MPI_ERR_OTHER;
        describe_sizes(v->why, sizeof v->why, r, s, j->me, m);
    }
}

/* After every signature was folded in: names the disagreement when this
 * rank's own receive was whole. */
static void judge_end(struct strata_plane *p, struct judging *j, const int *seen)
{
    struct strata_agree_verdict *v = j->v;
    if (v->agreed || v->why[0]) return;
    for (int r = 0; r < p->size; r++) {
        if (!seen[r]) continue;
        const struct strata_call_sig *s = r == p->rank ? j->mine : slot_of(p, r, j->mine->stamp);
        if ((s->in >= 0 && s->in != j->ref) || (s->out >= 0 && s->out != j->ref)) {
            int f_rank = j->first_size_rank;
            const struct strata_call_sig *f =
                f_rank == p->rank ? j->mine : slot_of(p, f_rank, j->mine->stamp);
            describe_sizes(v->why, sizeof v->why, f_rank, f, r, s);
            return;
        }
    }
}

static void judge_start(struct strata_plane *p, struct judging *j, struct strata_agree_verdict *v)
{
    v->agreed = 1;
    v->host = 0;
    v->error = MPI_SUCCESS;
    v->why[0] = '\0';
    j->mine = &p->call.mine;
    j->me = p->rank;
    j->v = v;
    j->first_size_rank = -1;
    j->ref = 0;
}

/* Folds in every rank whose signature of the open call is stamped (all of
 * them with `wait`); returns how many were. */
static int judge(struct strata_plane *p, int wait, struct strata_agree_verdict *v)
{
    struct judging j;
    int seen[p->size], n = 0;
    uint64_t number = p->call.mine.stamp;
    judge_start(p, &j, v);
    for (int r = 0; r < p->size; r++) {
        const struct strata_call_sig *s = r == p->rank ? &p->call.mine : slot_of(p, r, number);
        seen[r] = 0;
        if (r != p->rank) {
            strata_flag *stamp = &slot_of(p, r, number)->stamp;
            if (wait) strata_plane_wait_ge(p, stamp, number, p->pid[r]);
            /* Acquire: the fields go with the stamp. */
            else if (strata_flag_read(stamp) < number) continue;
        }
        seen[r] = 1;
        n++;
        judge_one(&j, r, s);
    }
    judge_end(p, &j, seen);
    return n;
}

void strata_agree_all(struct strata_plane *p, struct strata_agree_verdict *v)
{
    judge(p, 1, v);
}

int strata_agree_poll(struct strata_plane *p, struct strata_agree_verdict *v)
{
    return judge(p, 0, v) == p->size;
}

void strata_agree_check_alive(const struct strata_plane *p)
{
    uint64_t n = p->call.mine.stamp;
    for (int r = 0; r < p->size; r++)
        if (r != p->rank && strata_flag_read(&slot_of(p, r, n)->stamp) < n)
            strata_peer_check_alive(p->pid[r]);
}

/* Whether every signature of the open call stamped so far is this rank's
 * call exactly: judge's verdict "agreed" in a few loads and compares per
 * rank, without the verdict's bookkeeping (a small call's look, after
 * every receive: issue 31).  0 sends the caller to judge, which also says
 * what differs. */
STRATA_HOT static int all_stamped_agree(const struct strata_plane *p)
{
    const struct strata_call_sig *m = &p->call.mine;
    uint64_t number = m->stamp;
    /* Every used side of every rank carries the same bytes per block. */
    long long ref = m->in >= 0 ? m->in : m->out;
    if (m->in == STRATA_SIG_HOST || m->out == STRATA_SIG_HOST ||
        (m->in >= 0 && m->out >= 0 && m->in != m->out))
        return 0;
    for (int r = 0; r < p->size; r++) {
        if (r == p->rank) continue;
        struct strata_call_sig *s = slot_of(p, r, number);
        /* Acquire: the fields go with the stamp. */
        if (strata_flag_read(&s->stamp) < number) continue;
        if (s->pos != m->pos || s->coll != m->coll || s->root != m->root) return 0;
        if (s->in == STRATA_SIG_HOST || s->out == STRATA_SIG_HOST) return 0;
        if (ref < 0) ref = s->in >= 0 ? s->in : s->out;
        if ((s->in >= 0 && s->in != ref) || (s->out >= 0 && s->out != ref)) return 0;
    }
    return 1;
}

int strata_agree_look(struct strata_plane *p, struct strata_agree_verdict *v)
{
    if (all_stamped_agree(p)) {
        v->agreed = 1;
        v->host = 0;
        v->error = MPI_SUCCESS;
        v->why[0] = '\0';
        return 1;
    }
    judge(p, 0, v);
    return v->agreed;
}

int strata_agree_stalled(struct strata_plane *p)
{
    if (!p->call.open) return 0;
    struct strata_agree_verdict v;
    judge(p, 0, &v);
    return !v.agreed;
}

STRATA_HOT void strata_agree_null_task(struct strata_plane *p)
{
    /* p->region + 1 values, as any small call's operation.  Entered at
     * once: it reads nothing, so the waits on this rank's entry (regions and
     * slots free again) need not wait for its next real operation. */
    uint64_t base = strata_plane_begin(p, 0);
    strata_plane_publish(p, &p->ctl[p->rank].seq, base);
}

void strata_agree_skip(struct strata_plane *p)
{
    p->pos = p->call.pos;
    p->ops = p->call.ops;
    p->cur_base = p->call.cur_base;
    p->prev_base = p->call.prev_base;
    strata_agree_null_task(p);
}

void strata_agree_describe_veto(char *why, size_t whylen, int finder, int cut)
{
    if (cut == finder || cut < 0)
        snprintf(why, whylen, "counts differ across ranks: what rank %d receives differs from "
                 "what is sent to it", finder);
    else
        snprintf(why, whylen, "counts differ across ranks: rank %d's count for rank %d differs "
                 "from rank %d's", finder, cut, cut);
}

strata_flag *strata_agree_stamp_of(struct strata_plane *p, int r)
{
    return &slot_of(p, r, p->call.mine.stamp)->stamp;
}

strata_flag *strata_agree_veto_of(struct strata_plane *p, int r)
{
    return &more_of(p, r, p->call.mine.stamp)->veto_stamp;
}

void strata_agree_veto_publish(struct strata_plane *p, int error, int cut)
{
    uint64_t n = p->call.mine.stamp;
    struct strata_call_sig_more *me = more_of(p, p->rank, n);
    me->veto = error;
    me->veto_rank = cut;
    /* Release: the finding goes with its stamp. */
    strata_plane_publish(p, &me->veto_stamp, n);
}

int strata_agree_veto_read(struct strata_plane *p, int receives, int *result, int *finder,
                           int *cut)
{
    uint64_t n = p->call.mine.stamp;
    int mine = MPI_SUCCESS, refused = 0;
    for (int r = 0; r < p->size; r++) {
        const struct strata_call_sig_more *o = more_of(p, r, n);
        if (o->veto == MPI_SUCCESS) continue;
        if (!refused) *finder = r, *cut = o->veto_rank;
        refused = 1;
        if (o->veto_rank == p->rank && mine != MPI_ERR_TRUNCATE) mine = o->veto;
    }
    if (refused && mine == MPI_SUCCESS && receives) mine = MPI_ERR_OTHER;
    *result = mine;
    return refused;
}

/* Whether rank r's flag at slot of call n (by its offset in the slot) is
 * stamped; `wait`: waits for it. */
static int stamped(struct strata_plane *p, int r, strata_flag *flag, uint64_t n, int wait)
{
    if (r == p->rank) return 1;
    if (wait) strata_plane_wait_ge(p, flag, n, p->pid[r]);
    return strata_flag_read(flag) >= n; /* acquire: what it vouches for goes with it */
}

/* The first difference between what each rank sends this one and what it
 * expects (per pair where the region holds the counts, else the totals). */
static void vround_find(struct strata_plane *p, struct strata_agree_vround *v, int per_pair)
{
    uint64_t n = p->call.mine.stamp;
    long long all_sent = 0, all_expected = 0;
    v->error = MPI_SUCCESS;
    v->cut = -1;
    for (int r = 0; r < p->size; r++) {
        long long sent = per_pair
                             ? ((const int64_t *)strata_plane_region(p, r, STRATA_REGION_IN))[p->rank]
                             : 0;
        if (!per_pair) {
            all_sent += slot_of(p, r, n)->vsent;
            all_expected += slot_of(p, r, n)->vrecvd;
            continue;
        }
        if (v->error != MPI_SUCCESS || sent < 0 || v->from[r] < 0 || sent == v->from[r]) continue;
        v->error = sent > v->from[r] ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
        v->cut = p->rank;
    }
    if (!per_pair && all_sent != all_expected) v->error = MPI_ERR_OTHER;
}

int strata_agree_vround_step(struct strata_plane *p, struct strata_agree_vround *v, int wait,
                             int *result, int *refused, char *why, size_t whylen)
{
    uint64_t n = p->call.mine.stamp;
    struct strata_call_sig_more *me = more_of(p, p->rank, n);
    int per_pair = p->region >= (size_t)p->size * sizeof(int64_t);
    if (v->step == 0) {
        if (per_pair) {
            int64_t *area = (int64_t *)strata_plane_region(p, p->rank, STRATA_REGION_IN);
            for (int r = 0; r < p->size; r++) area[r] = v->to[r];
        }
        /* Release: the counts go with their stamp. */
        strata_plane_publish(p, &me->counts_stamp, n);
        v->step = 1;
    }
    if (v->step == 1) {
        for (int r = 0; r < p->size; r++)
            if (!stamped(p, r, &more_of(p, r, n)->counts_stamp, n, wait)) return 0;
        vround_find(p, v, per_pair);
        strata_agree_veto_publish(p, v->error, v->cut);
        v->step = 2;
    }
    for (int r = 0; r < p->size; r++)
        if (!stamped(p, r, &more_of(p, r, n)->veto_stamp, n, wait)) return 0;
    int finder = -1, cut = -1;
    *refused = strata_agree_veto_read(p, v->receives, result, &finder, &cut);
    if (*refused) strata_agree_describe_veto(why, whylen, finder, cut);
    return 1;
}
