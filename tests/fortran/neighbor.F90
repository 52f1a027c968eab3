! MPI_Alltoallw and the five neighbourhood collectives from Fortran (issue
! 33), one source for three bindings: use mpi (default), use mpi_f08
! (-DF08), mpif.h (-DMPIFH); blocking and nonblocking forms, and with
! -DHAVE_PERSISTENT (MPI-4 hosts) the persistent ones.  The neighbourhood
! calls run on a non-periodic 1-D Cartesian communicator of the ranks (the
! end ranks have MPI_PROC_NULL on one side: those blocks must stay
! untouched), Alltoallw on it as a communicator; the w forms mix
! MPI_INTEGER with a contiguous derived type per block, so that each
! element of the datatype arrays matters.  Every result is compared with
! values computed here from the ranks' formulas.  Rank 0 prints "EXPECT
! MPI_X <strata> <host>" lines for tests/scripts/fortran_stats.sh.
! -DNO_F08_NEIGHBOR_ALLTOALLW: MPICH 4.0's mpi_f08 MPI_Neighbor_alltoallw
! (all forms) asks MPI_Dist_graph_neighbors_count for its arrays' lengths
! and aborts on any other topology, without strata too; there those calls
! are left out (and expected 0 times) but for the one on a distributed
! graph, which every variant makes.
#if defined(F08)
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif
module nchecks
#if defined(F08)
  use mpi_f08
#elif !defined(MPIFH)
  use mpi
#endif
  implicit none
#if defined(MPIFH)
  include 'mpif.h'
