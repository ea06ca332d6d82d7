/*
 * op_kernels.c — the predefined reduction loops, generated per (op, kind) by
 * X-macros so every pair MPI allows has one tight, vectorisable loop. The
 * value-index pairs (MINLOC/MAXLOC) are in op_pairs.c.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "locus_copy.h"
#include "op_impl.h"

/* Integer kinds: kind, C type, the unsigned type wrapping arithmetic is
 * done in (signed overflow is undefined in C, unsigned is not). */
#ifdef LOCUS_HAVE_INT128
#define INT128_KIND(X) X(LOCUS_EL_INT128, __int128, unsigned __int128)
#else
#define INT128_KIND(X)
#endif
#define INT_KINDS(X)                                                           \
    X(LOCUS_EL_CHAR, char, unsigned long long)                                 \
    X(LOCUS_EL_SCHAR, signed char, unsigned long long)                         \
    X(LOCUS_EL_UCHAR, unsigned char, unsigned long long)                       \
    X(LOCUS_EL_SHORT, short, unsigned long long)                               \
    X(LOCUS_EL_USHORT, unsigned short, unsigned long long)                     \
    X(LOCUS_EL_INT, int, unsigned long long)                                   \
    X(LOCUS_EL_UINT, unsigned, unsigned long long)                             \
    X(LOCUS_EL_LONG, long, unsigned long long)                                 \
    X(LOCUS_EL_ULONG, unsigned long, unsigned long long)                       \
    X(LOCUS_EL_LLONG, long long, unsigned long long)                           \
    X(LOCUS_EL_ULLONG, unsigned long long, unsigned long long)                 \
    X(LOCUS_EL_INT8, int8_t, unsigned long long)                               \
    X(LOCUS_EL_UINT8, uint8_t, unsigned long long)                             \
    X(LOCUS_EL_INT16, int16_t, unsigned long long)                             \
    X(LOCUS_EL_UINT16, uint16_t, unsigned long long)                           \
    X(LOCUS_EL_INT32, int32_t, unsigned long long)                             \
    X(LOCUS_EL_UINT32, uint32_t, unsigned long long)                           \
    X(LOCUS_EL_INT64, int64_t, unsigned long long)                             \
    X(LOCUS_EL_UINT64, uint64_t, unsigned long long)                           \
    INT128_KIND(X)
/* MPI's "multi-language" integer types. */
#define ML_KINDS(X)                                                            \
    X(LOCUS_EL_AINT, intptr_t, unsigned long long)                             \
    X(LOCUS_EL_OFFSET, long long, unsigned long long)                          \
    X(LOCUS_EL_COUNT, long long, unsigned long long)

#ifdef LOCUS_HAVE_FLOAT16
#define F16_KIND(X) X(LOCUS_EL_FLOAT16, _Float16, _Float16)
#define C16_KIND(X) X(LOCUS_EL_CFLOAT16, _Complex _Float16, _Complex _Float16)
#else
#define F16_KIND(X)
#define C16_KIND(X)
#endif
#ifdef LOCUS_HAVE_FLOAT128
#define F128_KIND(X) X(LOCUS_EL_FLOAT128, _Float128, _Float128)
#define C128_KIND(X) X(LOCUS_EL_CFLOAT128, _Complex _Float128, _Complex _Float128)
#else
#define F128_KIND(X)
#define C128_KIND(X)
#endif
#define FLOAT_KINDS(X)                                                         \
    X(LOCUS_EL_FLOAT, float, float) X(LOCUS_EL_DOUBLE, double, double)         \
    X(LOCUS_EL_LDOUBLE, long double, long double) F16_KIND(X) F128_KIND(X)
#define COMPLEX_KINDS(X)                                                       \
    X(LOCUS_EL_CFLOAT, float complex, float complex)                           \
    X(LOCUS_EL_CDOUBLE, double complex, double complex)                        \
    X(LOCUS_EL_CLDOUBLE, long double complex, long double complex)             \
    C16_KIND(X) C128_KIND(X)
/* C bool and Fortran LOGICAL: true is any non-zero value, results are 1
 * (gfortran's .TRUE.). */
