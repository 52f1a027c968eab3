/* MPI_Op_create and MPI_Op_free from Fortran (issue 21): the op is created
 * and freed by the host MPI's own Fortran binding, so that the host keeps
 * Fortran conventions wherever it serves a reduction itself (Open MPI marks
 * the op as Fortran's and calls its function with Fortran handles), and
 * recorded in strata's registry with a caller that calls the function the
 * Fortran way.
 *
 * Open MPI's Fortran MPI_Op_create calls PMPI_Op_create, out of strata's
 * sight; MPICH's calls the C MPI_Op_create (strata's wrapper, which then
 * finds the registry's lock held by this thread and leaves the op to this
 * file: strata_user_op_nested). */
#include "fortran/user_ops.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "coll/user_op.h"
#include "util/log.h"

/* The host's Fortran entry points, by the names its Fortran library
 * exports (every mangling: the first one present serves). */
typedef void (*host_create_fn)(void (*fn)(void), MPI_Fint *commute, MPI_Fint *op,
                               MPI_Fint *ierror);
typedef void (*host_free_fn)(MPI_Fint *op, MPI_Fint *ierror);
static host_create_fn host_create;
static host_free_fn host_free;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *find(const char *const names[4])
{
    for (int i = 0; i < 4; i++) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        if (sym) return sym;
    }
    return NULL;
}

static void resolve(void)
{
    /* libstrata defines none of the pmpi_ names: these are the host's. */
    static const char *const create[4] = {"pmpi_op_create_", "pmpi_op_create__",
                                          "pmpi_op_create", "PMPI_OP_CREATE"};
    static const char *const release[4] = {"pmpi_op_free_", "pmpi_op_free__", "pmpi_op_free",
                                           "PMPI_OP_FREE"};
    host_create = (host_create_fn)find(create);
    host_free = (host_free_fn)find(release);
}

/* Calls a Fortran user function, SUBROUTINE f(invec, inoutvec, len,
 * datatype), with len and datatype as Fortran INTEGERs by reference (in
 * mpi_f08, TYPE(MPI_Datatype) holds just that INTEGER). */
static void call_fortran(void (*fn)(void), void *invec, void *inoutvec, int *len,
                         MPI_Datatype *type)
{
    MPI_Fint flen = (MPI_Fint)*len, ftype = PMPI_Type_c2f(*type);
    ((void (*)(void *, void *, MPI_Fint *, MPI_Fint *))fn)(invec, inoutvec, &flen, &ftype);
}

int strata_fortran_op_create(void (*fn)(void), MPI_Fint *commute, MPI_Fint *op)
{
    pthread_once(&once, resolve);
    if (!host_create) {
        /* Only a program without the MPI's Fortran library gets here (one
         * calling strata's Fortran symbols from C): there is no host
         * Fortran op to create. */
        strata_error("Fortran MPI_Op_create: the host MPI's pmpi_op_create_ is not in the "
                     "process (its Fortran library is not loaded)");
        return MPI_ERR_OTHER;
    }
    strata_user_op_lock();
    MPI_Fint ierror = MPI_SUCCESS;
    host_create(fn, commute, op, &ierror);
    if (ierror == MPI_SUCCESS && fn) {
        MPI_Op handle = PMPI_Op_f2c(*op);
        /* Commutativity as the host read the Fortran LOGICAL: the host's
         * own answer, so strata and the host never disagree on an op,
         * whatever the compiler's .true. word or LOGICAL kind. */
        int commutes = 0;
        if (PMPI_Op_commutative(handle, &commutes) != MPI_SUCCESS)
            strata_verbose(1, "MPI_Op_commutative failed on a Fortran user-defined op: the "
                              "host MPI serves reductions with it");
        else if (strata_user_op_register(handle, fn, call_fortran, commutes))
            strata_verbose(1, "out of memory recording a Fortran user-defined op: the host "
                              "MPI serves reductions with it");
    }
    strata_user_op_unlock();
    return (int)ierror;
}

int strata_fortran_op_free(MPI_Fint *op)
{
    pthread_once(&once, resolve);
    if (!host_free) {
        strata_error("Fortran MPI_Op_free: the host MPI's pmpi_op_free_ is not in the process "
                     "(its Fortran library is not loaded)");
        return MPI_ERR_OTHER;
    }
    /* As the C MPI_Op_free: forgotten under the lock once the host freed
     * it, before the handle can be reused by another create. */
    strata_user_op_lock();
    MPI_Op handle = PMPI_Op_f2c(*op);
    MPI_Fint ierror = MPI_SUCCESS;
    host_free(op, &ierror);
    if (ierror == MPI_SUCCESS) strata_user_op_forget(handle);
    strata_user_op_unlock();
    return (int)ierror;
}
