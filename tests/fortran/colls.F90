! strata's collectives from Fortran (issue 18), one source for three
! bindings: use mpi (default), use mpi_f08 (-DF08), mpif.h (-DMPIFH);
! -DPMPI_INIT initialises with PMPI_Init, so that strata's MPI_Init never
! runs.  Every collective strata serves (up to 2.4 MB), with results
! checked against values computed here (exact in floating point), in-place
! forms, MPI_BOTTOM, Fortran types and pair types in every predefined
! operation they take, and ierror set on success and on an error.  Rank 0
! prints how many calls of each collective each rank made ("EXPECT
! MPI_Bcast <strata> <host>"), for tests/scripts/fortran_stats.sh to find in
! STRATA_STATS.
#if defined(F08)
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif
module checks
#if defined(F08)
  use mpi_f08
#elif !defined(MPIFH)
  use mpi
#endif
  implicit none
#if defined(MPIFH)
  include 'mpif.h'
#endif
  integer :: rank, nranks, failures = 0
  integer :: n_bcast = 0, n_reduce = 0, n_allreduce = 0, n_gather = 0, n_scatter = 0
  integer :: n_allgather = 0, n_alltoall = 0, n_barrier = 0, n_host_bcast = 0
  integer :: n_gatherv = 0, n_allgatherv = 0, n_alltoallv = 0, n_scatterv = 0
  integer :: n_rsb = 0, n_rs = 0, n_scan = 0, n_exscan = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
      failures = failures + 1
    end if
  end subroutine

  subroutine check_ierr(ierr, what)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: what
    call check(ierr == MPI_SUCCESS, what // ': ierror not MPI_SUCCESS')
  end subroutine
end module

program colls
  use checks
  implicit none
  integer, parameter :: n = 37
  HANDLE(MPI_Comm) :: comm, errcomm
  HANDLE(MPI_Datatype) :: absolute
  integer(kind=MPI_ADDRESS_KIND) :: where(1)
  integer, volatile :: ibot(n) ! changed behind the compiler's back (MPI_BOTTOM)
  integer :: ierr, root, i, j, r
  integer :: ibuf(n), iout(n), iexp(n)
  integer :: vcounts(64), vdispls(64), rcounts(64), rdispls(64), vin(256), vout(4096)
  integer(kind=8) :: i8(n), i8out(n)
  real :: rbuf(n), rout(n)
  double precision :: dbuf(n), dout(n)
  complex :: cbuf(n), cout(n)
  double complex :: zbuf(n), zout(n)
  logical :: lbuf(n), lout(n), lexp(n)
  integer :: ipair(2, n), ipout(2, n)
  real :: rpair(2, n), rpout(2, n)
  double precision :: dpair(2, n), dpout(2, n)
  integer, allocatable :: gath(:), allexp(:), a2a(:), a2aout(:)
  double precision, allocatable :: big(:), bigout(:), bigexp(:)
  integer, parameter :: nbig = 300000 ! 2.4 MB: the pipelined, single-copy paths
  HANDLE(MPI_Request) :: reqs(2)

#if defined(PMPI_INIT)
  call PMPI_Init(ierr)
#else
  ierr = -99
  call MPI_Init(ierr)
  call check_ierr(ierr, 'MPI_Init')
#endif
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  comm = MPI_COMM_WORLD

  ! ---- Bcast: every root, integers and doubles ----
  do root = 0, nranks - 1
    ibuf = -1
    dbuf = -1
    if (rank == root) then
      ibuf = [(i * 7 + root, i = 1, n)]
      dbuf = [(i * 0.5d0 + root, i = 1, n)]
    end if
    ierr = -99
    call MPI_Bcast(ibuf, n, MPI_INTEGER, root, comm, ierr)
    call check_ierr(ierr, 'Bcast integer')
    call MPI_Bcast(dbuf, n, MPI_DOUBLE_PRECISION, root, comm, ierr)
    n_bcast = n_bcast + 2
    call check(all(ibuf == [(i * 7 + root, i = 1, n)]), 'Bcast integer values')
    call check(all(dbuf == [(i * 0.5d0 + root, i = 1, n)]), 'Bcast double values')
    ! MPI_BOTTOM with a type of absolute addresses: the Fortran sentinel
    ! must become C's MPI_BOTTOM.
    ibot = -1
    if (rank == root) ibot = [(i * 3 - root, i = 1, n)]
    call MPI_Get_address(ibot, where(1), ierr)
    call MPI_Type_create_hindexed(1, [n], where, MPI_INTEGER, absolute, ierr)
    call MPI_Type_commit(absolute, ierr)
    ierr = -99
    call MPI_Bcast(MPI_BOTTOM, 1, absolute, root, comm, ierr)
    call check_ierr(ierr, 'Bcast MPI_BOTTOM')
    call check(all(ibot == [(i * 3 - root, i = 1, n)]), 'Bcast MPI_BOTTOM values')
    call MPI_Type_free(absolute, ierr)
    n_bcast = n_bcast + 1
  end do

  ! ---- Allreduce and Reduce on Fortran types ----
  ! Integers: SUM PROD MAX MIN BAND BOR BXOR, plain and in place.
  ibuf = [(mod(i + rank, 5) + 1, i = 1, n)]
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Allreduce integer sum')
  iexp = [(sum([(mod(i + r, 5) + 1, r = 0, nranks - 1)]), i = 1, n)]
  call check(all(iout == iexp), 'Allreduce integer sum values')
  iout = ibuf
  call MPI_Allreduce(MPI_IN_PLACE, iout, n, MPI_INTEGER, MPI_PROD, comm, ierr)
  iexp = [(product([(mod(i + r, 5) + 1, r = 0, nranks - 1)]), i = 1, n)]
  call check(all(iout == iexp), 'Allreduce integer prod in place')
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_MAX, comm, ierr)
  call check(all(iout == [(maxval([(mod(i + r, 5) + 1, r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce integer max')
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_MIN, comm, ierr)
  call check(all(iout == [(minval([(mod(i + r, 5) + 1, r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce integer min')
  ibuf = [(ishft(1, mod(i + rank, 20)), i = 1, n)]
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_BOR, comm, ierr)
  iexp = 0
  do r = 0, nranks - 1
    iexp = ior(iexp, [(ishft(1, mod(i + r, 20)), i = 1, n)])
  end do
  call check(all(iout == iexp), 'Allreduce integer bor')
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_BXOR, comm, ierr)
  iexp = 0
  do r = 0, nranks - 1
    iexp = ieor(iexp, [(ishft(1, mod(i + r, 20)), i = 1, n)])
  end do
  call check(all(iout == iexp), 'Allreduce integer bxor')
  ibuf = [(ior(rank, 256 * i), i = 1, n)]
  call MPI_Allreduce(ibuf, iout, n, MPI_INTEGER, MPI_BAND, comm, ierr)
  iexp = [(256 * i, i = 1, n)]
  do r = 0, nranks - 1
    iexp = iand(iexp, [(ior(r, 256 * i), i = 1, n)])
  end do
  call check(all(iout == iexp), 'Allreduce integer band')
  n_allreduce = n_allreduce + 7

  ! INTEGER8, sums past 32 bits.
  i8 = [(int(i, 8) * 3000000000_8 + rank, i = 1, n)]
  call MPI_Allreduce(i8, i8out, n, MPI_INTEGER8, MPI_SUM, comm, ierr)
  call check(all(i8out == [(nranks * int(i, 8) * 3000000000_8 + nranks * (nranks - 1) / 2, &
                            i = 1, n)]), 'Allreduce integer8 sum')
  n_allreduce = n_allreduce + 1

  ! Reals and doubles: small integers and halves, exact in any order.
  rbuf = [(real(mod(i * (rank + 1), 9)) * 0.5, i = 1, n)]
  dbuf = dble(rbuf)
  call MPI_Allreduce(rbuf, rout, n, MPI_REAL, MPI_SUM, comm, ierr)
  call check(all(rout == [(sum([(real(mod(i * (r + 1), 9)) * 0.5, r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce real sum')
  call MPI_Allreduce(rbuf, rout, n, MPI_REAL, MPI_MAX, comm, ierr)
  call check(all(rout == [(maxval([(real(mod(i * (r + 1), 9)) * 0.5, r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce real max')
  call MPI_Allreduce(dbuf, dout, n, MPI_DOUBLE_PRECISION, MPI_MIN, comm, ierr)
  call check(all(dout == [(minval([(dble(mod(i * (r + 1), 9)) * 0.5d0, r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce double min')
  dbuf = [(1d0 + mod(i + rank, 3), i = 1, n)]
  dout = dbuf
  call MPI_Allreduce(MPI_IN_PLACE, dout, n, MPI_DOUBLE_PRECISION, MPI_PROD, comm, ierr)
  call check(all(dout == [(product([(1d0 + mod(i + r, 3), r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce double prod in place')
  n_allreduce = n_allreduce + 4

  ! Complex SUM and PROD (products of small Gaussian integers: exact).
  cbuf = [(cmplx(mod(i + rank, 3), 1), i = 1, n)]
  zbuf = dcmplx(cbuf)
  call MPI_Allreduce(cbuf, cout, n, MPI_COMPLEX, MPI_SUM, comm, ierr)
  call check(all(cout == [(sum([(cmplx(mod(i + r, 3), 1), r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce complex sum')
  call MPI_Allreduce(zbuf, zout, n, MPI_DOUBLE_COMPLEX, MPI_PROD, comm, ierr)
  call check(all(zout == [(product([(dcmplx(mod(i + r, 3), 1), r = 0, nranks - 1)]), i = 1, n)]), &
             'Allreduce double complex prod')
  n_allreduce = n_allreduce + 2

  ! LOGICAL: LAND LOR LXOR.
  lbuf = [(mod(i + rank, 3) /= 0, i = 1, n)]
  call MPI_Allreduce(lbuf, lout, n, MPI_LOGICAL, MPI_LAND, comm, ierr)
  ! (LOR below on its own values: true only where mod(i + rank, 3) == 1)
  lexp = .true.
  do r = 0, nranks - 1
    lexp = lexp .and. [(mod(i + r, 3) /= 0, i = 1, n)]
  end do
  call check(all(lout .eqv. lexp), 'Allreduce logical land')
  lbuf = [(mod(i + rank, 3) == 1, i = 1, n)]
  call MPI_Allreduce(lbuf, lout, n, MPI_LOGICAL, MPI_LOR, comm, ierr)
  lexp = .false.
  do r = 0, nranks - 1
    lexp = lexp .or. [(mod(i + r, 3) == 1, i = 1, n)]
  end do
  call check(all(lout .eqv. lexp), 'Allreduce logical lor')
  lbuf = [(mod(i + rank, 3) /= 0, i = 1, n)]
  lout = lbuf
  call MPI_Allreduce(MPI_IN_PLACE, lout, n, MPI_LOGICAL, MPI_LXOR, comm, ierr)
  lexp = .false.
  do r = 0, nranks - 1
    lexp = lexp .neqv. [(mod(i + r, 3) /= 0, i = 1, n)]
  end do
  call check(all(lout .eqv. lexp), 'Allreduce logical lxor in place')
  n_allreduce = n_allreduce + 3

  ! Pairs: MINLOC and MAXLOC, ties broken by the lower index.
  do i = 1, n
    ipair(1, i) = mod(i * (rank + 2), 4)
    ipair(2, i) = rank
  end do
  rpair = real(ipair)
  dpair = dble(ipair)
  call MPI_Allreduce(ipair, ipout, n, MPI_2INTEGER, MPI_MINLOC, comm, ierr)
  call MPI_Allreduce(rpair, rpout, n, MPI_2REAL, MPI_MAXLOC, comm, ierr)
  call MPI_Allreduce(dpair, dpout, n, MPI_2DOUBLE_PRECISION, MPI_MINLOC, comm, ierr)
  n_allreduce = n_allreduce + 3
  do i = 1, n
    iexp(1:2) = [huge(1), 0]
    do r = nranks - 1, 0, -1
      if (mod(i * (r + 2), 4) <= iexp(1)) iexp(1:2) = [mod(i * (r + 2), 4), r]
    end do
    call check(all(ipout(:, i) == iexp(1:2)), '2INTEGER minloc')
    call check(all(dpout(:, i) == dble(iexp(1:2))), '2DOUBLE_PRECISION minloc')
    iexp(1:2) = [-1, 0]
    do r = nranks - 1, 0, -1
      if (mod(i * (r + 2), 4) >= iexp(1)) iexp(1:2) = [mod(i * (r + 2), 4), r]
    end do
    call check(all(rpout(:, i) == real(iexp(1:2))), '2REAL maxloc')
  end do

  ! Reduce at every root, plain and in place.
  do root = 0, nranks - 1
    ibuf = [(i + rank * 100, i = 1, n)]
    iexp = [(nranks * i + 100 * nranks * (nranks - 1) / 2, i = 1, n)]
    iout = -1
    call MPI_Reduce(ibuf, iout, n, MPI_INTEGER, MPI_SUM, root, comm, ierr)
    call check_ierr(ierr, 'Reduce')
    if (rank == root) call check(all(iout == iexp), 'Reduce integer sum')
    dbuf = dble(ibuf)
    if (rank == root) then
      call MPI_Reduce(MPI_IN_PLACE, dbuf, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
      call check(all(dbuf == dble(iexp)), 'Reduce double sum in place')
    else
      call MPI_Reduce(dbuf, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, root, comm, ierr)
    end if
    call check_ierr(ierr, 'Reduce in place')
    n_reduce = n_reduce + 2
  end do

  ! Large buffers: Allreduce in place and Bcast, values exact.
  allocate(big(nbig), bigout(nbig), bigexp(nbig))
  big = [(dble(mod(i + rank, 7)) - 3d0, i = 1, nbig)]
  bigexp = 0
  do r = 0, nranks - 1
    bigexp = bigexp + [(dble(mod(i + r, 7)) - 3d0, i = 1, nbig)]
  end do
  bigout = big
  call MPI_Allreduce(MPI_IN_PLACE, bigout, nbig, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Allreduce large')
  call check(all(bigout == bigexp), 'Allreduce large in place')
  root = nranks - 1
  if (rank /= root) bigout = 0
  call MPI_Bcast(bigout, nbig, MPI_DOUBLE_PRECISION, root, comm, ierr)
  call check(all(bigout == bigexp), 'Bcast large')
  n_allreduce = n_allreduce + 1
  n_bcast = n_bcast + 1

  ! ---- Block collectives ----
  allocate(gath(n * nranks), allexp(n * nranks), a2a(n * nranks), a2aout(n * nranks))
  allexp = [((i + 1000 * r, i = 1, n), r = 0, nranks - 1)]
  ibuf = [(i + 1000 * rank, i = 1, n)]
  call MPI_Allgather(ibuf, n, MPI_INTEGER, gath, n, MPI_INTEGER, comm, ierr)
  call check_ierr(ierr, 'Allgather')
  call check(all(gath == allexp), 'Allgather values')
  gath = 0
  gath(rank * n + 1:rank * n + n) = ibuf
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gath, n, MPI_INTEGER, comm, ierr)
  call check(all(gath == allexp), 'Allgather in place')
  n_allgather = n_allgather + 2
  do root = 0, nranks - 1
    gath = -1
    call MPI_Gather(ibuf, n, MPI_INTEGER, gath, n, MPI_INTEGER, root, comm, ierr)
    call check_ierr(ierr, 'Gather')
    if (rank == root) call check(all(gath == allexp), 'Gather values')
    if (rank == root) then
      gath = -1
      gath(rank * n + 1:rank * n + n) = ibuf
      call MPI_Gather(MPI_IN_PLACE, n, MPI_INTEGER, gath, n, MPI_INTEGER, root, comm, ierr)
      call check(all(gath == allexp), 'Gather in place')
    else
      call MPI_Gather(ibuf, n, MPI_INTEGER, gath, n, MPI_INTEGER, root, comm, ierr)
    end if
    iout = -1
    call MPI_Scatter(allexp, n, MPI_INTEGER, iout, n, MPI_INTEGER, root, comm, ierr)
    call check_ierr(ierr, 'Scatter')
    call check(all(iout == ibuf), 'Scatter values')
    if (rank == root) then
      call MPI_Scatter(allexp, n, MPI_INTEGER, MPI_IN_PLACE, n, MPI_INTEGER, root, comm, ierr)
    else
      call MPI_Scatter(allexp, n, MPI_INTEGER, iout, n, MPI_INTEGER, root, comm, ierr)
      call check(all(iout == ibuf), 'Scatter values (in place at the root)')
    end if
    n_gather = n_gather + 2
    n_scatter = n_scatter + 2
  end do
  ! Alltoall: block j of rank r holds r*1000 + j*10 + i.
  a2a = [(((rank * 1000 + j * 10 + i), i = 1, n), j = 0, nranks - 1)]
  call MPI_Alltoall(a2a, n, MPI_INTEGER, a2aout, n, MPI_INTEGER, comm, ierr)
  call check_ierr(ierr, 'Alltoall')
  allexp = [(((r * 1000 + rank * 10 + i), i = 1, n), r = 0, nranks - 1)]
  call check(all(a2aout == allexp), 'Alltoall values')
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a, n, MPI_INTEGER, comm, ierr)
  call check(all(a2a == allexp), 'Alltoall in place')
  n_alltoall = n_alltoall + 2

  ! The v-collectives: rank r's block has r+1 elements, blocks in reverse
  ! rank order with gaps (vout keeps -1 there).
  do r = 0, nranks - 1
    vcounts(r + 1) = r + 1
    vdispls(r + 1) = (nranks - 1 - r) * (nranks + 2)
  end do
  vin(1:rank + 1) = [(rank * 100 + i, i = 1, rank + 1)]
  vout = -1
  call MPI_Allgatherv(vin, rank + 1, MPI_INTEGER, vout, vcounts, vdispls, MPI_INTEGER, comm, ierr)
  call check_ierr(ierr, 'Allgatherv')
  do r = 0, nranks - 1
    call check(all(vout(vdispls(r + 1) + 1:vdispls(r + 1) + r + 1) == [(r * 100 + i, i = 1, r + 1)]), &
               'Allgatherv values')
    call check(vout(vdispls(r + 1) + r + 2) == -1, 'Allgatherv wrote into a gap')
  end do
  n_allgatherv = n_allgatherv + 1
  vout = -1
  call MPI_Gatherv(vin, rank + 1, MPI_INTEGER, vout, vcounts, vdispls, MPI_INTEGER, 0, comm, ierr)
  call check_ierr(ierr, 'Gatherv')
  if (rank == 0) then
    do r = 0, nranks - 1
      call check(all(vout(vdispls(r + 1) + 1:vdispls(r + 1) + r + 1) == [(r * 100 + i, i = 1, r + 1)]), &
                 'Gatherv values')
    end do
  end if
  n_gatherv = n_gatherv + 1
  ! Alltoallv: rank me sends r me+r+1 elements (so it receives as many).
  j = 0
  do r = 0, nranks - 1
    rcounts(r + 1) = rank + r + 1
    rdispls(r + 1) = j
    vin(j + 1:j + rank + r + 1) = [(rank * 1000 + r * 10 + i, i = 1, rank + r + 1)]
    j = j + rank + r + 1
  end do
  vout = -1
  call MPI_Alltoallv(vin, rcounts, rdispls, MPI_INTEGER, vout, rcounts, rdispls, MPI_INTEGER, &
                     comm, ierr)
  call check_ierr(ierr, 'Alltoallv')
  do r = 0, nranks - 1
    call check(all(vout(rdispls(r + 1) + 1:rdispls(r + 1) + rank + r + 1) == &
                   [(r * 1000 + rank * 10 + i, i = 1, rank + r + 1)]), 'Alltoallv values')
  end do
  n_alltoallv = n_alltoallv + 1

  ! Scatterv: root 0 sends rank r the r+1 elements of the Allgatherv layout.
  vout = -1
  do r = 0, nranks - 1
    vout(vdispls(r + 1) + 1:vdispls(r + 1) + r + 1) = [(r * 100 + i, i = 1, r + 1)]
  end do
  vin = -1
  call MPI_Scatterv(vout, vcounts, vdispls, MPI_INTEGER, vin, rank + 1, MPI_INTEGER, 0, comm, ierr)
  call check_ierr(ierr, 'Scatterv')
  call check(all(vin(1:rank + 1) == [(rank * 100 + i, i = 1, rank + 1)]), 'Scatterv values')
  call check(vin(rank + 2) == -1, 'Scatterv wrote past the block')
  n_scatterv = n_scatterv + 1

  ! Reductions to blocks and prefixes: rank q contributes q + j at element j,
  ! so element j sums to nranks * j + nranks * (nranks - 1) / 2.
  do j = 1, 2 * nranks + nranks * (nranks + 1) / 2
    vin(j) = rank + j
  end do
  vout = -1
  call MPI_Reduce_scatter_block(vin, vout, 2, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Reduce_scatter_block')
  call check(all(vout(1:2) == [(nranks * (2 * rank + i) + nranks * (nranks - 1) / 2, i = 1, 2)]), &
             'Reduce_scatter_block values')
  n_rsb = n_rsb + 1
  ! Reduce_scatter: rank r's block has r+1 elements (vcounts).
  vout = -1
  call MPI_Reduce_scatter(vin, vout, vcounts, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Reduce_scatter')
  call check(all(vout(1:rank + 1) == [(nranks * (rank * (rank + 1) / 2 + i) + &
                                       nranks * (nranks - 1) / 2, i = 1, rank + 1)]), &
             'Reduce_scatter values')
  n_rs = n_rs + 1
  vout = -1
  call MPI_Scan(vin, vout, 3, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Scan')
  call check(all(vout(1:3) == [((rank + 1) * i + rank * (rank + 1) / 2, i = 1, 3)]), 'Scan values')
  n_scan = n_scan + 1
  vout = -1
  call MPI_Exscan(vin, vout, 3, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check_ierr(ierr, 'Exscan')
  if (rank > 0) call check(all(vout(1:3) == [(rank * i + rank * (rank - 1) / 2, i = 1, 3)]), &
                           'Exscan values')
  n_exscan = n_exscan + 1

  ierr = -99
  call MPI_Barrier(comm, ierr)
  call check_ierr(ierr, 'Barrier')
  n_barrier = n_barrier + 1

  ! ---- ierror on an error: a root out of range, errors returned ----
  call MPI_Comm_dup(MPI_COMM_WORLD, errcomm, ierr)
  call MPI_Comm_set_errhandler(errcomm, MPI_ERRORS_RETURN, ierr)
  ierr = MPI_SUCCESS
  call MPI_Bcast(ibuf, n, MPI_INTEGER, nranks + 3, errcomm, ierr)
  call check(ierr /= MPI_SUCCESS, 'Bcast with a bad root: ierror not set')
  n_host_bcast = n_host_bcast + 1
  call MPI_Comm_free(errcomm, ierr)

  ! ---- Nonblocking (issue 17): strata serves them where the binding reaches
  ! its C functions (MPICH), the host otherwise; completed with MPI_Wait and
  ! MPI_Waitall, which must progress strata's operations either way.
  ibuf = rank + 1
  call MPI_Iallreduce(ibuf, iout, n, MPI_INTEGER, MPI_SUM, comm, reqs(1), ierr)
  call check_ierr(ierr, 'MPI_Iallreduce')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(all(iout == nranks * (nranks + 1) / 2), 'Iallreduce result')
  if (rank == 0) ibuf = 42
  dbuf = rank
  call MPI_Ibcast(ibuf, n, MPI_INTEGER, 0, comm, reqs(1), ierr)
  call MPI_Iallreduce(MPI_IN_PLACE, dbuf, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check_ierr(ierr, 'MPI_Waitall')
  call check(all(ibuf == 42), 'Ibcast result')
  call check(all(dbuf == nranks - 1), 'Iallreduce in place result')

  ! (Freed, so that LeakSanitizer finds only what is not the program's.)
  deallocate(gath, allexp, a2a, a2aout, big, bigout, bigexp)
  call MPI_Allreduce(failures, i, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  n_allreduce = n_allreduce + 1
  if (rank == 0) then
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Bcast', n_bcast, n_host_bcast
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Reduce', n_reduce, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allreduce', n_allreduce, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Gather', n_gather, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Scatter', n_scatter, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allgather', n_allgather, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Alltoall', n_alltoall, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Barrier', n_barrier, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Reduce_scatter_block', n_rsb, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Reduce_scatter', n_rs, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Scan', n_scan, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Exscan', n_exscan, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Gatherv', n_gatherv, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Scatterv', n_scatterv, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allgatherv', n_allgatherv, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Alltoallv', n_alltoallv, 0
    if (i == 0) then
      print '(a)', 'PASS fortran collectives'
    else
      print '(a,i0,a)', 'FAIL: ', i, ' checks failed'
    end if
  end if
  call MPI_Finalize(ierr)
  if (i /= 0) stop 1
end program
