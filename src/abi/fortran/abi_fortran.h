/*
 * abi_fortran.h — the Fortran halves of the legacy-ABI layers: what owns
 * the Fortran entry points of a program built with mpif90.mpich
 * (libmpichfort.so.12, also libmpifort.so.12) or mpif90.openmpi
 * (libmpi_mpifh.so.40, and the MPI_SIZEOF part of libmpi_usempif08.so.40
 * and libmpi_usempi_ignore_tkr.so.40), over the C layer of the same ABI
 * (../mpich, ../openmpi): every call becomes the C layer's MPI_X, which
 * translates it to Locus. This part owns only the Fortran conventions; the
 * C layer owns every value and handle translation.
 *
 * Compiled against the legacy ABI's own mpi.h (OPEN_MPI tells the two
 * apart). The generated entry points (src/api/gen_abi_fortran.py, through
 * gen_fortran.py's classify()) call the fort_* helpers below, the same
 * contract as Locus's own binding (src/fortran/fort_impl.h):
 *  - arguments come by reference; INTEGER is MPI_Fint; a Fortran handle
 *    becomes the C one through the ABI's MPI_<Kind>_f2c (MPICH: a cast,
 *    its Fortran handle is its C handle; Open MPI: the C layer's function);
 *  - a Fortran status has the C layout (MPICH 5 MPI_Fint, Open MPI 6);
 *  - LOGICAL: gfortran's, .TRUE. = 1; strings blank-padded, their lengths
 *    hidden size_t arguments after all others;
 *  - MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, MPI_ERRCODES_IGNORE,
 *    MPI_ARGV(S)_NULL, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY are variables in
 *    COMMON blocks named as the ABI's mpif.h and mpi module name them
 *    (MPICH: /MPIPRIV1/ ...; Open MPI: /mpi_fortran_bottom/ ...). This
 *    library defines them with the same sizes (default visibility, read
 *    through the GOT: an executable's own copy is the one it sees) and
 *    recognises them by address.
 */
#ifndef LOCUS_ABI_FORTRAN_H
#define LOCUS_ABI_FORTRAN_H

#include <stddef.h>

#include <mpi.h> /* the legacy ABI's */
#include "fort_text.h" /* src/fortran: strings, scratch arrays */

#ifdef OPEN_MPI
#define ABI_F_NAME "Open MPI"
#else
#define ABI_F_NAME "MPICH"
#endif

#define FORT_API __attribute__((visibility("default")))
/* name: a weak alias of pname (pmpi_x_), so a Fortran tool can define
 * mpi_x_ and call pmpi_x_. */
