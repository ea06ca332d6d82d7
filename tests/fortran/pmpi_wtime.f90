! pmpi_wtime.f90 — the timer functions through the mpi module, profiling
! names included: PMPI_WTIME and PMPI_WTICK are DOUBLE PRECISION functions
! there as in mpif.h (without a declaration, IMPLICIT NONE refuses them
! and implicit typing makes them REAL). Built by the test with mpifort.
! Prints " No Errors".
program timer_names
  use mpi
  implicit none
  integer :: rank, ierr, errs, total
  double precision :: t0, t1, tick
  integer(kind=MPI_ADDRESS_KIND) :: a

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  errs = 0
  t0 = PMPI_Wtime()
  tick = PMPI_Wtick()
  if (tick <= 0d0 .or. tick > 1d0 .or. tick /= MPI_Wtick()) then
    errs = errs + 1
    print *, 'PMPI_Wtick gave', tick
  end if
  t1 = PMPI_Wtime()
  if (t1 < t0 .or. abs(MPI_Wtime() - t1) > 60d0) then
    errs = errs + 1
    print *, 'PMPI_Wtime gave', t0, t1
  end if
  ! The other functions' profiling names as well.
  a = PMPI_Aint_diff(PMPI_Aint_add(100_MPI_ADDRESS_KIND, 28_MPI_ADDRESS_KIND), &
                     100_MPI_ADDRESS_KIND)
  if (a /= 28) then
    errs = errs + 1
    print *, 'PMPI_Aint_add/PMPI_Aint_diff gave', a
  end if
  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  call MPI_Finalize(ierr)
end program timer_names
