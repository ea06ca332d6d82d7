/*
 * mpi_fortran.h — what liblocusmpi gives Locus's own Fortran binding
 * (liblocusmpifort, src/fortran) beyond mpi.h: attribute values in
 * Fortran's form. Not installed; no program calls it.
 *
 * MPI-4.1 19.3.7 makes attributes language-aware: a value set from Fortran
 * is an integer (INTEGER(KIND=MPI_ADDRESS_KIND), or INTEGER for the MPI-1
 * MPI_ATTR_PUT) and C, getting it, gets a pointer to that integer kept by
 * the library; a value set from C (a void *) reads in Fortran as the
 * address; Fortran callbacks get and return integers, C callbacks a
 * pointer to a Fortran value. The C calls cannot tell who called them, so
 * the binding says so before each one.
 */
#ifndef LOCUS_MPI_FORTRAN_H
#define LOCUS_MPI_FORTRAN_H

#include "mpi.h"

/* The forms of an attribute value: a C pointer, or a Fortran integer of
 * MPI_Aint's (MPI-2 calls) or MPI_Fint's (MPI-1 calls) size. */
enum { LOCUS_ATTR_FORM_C, LOCUS_ATTR_FORM_AINT, LOCUS_ATTR_FORM_FINT };

/* The next attribute call of this thread comes from Fortran with values
 * of `form`: MPI_{Comm,Type,Win}_create_keyval (and MPI_Keyval_create)
 * give the keyval Fortran callbacks, which get the value as an integer
 * (in the void * argument) and return one of `form`; *_set_attr (and
 * MPI_Attr_put) take the integer in the void * argument; *_get_attr (and
 * MPI_Attr_get) put the integer Fortran sees in the void * they write (a C
 * value's address, sign-extended for an MPI-1 one). The call takes the
 * setting when it reaches the attribute; the binding sets
 * LOCUS_ATTR_FORM_C after it all the same (a call that fails before
 * leaves it). */
LOCUS_MPI_API void locus_attr_from_fortran(int form);

#endif
