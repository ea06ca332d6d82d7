! attr_interop.f90 — attributes across the languages, as MPI-4.1 19.3.7
! says (attr_interop_c.c is the C half): a value Fortran sets
! (MPI_COMM_SET_ATTR, MPI_TYPE_SET_ATTR, MPI_WIN_SET_ATTR, the MPI-1
! MPI_ATTR_PUT) reads in C through a pointer to it; a value C sets (a
! pointer) reads in Fortran as its address (cut to an INTEGER by
! MPI_ATTR_GET); C callbacks get Fortran's value by address and Fortran
! callbacks get C's as the address; a copy made by MPI_COMM_DUP_FN or by
! a Fortran copy callback reads in C too. Prints " No Errors".
module attr_interop_cb
  use mpi
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: f_deleted = 0, f_copied = 0
  integer :: f_deletes = 0
contains
  subroutine f_copy(oldcomm, keyval, extra, val_in, val_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    f_copied = val_in
    val_out = 42
    flag = .true.
    ierror = merge(MPI_SUCCESS, MPI_ERR_OTHER, extra == 3 .and. oldcomm /= MPI_COMM_NULL &
                   .and. keyval /= MPI_KEYVAL_INVALID)
  end subroutine f_copy

  subroutine f_delete(comm, keyval, val, extra, ierror)
    integer :: comm, keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    f_deletes = f_deletes + 1
    f_deleted = val
    ierror = merge(MPI_SUCCESS, MPI_ERR_OTHER, extra == 3 .and. comm /= MPI_COMM_NULL &
                   .and. keyval /= MPI_KEYVAL_INVALID)
  end subroutine f_delete
end module attr_interop_cb

program attr_interop
  use mpi
  use attr_interop_cb
  use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t
  implicit none
  interface
    integer(c_int) function c_comm_reads(comm, keyval, expect, is_int) &
        bind(C, name='c_comm_reads')
      import :: c_int, c_intptr_t
      integer(c_int), value :: comm, keyval, is_int
      integer(c_intptr_t), value :: expect
    end function
    integer(c_int) function c_type_reads(datatype, keyval, expect) bind(C, name='c_type_reads')
      import :: c_int, c_intptr_t
      integer(c_int), value :: datatype, keyval
      integer(c_intptr_t), value :: expect
    end function
    integer(c_int) function c_win_reads(win, keyval, expect) bind(C, name='c_win_reads')
      import :: c_int, c_intptr_t
      integer(c_int), value :: win, keyval
      integer(c_intptr_t), value :: expect
    end function
    integer(c_intptr_t) function c_comm_sets(comm, keyval) bind(C, name='c_comm_sets')
      import :: c_int, c_intptr_t
      integer(c_int), value :: comm, keyval
    end function
    integer(c_int) function c_truncated(address) bind(C, name='c_truncated')
      import :: c_int, c_intptr_t
      integer(c_intptr_t), value :: address
    end function
    integer(c_int) function c_keyval() bind(C, name='c_keyval')
      import :: c_int
    end function
    integer(c_int) function c_deletes(value) bind(C, name='c_deletes')
      import :: c_int, c_intptr_t
      integer(c_intptr_t) :: value
    end function
  end interface

  integer, parameter :: ak = MPI_ADDRESS_KIND
  integer :: rank, ierr, errs, total, comm, dup, k, k1, ck, fk, tk, wk, dtype, win, ival
  integer(kind=MPI_ADDRESS_KIND) :: big, val, address
  integer(kind=MPI_ADDRESS_KIND), target :: winbuf(4)
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  errs = 0
  big = 2_ak**40 + 7
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)

  ! Fortran sets, C reads a pointer to the value.
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, k, 0_ak, ierr)
  call MPI_Comm_set_attr(comm, k, big, ierr)
  errs = errs + c_comm_reads(comm, k, big, 0)
  call MPI_Comm_get_attr(comm, k, val, flag, ierr)
  if (.not. flag .or. val /= big) call fail('MPI_Comm_get_attr of a Fortran value')
  call MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, k1, 0, ierr)
  call MPI_Attr_put(comm, k1, -9, ierr)
  errs = errs + c_comm_reads(comm, k1, -9_ak, 1)
  call MPI_Comm_get_attr(comm, k1, val, flag, ierr)
  if (.not. flag .or. val /= -9) call fail('MPI_Comm_get_attr of an MPI_Attr_put value')
  call MPI_Attr_get(comm, k1, ival, flag, ierr)
  if (.not. flag .or. ival /= -9) call fail('MPI_Attr_get of an MPI_Attr_put value')

  ! C sets a pointer, Fortran reads its address.
  address = c_comm_sets(comm, k)
  call MPI_Comm_get_attr(comm, k, val, flag, ierr)
  if (.not. flag .or. val /= address) call fail('MPI_Comm_get_attr of a C value')
  call MPI_Attr_get(comm, k, ival, flag, ierr)
  if (.not. flag .or. ival /= c_truncated(address)) call fail('MPI_Attr_get of a C value')

  ! A C keyval: its delete callback gets a pointer to Fortran's value;
  ! MPI_COMM_DUP_FN copies the value, which C reads on the copy.
  ck = c_keyval()
  call MPI_Comm_set_attr(comm, ck, 11_ak, ierr)
  call MPI_Comm_dup(comm, dup, ierr)
  errs = errs + c_comm_reads(dup, ck, 11_ak, 0)
  call MPI_Comm_set_attr(comm, ck, 12_ak, ierr)
  if (c_deletes(val) /= 1 .or. val /= 11) call fail('a C delete callback replacing a value')
  call MPI_Comm_delete_attr(comm, ck, ierr)
  if (c_deletes(val) /= 2 .or. val /= 12) call fail('a C delete callback (MPI_Comm_delete_attr)')
  call MPI_Comm_free(dup, ierr)
  if (c_deletes(val) /= 3 .or. val /= 11) call fail('a C delete callback (MPI_Comm_free)')

  ! A Fortran keyval on C's value: the callbacks get its address; the
  ! copy callback's integer reads in C through a pointer.
  call MPI_Comm_create_keyval(f_copy, f_delete, fk, 3_ak, ierr)
  address = c_comm_sets(comm, fk)
  call MPI_Comm_dup(comm, dup, ierr)
  if (f_copied /= address) call fail('a Fortran copy callback on a C value')
  errs = errs + c_comm_reads(dup, fk, 42_ak, 0)
  call MPI_Comm_free(dup, ierr)
  if (f_deletes /= 1 .or. f_deleted /= 42) call fail('a Fortran delete callback')
  call MPI_Comm_delete_attr(comm, fk, ierr)
  if (f_deletes /= 2 .or. f_deleted /= address) call fail('a Fortran delete callback on a C value')

  ! Datatypes and windows alike.
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, tk, 0_ak, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, dtype, ierr)
  call MPI_Type_set_attr(dtype, tk, big + 1, ierr)
  errs = errs + c_type_reads(dtype, tk, big + 1)
  call MPI_Type_free(dtype, ierr)
  call MPI_Type_free_keyval(tk, ierr)
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, wk, 0_ak, ierr)
  call MPI_Win_create(winbuf, 4_ak * 8, 8, MPI_INFO_NULL, MPI_COMM_SELF, win, ierr)
  call MPI_Win_set_attr(win, wk, big + 2, ierr)
  errs = errs + c_win_reads(win, wk, big + 2)
  call MPI_Win_free(win, ierr)
  call MPI_Win_free_keyval(wk, ierr)

  call MPI_Comm_free(comm, ierr)
  call MPI_Comm_free_keyval(k, ierr)
  call MPI_Comm_free_keyval(ck, ierr)
  call MPI_Comm_free_keyval(fk, ierr)
  call MPI_Keyval_free(k1, ierr)
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

end program attr_interop
