! halo.f90 — a 2-D halo exchange on a periodic Cartesian grid, Fortran 90
! through the mpi module: MPI_Dims_create, MPI_Cart_create, MPI_Cart_shift,
! MPI_Cart_get/MPI_Cart_coords; the contiguous edges (first index) go by
! MPI_Sendrecv, the strided ones by MPI_Type_vector and MPI_Isend/MPI_Irecv
! + MPI_Waitall. Every halo cell is checked against the value its owner
! holds, and the five-point stencil's sum over the global grid, reduced
! with MPI_Allreduce, against its analytic value. Prints " No Errors".
program halo
  use mpi
  implicit none
  integer, parameter :: nx = 12, ny = 10, iters = 5
  double precision :: u(0:nx+1, 0:ny+1)
  integer :: dims(2), coords(2), cdims(2), ccoords(2)
  logical :: periods(2), cperiods(2)
  integer :: cart, rank, size, ierr, errs, total, it, i, j
  integer :: west, east, south, north, rowtype
  integer :: requests(4), statuses(MPI_STATUS_SIZE, 4)
  integer :: gx, gy
  double precision :: local, global, expect

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  dims = 0
  call MPI_Dims_create(size, 2, dims, ierr)
  if (dims(1) * dims(2) /= size) call fail('MPI_Dims_create')
  periods = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Comm_rank(cart, rank, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call MPI_Cart_get(cart, 2, cdims, cperiods, ccoords, ierr)
  if (any(cdims /= dims) .or. .not. all(cperiods) .or. any(ccoords /= coords)) &
    call fail('MPI_Cart_get')
  ! First index: west/east neighbours; second: south/north.
  call MPI_Cart_shift(cart, 0, 1, west, east, ierr)
  call MPI_Cart_shift(cart, 1, 1, south, north, ierr)
  gx = nx * dims(1)
  gy = ny * dims(2)

  ! One row u(i, 1:ny) is ny values nx+2 apart.
  call MPI_Type_vector(ny, 1, nx + 2, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)

  do it = 1, iters
    u = -1d0
    do j = 1, ny
      do i = 1, nx
        u(i, j) = value(coords(1) * nx + i, coords(2) * ny + j, it)
      end do
    end do
    ! Columns u(1:nx, j) are contiguous: send the south edge, receive the
    ! north halo, and the other way round.
    call MPI_Sendrecv(u(1, 1), nx, MPI_DOUBLE_PRECISION, south, 1, &
                      u(1, ny + 1), nx, MPI_DOUBLE_PRECISION, north, 1, cart, &
                      MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(1, ny), nx, MPI_DOUBLE_PRECISION, north, 2, &
                      u(1, 0), nx, MPI_DOUBLE_PRECISION, south, 2, cart, &
                      MPI_STATUS_IGNORE, ierr)
    call MPI_Irecv(u(0, 1), 1, rowtype, west, 3, cart, requests(1), ierr)
    call MPI_Irecv(u(nx + 1, 1), 1, rowtype, east, 4, cart, requests(2), ierr)
    call MPI_Isend(u(nx, 1), 1, rowtype, east, 3, cart, requests(3), ierr)
    call MPI_Isend(u(1, 1), 1, rowtype, west, 4, cart, requests(4), ierr)
    call MPI_Waitall(4, requests, statuses, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_Waitall')
    if (any(requests /= MPI_REQUEST_NULL)) call fail('MPI_Waitall left a request')
    if (statuses(MPI_SOURCE, 1) /= west .or. statuses(MPI_TAG, 2) /= 4) &
      call fail('MPI_Waitall statuses')

    do j = 1, ny
      call check_cell(0, j, wrap(coords(1) * nx, gx), coords(2) * ny + j)
      call check_cell(nx + 1, j, wrap(coords(1) * nx + nx + 1, gx), coords(2) * ny + j)
    end do
    do i = 1, nx
      call check_cell(i, 0, coords(1) * nx + i, wrap(coords(2) * ny, gy))
      call check_cell(i, ny + 1, coords(1) * nx + i, wrap(coords(2) * ny + ny + 1, gy))
    end do

    ! The stencil's sum: on a periodic grid every value is counted four
    ! times, so the global sum is four times the sum of all values.
    local = 0d0
    do j = 1, ny
      do i = 1, nx
        local = local + u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1)
      end do
    end do
    call MPI_Allreduce(local, global, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart, ierr)
    expect = 4d0 * (1000d0 * gy * (gx * (gx + 1d0) / 2) + gx * (gy * (gy + 1d0) / 2) &
                    + 7d0 * it * gx * gy)
    if (global /= expect) then
      errs = errs + 1
      if (rank == 0) print *, 'iteration', it, 'stencil sum', global, 'expected', expect
    end if
  end do

  call MPI_Type_free(rowtype, ierr)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('MPI_Type_free')
  call MPI_Comm_free(cart, ierr)
  if (cart /= MPI_COMM_NULL) call fail('MPI_Comm_free')
  call MPI_Allreduce(errs, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. total == 0) print '(a)', ' No Errors'
  if (rank == 0 .and. total /= 0) print *, 'Found', total, 'errors'
  call MPI_Finalize(ierr)

contains

  ! The value of global cell (x, y) in iteration it (exact in double).
  double precision function value(x, y, it)
    integer, intent(in) :: x, y, it
    value = 1000d0 * x + y + 7d0 * it
  end function value

  ! A global index on the periodic grid 1..n.
  integer function wrap(k, n)
    integer, intent(in) :: k, n
    wrap = modulo(k - 1, n) + 1
  end function wrap

  subroutine check_cell(i, j, x, y)
    integer, intent(in) :: i, j, x, y
    if (u(i, j) /= value(x, y, it)) then
      errs = errs + 1
      if (errs < 10) print *, rank, ': halo cell', i, j, 'is', u(i, j), 'expected', value(x, y, it)
    end if
  end subroutine check_cell

  subroutine fail(what)
    character(len=*), intent(in) :: what
    errs = errs + 1
    print *, rank, ': ', what, ' failed'
  end subroutine fail

end program halo
