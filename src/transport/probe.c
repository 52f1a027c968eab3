/* Transport probes: Cross-Memory Attach between node peers, /dev/shm. */
#include "transport/probe.h"
#include "transport/cma.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROBE_BYTES 256

struct probe_peer {
    int64_t pid;
    uint64_t addr;
};

static int read_int_file(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1) v = -1;
        fclose(f);
    }
    return v;
}

static void explain_cma_errno(int err, char *why, size_t whylen)
{
    int scope = read_int_file("/proc/sys/kernel/yama/ptrace_scope");
    switch (err) {
    case EPERM: {
        char yama[64] = "";
        if (scope >= 0)
            snprintf(yama, sizeof yama, "yama ptrace_scope is %d, 0 allows it; ", scope);
        snprintf(why, whylen,
                 "process_vm_readv between ranks was refused (EPERM): the kernel's "
                 "ptrace check failed (%sin a container, grant CAP_SYS_PTRACE; ranks must "
                 "run as the same user and stay dumpable; STRATA_CMA=0 skips this probe)",
                 yama);
        break;
    }
    case ENOSYS:
        snprintf(why, whylen, "this kernel has no Cross-Memory Attach "
                 "(process_vm_readv: ENOSYS)");
        break;
    case ESRCH:
        snprintf(why, whylen, "a peer process was not found (ESRCH): the ranks "
                 "are probably in different PID namespaces (containers)");
        break;
    default:
        snprintf(why, whylen, "process_vm_readv failed: %s", strerror(err));
    }
}

/* What the kernel's ptrace check (which process_vm_readv and opening a
 * peer's /proc/PID/fd pass) looks at in this process: its credentials,
 * whether it is dumpable, whether it holds CAP_SYS_PTRACE. */
struct ptrace_state {
    uid_t uid[3];
    gid_t gid[3];
    int dumpable;
    int cap_ptrace;
};

static struct ptrace_state at_probe;
static int probed;

static void read_ptrace_state(struct ptrace_state *st)
{
    memset(st, 0, sizeof *st);
    getresuid(&st->uid[0], &st->uid[1], &st->uid[2]);
    getresgid(&st->gid[0], &st->gid[1], &st->gid[2]);
    st->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &head, data) == 0)
        st->cap_ptrace = (data[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

int strata_cma_unchanged(char *why, size_t whylen)
{
    if (!probed) return 1;
    struct ptrace_state now;
    read_ptrace_state(&now);
    if (now.dumpable != at_probe.dumpable)
        snprintf(why, whylen, "this process was made %sdumpable", now.dumpable ? "" : "non-");
    else if (now.cap_ptrace != at_probe.cap_ptrace)
        snprintf(why, whylen, "this process %s CAP_SYS_PTRACE",
                 now.cap_ptrace ? "gained" : "dropped");
    else if (memcmp(now.uid, at_probe.uid, sizeof now.uid) ||
             memcmp(now.gid, at_probe.gid, sizeof now.gid))
        snprintf(why, whylen, "this process changed its user or group ids");
    else
        return 1;
    return 0;
}

int strata_cma_probe(MPI_Comm node_comm, char *why, size_t whylen)
{
    read_ptrace_state(&at_probe);
    probed = 1;
    int rank, size;
    PMPI_Comm_rank(node_comm, &rank);
    PMPI_Comm_size(node_comm, &size);
    unsigned char mine[PROBE_BYTES], got[PROBE_BYTES];
    for (int i = 0; i < PROBE_BYTES; i++) mine[i] = (unsigned char)(rank * 31 + i);
    struct probe_peer me = {.pid = getpid(), .addr = (uint64_t)(uintptr_t)mine};
    struct probe_peer *peers = malloc(sizeof *peers * (size_t)size);
    int first_errno = 0, mismatch = 0;
    if (!peers) {
        first_errno = ENOMEM;
    }
    PMPI_Allgather(&me, sizeof me, MPI_BYTE, peers ? peers : &me, peers ? sizeof me : 0,
                   MPI_BYTE, node_comm);
    for (int p = 0; peers && p < size && !first_errno && !mismatch; p++) {
        if (p == rank) continue;
        struct iovec local = {got, PROBE_BYTES};
        struct iovec remote = {(void *)(uintptr_t)peers[p].addr, PROBE_BYTES};
        ssize_t n = process_vm_readv((pid_t)peers[p].pid, &local, 1, &remote, 1, 0);
        if (n < 0) {
            first_errno = errno;
            break;
        }
        for (int i = 0; i < PROBE_BYTES; i++)
            mismatch |= n != PROBE_BYTES || got[i] != (unsigned char)(p * 31 + i);
    }
    /* Peers' buffers must stay valid until everyone has read them. */
    PMPI_Barrier(node_comm);
    free(peers);
    int ok = !first_errno && !mismatch, all_ok;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm);
    if (!ok) {
        if (first_errno) explain_cma_errno(first_errno, why, whylen);
        else snprintf(why, whylen, "process_vm_readv read wrong data from a peer");
    } else if (!all_ok) {
        snprintf(why, whylen, "Cross-Memory Attach works here but not on another rank "
                 "of this node");
    }
    return all_ok;
}

int strata_shm_probe(size_t bytes, char *why, size_t whylen)
{
    char name[64];
    snprintf(name, sizeof name, "/strata-probe-%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        snprintf(why, whylen, "cannot create a segment in /dev/shm: %s", strerror(errno));
        return 0;
    }
    shm_unlink(name); /* nothing may be left behind, whatever happens next */
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    close(fd);
    if (rc) {
        snprintf(why, whylen, "/dev/shm cannot hold %zu bytes: %s", bytes, strerror(rc));
        return 0;
    }
    return 1;
}
