/*
 * fort_f2c.c — the C functions of Fortran interoperability (mpi_abi_fort.h):
 * handle conversions, which are the ABI's toint/fromint under the names of
 * MPI's language-interoperability chapter, and status conversions, which
 * are copies because a Fortran status has the C status's layout.
 */
#include <string.h>

#include "fort_impl.h"

#define FORT_PRAGMA_(x) _Pragma(#x)
#define F2C_WEAK(name) FORT_PRAGMA_(weak MPI_##name = PMPI_##name)

MPI_Fint *MPI_F_STATUS_IGNORE = locus_mpif_sentinels_.status_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = locus_mpif_sentinels_.statuses_ignore;

#define HANDLE_F2C(Kind, type)                 \
    F2C_WEAK(Kind##_c2f)                       \
    MPI_Fint PMPI_##Kind##_c2f(type h)         \
    {                                          \
        return PMPI_##Kind##_toint(h);         \
    }                                          \
    F2C_WEAK(Kind##_f2c)                       \
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

/* Every status form is 8 ints in the same order (MPI-5 21.4.3). */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "status size");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "f08 status size");

/* A status argument that cannot be read or written: NULL, or one of
 * Fortran's IGNORE sentinels. */
static int status_bad(const void *p)
{
    return !p || p == MPI_F_STATUS_IGNORE || p == MPI_F_STATUSES_IGNORE;
}

static int status_copy(const void *from, void *to, const char *fn)
{
    if (status_bad(from) || status_bad(to))
        return fort_err(MPI_ERR_ARG, fn, "a status argument is NULL or an IGNORE sentinel");
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

/* MPI_Status_<Name>: a status of type From copied into one of type To. */
#define STATUS_CONV(Name, From, To)                             \
    F2C_WEAK(Status_##Name)                                     \
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
