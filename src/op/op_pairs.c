/*
 * op_pairs.c — MINLOC/MAXLOC (and REPLACE) on value-index pairs: a typed
 * loop for each pair type, and one that compares through the kinds (for
 * REPLACE and any pair without a typed loop).
 * Ties keep the lower index; only data bytes are written, never a pair's
 * padding (a buffer may end where the last element's data ends).
 */
#include <string.h>

#include "op_impl.h"

#define LOC_LOOP(VT, IT, CMP)                                                  \
    do {                                                                       \
        struct pair_ { VT v; IT i; };                                          \
        const struct pair_ *a_ = in;                                           \
        struct pair_ *b_ = inout;                                              \
        for (size_t i_ = 0; i_ < count; i_++) {                                \
            if (a_[i_].v CMP b_[i_].v) {                                       \
                b_[i_].v = a_[i_].v; /* fields, not the struct: its padding */ \
                b_[i_].i = a_[i_].i; /* may lie past the caller's buffer */    \
            } else if (a_[i_].v == b_[i_].v && a_[i_].i < b_[i_].i) {          \
                b_[i_].i = a_[i_].i;                                           \
            }                                                                  \
        }                                                                      \
    } while (0)
#define PAIR_KINDS(X, CMP)                                                     \
    case LOCUS_EL_FLOAT_INT: X(float, int, CMP); return 0;                     \
    case LOCUS_EL_DOUBLE_INT: X(double, int, CMP); return 0;                   \
    case LOCUS_EL_LONG_INT: X(long, int, CMP); return 0;                       \
    case LOCUS_EL_2INT: X(int, int, CMP); return 0;                            \
    case LOCUS_EL_SHORT_INT: X(short, int, CMP); return 0;                     \
    case LOCUS_EL_LDOUBLE_INT: X(long double, int, CMP); return 0;             \
    case LOCUS_EL_2FLOAT: X(float, float, CMP); return 0;                      \
    case LOCUS_EL_2DOUBLE: X(double, double, CMP); return 0;

int locus_op_pair_valid(locus_elem_t el)
{
    locus_elem_t v, i;
    size_t off;
    return locus_elem_pair(el, &v, &i, &off) && locus_op_kind_arith(v) &&
           locus_op_kind_arith(i);
}

/* Any pair kind: value at 0, index at ioff, elements `ext` bytes apart. */
static void pairs_generic(int op, locus_elem_t el, const char *in, char *inout, size_t count)
{
    locus_elem_t vk, ik;
    size_t ioff;
    locus_elem_pair(el, &vk, &ik, &ioff);
    size_t ext = locus_elem_extent(el), vs = locus_elem_size(vk), is = locus_elem_size(ik);
    int take = op == LOCUS_OP_MINLOC ? -1 : 1;
    for (size_t e = 0; e < count; e++, in += ext, inout += ext) {
        int c = op == LOCUS_OP_REPLACE ? take : locus_op_kind_cmp(vk, in, inout);
        if (c == take) {
            memcpy(inout, in, vs);
            memcpy(inout + ioff, in + ioff, is);
        } else if (c == 0 && locus_op_kind_cmp(ik, in + ioff, inout + ioff) < 0) {
            memcpy(inout + ioff, in + ioff, is);
        }
    }
}

int locus_op_pairs(int op, locus_elem_t el, const void *in, void *inout, size_t count)
{
    if (op == LOCUS_OP_MINLOC) {
        switch ((int)el) { PAIR_KINDS(LOC_LOOP, <) default: break; }
    } else if (op == LOCUS_OP_MAXLOC) {
        switch ((int)el) { PAIR_KINDS(LOC_LOOP, >) default: break; }
    }
    pairs_generic(op, el, in, inout, count);
    return 0;
}
