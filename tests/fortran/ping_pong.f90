! ping_pong.f90 — the classic Fortran 90 MPI ping-pong through the mpi
! module: pairs of ranks (0-1, 2-3, ...) bounce messages of 1 byte to
! 1 MiB, every message checked (contents, MPI_SOURCE, MPI_TAG,
! MPI_Get_count); the times are printed, never judged. Prints " No Errors"
! when every rank is clean.
program ping_pong
  use mpi
  implicit none
  integer, parameter :: max_bytes = 1048576, reps = 4
  integer(kind=1), allocatable :: buf(:)
  integer :: rank, size, peer, ierr, n, r, i, count, errs, total
  integer :: status(MPI_STATUS_SIZE)
  double precision :: t0, t1, tw
  logical :: leader

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  if (mod(size, 2) /= 0) then
    if (rank == 0) print *, 'ping_pong needs an even number of ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  leader = mod(rank, 2) == 0
  peer = merge(rank + 1, rank - 1, leader)
  allocate(buf(max_bytes))
  tw = MPI_Wtick()
  if (tw <= 0d0 .or. tw > 1d0) then
    errs = errs + 1
    print *, 'MPI_Wtick gives', tw
  end if

  n = 1
  do while (n <= max_bytes)
    t0 = MPI_Wtime()
    do r = 1, reps
      if (leader) then
        call fill(buf, n, r + rank)
        call MPI_Send(buf, n, MPI_BYTE, peer, r, MPI_COMM_WORLD, ierr)
        call check_ierr('MPI_Send', ierr)
        buf(1:n) = 0
        call MPI_Recv(buf, n, MPI_BYTE, peer, r + 1000, MPI_COMM_WORLD, status, ierr)
        call check_ierr('MPI_Recv', ierr)
        call check_message(n, r + 1000, r + peer)
      else
        buf(1:n) = 0
        call MPI_Recv(buf, max_bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, &
                      MPI_COMM_WORLD, status, ierr)
        call check_ierr('MPI_Recv', ierr)
        call check_message(n, r, r + peer)
        call fill(buf, n, r + rank)
        call MPI_Send(buf, n, MPI_BYTE, peer, r + 1000, MPI_COMM_WORLD, ierr)
        call check_ierr('MPI_Send', ierr)
      end if
    end do
    t1 = MPI_Wtime()
    if (t1 < t0) then
      errs = errs + 1
      print *, 'MPI_Wtime went back:', t0, t1
    end if
    if (rank == 0) write (*, '(a, i8, a, f12.2, a)') ' bytes', n, '  half round trip', &
        (t1 - t0) / (2 * reps) * 1d6, ' us'
    n = n * 2
  end do

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  deallocate(buf)
  call MPI_Finalize(ierr)

contains

  subroutine fill(b, len, seed)
    integer(kind=1), intent(out) :: b(:)
    integer, intent(in) :: len, seed
    do i = 1, len
      b(i) = int(mod(i * 7 + seed * 13, 127), 1)
    end do
  end subroutine fill

  subroutine check_message(len, tag, seed)
    integer, intent(in) :: len, tag, seed
    if (status(MPI_SOURCE) /= peer .or. status(MPI_TAG) /= tag) then
      errs = errs + 1
      print *, rank, ': status says source', status(MPI_SOURCE), 'tag', status(MPI_TAG), &
               'expected', peer, tag
    end if
    call MPI_Get_count(status, MPI_BYTE, count, ierr)
    if (count /= len) then
      errs = errs + 1
      print *, rank, ': MPI_Get_count', count, 'expected', len
    end if
    do i = 1, len
      if (buf(i) /= int(mod(i * 7 + seed * 13, 127), 1)) then
        errs = errs + 1
        print *, rank, ': byte', i, 'of', len, 'is', buf(i)
        exit
      end if
    end do
  end subroutine check_message

  subroutine check_ierr(what, code)
    character(len=*), intent(in) :: what
    integer, intent(in) :: code
    if (code /= MPI_SUCCESS) then
      errs = errs + 1
      print *, rank, ': ', what, ' returned', code
    end if
  end subroutine check_ierr

end program ping_pong
