/* MPICH 5.0.2 and Intel MPI 2021.19 deactivate a completed persistent request in
 * MPI_Request_get_status (MPICH 4.0.2 does not; the standard says it neither deallocates
 * nor deactivates): the second MPI_Waitany below then returns MPI_UNDEFINED there.
 * handle_finished's get_status loop (src/request/nonblocking.c) therefore leaves a hosted
 * handle inactive, and the array calls find nothing: the host matrix's failures of this
 * branch (session 2026-11-28, twelfth).  mpicc gs.c -o gs && mpiexec -n 1 ./gs */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm self; MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Request r[2]; char b;
    MPI_Recv_init(&b, 0, MPI_BYTE, 0, 7, self, &r[0]);
    MPI_Recv_init(&b, 0, MPI_BYTE, 0, 8, self, &r[1]);
    MPI_Start(&r[0]); MPI_Start(&r[1]);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 7, self);
    int flag = 0; while (!flag) MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 8, self);
    int idx = -5;
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE); printf("waitany 1: idx %d\n", idx);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE); printf("waitany 2: idx %d\n", idx);
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE); printf("waitany 3: idx %d (undefined %d)\n", idx, MPI_UNDEFINED);
    MPI_Finalize();
}
