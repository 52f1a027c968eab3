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
 * level-0 group, and the hops that leave it stay inside the next level. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/stats.h"

static void read_blocks(struct strata_plane *p, int peer, const unsigned char *src,
                        unsigned char *dst, int first, int count, size_t b)
{
    size_t off = (size_t)first * b, len = (size_t)count * b;
    if (strata_cma_read(p->pid[peer], src + off, dst + off, len))
        strata_cma_failed("read from", peer, errno);
    if (p->stats) strata_stats_bytes(STRATA_COLL_ALLGATHER, p->dist[peer], len);
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

static void leader_side(struct strata_plane *p, const struct strata_block_args *a,
                        uint64_t base)
{
    const struct strata_hier_level *L0 = &p->hier->level[0];
    int me = p->rank, own = L0->group_of[me], ngroups = L0->ngroups;
    struct strata_rank_ctl *mine = &p->ctl[me];
    for (int i = L0->member_start[own]; i < L0->member_start[own + 1]; i++) {
        int m = L0->members[i];
        if (m != me) strata_flag_wait_ge(&p->ctl[m].progress, base + 1, p->pid[m]);
    }
    /* Release: members and leaders that see it may read the whole group. */
    strata_flag_publish(&mine->progress, base + 1);

    for (int j = 1; j < ngroups; j++) {
        int grp = group_at(own, j, ngroups), peer = L0->leader[grp];
        strata_flag_wait_ge(&p->ctl[peer].progress, base + 1, p->pid[peer]);
        /* The peer's buf was set before its seq, which precedes its progress. */
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
        read_group(p, L0, grp, peer, src, a->recv, a->block);
        /* Release: members may now read this group's blocks from here. */
        strata_flag_publish(&mine->progress, base + 1 + (uint64_t)j);
    }
    /* Release: done reading the other leaders. */
    strata_flag_publish(&mine->ack, base);
    /* Members read from this buffer until the end, other leaders in step 2. */
    for (int i = L0->member_start[own]; i < L0->member_start[own + 1]; i++) {
        int m = L0->members[i];
        if (m != me) strata_flag_wait_ge(&p->ctl[m].ack, base, p->pid[m]);
    }
    for (int g = 0; g < ngroups; g++) {
        int peer = L0->leader[g];
        if (peer != me) strata_flag_wait_ge(&p->ctl[peer].ack, base, p->pid[peer]);
    }
}

enum { MISSING, READY, HELD };

static void member_side(struct strata_plane *p, const struct strata_block_args *a,
                        uint64_t base, const unsigned char *own_block)
{
    const struct strata_hier_level *L0 = &p->hier->level[0];
    int me = p->rank, size = p->size, own = L0->group_of[me], ngroups = L0->ngroups;
    int leader = L0->leader[own];
    struct strata_rank_ctl *mine = &p->ctl[me], *lead = &p->ctl[leader];
    pid_t lead_pid = p->pid[leader];
    size_t b = a->block;

    /* The acquire makes the leader's acc and buf of this operation visible;
     * it cannot leave the operation before this rank acknowledges. */
    strata_flag_wait_ge(&lead->seq, base, lead_pid);
    unsigned char *acc = (void *)(uintptr_t)strata_flag_read(&lead->acc);
    if (strata_cma_write(lead_pid, acc + (size_t)me * b, own_block, b))
        strata_cma_failed("write into", leader, errno);
    if (p->stats) strata_stats_bytes(STRATA_COLL_ALLGATHER, p->dist[leader], b);
    /* Release: the block is in the leader's buffer. */
    strata_flag_publish(&mine->progress, base + 1);

    /* Fetch what the leader holds as it comes in, coalescing the blocks of
     * every group that became ready since the last look into runs. */
    const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&lead->buf);
    int *state = p->tree_buf;
    for (int r = 0; r < size; r++) state[r] = MISSING;
    state[me] = HELD;
    for (int held = 0; held < ngroups;) {
        strata_flag_wait_ge(&lead->progress, base + 1 + (uint64_t)held, lead_pid);
        uint64_t now = strata_flag_read(&lead->progress) - base;
        if (now > (uint64_t)ngroups) now = (uint64_t)ngroups;
        for (; held < (int)now; held++) {
            int grp = group_at(own, held, ngroups);
            for (int i = L0->member_start[grp]; i < L0->member_start[grp + 1]; i++)
                if (state[L0->members[i]] == MISSING) state[L0->members[i]] = READY;
        }
        for (int r = 0, e; r < size; r = e) {
            for (e = r + 1; e < size && state[e] == state[r]; e++) {}
            if (state[r] != READY) continue;
            read_blocks(p, leader, src, a->recv, r, e - r, b);
            for (int q = r; q < e; q++) state[q] = HELD;
        }
    }
    /* Release: done with the leader's buffer; nobody touches this rank's. */
    strata_flag_publish(&mine->ack, base);
}

