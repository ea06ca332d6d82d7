/*
 * locus_op.h — the reduction engine: predefined MPI operations applied to
 * arrays of one basic element kind, and the rule of which (op, kind) pairs
 * MPI allows. Knows nothing of communicators; the collectives call it on
 * buffers laid out as C arrays of the kind (element stride = the kind's
 * extent, see locus_elem_extent()).
 */
#ifndef LOCUS_OP_H
#define LOCUS_OP_H

#include <stddef.h>

#include "locus_dtype.h"

/* Operation ids: the values of the MPI_Op handles in mpi.h. */
enum {
    LOCUS_OP_NULL = 0,
    LOCUS_OP_MAX = 1, LOCUS_OP_MIN, LOCUS_OP_SUM, LOCUS_OP_PROD,
    LOCUS_OP_LAND, LOCUS_OP_BAND, LOCUS_OP_LOR, LOCUS_OP_BOR,
    LOCUS_OP_LXOR, LOCUS_OP_BXOR, LOCUS_OP_MINLOC, LOCUS_OP_MAXLOC,
    LOCUS_OP_REPLACE = 13, LOCUS_OP_NO_OP = 14,
    LOCUS_OP_NPREDEF = 15,
    LOCUS_OP_USER_FIRST = 32   /* user operations (MPI_Op_create) from here */
};

/*
 * 1 when the predefined `op` may be applied to `el` under the MPI rules:
 * MAX/MIN on integers (MPI_CHAR included, as MPICH allows) and floating
 * point; SUM/PROD on the same; LAND/LOR/LXOR on integers and C bool;
 * BAND/BOR/BXOR on integers and bytes; MINLOC/MAXLOC on the pair types;
 * REPLACE and NO_OP (one-sided only) on every kind. MPI_AINT, MPI_OFFSET
 * and MPI_COUNT count as integers except for the logical ops. 0 otherwise,
 * including for LOCUS_EL_MIXED and for ids that are not predefined ops.
 */
int locus_op_valid(int op, locus_elem_t el);

/*
 * inout[i] = in[i] op inout[i] for i < count elements of kind el, both
 * arrays laid out as C arrays of the kind. Integer SUM/PROD wrap around
 * (two's complement) instead of overflowing. MINLOC/MAXLOC keep the lower
 * index on ties. Returns 0, or -1 (nothing touched) when locus_op_valid()
 * says no.
 */
int locus_op_apply(int op, locus_elem_t el, const void *in, void *inout, size_t count);

/* The MPI name of a predefined op ("MPI_SUM"), or "user op"/"invalid op". */
const char *locus_op_name(int op);

#endif
