! strata's nonblocking collectives from Fortran (issue 17), one source for
! three bindings: use mpi (default), use mpi_f08 (-DF08), mpif.h (-DMPIFH).
! The eight first I-forms at several sizes and every root, completed through
! the Fortran completion calls (which must progress strata's operations, or
! they would wait forever): MPI_WAIT, an MPI_TEST loop, MPI_WAITALL mixed
! with point-to-point (statuses checked), all five of the others outstanding
! at once completed by MPI_WAITANY or MPI_WAITSOME, MPI_TESTALL polling, and
! MPI_REQUEST_FREE on an active MPI_IALLREDUCE followed by a barrier; the
! newer eight I-forms at once in one MPI_WAITALL (v-forms with reversed
! displacements); with -DHAVE_PERSISTENT (MPI-4 hosts) MPI_ALLREDUCE_INIT,
! MPI_BCAST_INIT, MPI_BARRIER_INIT and MPI_SCAN_INIT started five times with
! new contents (MPI_STARTALL, MPI_WAITALL), once more through
! MPI_REQUEST_GET_STATUS and MPI_WAIT, and freed.
! Results are checked against values computed here.  Rank 0 prints "EXPECT
! MPI_Ibcast <strata> <host>" lines for tests/scripts/fortran_stats.sh.
#if defined(F08)
#define HANDLE(kind) type(kind)
#define SOURCE_OF(st, i) st(i)%MPI_SOURCE
#else
#define HANDLE(kind) integer
#define SOURCE_OF(st, i) st(MPI_SOURCE, i)
#endif
module nbchecks
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
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
      failures = failures + 1
    end if
  end subroutine
end module

program nonblocking
  use nbchecks
  implicit none
  integer, parameter :: sizes(4) = [1, 7, 1000, 20000]
  integer :: s, n, root, i, d, k, ierr, done, outcount, idx, left, right
  integer :: n_bcast = 0, n_reduce = 0, n_allreduce = 0, n_gather = 0, n_scatter = 0
  integer :: n_allgather = 0, n_alltoall = 0, n_barrier = 0
  integer :: n_newer = 0, t
  integer, allocatable :: counts(:), displs(:), rdispls(:), sb(:), rb(:), e(:), x(:), y(:)
#if defined(HAVE_PERSISTENT)
  integer :: n_init = 0, rep
  HANDLE(MPI_Request) :: preqs(4)
#endif
  integer, allocatable :: a(:), b(:), c(:), big(:), big2(:), want(:), scat(:), a2a(:), a2b(:)
  integer :: token_out, token_in, indices(8)
  logical :: flag, seen(8)
  HANDLE(MPI_Request) :: req, reqs(8)
#if defined(F08)
  type(MPI_Status) :: sts(4)
