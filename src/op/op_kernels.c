/*
 * op_kernels.c — the predefined reduction loops, generated per (op, kind) by
 * X-macros so every pair MPI allows has one tight, vectorisable loop.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "locus_op.h"

/* Integer kinds and their C types. */
#define INT_KINDS(X)                                                           \
    X(LOCUS_EL_CHAR, char) X(LOCUS_EL_SCHAR, signed char)                      \
    X(LOCUS_EL_UCHAR, unsigned char) X(LOCUS_EL_SHORT, short)                  \
    X(LOCUS_EL_USHORT, unsigned short) X(LOCUS_EL_INT, int)                    \
    X(LOCUS_EL_UINT, unsigned) X(LOCUS_EL_LONG, long)                          \
    X(LOCUS_EL_ULONG, unsigned long) X(LOCUS_EL_LLONG, long long)              \
    X(LOCUS_EL_ULLONG, unsigned long long) X(LOCUS_EL_INT8, int8_t)            \
    X(LOCUS_EL_UINT8, uint8_t) X(LOCUS_EL_INT16, int16_t)                      \
    X(LOCUS_EL_UINT16, uint16_t) X(LOCUS_EL_INT32, int32_t)                    \
    X(LOCUS_EL_UINT32, uint32_t) X(LOCUS_EL_INT64, int64_t)                    \
    X(LOCUS_EL_UINT64, uint64_t)
/* MPI's "multi-language" integer types. */
#define ML_KINDS(X)                                                            \
    X(LOCUS_EL_AINT, intptr_t) X(LOCUS_EL_OFFSET, long long)                   \
    X(LOCUS_EL_COUNT, long long)
#define FLOAT_KINDS(X)                                                         \
    X(LOCUS_EL_FLOAT, float) X(LOCUS_EL_DOUBLE, double)                        \
    X(LOCUS_EL_LDOUBLE, long double)

/* One loop: inout[i] = in[i] OP inout[i], with x = in[i], y = inout[i]. */
#define LOOP(T, EXPR)                                                          \
    do {                                                                       \
        const T *a_ = in;                                                      \
        T *b_ = inout;                                                         \
        for (size_t i_ = 0; i_ < count; i_++) {                                \
            T x = a_[i_], y = b_[i_];                                          \
            b_[i_] = (T)(EXPR);                                                \
        }                                                                      \
    } while (0)

/* Wrapping arithmetic: signed overflow is undefined in C, unsigned is not. */
#define WSUM(x, y) ((unsigned long long)(x) + (unsigned long long)(y))
#define WPROD(x, y) ((unsigned long long)(x) * (unsigned long long)(y))

#define CASE_LOOP(kind, T, EXPR) case kind: LOOP(T, EXPR); return 0;

#define C_MAX(kind, T) CASE_LOOP(kind, T, x > y ? x : y)
#define C_MIN(kind, T) CASE_LOOP(kind, T, x < y ? x : y)
#define C_ISUM(kind, T) CASE_LOOP(kind, T, WSUM(x, y))
#define C_IPROD(kind, T) CASE_LOOP(kind, T, WPROD(x, y))
#define C_FSUM(kind, T) CASE_LOOP(kind, T, x + y)
#define C_FPROD(kind, T) CASE_LOOP(kind, T, x * y)
#define C_LAND(kind, T) CASE_LOOP(kind, T, (x && y))
#define C_LOR(kind, T) CASE_LOOP(kind, T, (x || y))
#define C_LXOR(kind, T) CASE_LOOP(kind, T, (!x != !y))
#define C_BAND(kind, T) CASE_LOOP(kind, T, x & y)
#define C_BOR(kind, T) CASE_LOOP(kind, T, x | y)
#define C_BXOR(kind, T) CASE_LOOP(kind, T, x ^ y)

static int op_max(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { INT_KINDS(C_MAX) ML_KINDS(C_MAX) FLOAT_KINDS(C_MAX) default: return -1; }
}

static int op_min(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { INT_KINDS(C_MIN) ML_KINDS(C_MIN) FLOAT_KINDS(C_MIN) default: return -1; }
}

static int op_sum(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { INT_KINDS(C_ISUM) ML_KINDS(C_ISUM) FLOAT_KINDS(C_FSUM) default: return -1; }
}

static int op_prod(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { INT_KINDS(C_IPROD) ML_KINDS(C_IPROD) FLOAT_KINDS(C_FPROD) default: return -1; }
}

#define LOGIC_FN(name, C)                                                      \
    static int op_##name(locus_elem_t el, const void *in, void *inout, size_t count) \
    {                                                                          \
        switch (el) { INT_KINDS(C) C(LOCUS_EL_BOOL, bool) default: return -1; } \
    }
LOGIC_FN(land, C_LAND)
LOGIC_FN(lor, C_LOR)
LOGIC_FN(lxor, C_LXOR)

#define BIT_FN(name, C)                                                        \
    static int op_##name(locus_elem_t el, const void *in, void *inout, size_t count) \
    {                                                                          \
        switch (el) {                                                          \
            INT_KINDS(C) ML_KINDS(C) C(LOCUS_EL_BYTE, unsigned char)           \
            default: return -1;                                                \
        }                                                                      \
    }
BIT_FN(band, C_BAND)
BIT_FN(bor, C_BOR)
BIT_FN(bxor, C_BXOR)

