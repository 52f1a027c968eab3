/* Buffers of any datatype seen as runs of bytes: strata's algorithms move
 * contiguous bytes, so a layout with holes is packed into a private buffer
 * (and unpacked from it), on this rank alone. */
#include "route/run_view.h"

#include <stdlib.h>

#include "coll/ops.h"
#include "util/log.h"
#include "util/hot.h"

/* Whether type lists its bytes in memory order: a predefined type, or a
 * contiguous, duplicated or resized one made of such.  A hole-free layout can
 * still list its elements out of order (an indexed type with descending
 * displacements); its raw bytes are not its type signature's stream. */
STRATA_HOT static int in_memory_order(MPI_Datatype type)
{
    if (strata_predefined_c_type(type)) return 1; /* named: no need to ask the host */
    int ni, na, nd, combiner;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return 1;
    if ((combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_DUP &&
         combiner != MPI_COMBINER_RESIZED) || ni > 1 || na > 2 || nd != 1)
        return 0;
    int ints[1];
    MPI_Aint addrs[2];
    MPI_Datatype inner;
    PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &inner);
    int ok = in_memory_order(inner);
    PMPI_Type_get_envelope(inner, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner);
    return ok;
}

/* Where count elements of type at buf lie as one run of bytes, if they do. */
STRATA_HOT void *strata_contiguous_run(void *buf, long long count, MPI_Datatype type, size_t bytes)
{
    if (strata_type_plain(type)) {
        /* No holes, lower bound 0, extent = size: the host's extents are
         * not needed (two calls per buffer of every small block call). */
        int size;
        if (strata_type_size(type, &size) != MPI_SUCCESS) return NULL;
        if ((size_t)size != bytes / (size_t)(count ? count : 1)) return NULL;
        return buf;
    }
    if (!in_memory_order(type)) return NULL;
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    if ((size_t)true_extent != bytes / (size_t)(count ? count : 1)) return NULL;
    if (count > 1 && (size_t)extent != bytes / (size_t)count) return NULL;
    return (char *)buf + true_lb;
}

/* Packs count elements of type at buf into packed (unpack: the reverse),
 * in pieces of at most 1 GiB: MPI_Pack counts bytes in an int, and the
 * route of a call must not depend on a rank's own layout, so any size is
 * packed.  MPICH 4.0 refuses a null buffer even as MPI_BOTTOM with a type of
 * absolute addresses: that is passed as the address of its first byte, with
 * each element shifted back by as much. */
int strata_pack_user(const void *buf, long long count, MPI_Datatype type, void *packed,
                     MPI_Comm comm, int unpack)
{
    int size, rc = MPI_SUCCESS, one = 1;
    MPI_Aint lb, extent;
    MPI_Datatype shifted = MPI_DATATYPE_NULL;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    if (buf == MPI_BOTTOM) {
        MPI_Aint true_lb, true_extent, back;
        PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
        back = -true_lb;
        rc = PMPI_Type_create_hindexed(1, &one, &back, type, &shifted);
        if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&shifted);
        if (rc != MPI_SUCCESS) return rc;
        buf = (const char *)MPI_BOTTOM + true_lb;
        type = shifted;
    }
    long long per = size > 0 ? ((long long)1 << 30) / size : count;
    if (per < 1) per = 1;
    for (long long done = 0; done < count && rc == MPI_SUCCESS; done += per) {
        int n = (int)(count - done < per ? count - done : per), position = 0;
        char *user = (char *)buf + done * extent;
        char *piece = (char *)packed + done * size;
        rc = unpack ? PMPI_Unpack(piece, n * size, &position, user, n, type, comm)
                    : PMPI_Pack(user, n, type, piece, n * size, &position, comm);
    }
    if (shifted != MPI_DATATYPE_NULL) PMPI_Type_free(&shifted);
    return rc;
}

/* Opens a view (struct strata_run_view, nonblocking.h): packed from the
 * user's buffer now if pack_in.  For an operation being built, the type of a
 * view unpacked at completion is duplicated: the application may free its
 * own once the call has returned. */
STRATA_HOT void strata_view_open(struct strata_run_view *v, MPI_Comm comm, const void *buf,
                                 long long count, MPI_Datatype type, size_t bytes, int pack_in,
                                 int unpack_out, int keep)
{
    *v = (struct strata_run_view){NULL, NULL, (void *)buf, count, type, unpack_out, bytes, 0};
    if (bytes == 0) return;
    v->run = strata_contiguous_run((void *)buf, count, type, bytes);
    if (v->run) {
        v->unpack_out = 0;
        return;
    }
    v->tmp = malloc(bytes);
    if (!v->tmp) {
        strata_error("out of memory packing %zu bytes of a collective's buffer", bytes);
        PMPI_Abort(comm, 1);
    }
    v->run = v->tmp;
    if (pack_in) strata_pack_user(buf, count, type, v->tmp, comm, 0);
    if (unpack_out && keep && PMPI_Type_dup(type, &v->type) == MPI_SUCCESS)
        v->dup = 1;
}

STRATA_HOT void strata_run_view_close(struct strata_run_view *v, MPI_Comm comm)
{
    if (v->tmp && v->unpack_out)
        strata_pack_user(v->user, v->count, v->type, v->tmp, comm, 1);
    /* Not free(NULL): strata's own free (heap.c) runs first, a tenth of a
     * small call's entry, twice per call. */
    if (v->tmp) free(v->tmp);
    v->tmp = NULL;
    if (v->dup) PMPI_Type_free(&v->type);
    v->dup = 0;
}

