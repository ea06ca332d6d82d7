/*
 * locus_op.h — the reduction layer: predefined MPI operations applied to
 * arrays of one basic element kind (the kernels), the rule of which (op,
 * kind) pairs MPI allows, operation objects (predefined and user), and
 * reductions of typed buffers in any datatype's layout. Knows nothing of
 * communicators or MPI handles.
 */
#ifndef LOCUS_OP_H
#define LOCUS_OP_H

#include <stddef.h>

#include "locus_dtype.h"
#include "locus_err.h"

/* Operation ids of the predefined operations. */
enum {
    LOCUS_OP_NULL = 0,
    LOCUS_OP_MAX = 1, LOCUS_OP_MIN, LOCUS_OP_SUM, LOCUS_OP_PROD,
    LOCUS_OP_LAND, LOCUS_OP_BAND, LOCUS_OP_LOR, LOCUS_OP_BOR,
    LOCUS_OP_LXOR, LOCUS_OP_BXOR, LOCUS_OP_MINLOC, LOCUS_OP_MAXLOC,
    LOCUS_OP_REPLACE = 13, LOCUS_OP_NO_OP = 14,
    LOCUS_OP_NPREDEF = 15,
    LOCUS_OP_USER = 32         /* the id of every user operation */
};

/*
 * 1 when the predefined `op` may be applied to `el` under the MPI rules:
 * MAX/MIN on integers (C and Fortran; MPI_CHAR included, as MPICH allows)
 * and floating point; SUM/PROD on the same and complex; LAND/LOR/LXOR on
 * integers and logicals (C bool, Fortran LOGICAL); BAND/BOR/BXOR on
 * integers and bytes; MINLOC/MAXLOC on the value-index pair kinds
 * (predefined and run-time ones); REPLACE and NO_OP (one-sided only) on
 * every kind. MPI_AINT, MPI_OFFSET and MPI_COUNT count as integers except
 * for the logical ops. Kinds whose C type this build lacks (_Float16,
 * _Float128, __int128: see locus_dtype.h) allow REPLACE and NO_OP only.
 * 0 otherwise, including for LOCUS_EL_MIXED and for ids that are not
 * predefined ops.
 */
int locus_op_valid(int op, locus_elem_t el);

/*
 * inout[i] = in[i] op inout[i] for i < count elements of kind el, both
 * arrays laid out as C arrays of the kind. Integer SUM/PROD wrap around
 * (two's complement) instead of overflowing; logical results are 0 or 1
 * (Fortran's .TRUE. is 1, any non-zero input is true). MINLOC/MAXLOC keep
 * the lower index on ties. Only data bytes are written: never the padding
 * of a pair (so a buffer may end where the last element's data ends).
 * Returns 0, or -1 (nothing touched) when locus_op_valid() says no.
 */
int locus_op_apply(int op, locus_elem_t el, const void *in, void *inout, size_t count);

/* The MPI name of a predefined op ("MPI_SUM"), or "user op"/"invalid op". */
const char *locus_op_name(int op);

/* ---- operation objects ------------------------------------------------ */

typedef struct locus_op locus_op_t;

/*
 * Applies a user operation to count elements of dt (both buffers in dt's
 * layout): supplied by whoever created the op (the MPI layer knows how to
 * call a C, large-count or Fortran function and which handle to pass for
 * dt). Returns a LOCUS_ERR_* code.
 */
typedef int (*locus_op_user_apply_t)(const locus_op_t *op, const void *in, void *inout,
                                     size_t count, locus_dtype_t *dt);

struct locus_op {
    int id;                   /* LOCUS_OP_MAX.. for predefined ops, LOCUS_OP_USER */
    int commute;              /* 1: the op commutes (every predefined one does) */
    int refs;                 /* user ops: freed by the last locus_op_release */
    locus_op_user_apply_t user_apply;
    void *user_fn;            /* the user's function and its flavour, for */
    int user_kind;            /* user_apply; opaque here */
};

/* The object of predefined op id (LOCUS_OP_NULL..LOCUS_OP_NO_OP): static,
 * never freed. NULL for another id. */
locus_op_t *locus_op_predefined(int id);

/* A new user operation (refs 1), or NULL when out of memory. */
locus_op_t *locus_op_user_new(int commute, locus_op_user_apply_t apply, void *fn, int kind);

/* Adds / drops a reference (predefined ops ignore both). */
void locus_op_retain(locus_op_t *op);
void locus_op_release(locus_op_t *op);

/* LOCUS_SUCCESS when op may reduce dt in a collective: a user op, or a
 * predefined one MPI allows on dt's element kind (not REPLACE/NO_OP, which
 * are for one-sided accumulates); else LOCUS_ERR_OP. */
int locus_op_check(const locus_op_t *op, const locus_dtype_t *dt);

/*
 * inout = in op inout for count elements of dt, both buffers in dt's layout
 * (as a user passes them, element 0 at the pointer). Predefined ops on a
 * derived layout gather both sides into arrays of the kind, reduce and
 * scatter back. Returns LOCUS_SUCCESS, LOCUS_ERR_OP or LOCUS_ERR_NO_MEM.
 */
int locus_op_reduce(const locus_op_t *op, locus_dtype_t *dt, size_t count, const void *in,
                    void *inout);

#endif
