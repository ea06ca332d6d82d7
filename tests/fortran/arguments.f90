! arguments.f90 — the argument conventions of the Fortran binding, each
! checked: CHARACTER arguments in (trailing blanks dropped) and out (blank
! padded, truncated to the variable), LOGICAL arguments in and out,
! indices counted from 1 (MPI_Waitany, MPI_Waitsome), arrays of handles
! (MPI_Waitall, MPI_Type_create_struct, MPI_Alltoallw), MPI_STATUSES_IGNORE,
! MPI_UNWEIGHTED, MPI_IN_PLACE, MPI_BOTTOM's address,
! INTEGER(KIND=MPI_ADDRESS_KIND) arguments and functions,
! MPI_Comm_idup's communicator appearing at completion. Prints " No Errors".
program arguments
  use mpi
  implicit none
  integer :: rank, size, ierr, errs, total, rlen, i, idx, outcount, next, prev
  integer :: comm, info, nkeys, buflen, t, dup, req, graph, indeg, outdeg
  integer :: reqs(3), idxs(3), types(2), blens(2), sbuf(8), rbuf(8)
  integer :: stypes(64), rtypes(64), counts(64), displs(64)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), lb, extent, a1, a2
  logical :: flag, weighted, periods(1)
  double precision :: t0
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  character(len=4) :: short
  character(len=MPI_MAX_INFO_VAL) :: value
  character(len=MPI_MAX_INFO_KEY) :: key
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  errs = 0
  next = mod(rank + 1, size)
  prev = mod(rank + size - 1, size)

  ! ---- strings ----
  call MPI_Get_processor_name(host, rlen, ierr)
  if (rlen <= 0 .or. len_trim(host) /= rlen) call fail('MPI_Get_processor_name')
  call MPI_Get_library_version(version, rlen, ierr)
  if (rlen <= 0 .or. len_trim(version) /= rlen .or. index(version, 'Locus') == 0) &
    call fail('MPI_Get_library_version')
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_name(comm, 'halo comm   ', ierr)
  call MPI_Comm_get_name(comm, name, rlen, ierr)
  if (name /= 'halo comm' .or. rlen /= 9) call fail('MPI_Comm_get_name: ' // name)
  call MPI_Comm_get_name(comm, short, rlen, ierr)
  if (short /= 'halo' .or. rlen /= 9) call fail('MPI_Comm_get_name into a short string')
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'color', 'blue', ierr)
  call MPI_Info_set(info, ' shape ', 'a rather long value', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call MPI_Info_get_nthkey(info, 1, key, ierr)
  if (nkeys /= 2 .or. key /= 'shape') call fail('MPI_Info_get_nthkey: ' // key)
  call MPI_Info_get(info, 'shape', 8, value, flag, ierr)
  if (.not. flag .or. value /= 'a rather') call fail('MPI_Info_get: ' // value)
  buflen = len(value)
  call MPI_Info_get_string(info, 'shape', buflen, value, flag, ierr)
  if (.not. flag .or. value /= 'a rather long value' .or. buflen /= 19) &
    call fail('MPI_Info_get_string')
  call MPI_Info_get_valuelen(info, 'color', rlen, flag, ierr)
  if (.not. flag .or. rlen /= 4) call fail('MPI_Info_get_valuelen')
  call MPI_Info_get(info, 'size', 10, value, flag, ierr)
  if (flag .or. ierr /= MPI_SUCCESS) call fail('MPI_Info_get of an absent key')
  call MPI_Info_free(info, ierr)
  if (info /= MPI_INFO_NULL) call fail('MPI_Info_free')

  ! ---- logicals ----
  call MPI_Initialized(flag, ierr)
  if (.not. flag) call fail('MPI_Initialized')
  call MPI_Comm_test_inter(comm, flag, ierr)
  if (flag) call fail('MPI_Comm_test_inter')
  call MPI_Iprobe(MPI_ANY_SOURCE, 99, comm, flag, status, ierr)
  if (flag) call fail('MPI_Iprobe found a message nobody sent')

  ! ---- indices from 1, arrays of requests ----
  sbuf = rank
  call MPI_Irecv(rbuf(1), 1, MPI_INTEGER, prev, 5, comm, reqs(1), ierr)
  reqs(2) = MPI_REQUEST_NULL
  call MPI_Irecv(rbuf(2), 1, MPI_INTEGER, prev, 6, comm, reqs(3), ierr)
  call MPI_Send(sbuf, 1, MPI_INTEGER, next, 6, comm, ierr)
  call MPI_Waitany(3, reqs, idx, status, ierr)
  if (idx /= 3 .or. reqs(3) /= MPI_REQUEST_NULL .or. status(MPI_TAG) /= 6) &
    call fail('MPI_Waitany: the index counts from 1')
  ! Tag 5 leaves only when every rank's MPI_Waitany is done (one request
  ! could complete there, not two).
  call MPI_Barrier(comm, ierr)
  call MPI_Send(sbuf, 1, MPI_INTEGER, next, 5, comm, ierr)
  call MPI_Waitsome(3, reqs, outcount, idxs, statuses, ierr)
  if (outcount /= 1 .or. idxs(1) /= 1 .or. statuses(MPI_TAG, 1) /= 5) &
    call fail('MPI_Waitsome: the indices count from 1')
  call MPI_Waitany(3, reqs, idx, status, ierr)
  if (idx /= MPI_UNDEFINED) call fail('MPI_Waitany of no active request')
  call MPI_Testall(3, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  if (.not. flag) call fail('MPI_Testall of inactive requests')
  if (any(rbuf(1:2) /= prev)) call fail('the data of the nonblocking receives')

  ! ---- a struct datatype from arrays of handles and addresses ----
  blens = [2, 1]
  disps = [0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blens, disps, types, t, ierr)
  call MPI_Type_get_extent(t, lb, extent, ierr)
  if (lb /= 0 .or. extent /= 24) call fail('MPI_Type_get_extent of the struct')
  call MPI_Type_free(t, ierr)
  call MPI_Get_address(sbuf(1), a1, ierr)
  call MPI_Get_address(sbuf(3), a2, ierr)
  if (MPI_Aint_diff(a2, a1) /= 8 .or. MPI_Aint_add(a1, 8_MPI_ADDRESS_KIND) /= a2) &
    call fail('MPI_Aint_diff / MPI_Aint_add')

  ! ---- sentinels through the module ----
  sbuf(1:3) = [1, rank, -rank]
  call MPI_Allreduce(MPI_IN_PLACE, sbuf, 3, MPI_INTEGER, MPI_MAX, comm, ierr)
  if (any(sbuf(1:3) /= [1, size - 1, 0])) call fail('MPI_Allreduce with MPI_IN_PLACE')
  call MPI_Get_address(MPI_BOTTOM, a1, ierr)
  if (a1 /= 0) call fail('MPI_Get_address(MPI_BOTTOM)')

  ! ---- MPI_Alltoallw: one datatype per peer ----
  if (size <= 64) then
    do i = 1, size
      sbuf(mod(i - 1, 8) + 1) = rank * 100 + i - 1
    end do
    counts(1:size) = 1
    stypes(1:size) = MPI_INTEGER
    rtypes(1:size) = MPI_INTEGER
    do i = 1, size
      displs(i) = 4 * mod(i - 1, 8)
    end do
    if (size <= 8) then
      rbuf = -1
      call MPI_Alltoallw(sbuf, counts, displs, stypes, rbuf, counts, displs, rtypes, comm, ierr)
      do i = 1, size
        if (rbuf(i) /= (i - 1) * 100 + rank) call fail('MPI_Alltoallw')
      end do
    end if
  end if

  ! ---- a ring as a distributed graph, unweighted ----
  call MPI_Dist_graph_create_adjacent(comm, 1, [prev], MPI_UNWEIGHTED, 1, [next], &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted, ierr)
  if (indeg /= 1 .or. outdeg /= 1 .or. weighted) call fail('MPI_Dist_graph_neighbors_count')
  rbuf(1) = -1
  call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, graph, ierr)
  if (rbuf(1) /= prev) call fail('MPI_Neighbor_allgather on the ring')
  call MPI_Comm_free(graph, ierr)

  ! ---- MPI_Cart_create with a LOGICAL array in, MPI_Cart_get out ----
  periods(1) = .false.
  call MPI_Cart_create(comm, 1, [size], periods, .true., graph, ierr)
  periods(1) = .true.
  call MPI_Cart_get(graph, 1, idxs, periods, idxs(2:), ierr)
  if (periods(1) .or. idxs(1) /= size) call fail('MPI_Cart_get periods')
  call MPI_Comm_free(graph, ierr)

  ! ---- MPI_Comm_idup: the new communicator is there after MPI_Wait ----
  dup = MPI_COMM_NULL
  call MPI_Comm_idup(comm, dup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (req /= MPI_REQUEST_NULL .or. dup == MPI_COMM_NULL) call fail('MPI_Comm_idup')
  call MPI_Allreduce(1, total, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  if (total /= size) call fail('MPI_Allreduce on the idup communicator')
  call MPI_Comm_compare(dup, comm, i, ierr)
  if (i /= MPI_CONGRUENT) call fail('MPI_Comm_compare of the idup communicator')
  call MPI_Comm_free(dup, ierr)
  ! Completed through MPI_Testall this time.
  call MPI_Comm_idup_with_info(comm, MPI_INFO_NULL, dup, reqs(1), ierr)
  reqs(2:3) = MPI_REQUEST_NULL
  flag = .false.
  t0 = MPI_Wtime()
  do while (.not. flag .and. MPI_Wtime() - t0 < 60d0)
    call MPI_Testall(3, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  end do
  if (.not. flag .or. dup == MPI_COMM_NULL) call fail('MPI_Comm_idup_with_info + MPI_Testall')
  if (dup /= MPI_COMM_NULL) call MPI_Comm_free(dup, ierr)

  call MPI_Comm_free(comm, ierr)
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

end program arguments
