! callbacks.f90 — Fortran procedures the library calls: reduction
! operations from MPI_Op_create (with their datatype as an integer handle,
! commutative or not, more of them over time than the binding has slots),
! an error handler from MPI_Comm_create_errhandler, attribute copy and
! delete callbacks (and the predefined MPI_COMM_DUP_FN & co), predefined
! attributes (MPI_TAG_UB), and a generalized request's query and free
! procedures. Prints " No Errors".
module callback_state
  use mpi
  implicit none
  integer :: pair_type = MPI_DATATYPE_NULL
  integer :: op_calls = 0, op_bad_type = 0
  integer :: errh_calls = 0, errh_comm = MPI_COMM_NULL, errh_code = MPI_SUCCESS
  integer :: copies = 0, deletes = 0, deleted_value = 0
  integer :: queries = 0, frees = 0, greq_extra = 0
contains

  subroutine max_abs(invec, inoutvec, n, datatype)
    integer :: n, datatype
    integer :: invec(n), inoutvec(n)
    op_calls = op_calls + 1
    if (datatype /= MPI_INTEGER) op_bad_type = op_bad_type + 1
    inoutvec = max(abs(invec), abs(inoutvec))
  end subroutine max_abs

  ! Not commutative: the left operand wins, so a reduction gives rank 0's.
  subroutine left(invec, inoutvec, n, datatype)
    integer :: n, datatype
    integer :: invec(n), inoutvec(n)
    if (datatype /= MPI_INTEGER) op_bad_type = op_bad_type + 1
    inoutvec = invec
  end subroutine left

  ! On pairs of integers (a derived datatype): sums both.
  subroutine pair_sum(invec, inoutvec, n, datatype)
    integer :: n, datatype
    integer :: invec(2, n), inoutvec(2, n)
    if (datatype /= pair_type) op_bad_type = op_bad_type + 1
    inoutvec = inoutvec + invec
  end subroutine pair_sum

  subroutine on_error(comm, code)
    integer :: comm, code
    errh_calls = errh_calls + 1
    errh_comm = comm
    errh_code = code
  end subroutine on_error

  subroutine copy_plus_one(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    copies = copies + 1
    if (extra /= 42 .or. oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) then
      ierror = MPI_ERR_OTHER
      return
    end if
    val_out = val_in + 1
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_plus_one

  subroutine count_delete(comm, keyval, val, extra, ierror)
    integer :: comm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    deleted_value = int(val)
    ierror = merge(MPI_SUCCESS, MPI_ERR_OTHER, extra == 42 .and. comm /= MPI_COMM_NULL &
                   .and. keyval /= MPI_KEYVAL_INVALID)
  end subroutine count_delete

  subroutine query(extra, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    greq_extra = int(extra)
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    status(MPI_SOURCE) = 5
    status(MPI_TAG) = 6
    ierror = MPI_SUCCESS
  end subroutine query

  subroutine greq_free(extra, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierror
    frees = frees + 1
    greq_extra = int(extra)
    ierror = MPI_SUCCESS
  end subroutine greq_free

  subroutine greq_cancel(extra, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierror
    if (complete .or. extra /= 7) ierror = MPI_ERR_OTHER
    ierror = MPI_SUCCESS
  end subroutine greq_cancel

end module callback_state

program callbacks
  use mpi
  use callback_state
  implicit none
  integer :: rank, size, ierr, errs, total, i, op, keyval, dup, errh, req, t, t2, n
  integer :: vals(3), res(3), pairs(2, 2), pres(2, 2), status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: aval
  logical :: flag, commute

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0

  ! ---- reduction operations ----
  call MPI_Op_create(max_abs, .true., op, ierr)
  call MPI_Op_commutative(op, commute, ierr)
  if (.not. commute) call fail('MPI_Op_commutative')
  vals = [-rank, rank * 2, -3]
  call MPI_Allreduce(vals, res, 3, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  if (any(res /= [size - 1, 2 * (size - 1), 3])) call fail('MPI_Allreduce with a Fortran op')
  if (op_calls == 0 .and. size > 1) call fail('the Fortran op was never called')
  call MPI_Op_free(op, ierr)
  if (op /= MPI_OP_NULL) call fail('MPI_Op_free')

  call MPI_Op_create(left, .false., op, ierr)
  call MPI_Op_commutative(op, commute, ierr)
  if (commute) call fail('MPI_Op_commutative of a non-commutative op')
  vals = rank + 100
  call MPI_Reduce(vals, res, 3, MPI_INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. any(res /= 100)) call fail('MPI_Reduce with a non-commutative op')
  call MPI_Op_free(op, ierr)

  call MPI_Type_contiguous(2, MPI_INTEGER, pair_type, ierr)
  call MPI_Type_commit(pair_type, ierr)
  call MPI_Op_create(pair_sum, .true., op, ierr)
  pairs = reshape([1, rank, 2, 10 * rank], [2, 2])
  call MPI_Allreduce(pairs, pres, 2, pair_type, op, MPI_COMM_WORLD, ierr)
  if (pres(1, 1) /= size .or. pres(2, 1) /= size * (size - 1) / 2 .or. &
      pres(1, 2) /= 2 * size .or. pres(2, 2) /= 5 * size * (size - 1)) &
    call fail('MPI_Allreduce of a derived datatype with a Fortran op')
  call MPI_Op_free(op, ierr)
  call MPI_Type_free(pair_type, ierr)
  if (op_bad_type /= 0) call fail('the datatype handle given to Fortran ops')

  ! More operations over time than the binding has slots (64).
  do i = 1, 100
    call MPI_Op_create(max_abs, .true., op, ierr)
    if (ierr /= MPI_SUCCESS) then
      call fail('MPI_Op_create after MPI_Op_free')
      exit
    end if
    call MPI_Op_free(op, ierr)
  end do

  ! ---- an error handler written in Fortran ----
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_create_errhandler(on_error, errh, ierr)
  call MPI_Comm_set_errhandler(dup, errh, ierr)
  call MPI_Errhandler_free(errh, ierr)
  if (errh /= MPI_ERRHANDLER_NULL) call fail('MPI_Errhandler_free')
  call MPI_Send(vals, 1, MPI_INTEGER, size + 1, 0, dup, ierr)
  call MPI_Error_class(errh_code, i, ierr)
  if (errh_calls /= 1 .or. errh_comm /= dup .or. i /= MPI_ERR_RANK) &
    call fail('the Fortran error handler')

  ! ---- attributes and their callbacks ----
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  if (.not. flag .or. aval < 32767) call fail('MPI_Comm_get_attr(MPI_TAG_UB)')
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, keyval, 42_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(dup, keyval, 1234_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, t, ierr)
  call MPI_Comm_get_attr(t, keyval, aval, flag, ierr)
  if (copies /= 1 .or. .not. flag .or. aval /= 1235) call fail('the Fortran copy callback')
  call MPI_Comm_free(t, ierr)
  if (deletes /= 1 .or. deleted_value /= 1235) call fail('the Fortran delete callback')
  call MPI_Comm_delete_attr(dup, keyval, ierr)
  if (deletes /= 2 .or. deleted_value /= 1234) call fail('MPI_Comm_delete_attr')
  call MPI_Comm_free_keyval(keyval, ierr)
  if (keyval /= MPI_KEYVAL_INVALID) call fail('MPI_Comm_free_keyval')

  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(dup, keyval, 77_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, t, ierr)
  call MPI_Comm_get_attr(t, keyval, aval, flag, ierr)
  if (.not. flag .or. aval /= 77) call fail('MPI_COMM_DUP_FN')
  call MPI_Comm_free(t, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(dup, keyval, 78_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(dup, t, ierr)
  call MPI_Comm_get_attr(t, keyval, aval, flag, ierr)
  if (flag) call fail('MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(t, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)

  ! The same on a datatype, and the MPI-1 calls with INTEGER values.
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, keyval, &
                              0_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_contiguous(3, MPI_INTEGER, t, ierr)
  call MPI_Type_set_attr(t, keyval, 99_MPI_ADDRESS_KIND, ierr)
  call MPI_Type_dup(t, t2, ierr)
  call MPI_Type_get_attr(t2, keyval, aval, flag, ierr)
  if (.not. flag .or. aval /= 99) call fail('MPI_TYPE_DUP_FN')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t, ierr)
  call MPI_Type_free_keyval(keyval, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, keyval, 0, ierr)
  call MPI_Attr_put(dup, keyval, 555, ierr)
  call MPI_Comm_dup(dup, t, ierr)
  call MPI_Attr_get(t, keyval, n, flag, ierr)
  if (.not. flag .or. n /= 555) call fail('MPI_Keyval_create + MPI_DUP_FN + MPI_Attr_get')
  call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, n, flag, ierr)
  if (.not. flag .or. n < 32767) call fail('MPI_Attr_get(MPI_TAG_UB)')
  call MPI_Comm_free(t, ierr)
  call MPI_Keyval_free(keyval, ierr)
  call MPI_Comm_free(dup, ierr)

  ! ---- a generalized request ----
  call MPI_Grequest_start(query, greq_free, greq_cancel, 7_MPI_ADDRESS_KIND, req, ierr)
  call MPI_Test(req, flag, status, ierr)
  if (flag) call fail('MPI_Test of an incomplete generalized request')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  if (req /= MPI_REQUEST_NULL .or. queries /= 1 .or. frees /= 1 .or. greq_extra /= 7 &
      .or. n /= 3 .or. status(MPI_SOURCE) /= 5 .or. status(MPI_TAG) /= 6) &
    call fail('the generalized request')

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, rank, ': ', what, ' failed'
  end subroutine fail

end program callbacks
