! User-defined ops created from Fortran (issue 21), one source for three
! bindings: use mpi (default), use mpi_f08 (-DF08), mpif.h (-DMPIFH).
! A commutative op (max with index over pairs of INTEGERs, MPI_2INTEGER) and
! a non-commutative one (2x2 INTEGER matrix product modulo 1000 over a
! contiguous type of 4 MPI_INTEGER) in MPI_Reduce (every root) and
! MPI_Allreduce (plain and in place), several counts, against values
! computed here from every rank's operands.  The functions check that they
! get the datatype the program passed, as a Fortran handle.  Rank 0 prints
! "EXPECT MPI_Reduce <strata> <host>" lines for tests/scripts/fortran_stats.sh
! to find in STRATA_STATS: strata must serve every call, except the
! non-commutative ones across (virtual) nodes, which the host serves (with
! the op the host's Fortran binding created, so it calls the function the
! Fortran way too).
#if defined(F08)
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif
module uops
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
  HANDLE(MPI_Datatype) :: expect_type
  integer :: bad_type_calls = 0, fn_calls = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
      failures = failures + 1
    end if
  end subroutine

  ! Commutative: the larger value, the lower index on a tie.
  pure subroutine maxidx_elems(a, b, len)
    integer, intent(in) :: len
    integer, intent(in) :: a(2, len)
    integer, intent(inout) :: b(2, len)
    integer :: k
    do k = 1, len
      if (a(1, k) > b(1, k) .or. (a(1, k) == b(1, k) .and. a(2, k) < b(2, k))) b(:, k) = a(:, k)
    end do
  end subroutine

  ! Non-commutative: b = a * b (a from the lower ranks), column-major 2x2.
  pure subroutine matmul_elems(a, b, len)
    integer, intent(in) :: len
    integer, intent(in) :: a(2, 2, len)
    integer, intent(inout) :: b(2, 2, len)
    integer :: k
    do k = 1, len
      b(:, :, k) = mod(matmul(a(:, :, k), b(:, :, k)), 1000)
    end do
  end subroutine

#if defined(F08)
  subroutine maxidx(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:, :), b(:, :)
    call c_f_pointer(invec, a, [2, len])
    call c_f_pointer(inoutvec, b, [2, len])
    fn_calls = fn_calls + 1
    if (datatype /= expect_type) bad_type_calls = bad_type_calls + 1
    call maxidx_elems(a, b, len)
  end subroutine

  subroutine matprod(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:, :, :), b(:, :, :)
    call c_f_pointer(invec, a, [2, 2, len])
    call c_f_pointer(inoutvec, b, [2, 2, len])
    fn_calls = fn_calls + 1
    if (datatype /= expect_type) bad_type_calls = bad_type_calls + 1
    call matmul_elems(a, b, len)
  end subroutine
