/* The host MPI's Fortran sentinels.  A Fortran program passes MPI_IN_PLACE
 * and MPI_BOTTOM as the address of a variable in a common block (mpif.h,
 * use mpi) or a bind(C) variable (mpi_f08); the program and the MPI's
 * Fortran library share one copy, found here by name with dlsym:
 *   - Open MPI: mpi_fortran_in_place_ and mpi_fortran_bottom_ (in each
 *     name mangling), the same variables for mpif.h, use mpi and mpi_f08;
 *   - MPICH: pointers MPIR_F_MPI_IN_PLACE and MPIR_F_MPI_BOTTOM to the
 *     common block's members, which MPICH's own wrappers fill once through
 *     mpirinitf_ when MPIR_F_NeedInit says so (done the same way here), and
 *     MPIR_F08_MPI_IN_PLACE, MPIR_F08_MPI_BOTTOM for mpi_f08. */
#include "fortran/sentinels.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>

#include "util/log.h"

#define MAX_SENTINELS 16

static void *in_place[MAX_SENTINELS], *bottom[MAX_SENTINELS];
static int n_in_place, n_bottom;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Adds the variable `name` (deref: the pointer stored in it) to a list. */
static void add(void **list, int *n, const char *name, int deref)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    if (!sym || *n >= MAX_SENTINELS) return;
    void *addr = deref ? *(void **)sym : sym;
    if (addr) list[(*n)++] = addr;
}

static void resolve(void)
{
    /* MPICH fills its pointers on the first Fortran call that needs them. */
    int *need_init = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit");
    void (*mpirinitf)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mpirinitf_");
    if (need_init && *need_init && mpirinitf) {
        mpirinitf();
        *need_init = 0;
    }
    static const char *const ompi_in_place[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                                "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    static const char *const ompi_bottom[] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                              "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    for (int i = 0; i < 4; i++) {
        add(in_place, &n_in_place, ompi_in_place[i], 0);
        add(bottom, &n_bottom, ompi_bottom[i], 0);
    }
    add(in_place, &n_in_place, "MPIR_F_MPI_IN_PLACE", 1);
    add(bottom, &n_bottom, "MPIR_F_MPI_BOTTOM", 1);
    add(in_place, &n_in_place, "MPIR_F08_MPI_IN_PLACE", 0);
    add(bottom, &n_bottom, "MPIR_F08_MPI_BOTTOM", 0);
    if (!n_in_place || !n_bottom)
        strata_verbose(1, "Fortran call without the MPI's Fortran MPI_IN_PLACE/MPI_BOTTOM "
                          "symbols in the process: %d and %d found", n_in_place, n_bottom);
}

void *strata_fortran_buffer(void *buf)
{
    /* pthread_once orders the lists' writes before every reader's loads. */
    pthread_once(&once, resolve);
    for (int i = 0; i < n_in_place; i++)
        if (buf == in_place[i]) return MPI_IN_PLACE;
    for (int i = 0; i < n_bottom; i++)
        if (buf == bottom[i]) return MPI_BOTTOM;
    return buf;
}
