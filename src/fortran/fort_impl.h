/*
 * fort_impl.h — inside liblocusmpifort, the Fortran binding (gfortran
 * conventions) over Locus's C interface, the MPI-5 standard ABI. The
 * generated file (src/api/gen_fortran.py -> fort_bindings.c) and the
 * hand-written bindings share what is declared here; applications see only the
 * Fortran entry points, the common blocks and mpi_abi_fort.h.
 *
 * How a Fortran call becomes a C call (gfortran, x86-64 / aarch64 LP64):
 *  - every argument comes by reference; INTEGER is a C int (MPI_Fint);
 *  - a Fortran integer handle is what MPI_<Kind>_toint returns (the ABI's
 *    value for a predefined handle) and goes back with MPI_<Kind>_fromint;
 *  - LOGICAL is a 4-byte integer, .TRUE. = 1, .FALSE. = 0;
 *  - CHARACTER arguments are blank-padded, not NUL-terminated, and their
 *    lengths come as hidden size_t arguments after all the others;
 *  - MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE and the other sentinels
 *    are variables in common blocks: the binding recognises them by address.
 */
#ifndef LOCUS_FORT_IMPL_H
#define LOCUS_FORT_IMPL_H

#include <stddef.h>

#include "mpi.h"
#include "mpi_abi_fort.h"
#include "mpi_fortran.h"
#include "fort_text.h"

/* What the library exports: the Fortran entry points and the sentinels. */
#define FORT_API __attribute__((visibility("default")))
/* Makes mpi_x_ a weak alias of pmpi_x_, so a Fortran tool can define mpi_x_
 * and call pmpi_x_ (the profiling interface). */
#define FORT_WEAK(pname, name) \
    FORT_API extern __typeof__(pname) name __attribute__((weak, alias(#pname)));

/* ---- sentinels --------------------------------------------------------------
 * The numeric sentinels are one common block, /locus_mpif_sentinels/ in
 * mpif.h and the mpi module, in this order; the character ones another (a
 * common block may not mix CHARACTER and numeric storage). The definitions
 * here only reserve the storage: a program's own common block of the same
 * name takes precedence and the library sees that one. */
struct fort_sentinels {
    MPI_Fint bottom;
    MPI_Fint in_place;
    MPI_Fint buffer_automatic;
    MPI_Fint status_ignore[MPI_F_STATUS_SIZE];
    MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE];
    MPI_Fint errcodes_ignore[1];
    MPI_Fint unweighted[1];
    MPI_Fint weights_empty[1];
};
struct fort_char_sentinels {
    char argv_null[1];
    char argvs_null[1];
};
extern struct fort_sentinels locus_mpif_sentinels_;
extern struct fort_char_sentinels locus_mpif_char_sentinels_;

/* A choice buffer: MPI_BOTTOM, MPI_IN_PLACE, MPI_BUFFER_AUTOMATIC become the
 * C values, any other address is the buffer. */
static inline void *fort_buf(const void *p)
{
    const struct fort_sentinels *s = &locus_mpif_sentinels_;
    if (p == &s->bottom)
        return MPI_BOTTOM;
    if (p == &s->in_place)
        return MPI_IN_PLACE;
    if (p == &s->buffer_automatic)
        return MPI_BUFFER_AUTOMATIC;
    return (void *)p;
}

static inline int fort_is_in_place(const void *p)
{
    return p == &locus_mpif_sentinels_.in_place;
}

/* A status (or an array of them): the Fortran status has the C layout, so
 * only the IGNORE sentinels need turning into C's. */
static inline MPI_Status *fort_status(const MPI_Fint *p)
{
    const struct fort_sentinels *s = &locus_mpif_sentinels_;
    if (p == s->status_ignore || p == s->statuses_ignore)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)p;
}

/* Graph weights: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY. */
static inline int *fort_weights(const MPI_Fint *p)
{
    const struct fort_sentinels *s = &locus_mpif_sentinels_;
    if (p == s->unweighted)
        return MPI_UNWEIGHTED;
    if (p == s->weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return (int *)p;
}

static inline int *fort_errcodes(MPI_Fint *p)
{
    return p == locus_mpif_sentinels_.errcodes_ignore ? MPI_ERRCODES_IGNORE : p;
}

/* A C logical result as gfortran's LOGICAL (exactly 1 or 0). */
static inline void fort_logical_out(MPI_Fint *p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = p[i] != 0;
}

/* Fortran indices count from 1 (MPI_Waitany, MPI_Waitsome ...);
 * MPI_UNDEFINED stays. */
static inline void fort_index_out(MPI_Fint *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] >= 0)
            p[i] += 1;
}

/* ---- strings and scratch arrays: fort_text.h ------------------------------ */

/* ---- errors (fort_support.c) ------------------------------------------------ */

/* Raises an error of the binding itself (out of memory, a table full) on
 * MPI_COMM_WORLD's handler, with a line saying why, and returns its code. */
int fort_err(int errclass, const char *fn, const char *why);

/* The error of a call the C library does not provide (fort_bindings.c
 * refers to the C functions weakly): MPI_ERR_UNSUPPORTED_OPERATION. */
int fort_missing(const char *fn);

/* ---- collectives with handle arrays (fort_support.c) ------------------------- */

/* How many datatypes the send (FORT_PEERS_SEND) or receive side of an
 * alltoallw (neighbor = 0) or a neighbour alltoallw (neighbor = 1) on comm
 * takes; 0 for MPI_COMM_NULL (the C call reports it). */
enum { FORT_PEERS_SEND, FORT_PEERS_RECV };
int fort_peers(MPI_Comm comm, int neighbor, int side);

/* ---- nonblocking duplication (fort_callbacks.c) ---------------------------- */

/* MPI_Comm_idup writes the new communicator when the request completes:
 * the binding keeps the C handle until a completion call sees the request
 * done, then stores its Fortran integer. fort_idup_settle is called by
 * every completion call with the requests' Fortran integers as they were
 * passed (old) and the C requests after the call (now), when
 * fort_idup_any() says a duplication is pending. */
int fort_idup_any(void);
void fort_idup_settle(const MPI_Fint *old, const MPI_Request *now, int n);
/* MPI_Request_free of a pending duplication: the C handle's storage stays
 * (the library still writes it) but no Fortran variable gets it. */
void fort_idup_forget(MPI_Fint request);

/* Frees what the binding kept for callbacks (at MPI_Finalize): all of it,
 * and the attribute keyvals' records (fort_attr.c). */
void fort_callbacks_release(void);
void fort_attr_release(void);

#endif
