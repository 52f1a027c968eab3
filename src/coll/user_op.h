/* User-defined reduction operations (MPI_Op_create): a registry of each op
 * strata saw created, and the call of its function inside strata's
 * reductions.
 *
 * The function is called exactly as the host MPI would call it:
 * fn(invec, inoutvec, &len, &datatype), inoutvec[i] = invec[i] op
 * inoutvec[i], on whole elements of the datatype the application passed
 * (derived ones included), never on fragments of an element.
 *
 * Hook for other language bindings: an op whose function has another
 * calling convention (Fortran: INTEGER len and datatype) is registered with
 * strata_user_op_register and a caller that converts the arguments
 * (src/fortran/user_ops.c does this for Fortran), e.g.
 *
 *     static void call_fortran(void (*fn)(void), void *in, void *inout, int *len,
 *                              MPI_Datatype *type)
 *     {
 *         MPI_Fint flen = *len, ftype = PMPI_Type_c2f(*type);
 *         ((void (*)(void *, void *, MPI_Fint *, MPI_Fint *))fn)(in, inout, &flen, &ftype);
 *     }
 *
 * right after the host MPI created the op (PMPI_Op_create), under
 * strata_user_op_lock so that a concurrent MPI_Op_free cannot interleave;
 * MPI_Op_free's wrapper calls strata_user_op_forget the same way. */
#ifndef STRATA_USER_OP_H
#define STRATA_USER_OP_H

#include <mpi.h>
#include <stddef.h>

#include "topology/hierarchy.h"

/* Calls fn, an op's function, on len elements of *type. */
typedef void (*strata_user_op_caller)(void (*fn)(void), void *invec, void *inoutvec, int *len,
                                      MPI_Datatype *type);

/* The caller of functions of C's MPI_User_function type. */
void strata_user_op_call_c(void (*fn)(void), void *invec, void *inoutvec, int *len,
                           MPI_Datatype *type);

struct strata_user_op {
    void (*fn)(void);
    strata_user_op_caller call;
    int commute;
    unsigned long serial; /* creation order in this process, from 1 (messages) */
};

/* Serialises the creation and release of ops with the registry's updates:
 * a handle the host MPI frees may be reused by the next op it creates.
 * Re-entrant in one thread (a binding's wrapper may reach the C wrapper
 * through the host MPI). */
void strata_user_op_lock(void);
void strata_user_op_unlock(void);

/* 1 when the calling thread held the lock already before its latest
 * strata_user_op_lock: a C wrapper reached from a binding's wrapper through
 * the host MPI (MPICH's Fortran MPI_Op_create calls the C MPI_Op_create),
 * whose caller registers the op itself, its own way. */
int strata_user_op_nested(void);

/* Records op (just created by the host MPI); replaces a stale entry of the
 * same handle.  0, or -1 when out of memory (the op then goes to the host
 * MPI, as one strata never saw).  Call with the lock held. */
int strata_user_op_register(MPI_Op op, void (*fn)(void), strata_user_op_caller call, int commute);

/* Forgets op (about to be freed by the host MPI).  Call with the lock held. */
void strata_user_op_forget(MPI_Op op);

/* Copies op's entry to *out: 1 if strata saw op created, else 0.  Calls in
 * progress keep their copy, so freeing an op never pulls the function from
 * under a running reduction. */
int strata_user_op_find(MPI_Op op, struct strata_user_op *out);

/* Ops currently registered (tests). */
int strata_user_op_count(void);

/* One reduction's use of a user op on count elements of `type`, `extent`
 * bytes apart, whose data starts `shift` bytes (the true lower bound) after
 * each element's origin. */
struct strata_user_op_call {
    struct strata_user_op op;
    MPI_Datatype type;
    size_t extent;
    ptrdiff_t shift;
    void *tmp; /* scratch of tmp_size bytes (non-commutative ops), freed by _end */
    size_t tmp_size;
};

/* dst = x op y over n elements, with x the operand of the lower ranks (the
 * same contract as strata_reduce_fn: dst may be x, neither overlaps y).
 * Commutative ops fold y into dst; non-commutative ones keep x op y. */
void strata_user_op_apply(struct strata_user_op_call *c, void *dst, const void *x,
                          const void *y, size_t n);

/* Releases the call's scratch. */
void strata_user_op_call_end(struct strata_user_op_call *c);

/* Whether strata's node reductions on hierarchy h combine operands in rank
 * order, as a non-commutative op needs: every group of every level holds a
 * contiguous range of ranks (participants are combined in the order of the
 * groups they stand for, ascending; tree.h). */
int strata_user_op_rank_ordered(const struct strata_hier *h);

#endif
