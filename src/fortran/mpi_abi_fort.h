/*
 * mpi_abi_fort.h — the C side of Fortran interoperability for Locus MPI:
 * MPI_Fint, the handle conversions MPI_<Kind>_f2c / _c2f and the status
 * conversions MPI_Status_f2c / c2f / f082c / c2f08 / f2f08 / f082f.
 *
 * The MPI-5 standard ABI leaves these out of mpi.h (MPI-5 21.4: they
 * depend on the size of the Fortran INTEGER, which compiler options change)
 * and puts the integer handles in MPI_<Kind>_toint / _fromint instead. The
 * Fortran library provides them: include this header and link with
 * -llocusmpifort (mpifort does), as the MPI Forum's ABI working group's
 * header of the same name proposes. Here MPI_Fint is int (gfortran's
 * default INTEGER) and a Fortran handle is MPI_<Kind>_toint's integer, so
 * MPI_COMM_WORLD is 257 in both languages.
 *
 * MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE are the addresses of
 * Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE. The mpi_f08 module
 * is not provided; its status type is declared for the conversions only.
 */
#ifndef LOCUS_MPI_ABI_FORT_H
#define LOCUS_MPI_ABI_FORT_H

#include "mpi.h"

#if defined(__cplusplus)
extern "C" {
#endif

typedef int MPI_Fint;

typedef struct {
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
    MPI_Fint MPI_internal[5];
} MPI_F08_status;

LOCUS_MPI_API extern MPI_Fint *MPI_F_STATUS_IGNORE;
LOCUS_MPI_API extern MPI_Fint *MPI_F_STATUSES_IGNORE;

#define LOCUS_MPI_FORT_FN(ret, name, args) \
    LOCUS_MPI_API ret MPI_##name args; LOCUS_MPI_API ret PMPI_##name args;

LOCUS_MPI_FORT_FN(MPI_Fint, Comm_c2f, (MPI_Comm comm))
LOCUS_MPI_FORT_FN(MPI_Comm, Comm_f2c, (MPI_Fint comm))
LOCUS_MPI_FORT_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
LOCUS_MPI_FORT_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
LOCUS_MPI_FORT_FN(MPI_Fint, File_c2f, (MPI_File file))
LOCUS_MPI_FORT_FN(MPI_File, File_f2c, (MPI_Fint file))
LOCUS_MPI_FORT_FN(MPI_Fint, Group_c2f, (MPI_Group group))
LOCUS_MPI_FORT_FN(MPI_Group, Group_f2c, (MPI_Fint group))
LOCUS_MPI_FORT_FN(MPI_Fint, Info_c2f, (MPI_Info info))
LOCUS_MPI_FORT_FN(MPI_Info, Info_f2c, (MPI_Fint info))
LOCUS_MPI_FORT_FN(MPI_Fint, Message_c2f, (MPI_Message message))
LOCUS_MPI_FORT_FN(MPI_Message, Message_f2c, (MPI_Fint message))
LOCUS_MPI_FORT_FN(MPI_Fint, Op_c2f, (MPI_Op op))
LOCUS_MPI_FORT_FN(MPI_Op, Op_f2c, (MPI_Fint op))
LOCUS_MPI_FORT_FN(MPI_Fint, Request_c2f, (MPI_Request request))
LOCUS_MPI_FORT_FN(MPI_Request, Request_f2c, (MPI_Fint request))
LOCUS_MPI_FORT_FN(MPI_Fint, Session_c2f, (MPI_Session session))
LOCUS_MPI_FORT_FN(MPI_Session, Session_f2c, (MPI_Fint session))
LOCUS_MPI_FORT_FN(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
LOCUS_MPI_FORT_FN(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
LOCUS_MPI_FORT_FN(MPI_Fint, Win_c2f, (MPI_Win win))
LOCUS_MPI_FORT_FN(MPI_Win, Win_f2c, (MPI_Fint win))

/* Each returns MPI_SUCCESS, or MPI_ERR_ARG (through MPI_COMM_WORLD's error
 * handler once MPI is initialized) for a NULL pointer or an IGNORE
 * sentinel as the status to read or write. */
LOCUS_MPI_FORT_FN(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
LOCUS_MPI_FORT_FN(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))
LOCUS_MPI_FORT_FN(int, Status_c2f08, (const MPI_Status *c_status, MPI_F08_status *f08_status))
LOCUS_MPI_FORT_FN(int, Status_f082c, (const MPI_F08_status *f08_status, MPI_Status *c_status))
LOCUS_MPI_FORT_FN(int, Status_f2f08, (const MPI_Fint *f_status, MPI_F08_status *f08_status))
LOCUS_MPI_FORT_FN(int, Status_f082f, (const MPI_F08_status *f08_status, MPI_Fint *f_status))

#undef LOCUS_MPI_FORT_FN

#if defined(__cplusplus)
}
#endif
#endif