#endif
  integer, parameter :: m = 5 ! elements per block
  integer, parameter :: blocking = 0, nonblocking = 1, persistent = 2
  integer :: rank, nranks, failures = 0
  integer :: nbr(2) ! the Cartesian neighbours in MPI's order: source, destination
  HANDLE(MPI_Comm) :: cart
  HANDLE(MPI_Datatype) :: block ! m MPI_INTEGERs as one element
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(a,i0,2a)') 'FAIL rank ', rank, ': ', what
      failures = failures + 1
    end if
  end subroutine

  ! Completes the call just made in form `form`: nothing to do for the
  ! blocking one, MPI_WAIT for a nonblocking one; a persistent request is
  ! started, waited for and freed.
  subroutine complete(req, form, ierr, what)
    HANDLE(MPI_Request), intent(inout) :: req
    integer, intent(in) :: form, ierr
    character(len=*), intent(in) :: what
    integer :: err
    call check(ierr == MPI_SUCCESS, what // ': ierror not MPI_SUCCESS')
    if (form == blocking) return
    if (form == persistent) then
      call MPI_Start(req, err)
      call check(err == MPI_SUCCESS, what // ': MPI_Start')
    end if
    call MPI_Wait(req, MPI_STATUS_IGNORE, err)
    call check(err == MPI_SUCCESS, what // ': MPI_Wait')
    if (form == persistent) call MPI_Request_free(req, err)
  end subroutine

  ! What rank `from` sends in its block `j` (0-based) of every call here.
  pure function sent(from, j) result(v)
    integer, intent(in) :: from, j
    integer :: v(m), i
    v = [(1000 * from + 100 * j + i, i = 1, m)]
  end function

  ! Checks recv's block of neighbour side k (1: source, 2: destination)
  ! at element offset `at`: the neighbour's block it sends this way, or
  ! untouched (-1) for MPI_PROC_NULL; `j_of_sender` is that block's index.
  subroutine check_block(recv, at, k, j_of_sender, what)
    integer, intent(in) :: recv(:), at, k, j_of_sender
    character(len=*), intent(in) :: what
    if (nbr(k) == MPI_PROC_NULL) then
      call check(all(recv(at + 1:at + m) == -1), what // ': MPI_PROC_NULL block written')
    else
      call check(all(recv(at + 1:at + m) == sent(nbr(k), j_of_sender)), what // ' values')
    end if
  end subroutine

  subroutine neighbor_calls(form)
    integer, intent(in) :: form
    integer :: sbuf(2 * m + 1), rbuf(2 * m + 2), ierr, j
    integer :: scounts(2), sdispls(2), rcounts(2), rdispls(2)
#if !defined(NO_F08_NEIGHBOR_ALLTOALLW)
    integer(kind=MPI_ADDRESS_KIND) :: sbytes(2), rbytes(2)
    HANDLE(MPI_Datatype) :: stypes(2), rtypes(2)
#endif
    HANDLE(MPI_Request) :: req
    character(len=*), parameter :: names(0:2) = ['blocking   ', 'nonblocking', 'persistent ']

    ! Allgather forms: every neighbour gets block 0.
    sbuf(1:m) = sent(rank, 0)
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Neighbor_allgather(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, ierr)
    case (nonblocking)
      call MPI_Ineighbor_allgather(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Neighbor_allgather_init(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, &
                                       MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Neighbor_allgather ' // trim(names(form)))
    do j = 1, 2
      call check_block(rbuf, (j - 1) * m, j, 0, 'Neighbor_allgather ' // trim(names(form)))
    end do

    ! Allgatherv: the blocks a gap apart (the gap stays -1).
    rcounts = m
    rdispls = [0, m + 1]
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Neighbor_allgatherv(sbuf, m, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, &
                                   cart, ierr)
    case (nonblocking)
      call MPI_Ineighbor_allgatherv(sbuf, m, MPI_INTEGER, rbuf, rcounts, rdispls, MPI_INTEGER, &
                                    cart, req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Neighbor_allgatherv_init(sbuf, m, MPI_INTEGER, rbuf, rcounts, rdispls, &
                                        MPI_INTEGER, cart, MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Neighbor_allgatherv ' // trim(names(form)))
    do j = 1, 2
      call check_block(rbuf, rdispls(j), j, 0, 'Neighbor_allgatherv ' // trim(names(form)))
    end do
    call check(rbuf(m + 1) == -1, 'Neighbor_allgatherv wrote into the gap')

    ! Alltoall forms: block j goes to neighbour j; the source's block comes
    ! from its destination side (its block 1), the destination's from its
    ! source side (block 0).
    sbuf(1:m) = sent(rank, 0)
    sbuf(m + 1:2 * m) = sent(rank, 1)
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Neighbor_alltoall(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, ierr)
    case (nonblocking)
      call MPI_Ineighbor_alltoall(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Neighbor_alltoall_init(sbuf, m, MPI_INTEGER, rbuf, m, MPI_INTEGER, cart, &
                                      MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Neighbor_alltoall ' // trim(names(form)))
    call check_block(rbuf, 0, 1, 1, 'Neighbor_alltoall ' // trim(names(form)))
    call check_block(rbuf, m, 2, 0, 'Neighbor_alltoall ' // trim(names(form)))

    ! Alltoallv: the send blocks swapped in the buffer, the receive blocks
    ! a gap apart.
    sbuf(1:m) = sent(rank, 1)
    sbuf(m + 1:2 * m) = sent(rank, 0)
    scounts = m
    sdispls = [m, 0]
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, rdispls, &
                                  MPI_INTEGER, cart, ierr)
    case (nonblocking)
      call MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, &
                                   rdispls, MPI_INTEGER, cart, req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, MPI_INTEGER, rbuf, rcounts, &
                                       rdispls, MPI_INTEGER, cart, MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Neighbor_alltoallv ' // trim(names(form)))
    call check_block(rbuf, rdispls(1), 1, 1, 'Neighbor_alltoallv ' // trim(names(form)))
    call check_block(rbuf, rdispls(2), 2, 0, 'Neighbor_alltoallv ' // trim(names(form)))
    call check(rbuf(m + 1) == -1, 'Neighbor_alltoallv wrote into the gap')

#if !defined(NO_F08_NEIGHBOR_ALLTOALLW)
    ! Alltoallw: byte displacements, and per block its own type: block 0
    ! sent as m MPI_INTEGERs, block 1 as one `block`; received the other
    ! way round (the same type signatures pair up).
    scounts = [m, 1]
    stypes = [MPI_INTEGER, block]
    sbytes = [int(m, MPI_ADDRESS_KIND) * 4, 0_MPI_ADDRESS_KIND]
    rcounts = [1, m]
    rtypes = [block, MPI_INTEGER]
    rbytes = [0_MPI_ADDRESS_KIND, int(m + 1, MPI_ADDRESS_KIND) * 4]
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Neighbor_alltoallw(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, rtypes, &
                                  cart, ierr)
    case (nonblocking)
      call MPI_Ineighbor_alltoallw(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, &
                                   rtypes, cart, req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Neighbor_alltoallw_init(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, &
                                       rtypes, cart, MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Neighbor_alltoallw ' // trim(names(form)))
    call check_block(rbuf, 0, 1, 1, 'Neighbor_alltoallw ' // trim(names(form)))
    call check_block(rbuf, m + 1, 2, 0, 'Neighbor_alltoallw ' // trim(names(form)))
    call check(rbuf(m + 1) == -1, 'Neighbor_alltoallw wrote into the gap')
#endif
  end subroutine

  ! Neighbor_alltoallw on a distributed graph of unequal degrees: rank 0
  ! sends to every other rank (out-degree nranks - 1, in-degree 0), which
  ! receives from it only (in-degree 1, out-degree 0), so that the send and
  ! receive type arrays have different lengths (each rank's degrees, read
  ! from the graph).  Blocking form only.
  subroutine dist_graph_alltoallw()
    integer :: sbuf(m * nranks), rbuf(m + 1), ierr, q, nout, nin
    integer :: dests(nranks), srcs(1), scounts(nranks), rcounts(1)
    integer(kind=MPI_ADDRESS_KIND) :: sbytes(nranks), rbytes(1)
    HANDLE(MPI_Datatype) :: stypes(nranks), rtypes(1)
    HANDLE(MPI_Comm) :: graph
    nout = 0
    nin = 0
    if (rank == 0) then
      nout = nranks - 1
      do q = 1, nranks - 1
        dests(q) = q
        scounts(q) = m
        stypes(q) = MPI_INTEGER
        sbytes(q) = int((q - 1) * m, MPI_ADDRESS_KIND) * 4
        sbuf((q - 1) * m + 1:q * m) = sent(0, q)
      end do
    else
      nin = 1
      srcs(1) = 0
      rcounts(1) = 1
      rtypes(1) = block
      rbytes(1) = 0
    end if
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, srcs, MPI_UNWEIGHTED, nout, dests, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
    rbuf = -1
    call MPI_Neighbor_alltoallw(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, rtypes, &
                                graph, ierr)
    call check(ierr == MPI_SUCCESS, 'Neighbor_alltoallw on a dist graph: ierror not MPI_SUCCESS')
    if (rank > 0) call check(all(rbuf(1:m) == sent(0, rank)), &
                             'Neighbor_alltoallw on a dist graph values')
    call check(rbuf(m + 1) == -1, 'Neighbor_alltoallw on a dist graph wrote past the block')
    call MPI_Comm_free(graph, ierr)
  end subroutine

  ! Alltoallw over the ranks: block p goes to rank p, as `block` for rank 0
  ! and as m MPI_INTEGERs for the others, at byte displacements in reverse
  ! rank order on the send side.
  subroutine alltoallw_call(form)
    integer, intent(in) :: form
    integer :: sbuf(m * nranks), rbuf(m * nranks), ierr, p
    integer :: scounts(nranks), sdispls(nranks), rcounts(nranks), rdispls(nranks)
    HANDLE(MPI_Datatype) :: stypes(nranks), rtypes(nranks)
    HANDLE(MPI_Request) :: req
    character(len=*), parameter :: names(0:2) = ['blocking   ', 'nonblocking', 'persistent ']
    do p = 0, nranks - 1
      sdispls(p + 1) = (nranks - 1 - p) * m * 4
      sbuf(sdispls(p + 1) / 4 + 1:sdispls(p + 1) / 4 + m) = sent(rank, p)
      rdispls(p + 1) = p * m * 4
      scounts(p + 1) = m
      stypes(p + 1) = MPI_INTEGER
      rcounts(p + 1) = m
      rtypes(p + 1) = MPI_INTEGER
    end do
    scounts(1) = 1
    stypes(1) = block
    rbuf = -1
    select case (form)
    case (blocking)
      call MPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, cart, &
                         ierr)
    case (nonblocking)
      call MPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, cart, &
                          req, ierr)
#if defined(HAVE_PERSISTENT)
    case (persistent)
      call MPI_Alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, &
                              cart, MPI_INFO_NULL, req, ierr)
#endif
    end select
    call complete(req, form, ierr, 'Alltoallw ' // trim(names(form)))
    do p = 0, nranks - 1
      call check(all(rbuf(p * m + 1:p * m + m) == sent(p, rank)), &
                 'Alltoallw ' // trim(names(form)) // ' values')
    end do
  end subroutine
end module

program neighbor
  use nchecks
  implicit none
  integer :: ierr, form, last_form, total, n_forms(0:2), times(0:2)
  integer :: dims(1)
  logical :: periods(1)
  character(len=*), parameter :: colls(6) = [character(len=19) :: 'Alltoallw', &
      'Neighbor_allgather', 'Neighbor_allgatherv', 'Neighbor_alltoall', 'Neighbor_alltoallv', &
      'Neighbor_alltoallw']
  integer :: c, n_nw

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  dims(1) = nranks
  periods(1) = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, nbr(1), nbr(2), ierr)
  call MPI_Type_contiguous(m, MPI_INTEGER, block, ierr)
  call MPI_Type_commit(block, ierr)

  last_form = nonblocking
#if defined(HAVE_PERSISTENT)
  last_form = persistent
#endif
  n_forms = 0
  do form = blocking, last_form
    call alltoallw_call(form)
    call neighbor_calls(form)
    n_forms(form) = 1
  end do

  call dist_graph_alltoallw()
  ! How many times each Neighbor_alltoallw form ran on the Cartesian
  ! communicator (none: see the top); the blocking one once more above.
  n_nw = 1
#if defined(NO_F08_NEIGHBOR_ALLTOALLW)
  n_nw = 0
#endif
  call MPI_Type_free(block, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do c = 1, size(colls)
      times = n_forms
      if (colls(c) == 'Neighbor_alltoallw') then
        times = n_forms * n_nw
        times(blocking) = times(blocking) + 1
      end if
      write (*, '(3a,2(1x,i0))') 'EXPECT MPI_', trim(colls(c)), '', times(blocking), 0
      write (*, '(3a,2(1x,i0))') 'EXPECT MPI_I', to_lower_first(trim(colls(c))), '', &
          times(nonblocking), 0
#if defined(HAVE_PERSISTENT)
      write (*, '(3a,2(1x,i0))') 'EXPECT MPI_', trim(colls(c)), '_init', times(persistent), 0
#endif
    end do
    write (*, '(a,2(1x,i0))') 'EXPECT MPI_Allreduce', 1, 0
    if (total == 0) then
      print '(a)', 'PASS fortran neighbourhood collectives'
    else
      print '(a,i0,a)', 'FAIL: ', total, ' checks failed'
    end if
  end if
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
contains
  ! "Alltoallw" -> "alltoallw": the nonblocking names are MPI_I + lower case.
  function to_lower_first(s) result(t)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    t = s
    t(1:1) = achar(iachar(s(1:1)) + 32)
  end function
end program
