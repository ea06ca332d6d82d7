! f77_types.f -- FORTRAN 77 as it was written (fixed form, INCLUDE
! 'mpif.h', no interfaces): one file passes INTEGER, REAL, DOUBLE
! PRECISION and CHARACTER buffers to the same MPI routines, which gfortran
! 10 and later refuse unless the compiler is told to allow it (mpifort
! does it, as MPICH's does), and times itself with the profiling names
! PMPI_WTIME/PMPI_WTICK that mpif.h declares. Built by the test with
! mpifort and no flags of its own. Prints " No Errors".
      PROGRAM TYPES
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER RANK, NPROCS, IERR, ERRS, K, PEER
      INTEGER IBUF(4), STATUS(MPI_STATUS_SIZE)
      REAL RBUF(4)
      DOUBLE PRECISION DBUF(4), T0, T1, TICK
      CHARACTER*8 CBUF

      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      ERRS = 0
      T0 = PMPI_WTIME()
      TICK = PMPI_WTICK()
      IF (TICK .LE. 0D0 .OR. TICK .GT. 1D0) THEN
         ERRS = ERRS + 1
         PRINT *, 'PMPI_WTICK gave', TICK
      END IF

! Rank 0 and 1 swap one buffer of each type (a single rank: itself).
      PEER = MOD(RANK + 1, 2)
      IF (RANK .GE. 2 .OR. PEER .GE. NPROCS) PEER = RANK
      DO 10 K = 1, 4
         IBUF(K) = RANK * 10 + K
         RBUF(K) = REAL(RANK) + 0.5
         DBUF(K) = DBLE(RANK) + 0.25D0
   10 CONTINUE
      CBUF = 'rank    '
      WRITE (CBUF(6:8), '(I3)') RANK
      CALL MPI_SENDRECV_REPLACE(IBUF, 4, MPI_INTEGER, PEER, 1, PEER,
     &     1, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_SENDRECV_REPLACE(RBUF, 4, MPI_REAL, PEER, 2, PEER,
     &     2, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_SENDRECV_REPLACE(DBUF, 4, MPI_DOUBLE_PRECISION, PEER,
     &     3, PEER, 3, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_SENDRECV_REPLACE(CBUF, 8, MPI_CHARACTER, PEER, 4, PEER,
     &     4, MPI_COMM_WORLD, STATUS, IERR)
      IF (IBUF(4) .NE. PEER * 10 + 4) ERRS = ERRS + 1
      IF (RBUF(4) .NE. REAL(PEER) + 0.5) ERRS = ERRS + 1
      IF (DBUF(4) .NE. DBLE(PEER) + 0.25D0) ERRS = ERRS + 1
      READ (CBUF(6:8), '(I3)') K
      IF (K .NE. PEER) ERRS = ERRS + 1
      IF (ERRS .NE. 0) PRINT *, 'rank', RANK, 'got', IBUF(4),
     &   RBUF(4), DBUF(4), CBUF

      T1 = PMPI_WTIME()
      IF (T1 .LT. T0 .OR. ABS(T1 - MPI_WTIME()) .GT. 60D0) THEN
         ERRS = ERRS + 1
         PRINT *, 'PMPI_WTIME gave', T0, T1
      END IF
      K = ERRS
      CALL MPI_ALLREDUCE(K, ERRS, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. ERRS .EQ. 0) PRINT '(A)', ' No Errors'
      IF (RANK .EQ. 0 .AND. ERRS .NE. 0) PRINT *, 'Found', ERRS,
     &   'errors'
      CALL MPI_FINALIZE(IERR)
      END