#else
  integer :: sts(MPI_STATUS_SIZE, 4)
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  do s = 1, size(sizes)
    n = sizes(s)
    allocate (a(n), b(n), c(n), want(n), big(n * nranks), big2(n * nranks))
    allocate (scat(n * nranks), a2a(n * nranks), a2b(n * nranks))

    ! Ibcast from every root, MPI_WAIT.
    do root = 0, nranks - 1
      a = -1
      if (rank == root) a = [(root * 7 + i, i = 1, n)]
      ierr = -1
      call MPI_Ibcast(a, n, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
      call check(ierr == MPI_SUCCESS, 'Ibcast ierror')
      call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS, 'Ibcast wait ierror')
      call check(all(a == [(root * 7 + i, i = 1, n)]), 'Ibcast values')
      n_bcast = n_bcast + 1
    end do

    ! Ireduce (sum) to every root, completed by polling MPI_TEST.
    a = [(rank * 1000 + i, i = 1, n)]
    want = [(1000 * (nranks * (nranks - 1) / 2) + nranks * i, i = 1, n)]
    do root = 0, nranks - 1
      b = -1
      call MPI_Ireduce(a, b, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, req, ierr)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
      end do
      if (rank == root) call check(all(b == want), 'Ireduce values')
      n_reduce = n_reduce + 1
    end do

    ! Iallreduce, plain and in place, with a ring exchange in one MPI_WAITALL.
    b = -1
    c = a
    token_out = rank
    token_in = -1
    call MPI_Iallreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(token_in, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Iallreduce(MPI_IN_PLACE, c, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(token_out, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, reqs(4), ierr)
    call MPI_Waitall(4, reqs, sts, ierr)
    call check(ierr == MPI_SUCCESS, 'Waitall ierror')
    call check(all(b == want), 'Iallreduce values')
    call check(all(c == want), 'Iallreduce in place values')
    call check(token_in == left, 'ring token')
    call check(SOURCE_OF(sts, 2) == left, 'ring status source')
    n_allreduce = n_allreduce + 2

    ! Five at once: Iallgather, Igather, Iscatter, Ialltoall, Ibarrier,
    ! completed by MPI_WAITANY (odd sizes) or MPI_WAITSOME (even ones).
    root = mod(s, nranks)
    big = -1
    call MPI_Iallgather(a, n, MPI_INTEGER, big, n, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
    b = -1
    if (rank == root) then
      big2 = -1
      call MPI_Igather(a, n, MPI_INTEGER, big2, n, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(2), ierr)
    else
      call MPI_Igather(a, n, MPI_INTEGER, b, n, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(2), ierr)
    end if
    ! Iscatter from `root`: block d holds d * 3 + i.
    scat = [((d * 3 + i, i = 1, n), d = 0, nranks - 1)]
    c = -1
    call MPI_Iscatter(scat, n, MPI_INTEGER, c, n, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(3), ierr)
    ! Ialltoall: block d of rank r's send buffer holds r * 10 + d + 100 * i.
    a2a = [((rank * 10 + d + 100 * i, i = 1, n), d = 0, nranks - 1)]
    a2b = -1
    call MPI_Ialltoall(a2a, n, MPI_INTEGER, a2b, n, MPI_INTEGER, MPI_COMM_WORLD, reqs(4), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(5), ierr)
    seen = .false.
    done = 0
    do while (done < 5)
      if (mod(s, 2) == 1) then
        call MPI_Waitany(5, reqs, idx, MPI_STATUS_IGNORE, ierr)
        call check(idx >= 1 .and. idx <= 5, 'Waitany index range')
        if (idx >= 1 .and. idx <= 5) then
          call check(.not. seen(idx), 'Waitany index twice')
          seen(idx) = .true.
        end if
        done = done + 1
      else
        call MPI_Waitsome(5, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
        call check(outcount >= 1 .and. outcount <= 5, 'Waitsome outcount')
        do k = 1, max(0, min(outcount, 5))
          call check(.not. seen(indices(k)), 'Waitsome index twice')
          seen(indices(k)) = .true.
        end do
        done = done + max(0, min(outcount, 5))
      end if
      call check(ierr == MPI_SUCCESS, 'Waitany/Waitsome ierror')
    end do
    call check(all(seen(1:5)), 'every request completed once')
    call check(all(big == [((d * 1000 + i, i = 1, n), d = 0, nranks - 1)]), 'Iallgather values')
    if (rank == root) call check(all(big2 == big), 'Igather values')
    call check(all(c == [(rank * 3 + i, i = 1, n)]), 'Iscatter values')
    call check(all(a2b == [((d * 10 + rank + 100 * i, i = 1, n), d = 0, nranks - 1)]), &
               'Ialltoall values')
    n_allgather = n_allgather + 1
    n_gather = n_gather + 1
    n_scatter = n_scatter + 1
    n_alltoall = n_alltoall + 1
    n_barrier = n_barrier + 1

    ! MPI_TESTALL polling over an Ibcast and an Ibarrier.
    a = -1
    if (rank == 0) a = [(i * 11, i = 1, n)]
    call MPI_Ibcast(a, n, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call check(all(a == [(i * 11, i = 1, n)]), 'Ibcast (Testall) values')
    n_bcast = n_bcast + 1
    n_barrier = n_barrier + 1

    ! An active Iallreduce freed: it still completes, before the barrier
    ! that follows it on the communicator ends.
    a = [(rank + i, i = 1, n)]
    b = -1
    call MPI_Iallreduce(a, b, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    call MPI_Request_free(req, ierr)
    call check(ierr == MPI_SUCCESS, 'Request_free ierror')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check(all(b == [(nranks - 1 + i, i = 1, n)]), 'freed Iallreduce values')
    n_allreduce = n_allreduce + 1

    ! The newer eight at once, one MPI_WAITALL: every rank's operand j of
    ! block d is rank * 1000 + d * n + j; v-forms with reversed displacements.
    t = nranks * (nranks - 1) / 2
    allocate (counts(nranks), displs(nranks), rdispls(nranks), sb(n * nranks), e(n * nranks))
    allocate (rb(n * nranks * 6), x(n), y(n))
    counts = n
    displs = [(d * n, d = 0, nranks - 1)]
    rdispls = [((nranks - 1 - d) * n, d = 0, nranks - 1)]
    sb = [(rank * 1000 + i, i = 1, n * nranks)]
    rb = -1
    x = sb(1:n)
    root = mod(s + 1, nranks)
    call MPI_Ireduce_scatter_block(sb, rb(1:n), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                   reqs(1), ierr)
    call MPI_Ireduce_scatter(sb, rb(n + 1:2 * n), counts, MPI_INTEGER, MPI_SUM, &
                             MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Iscan(x, rb(2 * n + 1:3 * n), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Iexscan(x, rb(3 * n + 1:4 * n), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
    big = -1
    call MPI_Igatherv(x, n, MPI_INTEGER, big, counts, rdispls, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, reqs(5), ierr)
    y = -1
    call MPI_Iscatterv(sb, counts, rdispls, MPI_INTEGER, y, n, MPI_INTEGER, root, &
                       MPI_COMM_WORLD, reqs(6), ierr)
    big2 = -1
    call MPI_Iallgatherv(x, n, MPI_INTEGER, big2, counts, rdispls, MPI_INTEGER, &
                         MPI_COMM_WORLD, reqs(7), ierr)
    e = -1
    call MPI_Ialltoallv(sb, counts, displs, MPI_INTEGER, e, counts, rdispls, MPI_INTEGER, &
                        MPI_COMM_WORLD, reqs(8), ierr)
    call MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'newer Waitall ierror')
    call check(all(rb(1:n) == [(1000 * t + nranks * (rank * n + i), i = 1, n)]), &
               'Ireduce_scatter_block values')
    call check(all(rb(n + 1:2 * n) == rb(1:n)), 'Ireduce_scatter values')
    call check(all(rb(2 * n + 1:3 * n) == [(1000 * rank * (rank + 1) / 2 + (rank + 1) * i, &
                                           i = 1, n)]), 'Iscan values')
    if (rank > 0) call check(all(rb(3 * n + 1:4 * n) == [(1000 * (rank - 1) * rank / 2 &
                                                            + rank * i, i = 1, n)]), 'Iexscan values')
    ! Block of rank d at (nranks - 1 - d) * n.
    do d = 0, nranks - 1
      k = (nranks - 1 - d) * n
      if (rank == root) call check(all(big(k + 1:k + n) == [(d * 1000 + i, i = 1, n)]), &
                                   'Igatherv values')
      call check(all(big2(k + 1:k + n) == [(d * 1000 + i, i = 1, n)]), 'Iallgatherv values')
      ! From rank d: its block `rank` (at rank * n), placed at (nranks - 1 - d) * n.
      call check(all(e(k + 1:k + n) == [(d * 1000 + rank * n + i, i = 1, n)]), &
                 'Ialltoallv values')
    end do
    k = (nranks - 1 - rank) * n
    call check(all(y == [(root * 1000 + k + i, i = 1, n)]), 'Iscatterv values')
    n_newer = n_newer + 1

#if defined(HAVE_PERSISTENT)
    ! Persistent forms (MPI-4 hosts): started five times with new contents,
    ! MPI_STARTALL and MPI_WAITALL, then freed.
    call MPI_Allreduce_init(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                            preqs(1), ierr)
    call MPI_Bcast_init(sb, n, MPI_INTEGER, root, MPI_COMM_WORLD, MPI_INFO_NULL, preqs(2), ierr)
    call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, preqs(3), ierr)
    call MPI_Scan_init(x, rb(1:n), n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &
                       preqs(4), ierr)
    call check(ierr == MPI_SUCCESS, '_init ierror')
    do rep = 1, 5
      x = [(rank * rep + i, i = 1, n)]
      y = -1
      rb(1:n) = -1
      sb(1:n) = -1
      if (rank == root) sb(1:n) = [(rep * 3 + i, i = 1, n)]
      call MPI_Startall(4, preqs, ierr)
      call MPI_Waitall(4, preqs, MPI_STATUSES_IGNORE, ierr)
      call check(all(y == [(rep * t + nranks * i, i = 1, n)]), 'Allreduce_init values')
      call check(all(sb(1:n) == [(rep * 3 + i, i = 1, n)]), 'Bcast_init values')
      call check(all(rb(1:n) == [(rank * rep + i, i = 1, n)]), 'Scan_init values')
    end do
    ! One more start completed by single-request calls: MPI_REQUEST_GET_STATUS
    ! polled until it says done (the results must be there by then; MPICH's
    ! mpi_f08 binding calls PMPI_ directly, so strata wraps it), then MPI_WAIT.
    x = [(rank * 7 + i, i = 1, n)]
    y = -1
    call MPI_Start(preqs(1), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Request_get_status(preqs(1), flag, MPI_STATUS_IGNORE, ierr)
    end do
    call check(all(y == [(7 * t + nranks * i, i = 1, n)]), 'Allreduce_init at Request_get_status')
    call MPI_Wait(preqs(1), MPI_STATUS_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'Wait of a completed start')
    do k = 1, 4
      call MPI_Request_free(preqs(k), ierr)
    end do
    n_init = n_init + 1
#endif
    deallocate (counts, displs, rdispls, sb, rb, e, x, y)

    deallocate (a, b, c, want, big, big2, scat, a2a, a2b)
  end do

  if (rank == 0) then
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ibcast', n_bcast, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ireduce', n_reduce, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iallreduce', n_allreduce, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iallgather', n_allgather, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Igather', n_gather, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iscatter', n_scatter, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ialltoall', n_alltoall, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ibarrier', n_barrier, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ireduce_scatter_block', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ireduce_scatter', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iscan', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iexscan', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Igatherv', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iscatterv', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Iallgatherv', n_newer, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Ialltoallv', n_newer, 0
#if defined(HAVE_PERSISTENT)
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allreduce_init', n_init, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Bcast_init', n_init, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Barrier_init', n_init, 0
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Scan_init', n_init, 0
#endif
  end if
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (failures == 0 .and. rank == 0) print '(a)', 'PASS fortran nonblocking'
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1
end program
