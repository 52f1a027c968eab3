! Conjugate gradients: the 2-D Poisson equation -u'' = f on an m x m grid
! (5-point Laplacian, zero boundary), N = m*m unknowns dealt over the ranks
! in blocks of rows, as a Fortran solver does it with MPI:
!   - MPI_Bcast: rank 0 reads the parameters and hands them out;
!   - MPI_Allgather: each iteration every rank gets the whole search
!     direction (its block padded to the largest), for the matrix-vector
!     product;
!   - MPI_Allreduce: the dot products, two per iteration (the collective
!     this application times and reports);
!   - MPI_Gather: the solution to rank 0 at the end.
!
! Reproducible dot products, hence exact verification: each rank puts its
! partial sum in its own slot of a zeroed vector of one double per rank, and
! the MPI_Allreduce (MPI_SUM, MPI_DOUBLE_PRECISION) adds zeros to it, which
! is exact in any order; every rank then adds the slots in rank order.  So
! the result is the same bits whatever the MPI or strata do, and the serial
! reference (--verify, on rank 0) that sums the same blocks in the same
! order must match the parallel solution bit for bit.  A collective that
! drops, repeats or misplaces a contribution changes the result.
!
!   cg M [MAXIT] [--verify]       prints a RESULT line like apps/asp.c
program cg
  use mpi
  implicit none
  integer :: ierr, rank, nranks, m, n, maxit, nb, lo, nmine, iters, verify, i, r
  integer :: params(3)
  double precision, allocatable :: b(:), x(:), res(:), p(:), q(:), pfull(:), pgath(:)
  double precision, allocatable :: xg(:), xs(:)
  double precision :: rho, rho_new, alpha, t0, t_total, t_coll, times(2), tmax(2), tsum(2)
  double precision :: bnorm, resid
  integer :: calls
  integer(kind=8) :: h1, h2
  character(len=64) :: arg
  character(len=8) :: verdict
  logical :: ok = .true.

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  t0 = MPI_Wtime()
  calls = 0
  t_coll = 0

  ! Rank 0 reads the command line, everyone gets it.
  params = [64, 1000, 0]
  if (rank == 0) then
    r = 0
    do i = 1, command_argument_count()
      call get_command_argument(i, arg)
      if (trim(arg) == '--verify') then
        params(3) = 1
      else
        r = r + 1
        if (r <= 2) read (arg, *) params(r)
      end if
    end do
  end if
  call MPI_Bcast(params, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  m = params(1)
  maxit = params(2)
  verify = params(3)
  if (m < 2 .or. maxit < 1) then
    if (rank == 0) print '(a)', 'usage: cg M [MAXIT] [--verify] (M >= 2)'
    call MPI_Finalize(ierr)
    stop 2
  end if
  n = m * m
  nb = (n + nranks - 1) / nranks ! the padded block
  call block_of(rank, lo, nmine)

  allocate(b(nmine), x(nmine), res(nmine), p(nmine), q(nmine), pfull(n), pgath(nb * nranks))
  pgath = 0
  do i = 1, nmine
    b(i) = rhs(lo + i)
  end do
  call solve_parallel()

  ! The solution on rank 0, for the checksum and the check.
  allocate(xg(nb * nranks))
  pgath = 0
  pgath(1:nmine) = x
  call MPI_Gather(pgath, nb, MPI_DOUBLE_PRECISION, xg, nb, MPI_DOUBLE_PRECISION, 0, &
                  MPI_COMM_WORLD, ierr)
  t_total = MPI_Wtime() - t0
  times = [t_total, t_coll]
  call MPI_Reduce(times, tmax, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(times, tsum, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    ! Back to global order, then FNV-1a (two 32-bit lanes) over its bytes.
    do r = 0, nranks - 1
      call block_of(r, lo, i)
      pfull(lo + 1:lo + i) = xg(r * nb + 1:r * nb + i)
    end do
    call checksum(pfull, h1, h2)
    resid = true_residual(pfull)
    print '(a,i0,a,i0,a,es10.3)', 'cg: ', m, ' x ', m, ' grid, residual ', resid
    ok = .true.
    if (verify == 1) then
      allocate(xs(n))
      call solve_serial(xs)
      ok = all(xs == pfull) .and. resid < 1d-6
      if (ok) then
        print '(a)', 'cg: verify OK (bit-identical to the serial solve)'
      else
        print '(a,i0,a)', 'cg: verify FAILED (', count(xs /= pfull), ' values differ)'
      end if
    end if
    verdict = 'skipped'
    if (verify == 1) verdict = merge('yes', 'no ', ok)
    print '(a,i0,a,f0.3,a,i0,a)', 'cg: ', iters, ' iterations, ', 1d3 * tmax(2), &
          ' ms max in MPI_Allreduce, ', calls, ' calls'
    print '(a,i0,a,f0.6,a,f0.6,a,f0.6,a,i0,a,i0,a,z8.8,z8.8,a,a)', 'RESULT app=cg ranks=', &
          nranks, ' total_s=', tmax(1), ' coll=MPI_Allreduce coll_max_s=', tmax(2), &
          ' coll_mean_s=', tsum(2) / nranks, ' calls=', calls, ' bytes=', 8 * nranks, &
          ' checksum=', h1, h2, ' verified=', trim(verdict)
  end if
  call MPI_Finalize(ierr)
  if (rank == 0 .and. .not. ok) stop 1

contains

  ! Rank r's rows: lo+1 .. lo+count (unequal blocks when N is not a multiple).
  subroutine block_of(r, lo, count)
    integer, intent(in) :: r
    integer, intent(out) :: lo, count
    lo = r * (n / nranks) + min(r, mod(n, nranks))
    count = n / nranks
    if (r < mod(n, nranks)) count = count + 1
  end subroutine

  double precision function rhs(g)
    integer, intent(in) :: g
    rhs = 1d0 + dble(mod(g * 7, 13)) / 13d0
  end function

  ! (A v)(g) for the global row g, v the whole vector.
  double precision function apply_row(v, g)
    double precision, intent(in) :: v(:)
    integer, intent(in) :: g
    integer :: row, col
    row = (g - 1) / m
    col = mod(g - 1, m)
    apply_row = 4d0 * v(g)
    if (col > 0) apply_row = apply_row - v(g - 1)
    if (col < m - 1) apply_row = apply_row - v(g + 1)
    if (row > 0) apply_row = apply_row - v(g - m)
    if (row < m - 1) apply_row = apply_row - v(g + m)
  end function

  ! The dot product of two local blocks, reproducibly (see the top).
  double precision function dot(a, c)
    double precision, intent(in) :: a(:), c(:)
    double precision :: slots(nranks), total(nranks), t
    integer :: k
    slots = 0
    do k = 1, size(a)
      slots(rank + 1) = slots(rank + 1) + a(k) * c(k)
    end do
    t = MPI_Wtime()
    call MPI_Allreduce(slots, total, nranks, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    t_coll = t_coll + (MPI_Wtime() - t)
    calls = calls + 1
    dot = 0
    do k = 1, nranks
      dot = dot + total(k)
    end do
  end function

  subroutine solve_parallel()
    integer :: k, g
    x = 0
    res = b
    p = res
    rho = dot(res, res)
    bnorm = sqrt(rho)
    iters = 0
    do while (iters < maxit .and. sqrt(rho) > 1d-10 * bnorm)
      ! In place: this rank's block goes to its place in pgath first.
      pgath(rank * nb + 1:rank * nb + nmine) = p
      call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pgath, nb, MPI_DOUBLE_PRECISION, &
                         MPI_COMM_WORLD, ierr)
      do r = 0, nranks - 1
        call block_of(r, g, k)
        pfull(g + 1:g + k) = pgath(r * nb + 1:r * nb + k)
      end do
      do k = 1, nmine
        q(k) = apply_row(pfull, lo + k)
      end do
      alpha = rho / dot(p, q)
      x = x + alpha * p
      res = res - alpha * q
      rho_new = dot(res, res)
      p = res + (rho_new / rho) * p
      rho = rho_new
      iters = iters + 1
    end do
  end subroutine

  ! The same iteration on one process: the same blocks, summed in order.
  subroutine solve_serial(xs)
    double precision, intent(out) :: xs(:)
    double precision, allocatable :: rs(:), ps(:), qs(:)
    double precision :: rh, rh_new, al
    integer :: it, g
    allocate(rs(n), ps(n), qs(n))
    do g = 1, n
      rs(g) = rhs(g)
    end do
    xs = 0
    ps = rs
    rh = blocked_dot(rs, rs)
    it = 0
    do while (it < maxit .and. sqrt(rh) > 1d-10 * sqrt(blocked_dot_b()))
      do g = 1, n
        qs(g) = apply_row(ps, g)
      end do
      al = rh / blocked_dot(ps, qs)
      xs = xs + al * ps
      rs = rs - al * qs
      rh_new = blocked_dot(rs, rs)
      ps = rs + (rh_new / rh) * ps
      rh = rh_new
      it = it + 1
    end do
  end subroutine

  double precision function blocked_dot(a, c)
    double precision, intent(in) :: a(:), c(:)
    double precision :: part
    integer :: rr, s, cnt, k
    blocked_dot = 0
    do rr = 0, nranks - 1
      call block_of(rr, s, cnt)
      part = 0
      do k = s + 1, s + cnt
        part = part + a(k) * c(k)
      end do
      blocked_dot = blocked_dot + part
    end do
  end function

  double precision function blocked_dot_b()
    double precision, allocatable :: bb(:)
    integer :: g
    allocate(bb(n))
    do g = 1, n
      bb(g) = rhs(g)
    end do
    blocked_dot_b = blocked_dot(bb, bb)
  end function

  double precision function true_residual(v)
    double precision, intent(in) :: v(:)
    integer :: g
    true_residual = 0
    do g = 1, n
      true_residual = max(true_residual, abs(rhs(g) - apply_row(v, g)))
    end do
  end function

  ! FNV-1a over the bytes of v, in two 32-bit lanes (different offsets),
  ! with 64-bit arithmetic that never overflows.
  subroutine checksum(v, ha, hb)
    double precision, intent(in) :: v(:)
    integer(kind=8), intent(out) :: ha, hb
    integer(kind=8), parameter :: prime = 16777619_8, mask = 4294967295_8
    integer(kind=8) :: bits, byte
    integer :: k, j
    ha = 2166136261_8
    hb = 1083068131_8
    do k = 1, size(v)
      bits = transfer(v(k), bits)
      do j = 0, 7
        byte = ibits(bits, 8 * j, 8)
        ha = iand(ieor(ha, byte) * prime, mask)
        hb = iand(ieor(hb, byte) * prime, mask)
      end do
    end do
  end subroutine
end program
