/* process_vm_readv / process_vm_writev with looping on partial transfers. */
#include "transport/cma.h"
#include "transport/probe.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/log.h"

static size_t max_per_call = (size_t)1 << 30;

void strata_transport_set_max_per_call(size_t bytes) { max_per_call = bytes ? bytes : 1; }

/* The kernel may move fewer bytes than asked (page faults, signals, the
 * MAX_RW_COUNT cap): resume from where it stopped until all is moved. */
static int cma_transfer(pid_t pid, void *remote, void *local, size_t len, int write)
{
    size_t done = 0;
    while (done < len) {
        size_t want = len - done < max_per_call ? len - done : max_per_call;
        struct iovec l = {(char *)local + done, want};
        struct iovec r = {(char *)remote + done, want};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = EFAULT; /* no progress: the remote range is not mapped */
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

/* The kernel copies with plain loads and stores.  When the destination
 * sits 1 to 63 bytes ahead of the source within a page, each load looks
 * like it may depend on the store just made (4K aliasing) and waits: on
 * this kind of machine the copy runs 4-5 times slower.  Such copies go
 * through a bounce buffer placed at the source's page offset, then memcpy
 * (which avoids the stall itself): two copies, still much faster. */
#define BOUNCE_BYTES ((size_t)1 << 20)
#define PAGE 4096

static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void make_bounce_key(void) { pthread_key_create(&bounce_key, free); }

/* This thread's bounce buffer (page-aligned, a page of slack), or NULL. */
static unsigned char *bounce_buffer(void)
{
    pthread_once(&bounce_once, make_bounce_key);
    unsigned char *b = pthread_getspecific(bounce_key);
    if (!b && (b = aligned_alloc(PAGE, BOUNCE_BYTES + PAGE))) pthread_setspecific(bounce_key, b);
    return b;
}

static int aliasing(const void *dst, const void *src, size_t len)
{
    size_t ahead = ((uintptr_t)dst - (uintptr_t)src) & (PAGE - 1);
    return len >= PAGE && ahead > 0 && ahead < 64;
}

int strata_cma_read(pid_t pid, const void *remote, void *local, size_t len)
{
    unsigned char *b = aliasing(local, remote, len) ? bounce_buffer() : NULL;
    if (!b) return cma_transfer(pid, (void *)(uintptr_t)remote, local, len, 0);
    for (size_t done = 0; done < len; done += BOUNCE_BYTES) {
        size_t piece = len - done < BOUNCE_BYTES ? len - done : BOUNCE_BYTES;
        const unsigned char *from = (const unsigned char *)remote + done;
        unsigned char *via = b + ((uintptr_t)from & (PAGE - 1));
        if (cma_transfer(pid, (void *)(uintptr_t)from, via, piece, 0)) return -1;
        memcpy((unsigned char *)local + done, via, piece);
    }
    return 0;
}

int strata_cma_write(pid_t pid, void *remote, const void *local, size_t len)
{
    unsigned char *b = aliasing(remote, local, len) ? bounce_buffer() : NULL;
    if (!b) return cma_transfer(pid, remote, (void *)(uintptr_t)local, len, 1);
    for (size_t done = 0; done < len; done += BOUNCE_BYTES) {
        size_t piece = len - done < BOUNCE_BYTES ? len - done : BOUNCE_BYTES;
        unsigned char *to = (unsigned char *)remote + done;
        unsigned char *via = b + ((uintptr_t)to & (PAGE - 1));
        memcpy(via, (const unsigned char *)local + done, piece);
        if (cma_transfer(pid, to, via, piece, 1)) return -1;
    }
    return 0;
}

/* ---- The transport's batched calls.
 *
 * The lists are walked pairwise: each piece where one local and one remote
 * range overlap is one copy above, so the partial-transfer loop and the
 * bounce buffer apply to every piece.  One range each way (what every
 * algorithm uses today) is one piece. */
static int read_piece(pid_t pid, void *remote, void *local, size_t len)
{
    return strata_cma_read(pid, remote, local, len);
}

static int write_piece(pid_t pid, void *remote, void *local, size_t len)
{
    return strata_cma_write(pid, remote, local, len);
}

int strata_cma_walk(pid_t pid, const struct iovec *local, size_t nlocal,
                    const struct iovec *remote, size_t nremote, strata_cma_piece_fn piece)
{
    size_t li = 0, ri = 0, loff = 0, roff = 0;
    while (li < nlocal && ri < nremote) {
        size_t lrest = local[li].iov_len - loff, rrest = remote[ri].iov_len - roff;
        size_t len = lrest < rrest ? lrest : rrest;
        if (len && piece(pid, (char *)remote[ri].iov_base + roff,
                         (char *)local[li].iov_base + loff, len))
            return -1;
        loff += len;
        roff += len;
        if (loff == local[li].iov_len) li++, loff = 0;
        if (roff == remote[ri].iov_len) ri++, roff = 0;
    }
    return 0;
}

static int cma_readv(pid_t pid, const struct iovec *local, size_t nlocal,
                     const struct iovec *remote, size_t nremote)
{
    return strata_cma_walk(pid, local, nlocal, remote, nremote, read_piece);
}

static int cma_writev(pid_t pid, const struct iovec *local, size_t nlocal,
                      const struct iovec *remote, size_t nremote)
{
    return strata_cma_walk(pid, local, nlocal, remote, nremote, write_piece);
}

/* The figures of the development machine (tests/data/model.conf): the
 * model's defaults until strata-calibrate measures this one. */
const struct strata_transport strata_transport_cma = {
    .name = "cma",
    .summary = "Cross-Memory Attach: one copy from or into a peer's memory "
               "(process_vm_readv/writev)",
    .features = STRATA_XPORT_READ_PEER | STRATA_XPORT_WRITE_PEER,
    .cost = {.alpha = 1.9, .beta = 6.7e-5, .lock = 0.34, .page = 4096},
    .read = cma_readv,
    .write = cma_writev,
    .probe = strata_cma_probe,
    .unchanged = strata_cma_unchanged,
};
