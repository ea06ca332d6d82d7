! legacy_fortran.F90 — a Fortran program built with a legacy MPI's
! mpif90 (mpif90.mpich, mpif90.openmpi) that checks what crosses its
! Fortran binding: ping-pong with MPI_STATUS_IGNORE and with a status,
! MPI_Waitall's status array (source, tag, MPI_Get_count), MPI_ANY_SOURCE,
! MPI_Allreduce (and MPI_IN_PLACE), a user datatype and a duplicated
! communicator (handles that are no predefined value), MPI_TAG_UB,
! MPI_Wtime, and MPI_Get_library_version, which rank 0 prints. Built with
! -DMPIF_H it includes mpif.h, else it uses the mpi module (and
! MPI_SIZEOF). Rank 0 prints " No Errors" when all is well.
program legacy_fortran
#ifdef MPIF_H
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer, parameter :: n = 100, rounds = 10
  integer :: ierr, rank, nproc, peer, errs, all_errs, i, round, count, total, vlen
  integer :: sbuf(n), rbuf(n), reqs(2), statuses(MPI_STATUS_SIZE, 2), status(MPI_STATUS_SIZE)
  integer :: pair_type, dup_comm, result
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  logical :: flag
  double precision :: t0, t1
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  if (nproc /= 2) call fail('two ranks expected')
  peer = 1 - rank
  t0 = MPI_Wtime()

  ! Blocking ping-pong: rank 1 checks the status, rank 0 ignores it.
  do round = 1, rounds
    if (rank == 0) then
      sbuf = [(round * 1000 + i, i = 1, n)]
      call MPI_Send(sbuf, n, MPI_INTEGER, 1, round, MPI_COMM_WORLD, ierr)
      call MPI_Recv(rbuf, n, MPI_INTEGER, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (any(rbuf /= sbuf + 1)) call fail('ping-pong: wrong data back')
    else
      call MPI_Recv(rbuf, n, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
                    status, ierr)
      call MPI_Get_count(status, MPI_INTEGER, count, ierr)
      if (status(MPI_SOURCE) /= 0 .or. status(MPI_TAG) /= round .or. count /= n) &
        call fail('ping-pong: wrong status')
      if (any(rbuf /= [(round * 1000 + i, i = 1, n)])) call fail('ping-pong: wrong data')
      call MPI_Send(rbuf + 1, n, MPI_INTEGER, 0, round, MPI_COMM_WORLD, ierr)
    end if
  end do

  ! Nonblocking exchange, statuses from MPI_Waitall: each sends n - rank.
  sbuf = [(rank * 10000 + i, i = 1, n)]
  rbuf = -1
  call MPI_Irecv(rbuf, n, MPI_INTEGER, peer, 77, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, n - rank, MPI_INTEGER, peer, 77, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, statuses, ierr)
  call MPI_Get_count(statuses(:, 1), MPI_INTEGER, count, ierr)
  if (ierr /= MPI_SUCCESS .or. reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) &
    call fail('Waitall: requests not freed')
  if (statuses(MPI_SOURCE, 1) /= peer .or. statuses(MPI_TAG, 1) /= 77) &
    call fail('Waitall: wrong status')
  if (count /= n - peer) call fail('Waitall: wrong count')
  if (any(rbuf(1:n - peer) /= [(peer * 10000 + i, i = 1, n - peer)])) &
    call fail('Waitall: wrong data')

  ! Collectives, MPI_IN_PLACE.
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= 3) call fail('Allreduce: wrong sum')
  ! (Integers only: gfortran checks that one file's implicit calls agree.)
  total = 10 * rank + 7
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (total /= 17) call fail('Allreduce: wrong MPI_IN_PLACE max')

  ! Handles of user objects: a duplicated communicator, a datatype.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup_comm, ierr)
  call MPI_Comm_compare(MPI_COMM_WORLD, dup_comm, result, ierr)
  if (result /= MPI_CONGRUENT) call fail('Comm_dup: not congruent')
  call MPI_Type_contiguous(2, MPI_INTEGER, pair_type, ierr)
  call MPI_Type_commit(pair_type, ierr)
  sbuf(1:4) = [rank, rank + 10, rank + 20, rank + 30]
  call MPI_Sendrecv(sbuf, 2, pair_type, peer, 5, rbuf, 2, pair_type, peer, 5, dup_comm, &
                    status, ierr)
  call MPI_Get_count(status, pair_type, count, ierr)
  if (count /= 2 .or. any(rbuf(1:4) /= [peer, peer + 10, peer + 20, peer + 30])) &
    call fail('Sendrecv of a user datatype on a duplicate: wrong')
  call MPI_Type_free(pair_type, ierr)
  call MPI_Comm_free(dup_comm, ierr)
  if (dup_comm /= MPI_COMM_NULL) call fail('Comm_free: not MPI_COMM_NULL')

  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  if (.not. flag .or. tag_ub < 32767) call fail('MPI_TAG_UB')
#ifndef MPIF_H
  call MPI_Sizeof(t0, count, ierr)
  if (count /= 8) call fail('MPI_SIZEOF of a DOUBLE PRECISION')
#endif
  t1 = MPI_Wtime()
  if (t1 < t0) call fail('MPI_Wtime went back')

  call MPI_Allreduce(errs, all_errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Get_library_version(version, vlen, ierr)
    print '(a, a)', 'library: ', version(1:vlen)
    if (all_errs == 0) then
      print '(a)', ' No Errors'
    else
      print '(a, i0, a)', ' Found ', all_errs, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(a, i0, a, a)', 'rank ', rank, ': ', what
    errs = errs + 1
  end subroutine fail

end program legacy_fortran
