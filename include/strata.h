/* strata: hardware-aware collectives for MPI, and the machine's hierarchy as
 * communicators.
 *
 * Link with -lstrata (pkg-config strata-openmpi or strata-mpich) or preload
 * libstrata.so: MPI_Bcast, MPI_Reduce, MPI_Allreduce, MPI_Allgather,
 * MPI_Gather, MPI_Scatter, MPI_Alltoall and MPI_Barrier then go through
 * strata, which serves what it can and hands the rest to the host MPI.
 *
 * The functions below follow "Hierarchical topology communicators" (the
 * hsplit proposal) and MPI-4's MPI_COMM_TYPE_HW_GUIDED/HW_UNGUIDED.  They are
 * collective over `comm` like MPI_Comm_split, except strata_comm_get_hlevel_info
 * (local).  They return MPI_SUCCESS or an MPI error class. */
#ifndef STRATA_H
#define STRATA_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1

/* Longest name a level query writes, terminating NUL included. */
#define STRATA_MAX_LEVEL_NAME 32

/* Splits comm by hardware.
 *
 * level == NULL: the next level down that is a strict subset of comm
 * (unguided): ranks spread over several nodes are split by node; ranks of
 * one node by the coarsest level below the deepest object they all share.
 * A rank not bound inside one object of that level (it may move across
 * several) gets MPI_COMM_NULL, and so does everyone once the bottom is
 * reached.
 *
 * level != NULL: the largest subset sharing that resource (guided): "node"
 * (or "machine"), "socket"/"package", "numa", "l3", "l2", "l1", "core", "pu",
 * or hwloc's names ("Package", "NUMANode", "L3Cache", ...), case-insensitive.
 * On a one-socket machine "package" gives the whole node.  MPI_COMM_NULL for
 * a rank not bound inside one such object, or if the machine has none.
 *
 * key orders the ranks of each new communicator, as in MPI_Comm_split.
 * An unknown level name returns MPI_ERR_ARG without communicating. */
int strata_comm_split_hw(MPI_Comm comm, const char *level, int key, MPI_Comm *newcomm);

/* The unguided split (level NULL, key = rank in comm) and, for the rank that
 * is rank 0 of its new communicator, a communicator of all such roots within
 * comm (the "roots communicator"); MPI_COMM_NULL elsewhere.  Roots
 * communicators of successive calls nest: the root of one is a member of the
 * previous one. */
int strata_comm_hsplit_with_roots(MPI_Comm comm, MPI_Comm *newcomm, MPI_Comm *rootscomm);

/* For a communicator made by the two functions above: how many sibling
 * communicators the same split made (num_comms), this one's index among them
 * (0 ... num_comms-1, ordered by their resource's index), and the resource it
 * stands for (e.g. "NUMANode", "L2Cache", "Machine"), written into type
 * (typelen bytes, truncated, always terminated).  For any other communicator:
 * num_comms 1, index 0, and the lowest level shared by all its ranks.
 * Local: no communication. */
int strata_comm_get_hlevel_info(MPI_Comm comm, int *num_comms, int *index, char *type,
                                int typelen);

/* The lowest hardware level shared by the listed ranks of comm: a hwloc name
 * ("L2Cache", "Core", ...), "Machine" for ranks of one node sharing nothing
 * smaller, "Cluster" for ranks on different nodes, and "Unknown" if the
 * caller is not among them.  Local: no communication. */
int strata_comm_get_min_hlevel(MPI_Comm comm, int nranks, const int ranks[], char *type,
                               int typelen);

/* "0.1.0 (openmpi)" */
const char *strata_version(void);

#ifdef __cplusplus
}
#endif

#endif
