! grequest.f90 — generalized requests from Fortran (MPI_Grequest_start
! with Fortran query, free and cancel procedures), completed every way a
! program can: MPI_Wait, MPI_Test, MPI_Waitany/Testany, MPI_Waitall/
! Testall, MPI_Waitsome, MPI_Request_free before MPI_Grequest_complete,
! MPI_Cancel. Each completion that frees the request calls query_fn (which
! fills the status) and then free_fn once, with the request's extra_state.
! Prints " No Errors".
module grequest_cb
  use mpi
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_extra = 0
contains
  subroutine query_fn(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    call MPI_Status_set_elements(status, MPI_INTEGER, int(extra), ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    status(MPI_SOURCE) = 5
    status(MPI_TAG) = 6
    ierror = MPI_SUCCESS
  end subroutine query_fn

  subroutine free_fn(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    frees = frees + 1
    last_extra = extra
    ierror = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    if (.not. complete .and. extra == 11) cancels = cancels + 1
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
end module grequest_cb

program grequest
  use grequest_cb
  implicit none
  integer :: ierr, errs, req, keep, idx, n, outcount
  integer :: reqs(2), idxs(2), status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
  logical :: flag

  call MPI_Init(ierr)
  errs = 0

  call start(req, 3)
  call MPI_Test(req, flag, status, ierr)
  if (flag) call fail('MPI_Test of an incomplete request')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Test(req, flag, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  if (.not. flag .or. req /= MPI_REQUEST_NULL .or. n /= 3 .or. status(MPI_TAG) /= 6) &
    call fail('MPI_Test: the status')
  call expect(1, 1, 3, 'MPI_Test')

  call start(req, 4)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call expect(2, 2, 4, 'MPI_Wait with MPI_STATUS_IGNORE')

  call start(reqs(1), 5)
  call start(reqs(2), 6)
  call MPI_Grequest_complete(reqs(2), ierr)
  call MPI_Waitany(2, reqs, idx, status, ierr)
  if (idx /= 2 .or. status(MPI_SOURCE) /= 5) call fail('MPI_Waitany: the index or status')
  call expect(3, 3, 6, 'MPI_Waitany')
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Testany(2, reqs, idx, flag, status, ierr)
  if (.not. flag .or. idx /= 1) call fail('MPI_Testany: the index')
  call expect(4, 4, 5, 'MPI_Testany')

  call start(reqs(1), 7)
  call start(reqs(2), 7)
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Grequest_complete(reqs(2), ierr)
  call MPI_Testall(2, reqs, flag, statuses, ierr)
  if (.not. flag .or. any(reqs /= MPI_REQUEST_NULL)) call fail('MPI_Testall')
  call expect(6, 6, 7, 'MPI_Testall')
  call start(reqs(1), 8)
  call start(reqs(2), 8)
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Grequest_complete(reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call expect(8, 8, 8, 'MPI_Waitall')
  call start(reqs(1), 9)
  call start(reqs(2), 9)
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Grequest_complete(reqs(2), ierr)
  call MPI_Waitsome(2, reqs, outcount, idxs, statuses, ierr)
  if (outcount /= 2) call fail('MPI_Waitsome: the count')
  call expect(10, 10, 9, 'MPI_Waitsome')

  ! Freed first: free_fn runs when it completes (no status to fill).
  call start(req, 10)
  keep = req
  call MPI_Request_free(req, ierr)
  if (frees /= 10) call fail('free_fn before completion')
  call MPI_Grequest_complete(keep, ierr)
  if (frees /= 11 .or. last_extra /= 10) call fail('MPI_Request_free, then complete')

  call start(req, 11)
  call MPI_Cancel(req, ierr)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  if (cancels /= 1) call fail('cancel_fn')
  call expect(11, 12, 11, 'MPI_Cancel, then MPI_Wait')

  if (errs == 0) print '(a)', ' No Errors'
  if (errs /= 0) print *, 'Found', errs, 'errors'
  call MPI_Finalize(ierr)

contains

  subroutine start(r, extra)
    integer :: r, extra
    call MPI_Grequest_start(query_fn, free_fn, cancel_fn, int(extra, MPI_ADDRESS_KIND), r, ierr)
  end subroutine start

  ! So many query_fn and free_fn calls so far, the last with extra.
  subroutine expect(nq, nf, extra, what)
    integer, intent(in) :: nq, nf, extra
    character(len=*), intent(in) :: what
    if (queries /= nq .or. frees /= nf .or. last_extra /= extra) then
      call fail(what)
      print *, '  query_fn', queries, 'free_fn', frees, 'extra', last_extra
    end if
  end subroutine expect

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, what, ' failed'
  end subroutine fail

end program grequest