int strata_allgather_hier_leader(struct strata_plane *p, const struct strata_block_args *a)
{
    size_t b = a->block;
    unsigned char *own_block = a->recv + (size_t)p->rank * b;
    if (a->send) memcpy(own_block, a->send, b);
    if (p->size == 1) return MPI_SUCCESS;

    const struct strata_hier_level *L0 = &p->hier->level[0];
    /* Members write into a leader's receive buffer and read from it; other
     * ranks expose the same buffer, which nobody uses. */
    uint64_t base = strata_plane_enter(p, (size_t)L0->ngroups, a->recv, a->recv);

    if (L0->leader[L0->group_of[p->rank]] == p->rank) leader_side(p, a, base);
    else member_side(p, a, base, own_block);
    return MPI_SUCCESS;
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

int strata_allgather_hier_ring(struct strata_plane *p, const struct strata_block_args *a)
{
    int me = p->rank, size = p->size;
    size_t b = a->block;
    if (a->send) memcpy(a->recv + (size_t)me * b, a->send, b);
    if (size == 1) return MPI_SUCCESS;

    /* Groups are numbered in order of their lowest rank, and each level's
     * members are the leaders (lowest ranks) of the groups below, so this
     * is the order of the chain of group ids from the top down, then rank. */
    const struct strata_hier *h = p->hier;
    int *order = p->tree_buf, n = 0, pos = 0;
    for (int g = 0; g < h->level[h->nlevels - 1].ngroups; g++)
        append_group(h, h->nlevels - 1, g, order, &n);
    while (order[pos] != me) pos++;
    int left = order[(pos + size - 1) % size], right = order[(pos + 1) % size];

    uint64_t base = strata_plane_enter(p, (size_t)size, a->recv, NULL);
    struct strata_rank_ctl *mine = &p->ctl[me], *up = &p->ctl[left];
    /* Release: step 0 is done, the own block is in place. */
    strata_flag_publish(&mine->progress, base);

    /* The acquire makes the left neighbour's buf of this operation visible;
     * it cannot leave the operation before this rank acknowledges. */
    strata_flag_wait_ge(&up->seq, base, p->pid[left]);
    const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&up->buf);
    for (int step = 1; step < size; step++) {
        int owner = order[(pos - step + size) % size];
        /* The left neighbour received that block in its step - 1. */
        strata_flag_wait_ge(&up->progress, base + (uint64_t)step - 1, p->pid[left]);
        read_blocks(p, left, src, a->recv, owner, 1, b);
        /* Release: the right neighbour may read this block from here. */
        strata_flag_publish(&mine->progress, base + (uint64_t)step);
    }
    /* Release: done reading the left neighbour. */
    strata_flag_publish(&mine->ack, base);
    strata_flag_wait_ge(&p->ctl[right].ack, base, p->pid[right]);
    return MPI_SUCCESS;
}
