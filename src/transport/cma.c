/* process_vm_readv / process_vm_writev with looping on partial transfers. */
#include "transport/cma.h"

#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/log.h"

static size_t max_per_call = (size_t)1 << 30;

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

int strata_cma_read(pid_t pid, const void *remote, void *local, size_t len)
{
    return cma_transfer(pid, (void *)(uintptr_t)remote, local, len, 0);
}

int strata_cma_write(pid_t pid, void *remote, const void *local, size_t len)
{
    return cma_transfer(pid, remote, (void *)(uintptr_t)local, len, 1);
}
