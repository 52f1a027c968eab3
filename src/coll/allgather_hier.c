/* Hierarchical Allgather inside one node (HierKNEM, section III-D), over
 * Cross-Memory Attach, following the communicator's hierarchy p->hier.
 *
 * hier-leader: the ranks of each level-0 group write their blocks into
 * their leader's receive buffer; the leaders fetch the other groups' blocks
 * from each other; the members fetch everything from their leader, as soon
 * as the leader says it holds it.  Members' copies are offloaded from the
 * leaders, which only wait.
 *
 * hier-ring: the ring-neighbour algorithm (each step reads from the left
 * neighbour the block it received in the step before) over the ranks in
 * hierarchy order, so that all but a few hops of the ring stay inside one
 * level-0 group, and the hops that leave it stay inside the next level.
 * Resumable operations (coll/task.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "util/stats.h"

static void read_blocks(struct strata_plane *p, int peer, const unsigned char *src,
                        unsigned char *dst, int first, int count, size_t b)
{
    size_t off = (size_t)first * b, len = (size_t)count * b;
    strata_plane_pull(p, STRATA_COLL_ALLGATHER, peer, src + off, dst + off, len);
}

/* ---- hier-leader ----
 *
 * A leader's progress counts the groups whose blocks it holds: base + 1 once
 * its own group is complete, base + 1 + j once it also holds the groups of
 * the j leaders it reads from first (group g + 1, g + 2, ... in turn, so
 * that in each step every leader is read by a different one).  A member's
 * progress is base + 1 once its block is in the leader's buffer. */

/* The group whose blocks the leader of group `own` fetches in step j (step
 * 0: its own); members of `own` rely on the same order. */
static int group_at(int own, int j, int ngroups) { return (own + j) % ngroups; }

/* Reads from `leader` every block it holds of group `grp` (ranks ascending:
 * each run of consecutive ranks is one copy). */
static void read_group(struct strata_plane *p, const struct strata_hier_level *L0, int grp,
                       int leader, const unsigned char *src, unsigned char *recv, size_t b)
{
    const int *m = L0->members;
    int end = L0->member_start[grp + 1];
    for (int i = L0->member_start[grp], j; i < end; i = j) {
        for (j = i + 1; j < end && m[j] == m[j - 1] + 1; j++) {}
        read_blocks(p, leader, src, recv, m[i], j - i, b);
    }
}

static struct strata_block_task *block_of(struct strata_task *op)
{
    return (struct strata_block_task *)((char *)op - offsetof(struct strata_block_task, op));
}

static int nothing_to_do(struct strata_task *op)
{
    (void)op;
    return MPI_SUCCESS;
}

/* o->i: member index, o->t: step (group) index. */
static int leader_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    const struct strata_hier_level *L0 = &p->hier->level[0];
    int me = p->rank, own = L0->group_of[me], ngroups = L0->ngroups;
    struct strata_rank_ctl *mine = &p->ctl[me];
    STRATA_TASK_BEGIN(op);
    for (o->i = L0->member_start[own]; o->i < L0->member_start[own + 1]; o->i++)
        if (L0->members[o->i] != me)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[L0->members[o->i]].progress, o->base + 1,
                                 p->pid[L0->members[o->i]]);
    /* Release: members and leaders that see it may read the whole group. */
    strata_plane_publish(p, &mine->progress, o->base + 1);

    for (o->t = 1; o->t < ngroups; o->t++) {
        STRATA_TASK_AWAIT_GE(op, &p->ctl[L0->leader[group_at(own, o->t, ngroups)]].progress,
                             o->base + 1, p->pid[L0->leader[group_at(own, o->t, ngroups)]]);
        int grp = group_at(own, o->t, ngroups), peer = L0->leader[grp];
        /* The peer's buf was set before its seq, which precedes its progress. */
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
        read_group(p, L0, grp, peer, src, a->recv, a->block);
        /* Release: members may now read this group's blocks from here. */
        strata_plane_publish(p, &mine->progress, o->base + 1 + (uint64_t)o->t);
    }
    /* Release: done reading the other leaders. */
    strata_plane_publish(p, &mine->ack, o->base);
    /* Members read from this buffer until the end, other leaders in step 2. */
    for (o->i = L0->member_start[own]; o->i < L0->member_start[own + 1]; o->i++)
        if (L0->members[o->i] != me)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[L0->members[o->i]].ack, o->base,
                                 p->pid[L0->members[o->i]]);
    for (o->t = 0; o->t < ngroups; o->t++)
        if (L0->leader[o->t] != me)
            STRATA_TASK_AWAIT_GE(op, &p->ctl[L0->leader[o->t]].ack, o->base,
                                 p->pid[L0->leader[o->t]]);
    STRATA_TASK_END(op);
}