#ifdef LOCUS_HAVE_INT128
#define L16_KIND(X) X(LOCUS_EL_FLOGICAL16, __int128, __int128)
#else
#define L16_KIND(X)
#endif
#define LOGICAL_KINDS(X)                                                       \
    X(LOCUS_EL_BOOL, bool, bool) X(LOCUS_EL_FLOGICAL1, int8_t, int8_t)         \
    X(LOCUS_EL_FLOGICAL2, int16_t, int16_t) X(LOCUS_EL_FLOGICAL4, int32_t, int32_t) \
    X(LOCUS_EL_FLOGICAL8, int64_t, int64_t) L16_KIND(X)

/* One loop: inout[i] = in[i] OP inout[i], with x = in[i], y = inout[i].
 * The buffers never overlap (MPI forbids it; the collectives use distinct
 * scratch), which `restrict` tells the vectoriser. */
#define LOOP(T, EXPR)                                                          \
    do {                                                                       \
        const T *restrict a_ = in;                                             \
        T *restrict b_ = inout;                                                \
        for (size_t i_ = 0; i_ < count; i_++) {                                \
            T x = a_[i_], y = b_[i_];                                          \
            b_[i_] = (T)(EXPR);                                                \
        }                                                                      \
    } while (0)

#define CASE_LOOP(kind, T, EXPR) case kind: LOOP(T, EXPR); return 0;

#define C_MAX(kind, T, W) CASE_LOOP(kind, T, x > y ? x : y)
#define C_MIN(kind, T, W) CASE_LOOP(kind, T, x < y ? x : y)
#define C_SUM(kind, T, W) CASE_LOOP(kind, T, (W)x + (W)y)
#define C_PROD(kind, T, W) CASE_LOOP(kind, T, (W)x * (W)y)
#define C_LAND(kind, T, W) CASE_LOOP(kind, T, (x && y))
#define C_LOR(kind, T, W) CASE_LOOP(kind, T, (x || y))
#define C_LXOR(kind, T, W) CASE_LOOP(kind, T, (!x != !y))
#define C_BAND(kind, T, W) CASE_LOOP(kind, T, x & y)
#define C_BOR(kind, T, W) CASE_LOOP(kind, T, x | y)
#define C_BXOR(kind, T, W) CASE_LOOP(kind, T, x ^ y)

/* The kernels are built for the widest vector unit the CPU has, picked at
 * load time (GCC/Clang function multiversioning): the baseline x86-64
 * build only has SSE2, and a 1 MiB float sum took 146-258 us there against
 * 26 us in Open MPI's AVX kernels. Not under ThreadSanitizer: the loader
 * runs the clones' resolvers before the sanitizer's runtime starts, and
 * their instrumentation faults there (LOCUS_SANITIZE=thread). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute) && \
    !defined(__SANITIZE_THREAD__)
#if __has_attribute(target_clones)
#define OP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef OP_CLONES
#define OP_CLONES
#endif

#define OP_FN(name, KINDS_OF)                                                  \
    OP_CLONES static int op_##name(locus_elem_t el, const void *in, void *inout, size_t count) \
    {                                                                          \
        switch ((int)el) { KINDS_OF default: return -1; }                      \
    }
OP_FN(max, INT_KINDS(C_MAX) ML_KINDS(C_MAX) FLOAT_KINDS(C_MAX))
OP_FN(min, INT_KINDS(C_MIN) ML_KINDS(C_MIN) FLOAT_KINDS(C_MIN))
OP_FN(sum, INT_KINDS(C_SUM) ML_KINDS(C_SUM) FLOAT_KINDS(C_SUM) COMPLEX_KINDS(C_SUM))
OP_FN(prod, INT_KINDS(C_PROD) ML_KINDS(C_PROD) FLOAT_KINDS(C_PROD) COMPLEX_KINDS(C_PROD))
OP_FN(land, INT_KINDS(C_LAND) LOGICAL_KINDS(C_LAND))
OP_FN(lor, INT_KINDS(C_LOR) LOGICAL_KINDS(C_LOR))
OP_FN(lxor, INT_KINDS(C_LXOR) LOGICAL_KINDS(C_LXOR))
OP_FN(band, INT_KINDS(C_BAND) ML_KINDS(C_BAND) C_BAND(LOCUS_EL_BYTE, unsigned char, int))
OP_FN(bor, INT_KINDS(C_BOR) ML_KINDS(C_BOR) C_BOR(LOCUS_EL_BYTE, unsigned char, int))
OP_FN(bxor, INT_KINDS(C_BXOR) ML_KINDS(C_BXOR) C_BXOR(LOCUS_EL_BYTE, unsigned char, int))

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
    default: return NULL;
    }
}

/* ---- ordered comparison of two values of a kind (for the pairs) ---- */

