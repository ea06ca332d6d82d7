/*
 * interop.c — the C functions of language interoperability (MPI-4.1
 * 19.3): the handle conversions MPI_<Kind>_c2f / _f2c, which are the ABI's
 * toint / fromint under the names of that chapter (a Fortran handle is the
 * integer handle), and the status conversions between MPI_Status, the
 * Fortran INTEGER array and mpi_f08's type, which are copies because all
 * three are the same eight ints (MPI-5 21.4.3). They live in the C library
 * so that C code that mixes with Fortran links with -llocusmpi alone.
 *
 * MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE are the addresses of the
 * Fortran binding's sentinels (liblocusmpifort, mpi_abi_fort.h): weak
 * references here, NULL in a program without the Fortran binding.
 */
#include <stdio.h>
#include <string.h>

#include "env.h"

#define HANDLE_F2C(Kind, type)                 \
    LOCUS_PMPI_WEAK(Kind##_c2f)                \
    MPI_Fint PMPI_##Kind##_c2f(type h)         \
    {                                          \
        return PMPI_##Kind##_toint(h);         \
    }                                          \
    LOCUS_PMPI_WEAK(Kind##_f2c)                \
    type PMPI_##Kind##_f2c(MPI_Fint i)         \
    {                                          \
        return PMPI_##Kind##_fromint(i);       \
    }

HANDLE_F2C(Comm, MPI_Comm)
HANDLE_F2C(Errhandler, MPI_Errhandler)
HANDLE_F2C(File, MPI_File)
HANDLE_F2C(Group, MPI_Group)
HANDLE_F2C(Info, MPI_Info)
HANDLE_F2C(Message, MPI_Message)
HANDLE_F2C(Op, MPI_Op)
HANDLE_F2C(Request, MPI_Request)
HANDLE_F2C(Session, MPI_Session)
HANDLE_F2C(Type, MPI_Datatype)
HANDLE_F2C(Win, MPI_Win)

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status size");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "f08 status size");

/* The Fortran binding's IGNORE sentinels, when it is loaded. */
extern MPI_Fint *MPI_F_STATUS_IGNORE __attribute__((weak));
extern MPI_Fint *MPI_F_STATUSES_IGNORE __attribute__((weak));

/* A status argument that cannot be read or written: NULL, or one of
 * Fortran's IGNORE sentinels. */
static int status_bad(const void *p)
{
    return !p || (&MPI_F_STATUS_IGNORE && p == MPI_F_STATUS_IGNORE) ||
           (&MPI_F_STATUSES_IGNORE && p == MPI_F_STATUSES_IGNORE);
}

/* Allowed before MPI_Init and after MPI_Finalize (they touch no object):
 * an error goes through MPI_COMM_WORLD's handler only while MPI runs. */
static int status_copy(const void *from, void *to, const char *fn)
{
    if (status_bad(from) || status_bad(to)) {
        if (!locus_mpi_active())
            return MPI_ERR_ARG;
        snprintf(locus_mpi.detail, sizeof locus_mpi.detail,
                 "a status argument is NULL or an IGNORE sentinel");
        return locus_mpi_err(NULL, MPI_ERR_ARG, fn);
    }
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

/* MPI_Status_<Name>: a status of type From copied into one of type To. */
#define STATUS_CONV(Name, From, To)                             \
    LOCUS_PMPI_WEAK(Status_##Name)                              \
    int PMPI_Status_##Name(const From *from, To *to)            \
    {                                                           \
        return status_copy(from, to, "MPI_Status_" #Name);      \
    }

STATUS_CONV(c2f, MPI_Status, MPI_Fint)
STATUS_CONV(f2c, MPI_Fint, MPI_Status)
STATUS_CONV(c2f08, MPI_Status, MPI_F08_status)
STATUS_CONV(f082c, MPI_F08_status, MPI_Status)
STATUS_CONV(f2f08, MPI_Fint, MPI_F08_status)
STATUS_CONV(f082f, MPI_F08_status, MPI_Fint)