enum { MISSING, READY, HELD };

/* o->t: groups held; the per-rank state lives in the plane's tree_buf. */
static int member_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    const struct strata_hier_level *L0 = &p->hier->level[0];
    int me = p->rank, size = p->size, own = L0->group_of[me], ngroups = L0->ngroups;
    int leader = L0->leader[own];
    struct strata_rank_ctl *mine = &p->ctl[me], *lead = &p->ctl[leader];
    size_t b = a->block;
    int *state = p->tree_buf;
    STRATA_TASK_BEGIN(op);
    /* The acquire makes the leader's acc and buf of this operation visible;
     * it cannot leave the operation before this rank acknowledges. */
    STRATA_TASK_AWAIT_GE(op, &lead->seq, o->base, p->pid[leader]);
    unsigned char *acc = (void *)(uintptr_t)strata_flag_read(&lead->acc);
    strata_plane_push(p, STRATA_COLL_ALLGATHER, leader, acc + (size_t)me * b,
                      a->recv + (size_t)me * b, b);
    /* Release: the block is in the leader's buffer. */
    strata_plane_publish(p, &mine->progress, o->base + 1);

    /* Fetch what the leader holds as it comes in, coalescing the blocks of
     * every group that became ready since the last look into runs. */
    o->send = (const void *)(uintptr_t)strata_flag_read(&lead->buf);
    for (int r = 0; r < size; r++) state[r] = MISSING;
    state[me] = HELD;
    for (o->t = 0; o->t < ngroups;) {
        STRATA_TASK_AWAIT_GE(op, &lead->progress, o->base + 1 + (uint64_t)o->t, p->pid[leader]);
        uint64_t now = strata_flag_read(&lead->progress) - o->base;
        if (now > (uint64_t)ngroups) now = (uint64_t)ngroups;
        for (; o->t < (int)now; o->t++) {
            int grp = group_at(own, o->t, ngroups);
            for (int i = L0->member_start[grp]; i < L0->member_start[grp + 1]; i++)
                if (state[L0->members[i]] == MISSING) state[L0->members[i]] = READY;
        }
        for (int r = 0, e; r < size; r = e) {
            for (e = r + 1; e < size && state[e] == state[r]; e++) {}
            if (state[r] != READY) continue;
            read_blocks(p, leader, o->send, a->recv, r, e - r, b);
            for (int q = r; q < e; q++) state[q] = HELD;
        }
    }
    /* Release: done with the leader's buffer; nobody touches this rank's. */
    strata_plane_publish(p, &mine->ack, o->base);
    STRATA_TASK_END(op);
}

void strata_allgather_hier_leader_start(struct strata_block_task *o, struct strata_plane *p,
                                        const struct strata_block_args *a)
{
    size_t b = a->block;
    unsigned char *own_block = a->recv + (size_t)p->rank * b;
    o->a = *a;
    if (a->send) memcpy(own_block, a->send, b);
    if (p->size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    const struct strata_hier_level *L0 = &p->hier->level[0];
    int leads = L0->leader[L0->group_of[p->rank]] == p->rank;
    strata_task_init(&o->op, p, leads ? leader_progress : member_progress);
    /* Members write into a leader's receive buffer and read from it; other
     * ranks expose the same buffer, which nobody uses. */
    o->base = strata_plane_enter(p, (size_t)L0->ngroups, a->recv, a->recv);
}

int strata_allgather_hier_leader(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_hier_leader_start, p, a);
}

