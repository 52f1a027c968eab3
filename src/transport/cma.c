/* process_vm_readv / process_vm_writev with looping on partial transfers. */
#include "transport/cma.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/log.h"

static size_t max_per_call = (size_t)1 << 30;

/* The process this thread's last failed copy addressed, for the message
 * that ends the job (the caller knows the peer only by its rank in a node
 * plane, which means nothing to a user). */
static _Thread_local pid_t failed_pid;

pid_t strata_cma_failed_pid(void) { return failed_pid; }

void strata_cma_set_max_per_call(size_t bytes) { max_per_call = bytes ? bytes : 1; }

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
            failed_pid = pid;
            return -1;
        }
        if (n == 0) {
            failed_pid = pid;
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
