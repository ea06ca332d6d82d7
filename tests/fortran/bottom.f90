! bottom.f90 — MPI_BOTTOM as a buffer: a struct datatype of absolute
! addresses (MPI_Get_address) broadcast from MPI_BOTTOM, and sent and
! received from it between neighbours. Prints " No Errors".
program bottom
  use mpi
  implicit none
  integer :: rank, size, ierr, errs, total, t, ival, blens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2)
  double precision :: dval

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  ival = -1
  dval = -1d0
  if (rank == 0) then
    ival = 4242
    dval = 2.5d0
  end if
  call MPI_Get_address(ival, disps(1), ierr)
  call MPI_Get_address(dval, disps(2), ierr)
  blens = 1
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blens, disps, types, t, ierr)
  call MPI_Type_commit(t, ierr)

  call MPI_Bcast(MPI_BOTTOM, 1, t, 0, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. ival /= 4242 .or. dval /= 2.5d0) then
    errs = errs + 1
    print *, rank, ': MPI_Bcast from MPI_BOTTOM: ierror', ierr, 'values', ival, dval
  end if

  ! Even ranks send their own values to the next odd rank.
  ival = 1000 + rank
  dval = rank + 0.25d0
  if (mod(rank, 2) == 0) then
    call MPI_Send(MPI_BOTTOM, 1, t, rank + 1, 3, MPI_COMM_WORLD, ierr)
  else
    call MPI_Recv(MPI_BOTTOM, 1, t, rank - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS .or. ival /= 999 + rank .or. dval /= rank - 0.75d0) then
      errs = errs + 1
      print *, rank, ': MPI_Recv into MPI_BOTTOM: ierror', ierr, 'values', ival, dval
    end if
  end if
  call MPI_Type_free(t, ierr)

  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  call MPI_Finalize(ierr)
end program bottom
