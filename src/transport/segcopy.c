/* Copies through the shared segment: plain memcpy between this process's
 * memory and memory it maps together with its peers.  It cannot reach a
 * peer's private memory (no READ_PEER/WRITE_PEER), so on a plane that uses
 * it the single-copy algorithms are refused and the copy-in/copy-out paths
 * (two copies: into the segment, out of it) serve every call.  It needs no
 * probe: the segment itself is checked when a communicator sets it up. */
#include "transport/segcopy.h"

#include <string.h>

/* Copies the list `from` into the list `to`, piece by piece. */
static void copy_lists(const struct iovec *to, size_t nto, const struct iovec *from,
                       size_t nfrom)
{
    size_t ti = 0, fi = 0, toff = 0, foff = 0;
    while (ti < nto && fi < nfrom) {
        size_t trest = to[ti].iov_len - toff, frest = from[fi].iov_len - foff;
        size_t len = trest < frest ? trest : frest;
        memcpy((char *)to[ti].iov_base + toff, (const char *)from[fi].iov_base + foff, len);
        toff += len;
        foff += len;
        if (toff == to[ti].iov_len) ti++, toff = 0;
        if (foff == from[fi].iov_len) fi++, foff = 0;
    }
}

static int segment_read(pid_t pid, const struct iovec *local, size_t nlocal,
                        const struct iovec *remote, size_t nremote)
{
    (void)pid; /* the memory is mapped here: no process to address */
    copy_lists(local, nlocal, remote, nremote);
    return 0;
}

static int segment_write(pid_t pid, const struct iovec *local, size_t nlocal,
                         const struct iovec *remote, size_t nremote)
{
    (void)pid;
    copy_lists(remote, nremote, local, nlocal);
    return 0;
}

/* One copy through the segment: the development machine's shm_beta
 * (coll/model.c), no start-up beyond the flag hand-off the model adds. */
const struct strata_transport strata_transport_segment = {
    .name = "segment",
    .summary = "through the node's shared segment: copy in, copy out (no single copy)",
    .features = 0,
    .cost = {.alpha = 0, .beta = 1.3e-4, .lock = 0, .page = 4096},
    .read = segment_read,
    .write = segment_write,
};
