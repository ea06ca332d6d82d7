! f77_ring.f -- FORTRAN 77 style (fixed form, INCLUDE 'mpif.h'): a token
! goes around the ring of ranks twice; MPI_STATUS_IGNORE, MPI_IN_PLACE in
! MPI_ALLREDUCE, MPI_BOTTOM as an address, MPI_WTIME declared by mpif.h.
! mpif.h has no explicit interfaces (the classic form, as with other
! MPIs): buffers of several types are type mismatches, which mpifort has
! gfortran 10 and later allow. Prints " No Errors".
      PROGRAM RING
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, NPROCS, IERR, ERRS, TOKEN, NEXT, PREV, LAP, K
      INTEGER SUMS(3), STATUS(MPI_STATUS_SIZE)
      DOUBLE PRECISION T0
      INTEGER(KIND=MPI_ADDRESS_KIND) ADDR

      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      ERRS = 0
      T0 = MPI_WTIME()
      NEXT = MOD(RANK + 1, NPROCS)
      PREV = MOD(RANK + NPROCS - 1, NPROCS)

! Twice around: every rank adds its rank plus one.
      DO 10 LAP = 1, 2
      IF (RANK .EQ. 0) THEN
         TOKEN = 0
         IF (LAP .EQ. 2) TOKEN = NPROCS * (NPROCS + 1) / 2
         TOKEN = TOKEN + 1
         CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, LAP,
     &                 MPI_COMM_WORLD, IERR)
         CALL MPI_RECV(TOKEN, 1, MPI_INTEGER, PREV, LAP,
     &                 MPI_COMM_WORLD, STATUS, IERR)
         IF (TOKEN .NE. LAP * NPROCS * (NPROCS + 1) / 2) THEN
            ERRS = ERRS + 1
            PRINT *, 'lap', LAP, 'token', TOKEN
         END IF
         IF (STATUS(MPI_SOURCE) .NE. PREV) ERRS = ERRS + 1
      ELSE
         CALL MPI_RECV(TOKEN, 1, MPI_INTEGER, PREV, LAP,
     &                 MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
         TOKEN = TOKEN + RANK + 1
         CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, LAP,
     &                 MPI_COMM_WORLD, IERR)
      END IF
   10 CONTINUE

! MPI_IN_PLACE: the sums replace the contributions.
      SUMS(1) = 1
      SUMS(2) = RANK
      SUMS(3) = 2 * RANK
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, SUMS, 3, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (SUMS(1) .NE. NPROCS .OR.
     &    SUMS(2) .NE. NPROCS * (NPROCS - 1) / 2 .OR.
     &    SUMS(3) .NE. NPROCS * (NPROCS - 1)) THEN
         ERRS = ERRS + 1
         PRINT *, 'MPI_IN_PLACE sums', SUMS
      END IF

! MPI_BOTTOM reaches C as address 0 (fortran_bottom sends from it).
      CALL MPI_GET_ADDRESS(MPI_BOTTOM, ADDR, IERR)
      IF (ADDR .NE. 0) THEN
         ERRS = ERRS + 1
         PRINT *, 'MPI_GET_ADDRESS(MPI_BOTTOM) gave', ADDR
      END IF

      IF (MPI_WTIME() .LT. T0) ERRS = ERRS + 1
      K = ERRS
      CALL MPI_ALLREDUCE(K, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ERRS .EQ. 0) PRINT '(A)', ' No Errors'
      IF (RANK .EQ. 0 .AND. ERRS .NE. 0) PRINT *, 'Found', ERRS,
     &   'errors'
      CALL MPI_FINALIZE(IERR)
      END
