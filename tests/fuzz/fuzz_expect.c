/* The expected result of a call that moves data, for when strata and the
 * host MPI disagree: the host MPIs have bugs of their own
 * (shared/MACHINE-NOTES.md), and a difference is strata's only if strata's
 * bytes are not the expected ones.
 *
 * Every rank's input is a stream of its seed (fuzz_check.c, fill_input), so
 * any rank can make any other rank's input again.  A block travels as its
 * type signature: the bytes of each element's type map, in order; the
 * receiver's datatype says where they land.  Everything else in the receive
 * buffer keeps the bytes it had before the call. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "testutil.h"

/* Copies the signature of block k of a buffer of cnt-element blocks of l
 * into sig (to_buffer = 0), or back from sig into the buffer (1). */
static void signature(unsigned char *buf, const struct fuzz_layout *l, size_t cnt, size_t k,
                      unsigned char *sig, int to_buffer)
{
    const struct fuzz_base *b = l->base;
    size_t at = 0;
    for (size_t i = 0; i < cnt; i++)
        for (int j = 0; j < l->per; j++) {
            unsigned char *elem = buf + (k * cnt + i) * l->extent + l->off[j];
            for (int t = 0; t < b->ntmap; t++) {
                unsigned char *p = elem + b->tmap[t].off;
                if (to_buffer) memcpy(p, sig + at, b->tmap[t].len);
                else memcpy(sig + at, p, b->tmap[t].len);
                at += b->tmap[t].len;
            }
        }
}

/* The signature of the block communicator rank q sends to rank d. */
static void block_sent(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                       int root, int in_place, int q, int d, unsigned char *sig)
{
    const struct fuzz_layout *ls, *lr, *l;
    fuzz_rank_layouts(c, q, &ls, &lr);
    uint64_t seed = fuzz_input_seed(c, fc->members[q]);
    size_t P = (size_t)fc->size, cnt, nblocks, k, off = 0;
    int in_recv = in_place && (c->coll == STRATA_COLL_ALLTOALL || c->coll == STRATA_COLL_ALLGATHER ||
                               (c->coll == STRATA_COLL_GATHER && q == root));
    l = in_recv || c->coll == STRATA_COLL_BCAST ? lr : ls;
    cnt = elems / (size_t)l->per;
    switch (c->coll) {
    case STRATA_COLL_SCATTER:
    case STRATA_COLL_ALLTOALL: nblocks = P, k = (size_t)d; break; /* the whole buffer's stream */
    default:
        /* One block: its own stream from its offset in the buffer it sits in. */
        nblocks = 1, k = 0;
        if (in_recv) off = (size_t)q * cnt * l->extent;
        break;
    }
    unsigned char *input = malloc(nblocks * cnt * l->extent + 1);
    CHECK(input != NULL, "out of memory");
    fuzz_fill_bytes(input, nblocks * cnt * l->extent, seed + off);
    signature(input, l, cnt, k, sig, 0);
    free(input);
}

void fuzz_expect_recv(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                      const struct exec *x, unsigned char *expected)
{
    const struct buf *r = &x->recv;
    memcpy(expected, r->mem[ORIG], r->bytes);
    unsigned char *sig = malloc(elems * fuzz_base(c->base)->size + 1);
    CHECK(sig != NULL, "out of memory");
    int me = x->rank, root = x->root, P = x->size;
    switch (c->coll) {
    case STRATA_COLL_BCAST:
        if (me == root) break;
        block_sent(c, elems, fc, root, x->in_place, root, me, sig);
        signature(expected, r->l, r->count, 0, sig, 1);
        break;
    case STRATA_COLL_SCATTER:
        block_sent(c, elems, fc, root, x->in_place, root, me, sig);
        signature(expected, r->l, r->count, 0, sig, 1);
        break;
    case STRATA_COLL_GATHER:
    case STRATA_COLL_ALLGATHER:
    case STRATA_COLL_ALLTOALL:
        if (c->coll == STRATA_COLL_GATHER && me != root) break; /* nothing arrives */
        for (int q = 0; q < P; q++) {
            if (x->in_place && q == me && c->coll != STRATA_COLL_ALLTOALL) continue;
            block_sent(c, elems, fc, root, x->in_place, q, me, sig);
            signature(expected, r->l, r->count, (size_t)q, sig, 1);
        }
        break;
    default: CHECK(0, "no expected result for %s", strata_coll_name(c->coll));
    }
    free(sig);
}