#define C_CMP(kind, T, W)                                                      \
    case kind: {                                                               \
        T x, y;                                                                \
        memcpy(&x, a, sizeof x);                                               \
        memcpy(&y, b, sizeof y);                                               \
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;                        \
    }

int locus_op_kind_cmp(locus_elem_t el, const void *a, const void *b)
{
    switch ((int)el) {
        INT_KINDS(C_CMP) ML_KINDS(C_CMP) FLOAT_KINDS(C_CMP)
    default: return 2;
    }
}

/* 1 when the kernels of this build have arithmetic for el. */
int locus_op_kind_arith(locus_elem_t el)
{
    switch ((int)el) {
#ifndef LOCUS_HAVE_INT128
    case LOCUS_EL_INT128: case LOCUS_EL_FLOGICAL16: return 0;
#endif
#ifndef LOCUS_HAVE_FLOAT16
    case LOCUS_EL_FLOAT16: case LOCUS_EL_CFLOAT16: return 0;
#endif
#ifndef LOCUS_HAVE_FLOAT128
    case LOCUS_EL_FLOAT128: case LOCUS_EL_CFLOAT128: return 0;
#endif
    default: return locus_dtype_basic(el) != NULL;
    }
}

/* The rules of MPI-4.1 5.9.2: which predefined operation a kind takes. */
static int op_valid_rule(int op, locus_elem_t el)
{
    if (!locus_op_kind_arith(el))
        return op == LOCUS_OP_REPLACE || op == LOCUS_OP_NO_OP ? locus_dtype_basic(el) != NULL : 0;
    int integer = locus_elem_is_integer(el), ml = locus_elem_is_ml(el);
    switch (op) {
    case LOCUS_OP_MAX: case LOCUS_OP_MIN:
        return integer || ml || locus_elem_is_float(el);
    case LOCUS_OP_SUM: case LOCUS_OP_PROD:
        return integer || ml || locus_elem_is_float(el) || locus_elem_is_complex(el);
    case LOCUS_OP_LAND: case LOCUS_OP_LOR: case LOCUS_OP_LXOR:
        return integer || locus_elem_is_logical(el);
    case LOCUS_OP_BAND: case LOCUS_OP_BOR: case LOCUS_OP_BXOR:
        return integer || ml || el == LOCUS_EL_BYTE;
    case LOCUS_OP_MINLOC: case LOCUS_OP_MAXLOC:
        return locus_op_pair_valid(el);
    case LOCUS_OP_REPLACE: case LOCUS_OP_NO_OP:
        return 1;
    default:
        return 0;
    }
}

/* op_valid_rule for every predefined op and kind, one bit per op, filled
 * when the library loads: every reduction checks its op and type, and the
 * rule's predicates took 30 instructions of the 200 a reduction of nothing
 * cost (a pthread_once guard, 10 more). */
static uint16_t valid_ops[LOCUS_EL_NKINDS];

__attribute__((constructor)) static void valid_ops_fill(void)
{
    for (int el = 0; el < LOCUS_EL_NKINDS; el++)
        for (int op = 0; op < LOCUS_OP_NPREDEF; op++)
            if (op_valid_rule(op, (locus_elem_t)el))
                valid_ops[el] |= (uint16_t)(1u << op);
}

int locus_op_valid(int op, locus_elem_t el)
{
    if ((unsigned)op >= LOCUS_OP_NPREDEF || (unsigned)el >= LOCUS_EL_NKINDS)
        return op_valid_rule(op, el);
    return (valid_ops[el] >> op) & 1;
}

int locus_op_apply(int op, locus_elem_t el, const void *in, void *inout, size_t count)
{
    if (!locus_op_valid(op, el))
        return -1;
    if (op == LOCUS_OP_NO_OP || count == 0)
        return 0;
    if (locus_elem_is_pair(el) && (op == LOCUS_OP_REPLACE || op == LOCUS_OP_MINLOC ||
                                   op == LOCUS_OP_MAXLOC))
        return locus_op_pairs(op, el, in, inout, count);
    if (op == LOCUS_OP_REPLACE) {
        locus_copy(inout, in, count * locus_elem_extent(el));
        return 0;
    }
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
