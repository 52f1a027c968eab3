/* Buffers of any datatype seen as runs of bytes (run_view.c). */
#ifndef STRATA_RUN_VIEW_H
#define STRATA_RUN_VIEW_H

#include <mpi.h>
#include <stddef.h>

/* count elements of type at user seen as one run of bytes: the user's memory
 * when it is one run, otherwise a private buffer (tmp), packed from the
 * user's on opening and unpacked into it on closing (unpack_out). */
struct strata_run_view {
    unsigned char *run;
    void *tmp;
    void *user;
    long long count;
    MPI_Datatype type; /* a duplicate while an operation holds it (the
                          application may free its type once it has posted) */
    int unpack_out;
    size_t bytes;
    int dup;           /* type is strata's duplicate */
};

/* Where count elements of type at buf lie as one run of bytes (`bytes` of
 * them), if they do; NULL otherwise. */
void *strata_contiguous_run(void *buf, long long count, MPI_Datatype type, size_t bytes);

/* Packs count elements of type at buf into packed (unpack: the reverse). */
int strata_pack_user(const void *buf, long long count, MPI_Datatype type, void *packed,
                     MPI_Comm comm, int unpack);

/* Opens a view of `bytes` bytes: packed from the user's buffer now if
 * pack_in; keep: an operation holds it past the call, so the type of a view
 * unpacked on closing is duplicated (the application may free its own). */
void strata_view_open(struct strata_run_view *v, MPI_Comm comm, const void *buf, long long count,
                      MPI_Datatype type, size_t bytes, int pack_in, int unpack_out, int keep);

/* Closes a view: unpacks into the application's buffer if it is a private
 * copy with unpack_out, frees it, and a duplicated type. */
void strata_run_view_close(struct strata_run_view *v, MPI_Comm comm);

/* Where count elements of type at buf lie as one run of `bytes` bytes in
 * memory order, or NULL. */
void *strata_contiguous_run(void *buf, long long count, MPI_Datatype type, size_t bytes);
/* Packs count elements of type at buf into packed (unpack: the reverse). */
int strata_pack_user(const void *buf, long long count, MPI_Datatype type, void *packed,
                     MPI_Comm comm, int unpack);

#endif
