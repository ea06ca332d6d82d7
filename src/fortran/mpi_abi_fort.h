/*
 * mpi_abi_fort.h — what of Fortran interoperability needs the Fortran
 * binding itself (liblocusmpifort, -llocusmpifort; mpifort links it):
 * MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE, the addresses of
 * Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE.
 *
 * The MPI-5 standard ABI leaves the rest of interoperability out of its
 * mpi.h (MPI-5 21.4: it depends on the size of the Fortran INTEGER) and
 * the MPI Forum's ABI working group proposed this header for it. Locus's
 * mpi.h has it all the same (MPI_Fint is int, gfortran's default INTEGER;
 * MPI_<Kind>_c2f / _f2c are MPI_<Kind>_toint / _fromint, so MPI_COMM_WORLD
 * is 257 in both languages; the status conversions), defined by the C
 * library, so that C code that mixes with Fortran compiles against mpi.h
 * and links with -llocusmpi alone. This header stays for the programs that
 * include it. The mpi_f08 module is not provided; its status type is
 * declared for the conversions only.
 */
#ifndef LOCUS_MPI_ABI_FORT_H
#define LOCUS_MPI_ABI_FORT_H

#include "mpi.h"

#if defined(__cplusplus)
extern "C" {
#endif

LOCUS_MPI_API extern MPI_Fint *MPI_F_STATUS_IGNORE;
LOCUS_MPI_API extern MPI_Fint *MPI_F_STATUSES_IGNORE;

#if defined(__cplusplus)
}
#endif
#endif
