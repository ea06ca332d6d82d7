/*
 * abi_fortran_sentinels.c — storage for the COMMON blocks of the ABI's
 * mpif.h and mpi module that hold the sentinels (abi_fortran.h), sized as
 * the Fortran side declares them. A program that names a sentinel defines
 * the block itself and the dynamic linker binds this library's
 * references to the program's copy; these only serve the rest.
 */
#include "abi_fortran.h"

#ifdef OPEN_MPI
FORT_API MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_;
FORT_API MPI_Fint mpi_fortran_status_ignore_[ABI_F_STATUS_SIZE];
FORT_API MPI_Fint mpi_fortran_statuses_ignore_[ABI_F_STATUS_SIZE];
FORT_API MPI_Fint mpi_fortran_errcodes_ignore_[1];
FORT_API MPI_Fint mpi_fortran_unweighted_[1], mpi_fortran_weights_empty_[1];
FORT_API char mpi_fortran_argv_null_[1], mpi_fortran_argvs_null_[1];
#else
FORT_API struct abi_mpich_priv1 mpipriv1_;
FORT_API struct abi_mpich_priv2 mpipriv2_;
FORT_API char mpiprivc_[2];
FORT_API MPI_Fint mpifcmb5_, mpifcmb9_;
#endif