/* ---- hier-ring ---- */

/* Appends the ranks of group `grp` of level `l` to order[*n], in hierarchy
 * order: the subgroups in order of their leaders, each one whole. */
static void append_group(const struct strata_hier *h, int l, int grp, int *order, int *n)
{
    const struct strata_hier_level *L = &h->level[l];
    for (int i = L->member_start[grp]; i < L->member_start[grp + 1]; i++) {
        int m = L->members[i];
        if (l == 0) order[(*n)++] = m;
        else append_group(h, l - 1, h->level[l - 1].group_of[m], order, n);
    }
}

/* o->n: this rank's position in the ring order (the plane's tree_buf);
 * o->t: the step. */
static int ring_progress(struct strata_task *op)
{
    struct strata_block_task *o = block_of(op);
    struct strata_plane *p = op->p;
    const struct strata_block_args *a = &o->a;
    int size = p->size, pos = o->n, *order = p->tree_buf;
    int left = order[(pos + size - 1) % size], right = order[(pos + 1) % size];
    struct strata_rank_ctl *mine = &p->ctl[p->rank], *up = &p->ctl[left];
    STRATA_TASK_BEGIN(op);
    /* The acquire makes the left neighbour's buf of this operation visible;
     * it cannot leave the operation before this rank acknowledges. */
    STRATA_TASK_AWAIT_GE(op, &up->seq, o->base, p->pid[left]);
    o->send = (const void *)(uintptr_t)strata_flag_read(&up->buf);
    for (o->t = 1; o->t < size; o->t++) {
        /* The left neighbour received that block in its step - 1. */
        STRATA_TASK_AWAIT_GE(op, &up->progress, o->base + (uint64_t)o->t - 1, p->pid[left]);
        read_blocks(p, left, o->send, a->recv, order[(pos - o->t + size) % size], 1, a->block);
        /* Release: the right neighbour may read this block from here. */
        strata_plane_publish(p, &mine->progress, o->base + (uint64_t)o->t);
    }
    /* Release: done reading the left neighbour. */
    strata_plane_publish(p, &mine->ack, o->base);
    STRATA_TASK_AWAIT_GE(op, &p->ctl[right].ack, o->base, p->pid[right]);
    STRATA_TASK_END(op);
}

void strata_allgather_hier_ring_start(struct strata_block_task *o, struct strata_plane *p,
                                      const struct strata_block_args *a)
{
    int me = p->rank, size = p->size;
    size_t b = a->block;
    o->a = *a;
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    if (size == 1) {
        strata_task_init(&o->op, p, nothing_to_do);
        return;
    }
    strata_task_init(&o->op, p, ring_progress);
    /* Groups are numbered in order of their lowest rank, and each level's
     * members are the leaders (lowest ranks) of the groups below, so this
     * is the order of the chain of group ids from the top down, then rank. */
    const struct strata_hier *h = p->hier;
    int *order = p->tree_buf, n = 0, pos = 0;
    for (int g = 0; g < h->level[h->nlevels - 1].ngroups; g++)
        append_group(h, h->nlevels - 1, g, order, &n);
    while (order[pos] != me) pos++;
    o->n = pos;

    /* Step 0 is done, the own block is in place: published with seq. */
    o->base = strata_plane_enter_progress(p, (size_t)size, a->recv, NULL, 0);
}

int strata_allgather_hier_ring(struct strata_plane *p, const struct strata_block_args *a)
{
    return strata_block_run(strata_allgather_hier_ring_start, p, a);
}
