#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD,&rank);
  size_t n = argc>1? (size_t)atol(argv[1]) : 1<<20;
  int iters=300;
  /* placement probe: cache-line ping-pong through a shared window */
  MPI_Win win; volatile long *line;
  MPI_Win_allocate_shared(rank==0?128:0,1,MPI_INFO_NULL,MPI_COMM_WORLD,(void*)&line,&win);
  MPI_Aint sz; int du; MPI_Win_shared_query(win,0,&sz,&du,(void*)&line);
  if(rank==0) line[0]=0;
  PMPI_Barrier(MPI_COMM_WORLD);
  double p0=MPI_Wtime(); int N=20000;
  for(long k=0;k<N;k++){ if(rank==0){ while(line[0]!=2*k) ; __atomic_store_n(&line[0],2*k+1,__ATOMIC_RELEASE);} else { while(line[0]!=2*k+1) ; __atomic_store_n(&line[0],2*k+2,__ATOMIC_RELEASE);} }
  double handoff=(MPI_Wtime()-p0)*1e9/(2.0*N);
  if(rank==0) printf("placement probe: %.0f ns per cache-line hand-off\n",handoff);
  const char *coll = argc>2 ? argv[2] : "bcast";
  int isag = !strcmp(coll,"allgather"), isar = !strcmp(coll,"allreduce");
  int np; MPI_Comm_size(MPI_COMM_WORLD,&np);
  char *buf=malloc(n*(isag?np:1)); char *sb=malloc(n);
  double t[2][300];
  for(int i=0;i<iters;i++){
    for(int which=0;which<2;which++){
      if(rank==0 || isag || isar) memset((isag||isar)?sb:buf,isar?0:i+which,n);
      PMPI_Barrier(MPI_COMM_WORLD);
      double t0=MPI_Wtime();
      if(isar){ if(which) MPI_Allreduce(sb,buf,(int)(n/8),MPI_DOUBLE,MPI_SUM,MPI_COMM_WORLD);
                else PMPI_Allreduce(sb,buf,(int)(n/8),MPI_DOUBLE,MPI_SUM,MPI_COMM_WORLD); }
      else if(isag){ if(which) MPI_Allgather(sb,(int)n,MPI_BYTE,buf,(int)n,MPI_BYTE,MPI_COMM_WORLD);
                else PMPI_Allgather(sb,(int)n,MPI_BYTE,buf,(int)n,MPI_BYTE,MPI_COMM_WORLD); }
      else if(which) MPI_Bcast(buf,(int)n,MPI_BYTE,0,MPI_COMM_WORLD);
      else PMPI_Bcast(buf,(int)n,MPI_BYTE,0,MPI_COMM_WORLD);
      double dt=(MPI_Wtime()-t0)*1e6, mx;
      PMPI_Allreduce(&dt,&mx,1,MPI_DOUBLE,MPI_MAX,MPI_COMM_WORLD);
      t[which][i]=mx;
      if(!isar && buf[(isag?n*np:n)-1]!=(char)(i+which)) {printf("bad\n"); MPI_Abort(MPI_COMM_WORLD,1);}
    }
  }
  if(rank==0) for(int w=0;w<2;w++){qsort(t[w],iters,sizeof(double),cmp);
    printf("%s %s n=%zu p10 %.0f p50 %.0f p75 %.0f p90 %.0f p99 %.0f\n", w?"strata":"host  ",coll,n,t[w][iters/10],t[w][iters/2],t[w][iters*3/4],t[w][iters*9/10],t[w][iters*99/100]);}
  MPI_Finalize();
}
