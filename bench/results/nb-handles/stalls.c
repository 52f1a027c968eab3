#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int c,char**v){int p,r;MPI_Init_thread(&c,&v,MPI_THREAD_MULTIPLE,&p);MPI_Comm_rank(MPI_COMM_WORLD,&r);
 int n=atoi(v[1]); int coll=atoi(v[2]); int x=r,y;MPI_Request q; int s50=0,h50=0; double smax=0,hmax=0,ssum=0,hsum=0;
 for(int i=0;i<n;i++){
   PMPI_Barrier(MPI_COMM_WORLD); double t=MPI_Wtime();
   if(coll==0) MPI_Iallreduce(&x,&y,1,MPI_INT,MPI_SUM,MPI_COMM_WORLD,&q); else MPI_Ibcast(&x,1,MPI_INT,0,MPI_COMM_WORLD,&q);
   MPI_Wait(&q,MPI_STATUS_IGNORE);
   t=MPI_Wtime()-t; ssum+=t; if(t>50e-6)s50++; if(t>smax)smax=t;
   PMPI_Barrier(MPI_COMM_WORLD); t=MPI_Wtime();
   if(coll==0) PMPI_Iallreduce(&x,&y,1,MPI_INT,MPI_SUM,MPI_COMM_WORLD,&q); else PMPI_Ibcast(&x,1,MPI_INT,0,MPI_COMM_WORLD,&q);
   PMPI_Wait(&q,MPI_STATUS_IGNORE);
   t=MPI_Wtime()-t; hsum+=t; if(t>50e-6)h50++; if(t>hmax)hmax=t;}
 printf("rank %d: strata mean %.2f us, %d > 50us, max %.0f | host mean %.2f, %d > 50us, max %.0f\n",r,ssum/n*1e6,s50,smax*1e6,hsum/n*1e6,h50,hmax*1e6);
 MPI_Finalize();}
