/* What completing one nonblocking operation through the host MPI costs, per
 * mechanism (issue 31 item 3), one process, N times each, alternating:
 *  irecv:   PMPI_Irecv of an empty message on a dup of MPI_COMM_SELF at the
 *           post, an empty PMPI_Send to oneself at completion, PMPI_Wait
 *           (what src/request/nonblocking.c does now);
 *  persist: the same with a persistent receive made once (PMPI_Start per op);
 *  greq:    MPI_Grequest_start, MPI_Grequest_complete, PMPI_Wait;
 *  none:    a flag (what strata's own completion of an inactive handle costs
 *           at least: persistent.c's path). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int q(void *e, MPI_Status *s) { (void)e; MPI_Status_set_elements(s, MPI_BYTE, 0); MPI_Status_set_cancelled(s, 0); s->MPI_SOURCE = MPI_UNDEFINED; s->MPI_TAG = MPI_UNDEFINED; return MPI_SUCCESS; }
static int f(void *e) { (void)e; return MPI_SUCCESS; }
static int c(void *e, int done) { (void)e; (void)done; return MPI_SUCCESS; }
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm self;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    MPI_Request pr;
    MPI_Recv_init(NULL, 0, MPI_BYTE, 0, 7, self, &pr);
    double t[4] = {0};
    volatile int flag = 0;
    for (int round = 0; round < 5; round++) {
        double a = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPI_Request r;
            PMPI_Irecv(NULL, 0, MPI_BYTE, 0, 5, self, &r);
            PMPI_Send(NULL, 0, MPI_BYTE, 0, 5, self);
            PMPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double b = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            PMPI_Start(&pr);
            PMPI_Send(NULL, 0, MPI_BYTE, 0, 7, self);
            PMPI_Wait(&pr, MPI_STATUS_IGNORE);
        }
        double cc = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            MPI_Request r;
            MPI_Grequest_start(q, f, c, NULL, &r);
            MPI_Grequest_complete(r);
            PMPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        double d = MPI_Wtime();
        for (int i = 0; i < n; i++) flag = flag + 1;
        double e = MPI_Wtime();
        if (round) t[0] += b - a, t[1] += cc - b, t[2] += d - cc, t[3] += e - d;
    }
    printf("ns per operation (4 rounds of %d): irecv+self send+wait %.1f, persistent start+self "
           "send+wait %.1f, grequest start+complete+wait %.1f, flag %.1f\n", n,
           t[0] / (4.0 * n) * 1e9, t[1] / (4.0 * n) * 1e9, t[2] / (4.0 * n) * 1e9,
           t[3] / (4.0 * n) * 1e9);
    MPI_Request_free(&pr);
    MPI_Comm_free(&self);
    MPI_Finalize();
    return 0;
}