#define FORT_WEAK(pname, name) \
    FORT_API extern __typeof__(pname) name __attribute__((weak, alias(#pname)));

/* The other names of a hand-written entry point pmpi_<low>_ (the
 * generated ones list theirs): mpi_x_, mpi_x__, mpi_x, MPI_X, pmpi_x__,
 * pmpi_x, PMPI_X, as the real libraries export them. */
#define FORT_ALIASES(low, UP)                                                                  \
    FORT_WEAK(pmpi_##low##_, mpi_##low##_)                                                     \
    FORT_WEAK(pmpi_##low##_, mpi_##low##__)                                                    \
    FORT_WEAK(pmpi_##low##_, mpi_##low)                                                        \
    FORT_WEAK(pmpi_##low##_, MPI_##UP)                                                         \
    FORT_WEAK(pmpi_##low##_, pmpi_##low##__)                                                   \
    FORT_WEAK(pmpi_##low##_, pmpi_##low)                                                       \
    FORT_WEAK(pmpi_##low##_, PMPI_##UP)

/* ---- the sentinels' COMMON blocks (abi_fortran_sentinels.c) ---- */

#ifdef OPEN_MPI
#define ABI_F_STATUS_SIZE 6
extern MPI_Fint mpi_fortran_bottom_, mpi_fortran_in_place_;
extern MPI_Fint mpi_fortran_status_ignore_[ABI_F_STATUS_SIZE];
extern MPI_Fint mpi_fortran_statuses_ignore_[ABI_F_STATUS_SIZE];
extern MPI_Fint mpi_fortran_errcodes_ignore_[1];
extern MPI_Fint mpi_fortran_unweighted_[1], mpi_fortran_weights_empty_[1];
extern char mpi_fortran_argv_null_[1], mpi_fortran_argvs_null_[1];
#define ABI_F_BOTTOM (&mpi_fortran_bottom_)
#define ABI_F_IN_PLACE (&mpi_fortran_in_place_)
#define ABI_F_STATUS_IGNORE mpi_fortran_status_ignore_
#define ABI_F_STATUSES_IGNORE mpi_fortran_statuses_ignore_
#define ABI_F_ERRCODES_IGNORE mpi_fortran_errcodes_ignore_
#define ABI_F_UNWEIGHTED mpi_fortran_unweighted_
#define ABI_F_WEIGHTS_EMPTY mpi_fortran_weights_empty_
#define ABI_F_ARGV_NULL mpi_fortran_argv_null_
#define ABI_F_ARGVS_NULL mpi_fortran_argvs_null_
#else
/* MPICH's mpif.h: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS_IGNORE; /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE;
 * /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL; /MPIFCMB5/ MPI_UNWEIGHTED;
 * /MPIFCMB9/ MPI_WEIGHTS_EMPTY. */
#define ABI_F_STATUS_SIZE 5
struct abi_mpich_priv1 {
    MPI_Fint bottom, in_place, status_ignore[ABI_F_STATUS_SIZE];
};
struct abi_mpich_priv2 {
    MPI_Fint statuses_ignore[ABI_F_STATUS_SIZE], errcodes_ignore[1];
};
extern struct abi_mpich_priv1 mpipriv1_;
extern struct abi_mpich_priv2 mpipriv2_;
extern char mpiprivc_[2];
extern MPI_Fint mpifcmb5_, mpifcmb9_;
#define ABI_F_BOTTOM (&mpipriv1_.bottom)
#define ABI_F_IN_PLACE (&mpipriv1_.in_place)
#define ABI_F_STATUS_IGNORE mpipriv1_.status_ignore
#define ABI_F_STATUSES_IGNORE mpipriv2_.statuses_ignore
#define ABI_F_ERRCODES_IGNORE mpipriv2_.errcodes_ignore
#define ABI_F_UNWEIGHTED (&mpifcmb5_)
#define ABI_F_WEIGHTS_EMPTY (&mpifcmb9_)
#define ABI_F_ARGVS_NULL (&mpiprivc_[0])
#define ABI_F_ARGV_NULL (&mpiprivc_[1])
#endif

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become the C values. */
static inline void *fort_buf(const void *p)
{
    if (p == ABI_F_BOTTOM)
        return MPI_BOTTOM;
    if (p == ABI_F_IN_PLACE)
        return MPI_IN_PLACE;
    return (void *)p;
}

static inline int fort_is_in_place(const void *p)
{
    return p == ABI_F_IN_PLACE;
}

/* A status or an array of them: the C layout already, but for the
 * IGNORE sentinels. */
static inline MPI_Status *fort_status(const MPI_Fint *p)
{
    if (p == ABI_F_STATUS_IGNORE)
        return MPI_STATUS_IGNORE;
    if (p == ABI_F_STATUSES_IGNORE)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)(void *)p;
}

static inline int *fort_weights(const MPI_Fint *p)
{
    if (p == ABI_F_UNWEIGHTED)
        return MPI_UNWEIGHTED;
    if (p == ABI_F_WEIGHTS_EMPTY)
        return MPI_WEIGHTS_EMPTY;
    return (int *)p;
}

static inline int *fort_errcodes(MPI_Fint *p)
{
    return p == ABI_F_ERRCODES_IGNORE ? MPI_ERRCODES_IGNORE : p;
}

/* A C logical result as gfortran's LOGICAL (exactly 1 or 0). */
static inline void fort_logical_out(MPI_Fint *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = p[i] != 0;
}

/* Fortran indices count from 1; MPI_UNDEFINED (negative) stays. */
static inline void fort_index_out(MPI_Fint *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] >= 0)
            p[i] += 1;
}

/* ---- abi_fortran_support.c (strings and scratch arrays: fort_text.h) ---- */

/* An error of the binding itself, raised on MPI_COMM_WORLD's handler
 * with a line saying why; returns its code. */
int fort_err(int errclass, const char *fn, const char *why);
/* A call the C layer does not provide: MPI_ERR_OTHER, said once. */
int fort_missing(const char *fn);

/* How many datatypes the send or receive side of an alltoallw (neighbor
 * 0) or a neighbour alltoallw (1) on comm takes. */
enum { FORT_PEERS_SEND, FORT_PEERS_RECV };
int fort_peers(MPI_Comm comm, int neighbor, int side);

/* gfortran's LOGICAL values. */
#define FORT_TRUE 1
#define FORT_FALSE 0

#endif
