/*
 * op_impl.h — shared by the files of src/op only (users go through
 * locus_op.h): the value-index pair kernels and the per-kind helpers
 * they need.
 */
#ifndef LOCUS_OP_IMPL_H
#define LOCUS_OP_IMPL_H

#include "locus_op.h"

/* Compares two values of kind el (an integer or floating kind): -1 a < b,
 * 0 equal, 1 a > b, 2 unordered (a NaN) or not such a kind. */
int locus_op_kind_cmp(locus_elem_t el, const void *a, const void *b);
/* 1 when this build has arithmetic for el (some kinds need compiler
 * extensions: _Float16, _Float128, __int128). */
int locus_op_kind_arith(locus_elem_t el);

/* 1 when el is a pair kind whose value and index kinds can be compared. */
int locus_op_pair_valid(locus_elem_t el);
/* MINLOC, MAXLOC or REPLACE on count pairs of kind el (valid ones). */
int locus_op_pairs(int op, locus_elem_t el, const void *in, void *inout, size_t count);

#endif