#else
  subroutine maxidx(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    fn_calls = fn_calls + 1
    if (datatype /= expect_type) bad_type_calls = bad_type_calls + 1
    call maxidx_elems(invec, inoutvec, len)
  end subroutine

  subroutine matprod(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, 2, len), inoutvec(2, 2, len)
    fn_calls = fn_calls + 1
    if (datatype /= expect_type) bad_type_calls = bad_type_calls + 1
    call matmul_elems(invec, inoutvec, len)
  end subroutine
#endif

  ! Rank r's operands, element k (from 1).
  pure function pair_of(r, k) result(p)
    integer, intent(in) :: r, k
    integer :: p(2)
    p = [mod(r * 7 + k * 13, 11), r * 100000 + k]
  end function

  pure function mat_of(r, k) result(m)
    integer, intent(in) :: r, k
    integer :: m(2, 2)
    m = reshape([1 + mod(r + k, 3), mod(k, 5), mod(r * k + 1, 4), 1 + mod(r, 2)], [2, 2])
  end function
end module

program user_ops
  use uops
  implicit none
  integer, parameter :: ncounts = 4, counts(ncounts) = [1, 7, 300, 5000]
  integer, parameter :: maxn = 5000
  HANDLE(MPI_Comm) :: comm
  HANDLE(MPI_Op) :: opmax, opmat
  HANDLE(MPI_Datatype) :: mattype
  integer :: ierr, root, c, n, k, r, total, nodes, stat
  integer :: n_reduce = 0, n_allreduce = 0, host_reduce = 0, host_allreduce = 0
  integer, allocatable :: pin(:, :), pout(:, :), pexp(:, :)
  integer, allocatable :: min_(:, :, :), mout(:, :, :), mexp(:, :, :)
  character(len=16) :: env
  logical :: across

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  comm = MPI_COMM_WORLD
  ! Across virtual nodes strata leaves non-commutative ops to the host.
  call get_environment_variable('STRATA_VIRTUAL_NODES', env, status=stat)
  nodes = 1
  if (stat == 0) read (env, *) nodes
  across = nodes > 1

  allocate(pin(2, maxn), pout(2, maxn), pexp(2, maxn))
  allocate(min_(2, 2, maxn), mout(2, 2, maxn), mexp(2, 2, maxn))
  do k = 1, maxn
    pin(:, k) = pair_of(rank, k)
    min_(:, :, k) = mat_of(rank, k)
    pexp(:, k) = pair_of(0, k)
    mexp(:, :, k) = mat_of(0, k)
    do r = 1, nranks - 1
      call maxidx_elems(reshape(pair_of(r, k), [2, 1]), pexp(:, k:k), 1)
      ! Rank order: (M0 M1 ... M(r-1)) Mr.
      mexp(:, :, k) = mod(matmul(mexp(:, :, k), mat_of(r, k)), 1000)
    end do
  end do

  ierr = -99
  call MPI_Op_create(maxidx, .true., opmax, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create (commutative): ierror')
  ierr = -99
  call MPI_Op_create(matprod, .false., opmat, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create (non-commutative): ierror')
  call MPI_Type_contiguous(4, MPI_INTEGER, mattype, ierr)
  call MPI_Type_commit(mattype, ierr)

  do c = 1, ncounts
    n = counts(c)
    do root = 0, nranks - 1
      expect_type = MPI_2INTEGER
      pout = -1
      ierr = -99
      call MPI_Reduce(pin, pout, n, MPI_2INTEGER, opmax, root, comm, ierr)
      call check(ierr == MPI_SUCCESS, 'Reduce max-index: ierror')
      if (rank == root) call check(all(pout(:, 1:n) == pexp(:, 1:n)), 'Reduce max-index values')
      call check(all(pout(:, n + 1:) == -1), 'Reduce max-index: past count written')
      expect_type = mattype
      mout = -1
      call MPI_Reduce(min_, mout, n, mattype, opmat, root, comm, ierr)
      call check(ierr == MPI_SUCCESS, 'Reduce matrix product: ierror')
      if (rank == root) &
        call check(all(mout(:, :, 1:n) == mexp(:, :, 1:n)), 'Reduce matrix product values')
      n_reduce = n_reduce + 2
      if (across) host_reduce = host_reduce + 1
    end do
    expect_type = MPI_2INTEGER
    pout = -1
    call MPI_Allreduce(pin, pout, n, MPI_2INTEGER, opmax, comm, ierr)
    call check(ierr == MPI_SUCCESS, 'Allreduce max-index: ierror')
    call check(all(pout(:, 1:n) == pexp(:, 1:n)), 'Allreduce max-index values')
    pout = pin
    call MPI_Allreduce(MPI_IN_PLACE, pout, n, MPI_2INTEGER, opmax, comm, ierr)
    call check(all(pout(:, 1:n) == pexp(:, 1:n)), 'Allreduce max-index in place')
    expect_type = mattype
    mout = -1
    call MPI_Allreduce(min_, mout, n, mattype, opmat, comm, ierr)
    call check(ierr == MPI_SUCCESS, 'Allreduce matrix product: ierror')
    call check(all(mout(:, :, 1:n) == mexp(:, :, 1:n)), 'Allreduce matrix product values')
    mout = min_
    call MPI_Allreduce(MPI_IN_PLACE, mout, n, mattype, opmat, comm, ierr)
    call check(all(mout(:, :, 1:n) == mexp(:, :, 1:n)), 'Allreduce matrix product in place')
    call check(all(mout(:, :, n + 1:) == min_(:, :, n + 1:)), &
               'Allreduce matrix product in place: past count written')
    n_allreduce = n_allreduce + 4
    if (across) host_allreduce = host_allreduce + 2
  end do
  ! Over 2 ranks or more every call combined something on some rank.
  call check(bad_type_calls == 0, 'an op function got another datatype than the call''s')
  call MPI_Allreduce(fn_calls, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check(total > 0, 'the op functions were never called')

  ierr = -99
  call MPI_Op_free(opmax, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_free: ierror')
  call check(opmax == MPI_OP_NULL, 'MPI_Op_free: handle not MPI_OP_NULL')
  call MPI_Op_free(opmat, ierr)
  call check(opmat == MPI_OP_NULL, 'MPI_Op_free: handle not MPI_OP_NULL')
  call MPI_Type_free(mattype, ierr)
  deallocate(pin, pout, pexp, min_, mout, mexp)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  n_allreduce = n_allreduce + 2
  if (rank == 0) then
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Reduce', n_reduce - host_reduce, host_reduce
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allreduce', n_allreduce - host_allreduce, host_allreduce
    if (total == 0) then
      print '(a)', 'PASS fortran user ops'
    else
      print '(a,i0,a)', 'FAIL: ', total, ' checks failed'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program
