/* Alltoall by pairwise exchange over Cross-Memory Attach (contention-aware
 * paper, IV-C).
 *
 * Every rank exposes its send buffer once; then, in each of size-1 steps, it
 * reads the block meant for it straight out of one partner's send buffer.
 * The partners of one step form a permutation (rank XOR i for a power of two,
 * rank - i otherwise), so every buffer has exactly one reader per step and no
 * rank's pages are pinned by several readers at once.  No per-message
 * handshake: entering the operation (seq) is the only signal a reader needs,
 * and the acks at the end keep every send buffer alive until all its readers
 * are done. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/block.h"
#include "coll/coll.h"
#include "util/colls.h"
#include "transport/cma.h"
#include "util/log.h"
#include "util/stats.h"

static int partner_of(int rank, int step, int size, int pow2)
{
    return pow2 ? rank ^ step : (rank - step + size) % size;
}

int strata_alltoall_pairwise(struct strata_plane *p, const struct strata_block_args *a)
{
    int me = p->rank, size = p->size;
    size_t b = a->block, total = (size_t)size * b;
    const unsigned char *send = a->send;
    if (size == 1) {
        if (send) memcpy(a->recv, send, b);
        return MPI_SUCCESS;
    }
    if (!send) {
        /* In place: incoming blocks overwrite recv while partners still read
         * their blocks from it, so they read a private copy instead. */
        unsigned char *copy = strata_plane_scratch(p, total);
        if (!copy) {
            /* The other ranks are about to wait for this one: returning an
             * error here would hang them, so end the job. */
            strata_error("out of memory for a %zu-byte in-place Alltoall", total);
            abort();
        }
        memcpy(copy, a->recv, total);
        send = copy;
    } else {
        memcpy(a->recv + (size_t)me * b, send + (size_t)me * b, b);
    }

    /* seq makes buf (and the scratch copy) visible. */
    uint64_t base = strata_plane_enter(p, 0, send, NULL);
    struct strata_rank_ctl *mine = &p->ctl[me];

    int pow2 = (size & (size - 1)) == 0;
    for (int step = 1; step < size; step++) {
        int peer = partner_of(me, step, size, pow2);
        /* The acquire makes the peer's buf of this operation visible; the
         * peer cannot leave the operation before this rank acknowledges. */
        strata_flag_wait_ge(&p->ctl[peer].seq, base, p->pid[peer]);
        const unsigned char *src = (const void *)(uintptr_t)strata_flag_read(&p->ctl[peer].buf);
        if (strata_cma_read(p->pid[peer], src + (size_t)me * b, a->recv + (size_t)peer * b, b))
            strata_cma_failed("read from", peer, errno);
        if (p->stats) strata_stats_bytes(STRATA_COLL_ALLTOALL, p->dist[peer], b);
    }

    /* Release: done reading every peer's send buffer. */
    strata_flag_publish(&mine->ack, base);
    /* Every rank reads from this one's send buffer (or scratch copy). */
    for (int r = 0; r < size; r++)
        if (r != me) strata_flag_wait_ge(&p->ctl[r].ack, base, p->pid[r]);
    return MPI_SUCCESS;
}