/* MINLOC/MAXLOC over C structs {T v; int i;}; ties keep the lower index. */
#define LOC_LOOP(T, CMP)                                                       \
    do {                                                                       \
        struct pair_ { T v; int i; };                                          \
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
    case LOCUS_EL_FLOAT_INT: X(float, CMP); return 0;                          \
    case LOCUS_EL_DOUBLE_INT: X(double, CMP); return 0;                        \
    case LOCUS_EL_LONG_INT: X(long, CMP); return 0;                            \
    case LOCUS_EL_2INT: X(int, CMP); return 0;                                 \
    case LOCUS_EL_SHORT_INT: X(short, CMP); return 0;                          \
    case LOCUS_EL_LDOUBLE_INT: X(long double, CMP); return 0;

#define REPL_LOOP(T, CMP)                                                      \
    do {                                                                       \
        struct pair_ { T v; int i; };                                          \
        const struct pair_ *a_ = in;                                           \
        struct pair_ *b_ = inout;                                              \
        for (size_t i_ = 0; i_ < count; i_++) {                                \
            b_[i_].v = a_[i_].v;                                               \
            b_[i_].i = a_[i_].i;                                               \
        }                                                                      \
    } while (0)

static int op_replace_pairs(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { PAIR_KINDS(REPL_LOOP, =) default: return -1; }
}

static int op_minloc(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { PAIR_KINDS(LOC_LOOP, <) default: return -1; }
}

static int op_maxloc(locus_elem_t el, const void *in, void *inout, size_t count)
{
    switch (el) { PAIR_KINDS(LOC_LOOP, >) default: return -1; }
}

typedef int (*op_fn_t)(locus_elem_t, const void *, void *, size_t);

static op_fn_t op_table(int op)
{
    switch (op) {
    case LOCUS_OP_MAX: return op_max;
    case LOCUS_OP_MIN: return op_min;
    case LOCUS_OP_SUM: return op_sum;
    case LOCUS_OP_PROD: return op_prod;
    case LOCUS_OP_LAND: return op_land;
    case LOCUS_OP_BAND: return op_band;
    case LOCUS_OP_LOR: return op_lor;
    case LOCUS_OP_BOR: return op_bor;
    case LOCUS_OP_LXOR: return op_lxor;
    case LOCUS_OP_BXOR: return op_bxor;
    case LOCUS_OP_MINLOC: return op_minloc;
    case LOCUS_OP_MAXLOC: return op_maxloc;
    default: return NULL;
    }
}

static int kind_is_int(locus_elem_t el)
{
    return (el >= LOCUS_EL_CHAR && el <= LOCUS_EL_UINT64 && el != LOCUS_EL_WCHAR);
}

static int kind_is_ml(locus_elem_t el)
{
    return el == LOCUS_EL_AINT || el == LOCUS_EL_OFFSET || el == LOCUS_EL_COUNT;
}

static int kind_is_float(locus_elem_t el)
{
    return el == LOCUS_EL_FLOAT || el == LOCUS_EL_DOUBLE || el == LOCUS_EL_LDOUBLE;
}

static int kind_is_pair(locus_elem_t el)
{
    return el >= LOCUS_EL_FLOAT_INT && el <= LOCUS_EL_LDOUBLE_INT;
}

int locus_op_valid(int op, locus_elem_t el)
{
    if ((int)el < 0 || el >= LOCUS_EL_NKINDS)
        return 0;
    switch (op) {
    case LOCUS_OP_MAX: case LOCUS_OP_MIN: case LOCUS_OP_SUM: case LOCUS_OP_PROD:
        return kind_is_int(el) || kind_is_ml(el) || kind_is_float(el);
    case LOCUS_OP_LAND: case LOCUS_OP_LOR: case LOCUS_OP_LXOR:
        return kind_is_int(el) || el == LOCUS_EL_BOOL;
    case LOCUS_OP_BAND: case LOCUS_OP_BOR: case LOCUS_OP_BXOR:
        return kind_is_int(el) || kind_is_ml(el) || el == LOCUS_EL_BYTE;
    case LOCUS_OP_MINLOC: case LOCUS_OP_MAXLOC:
        return kind_is_pair(el);
    case LOCUS_OP_REPLACE: case LOCUS_OP_NO_OP:
        return 1;
    default:
        return 0;
    }
}

int locus_op_apply(int op, locus_elem_t el, const void *in, void *inout, size_t count)
{
    if (!locus_op_valid(op, el))
        return -1;
    if (op == LOCUS_OP_NO_OP || count == 0)
        return 0;
    if (op == LOCUS_OP_REPLACE && !kind_is_pair(el)) {
        memcpy(inout, in, count * locus_elem_extent(el));
        return 0;
    }
    if (op == LOCUS_OP_REPLACE)
        return op_replace_pairs(el, in, inout, count);
    return op_table(op)(el, in, inout, count);
}

const char *locus_op_name(int op)
{
    static const char *const names[LOCUS_OP_NPREDEF] = {
        "MPI_OP_NULL", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND",
        "MPI_BAND", "MPI_LOR", "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC",
        "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
    if (op >= 0 && op < LOCUS_OP_NPREDEF)
        return names[op];
    return op >= LOCUS_OP_USER ? "user op" : "invalid op";
}
