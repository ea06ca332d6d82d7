/*
 * abi_fortran_callbacks.c — user reduction functions and error handlers
 * from Fortran, MPICH's ABI only. A Fortran subroutine takes every
 * argument by reference, and MPICH's handles are the Fortran integers, so
 * MPI_User_function (in, inout, *len, *datatype) and the error-handler
 * functions (*handle, *code) are the Fortran subroutine's own signature:
 * the C layer calls the Fortran one directly. (Open MPI's handles are
 * pointers: its Fortran subroutines would need a trampoline per
 * registration; gen_abi_fortran.py lists them as left out.)
 */
#include "abi_fortran.h"

#ifndef OPEN_MPI

FORT_API void pmpi_op_create_(MPI_User_function *user_fn, const MPI_Fint *commute, MPI_Fint *op,
                              MPI_Fint *ierror)
{
    MPI_Op c = MPI_OP_NULL;
    *ierror = MPI_Op_create(user_fn, *commute != FORT_FALSE, &c);
    if (*ierror == MPI_SUCCESS)
        *op = MPI_Op_c2f(c);
}
FORT_ALIASES(op_create, OP_CREATE)

#define ERRHANDLER_CREATE(low, UP, Kind)                                                       \
    FORT_API void pmpi_##low##_create_errhandler_(MPI_##Kind##_errhandler_function *fn,        \
                                                  MPI_Fint *errhandler, MPI_Fint *ierror)      \
    {                                                                                          \
        MPI_Errhandler c = MPI_ERRHANDLER_NULL;                                                \
        *ierror = MPI_##Kind##_create_errhandler(fn, &c);                                      \
        if (*ierror == MPI_SUCCESS)                                                            \
            *errhandler = MPI_Errhandler_c2f(c);                                               \
    }                                                                                          \
    FORT_ALIASES(low##_create_errhandler, UP##_CREATE_ERRHANDLER)
ERRHANDLER_CREATE(comm, COMM, Comm)
ERRHANDLER_CREATE(win, WIN, Win)
ERRHANDLER_CREATE(file, FILE, File)

#endif
