/*
 * abi_fortran_sizeof.c — MPI_SIZEOF, which the ABI's mpi module resolves
 * at compile time to one specific procedure per type (and, for Open MPI,
 * per rank), each a name this library exports: MPICH's module procedures
 * __mpi_sizeofs_MOD_mpi_sizeof_<t>[v], Open MPI's external
 * mpi_sizeof_<type>_<scalar|r1..r15>_ (and pmpi_). Every one takes (x,
 * size, ierror) and answers the element's size in bytes whatever x is (an
 * array descriptor, a CHARACTER's hidden length after the others).
 */
#include "abi_fortran.h"

#define SIZEOF_FN(name, bytes)                                                                 \
    FORT_API void name(const void *x, MPI_Fint *size, MPI_Fint *ierror)                        \
    {                                                                                          \
        (void)x;                                                                               \
        *size = bytes;                                                                         \
        *ierror = MPI_SUCCESS;                                                                 \
    }

#ifdef OPEN_MPI

#define SIZEOF_RANK(type, bytes, r)                                                            \
    SIZEOF_FN(mpi_sizeof_##type##_##r##_, bytes)                                               \
    FORT_WEAK(mpi_sizeof_##type##_##r##_, pmpi_sizeof_##type##_##r##_)
#define SIZEOF_TYPE(type, bytes)                                                               \
    SIZEOF_RANK(type, bytes, scalar) SIZEOF_RANK(type, bytes, r1) SIZEOF_RANK(type, bytes, r2) \
    SIZEOF_RANK(type, bytes, r3) SIZEOF_RANK(type, bytes, r4) SIZEOF_RANK(type, bytes, r5)     \
    SIZEOF_RANK(type, bytes, r6) SIZEOF_RANK(type, bytes, r7) SIZEOF_RANK(type, bytes, r8)     \
    SIZEOF_RANK(type, bytes, r9) SIZEOF_RANK(type, bytes, r10)                                 \
    SIZEOF_RANK(type, bytes, r11) SIZEOF_RANK(type, bytes, r12)                                \
    SIZEOF_RANK(type, bytes, r13) SIZEOF_RANK(type, bytes, r14)                                \
    SIZEOF_RANK(type, bytes, r15)
SIZEOF_TYPE(character, 1)
SIZEOF_TYPE(logical, 4)
SIZEOF_TYPE(int8, 1)
SIZEOF_TYPE(int16, 2)
SIZEOF_TYPE(int32, 4)
SIZEOF_TYPE(int64, 8)
SIZEOF_TYPE(real32, 4)
SIZEOF_TYPE(real64, 8)
SIZEOF_TYPE(real128, 16)
/* complexN: N is the kind's, a complex is two of them. */
SIZEOF_TYPE(complex32, 8)
SIZEOF_TYPE(complex64, 16)
SIZEOF_TYPE(complex128, 32)

#else

/* The scalar and the array (v) procedure of one type. */
#define SIZEOF_PAIR(t, bytes)                                                                  \
    SIZEOF_FN(__mpi_sizeofs_MOD_mpi_sizeof_##t, bytes)                                         \
    SIZEOF_FN(__mpi_sizeofs_MOD_mpi_sizeof_##t##v, bytes)
SIZEOF_PAIR(ch, 1)
SIZEOF_PAIR(l, 4)
SIZEOF_PAIR(i, 4)
SIZEOF_PAIR(i1, 1)
SIZEOF_PAIR(i2, 2)
SIZEOF_PAIR(i8, 8)
SIZEOF_PAIR(r, 4)
SIZEOF_PAIR(d, 8)
SIZEOF_PAIR(cx, 8)

#endif
