/* What strata serves and what it leaves aside, on a small program of the
 * kind applications are: a pivot search with a user-defined max-with-index
 * over a struct (commutative), a chain of 2x2 transforms (a user-defined,
 * non-commutative op), an op created by a "library" through PMPI_Op_create
 * (strata does not see it), per-rank bookkeeping on MPI_COMM_SELF, and an
 * MPI_Alltoall.  docs/USAGE.md shows its STRATA_STATS report.  A plain MPI
 * program: strata reaches it by preloading (strata-run). */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct pivot {
    double value;
    int row;
};

static void pivot_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const struct pivot *a = in;
    struct pivot *b = inout;
    for (int i = 0; i < *len; i++)
        if (a[i].value > b[i].value || (a[i].value == b[i].value && a[i].row < b[i].row))
            b[i] = a[i];
}

/* inout = in * inout, 2x2 integer matrices (the chain in rank order). */
static void chain(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const long *a = in;
    long *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        long r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void library_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) ((double *)inout)[i] += ((double *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Datatype pivot_type, matrix;
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct pivot, value), offsetof(struct pivot, row)};
    MPI_Datatype members[2] = {MPI_DOUBLE, MPI_INT}, raw;
    MPI_Type_create_struct(2, lens, disp, members, &raw);
    MPI_Type_create_resized(raw, 0, sizeof(struct pivot), &pivot_type);
    MPI_Type_free(&raw);
    MPI_Type_set_name(pivot_type, "pivot");
    MPI_Type_commit(&pivot_type);
    MPI_Type_contiguous(4, MPI_LONG, &matrix);
    MPI_Type_commit(&matrix);
    MPI_Op max_op, chain_op, lib_op;
    MPI_Op_create(pivot_max, 1, &max_op);
    MPI_Op_create(chain, 0, &chain_op);
    PMPI_Op_create(library_sum, 1, &lib_op); /* as a library linked to the host MPI would */

    struct pivot p[64], best[64];
    long m[4] = {1, rank + 1, 0, 1}, prod[4];
    double part[8], total[8], mine = rank, copy;
    for (int step = 0; step < 10; step++) {
        for (int i = 0; i < 64; i++) p[i] = (struct pivot){(double)((rank * 7 + i * step) % 13), rank};
        MPI_Allreduce(p, best, 64, pivot_type, max_op, MPI_COMM_WORLD);
        MPI_Reduce(m, prod, 1, matrix, chain_op, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 8; i++) part[i] = rank + i;
        MPI_Allreduce(part, total, 8, MPI_DOUBLE, lib_op, MPI_COMM_WORLD);
        MPI_Gather(&mine, 1, MPI_DOUBLE, &copy, 1, MPI_DOUBLE, 0, MPI_COMM_SELF);
    }
    int out[64], in[64];
    for (int i = 0; i < size; i++) out[i] = rank * 100 + i;
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0)
        printf("best pivot %g (row %d); chain [%ld %ld; %ld %ld]; sum %g; alltoall %d\n",
               best[0].value, best[0].row, prod[0], prod[1], prod[2], prod[3], total[0],
               in[size - 1]);
    PMPI_Op_free(&lib_op);
    MPI_Op_free(&max_op);
    MPI_Op_free(&chain_op);
    MPI_Type_free(&pivot_type);
    MPI_Type_free(&matrix);
    MPI_Finalize();
    return 0;
}
