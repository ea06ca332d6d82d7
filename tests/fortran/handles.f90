! handles.f90 — Fortran and C share MPI objects: predefined handles have
! the MPI-5 ABI's integer values in both languages (MPI_COMM_WORLD = 257),
! handles made in one language work in the other through
! MPI_<Kind>_f2c/c2f (handles_c.c), statuses through MPI_Status_f2c/c2f
! and mpi_f08's status type (MPI_Status_f2f08/f082f); errors come back in
! ierror with MPI_ERRORS_RETURN, with the right class from MPI_Error_class,
! the refused calls (spawn, data representations) included; MPI_SIZEOF.
! Prints " No Errors".
program handles
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function c_predefined(out) bind(C, name='c_predefined')
      import :: c_int
      integer(c_int) :: out(*)
    end function
    integer(c_int) function c_check_comm(fcomm, rank, size) bind(C, name='c_check_comm')
      import :: c_int
      integer(c_int), value :: fcomm, rank, size
    end function
    integer(c_int) function c_make_comm() bind(C, name='c_make_comm')
      import :: c_int
    end function
    integer(c_int) function c_check_objects(ftype, tsize, fgroup, gsize, finfo) &
        bind(C, name='c_check_objects')
      import :: c_int
      integer(c_int), value :: ftype, tsize, fgroup, gsize, finfo
    end function
    integer(c_int) function c_check_status(fstatus, source, tag, count) &
        bind(C, name='c_check_status')
      import :: c_int
      integer(c_int) :: fstatus(*)
      integer(c_int), value :: source, tag, count
    end function
    integer(c_int) function c_check_ignores(si, ssi) bind(C, name='c_check_ignores')
      import :: c_int
      integer(c_int) :: si(*), ssi(*)
    end function
    integer(c_int) function c_start_recv(buf, count, source, tag) bind(C, name='c_start_recv')
      import :: c_int
      integer(c_int) :: buf(*)
      integer(c_int), value :: count, source, tag
    end function
  end interface

  integer :: rank, size, ierr, errs, total, i, len
  integer :: predef(12), expect(12)
  integer :: split, ccomm, vtype, group, info, req, tsize
  integer :: status(MPI_STATUS_SIZE), data(5), recvd(5)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: text
  character(len=8) :: argv(3)
  integer :: inter, codes(2)
  character(len=8) :: cmds(2), argvs(2, 2)
  integer :: maxprocs(2), infos(2), codes3(3), fsize
  integer(kind=MPI_ADDRESS_KIND) :: extra
  real(kind=8) :: reals(3, 2)
  type(MPI_Status) :: f08_status
  logical :: ltrue, lfalse, is_set
  external :: extent_fn

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0

  ! Predefined handles: the ABI's values, the same from C.
  if (MPI_COMM_WORLD /= 257 .or. MPI_COMM_SELF /= 258 .or. MPI_COMM_NULL /= 256) &
    call fail('the ABI values of the predefined communicators')
  if (MPI_DOUBLE_PRECISION /= 540 .or. MPI_SUM /= 33 .or. MPI_REQUEST_NULL /= 384) &
    call fail('the ABI values of MPI_DOUBLE_PRECISION, MPI_SUM, MPI_REQUEST_NULL')
  expect = [MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL, MPI_DOUBLE_PRECISION, MPI_INTEGER, &
            MPI_SUM, MPI_ERRORS_RETURN, MPI_INFO_ENV, MPI_REQUEST_NULL, MPI_GROUP_EMPTY, &
            MPI_WIN_NULL, MPI_MESSAGE_NO_PROC]
  ierr = c_predefined(predef)
  do i = 1, 12
    if (predef(i) /= expect(i)) then
      errs = errs + 1
      print *, 'predefined handle', i, ': C says', predef(i), 'Fortran', expect(i)
    end if
  end do

  ! A communicator made in Fortran, used from C: ranks in reverse.
  call MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, split, ierr)
  errs = errs + c_check_comm(split, size - 1 - rank, size)
  call MPI_Comm_free(split, ierr)

  ! A communicator made in C, used and freed in Fortran.
  ccomm = c_make_comm()
  call MPI_Comm_get_name(ccomm, name, len, ierr)
  if (name /= 'made in C' .or. len /= 9) call fail('the name of the C communicator: ' // name)
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, ccomm, ierr)
  if (total /= size) call fail('MPI_Allreduce on the C communicator')
  call MPI_Comm_free(ccomm, ierr)
  if (ccomm /= MPI_COMM_NULL) call fail('MPI_Comm_free of the C communicator')

  ! A datatype, a group and an info object, seen from C.
  call MPI_Type_vector(3, 2, 4, MPI_INTEGER, vtype, ierr)
  call MPI_Type_commit(vtype, ierr)
  call MPI_Type_size(vtype, tsize, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, group, ierr)
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'locus_key', '  fortran value   ', ierr)
  errs = errs + c_check_objects(vtype, tsize, group, size, info)
  if (tsize /= 24) call fail('MPI_Type_size of the vector')
  call MPI_Info_free(info, ierr)
  call MPI_Group_free(group, ierr)
  call MPI_Type_free(vtype, ierr)

  ! A status from Fortran, read in C; a request from C, completed in Fortran.
  data = [(rank * 10 + i, i = 1, 5)]
  if (rank == 0) then
    call MPI_Send(data, 5, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
    req = c_start_recv(recvd, 4, 1, 8)
    call MPI_Wait(req, status, ierr)
    if (req /= MPI_REQUEST_NULL .or. status(MPI_SOURCE) /= 1 .or. status(MPI_TAG) /= 8) &
      call fail('MPI_Wait on the C request')
    if (any(recvd(1:4) /= [11, 12, 13, 14])) call fail('the data of the C request')
  else if (rank == 1) then
    call MPI_Recv(recvd, 5, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status, ierr)
    errs = errs + c_check_status(status, 0, 7, 5)
    call MPI_Send(data, 4, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, ierr)
  end if
  errs = errs + c_check_ignores(MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE)

  ! Errors in ierror, with their classes.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Comm_set_errhandler')
  call MPI_Send(data, 1, MPI_INTEGER, size + 3, 0, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_RANK, 'MPI_Send to a rank out of range')
  call MPI_Error_string(ierr, text, len, ierr)
  if (ierr /= MPI_SUCCESS .or. len <= 0 .or. len_trim(text) /= len) &
    call fail('MPI_Error_string')
  call MPI_Send(data, 1, MPI_INTEGER, 0, 0, MPI_COMM_NULL, ierr)
  call expect_class(ierr, MPI_ERR_COMM, 'MPI_Send on MPI_COMM_NULL')
  call MPI_Send(data, 1, MPI_INTEGER, 0, 0, 987654, ierr)
  call expect_class(ierr, MPI_ERR_COMM, 'MPI_Send on an integer that is no handle')
  call MPI_Send(data, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_COUNT, 'MPI_Send of a negative count')
  call MPI_Send(data, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, ierr)
  call expect_class(ierr, MPI_ERR_TYPE, 'MPI_Send of MPI_DATATYPE_NULL')
  ! A spawn of programs that do not exist fails (as from C), argv converted or not.
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  argv = [character(len=8) :: '-v', 'x y', ' ']
  codes = MPI_SUCCESS
  call MPI_Comm_spawn('worker', argv, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, codes, ierr)
  call expect_class(ierr, MPI_ERR_SPAWN, 'MPI_Comm_spawn')
  if (inter /= MPI_COMM_NULL .or. any(codes /= MPI_ERR_SPAWN)) &
    call fail('MPI_Comm_spawn: intercomm and error codes')
  call MPI_Comm_spawn('worker', MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, inter, &
                      MPI_ERRCODES_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_SPAWN, 'MPI_Comm_spawn(MPI_ARGV_NULL)')
  cmds = [character(len=8) :: 'worker', 'helper']
  argvs = reshape([character(len=8) :: '-v', '-q', ' ', ' '], [2, 2])
  maxprocs = [1, 2]
  infos = MPI_INFO_NULL
  codes3 = MPI_SUCCESS
  call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_SELF, inter, &
                               codes3, ierr)
  call expect_class(ierr, MPI_ERR_SPAWN, 'MPI_Comm_spawn_multiple')
  if (inter /= MPI_COMM_NULL .or. any(codes3 /= MPI_ERR_SPAWN)) &
    call fail('MPI_Comm_spawn_multiple: intercomm and error codes')
  call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_SELF, &
                               inter, MPI_ERRCODES_IGNORE, ierr)
  call expect_class(ierr, MPI_ERR_SPAWN, 'MPI_Comm_spawn_multiple(ARGVS_NULL)')
  ! A data representation registers once; a second of the same name is
  ! refused (the default file error handler returns).
  extra = 0
  call MPI_Register_datarep('locus_rep', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            extent_fn, extra, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Register_datarep')
  call MPI_Register_datarep('locus_rep', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            extent_fn, extra, ierr)
  call expect_class(ierr, MPI_ERR_DUP_DATAREP, 'MPI_Register_datarep twice')

  ! MPI_SIZEOF of any type and rank; mpi_f08's status type and back.
  call MPI_Sizeof(reals, fsize, ierr)
  if (ierr /= MPI_SUCCESS .or. fsize /= 8) call fail('MPI_SIZEOF of a REAL(8) array')
  call MPI_Sizeof(tsize, fsize, ierr)
  if (ierr /= MPI_SUCCESS .or. fsize /= 4) call fail('MPI_SIZEOF of an INTEGER')
  status = [1, 2, 3, 4, 5, 6, 7, 8]
  call MPI_Status_f2f08(status, f08_status, ierr)
  if (ierr /= MPI_SUCCESS .or. f08_status%MPI_SOURCE /= status(MPI_SOURCE) .or. &
      f08_status%MPI_TAG /= status(MPI_TAG) .or. f08_status%MPI_ERROR /= status(MPI_ERROR)) &
    call fail('MPI_Status_f2f08')
  status = 0
  call MPI_Status_f082f(f08_status, status, ierr)
  if (ierr /= MPI_SUCCESS .or. any(status /= [1, 2, 3, 4, 5, 6, 7, 8])) &
    call fail('MPI_Status_f082f')
  ! gfortran's LOGICAL values, as the library was told them (or not).
  call MPI_Abi_get_fortran_booleans(4, ltrue, lfalse, is_set, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Abi_get_fortran_booleans')
  if (is_set .and. (.not. ltrue .or. lfalse)) call fail('the LOGICAL values of the library')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Barrier after the errors')

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  call MPI_Finalize(ierr)

contains

  subroutine expect_class(code, want, what)
    integer, intent(in) :: code, want
    character(len=*), intent(in) :: what
    integer :: got, e
    if (code == MPI_SUCCESS) then
      call fail(what // ' succeeded')
      return
    end if
    call MPI_Error_class(code, got, e)
    if (e /= MPI_SUCCESS .or. got /= want) then
      errs = errs + 1
      print *, rank, ': ', what, ': class', got, 'expected', want
    end if
  end subroutine expect_class

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, rank, ': ', what, ' failed'
  end subroutine fail

end program handles

! A data representation's extent function (an external procedure: one
! inside the program would need a trampoline on the stack).
subroutine extent_fn(datatype, extent, extra_state, ierror)
  use mpi
  implicit none
  integer :: datatype, ierror
  integer(kind=MPI_ADDRESS_KIND) :: extent, extra_state
  extent = 0
  ierror = MPI_SUCCESS
  if (datatype == MPI_DATATYPE_NULL .or. extra_state /= 0) ierror = MPI_ERR_ARG
end subroutine extent_fn
