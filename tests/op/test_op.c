/*
 * test_op.c — every predefined op on every element kind against a serial
 * computation done in a wide type (complex numbers in long double
 * complex), every (op, kind) pair MPI forbids rejected without touching
 * the output, logical results of Fortran LOGICAL being 1, and MINLOC/MAXLOC
 * on every predefined pair and on pairs made at run time.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "locus_op.h"

static int failures;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                      \
    } while (0)

enum { CL_INT, CL_UINT, CL_FLOAT, CL_BOOL, CL_BYTE, CL_ML, CL_PAIR, CL_TEXT, CL_COMPLEX };

/* The kinds whose C types are compiler extensions are tested where the
 * build has them; elsewhere they must allow no arithmetic (CL_TEXT). */
#ifdef LOCUS_HAVE_INT128
#define T_INT128(X) X(LOCUS_EL_INT128, __int128, CL_INT)
#define T_LOGICAL16(X) X(LOCUS_EL_FLOGICAL16, __int128, CL_BOOL)
#else
#define T_INT128(X)
#define T_LOGICAL16(X)
#endif
#ifdef LOCUS_HAVE_FLOAT16
#define T_FLOAT16(X) X(LOCUS_EL_FLOAT16, _Float16, CL_FLOAT)
#define T_C16(X) X(LOCUS_EL_CFLOAT16, _Complex _Float16)
#else
#define T_FLOAT16(X)
#define T_C16(X)
#endif
#ifdef LOCUS_HAVE_FLOAT128
#define T_FLOAT128(X) X(LOCUS_EL_FLOAT128, _Float128, CL_FLOAT)
#define T_C128(X) X(LOCUS_EL_CFLOAT128, _Complex _Float128)
#else
#define T_FLOAT128(X)
#define T_C128(X)
#endif

#define KINDS(X)                                                               \
    X(LOCUS_EL_BYTE, unsigned char, CL_BYTE)                                   \
    X(LOCUS_EL_CHAR, char, CL_INT)                                             \
    X(LOCUS_EL_SCHAR, signed char, CL_INT)                                     \
    X(LOCUS_EL_UCHAR, unsigned char, CL_UINT)                                  \
    X(LOCUS_EL_WCHAR, wchar_t, CL_TEXT)                                        \
    X(LOCUS_EL_SHORT, short, CL_INT)                                           \
    X(LOCUS_EL_USHORT, unsigned short, CL_UINT)                                \
    X(LOCUS_EL_INT, int, CL_INT)                                               \
    X(LOCUS_EL_UINT, unsigned, CL_UINT)                                        \
    X(LOCUS_EL_LONG, long, CL_INT)                                             \
    X(LOCUS_EL_ULONG, unsigned long, CL_UINT)                                  \
    X(LOCUS_EL_LLONG, long long, CL_INT)                                       \
    X(LOCUS_EL_ULLONG, unsigned long long, CL_UINT)                            \
    X(LOCUS_EL_INT8, int8_t, CL_INT)                                           \
    X(LOCUS_EL_UINT8, uint8_t, CL_UINT)                                        \
    X(LOCUS_EL_INT16, int16_t, CL_INT)                                         \
    X(LOCUS_EL_UINT16, uint16_t, CL_UINT)                                      \
    X(LOCUS_EL_INT32, int32_t, CL_INT)                                         \
    X(LOCUS_EL_UINT32, uint32_t, CL_UINT)                                      \
    X(LOCUS_EL_INT64, int64_t, CL_INT)                                         \
    X(LOCUS_EL_UINT64, uint64_t, CL_UINT)                                      \
    T_INT128(X)                                                                \
    X(LOCUS_EL_FLOAT, float, CL_FLOAT)                                         \
    X(LOCUS_EL_DOUBLE, double, CL_FLOAT)                                       \
    X(LOCUS_EL_LDOUBLE, long double, CL_FLOAT)                                 \
    T_FLOAT16(X) T_FLOAT128(X)                                                 \
    X(LOCUS_EL_BOOL, bool, CL_BOOL)                                            \
    X(LOCUS_EL_FLOGICAL1, int8_t, CL_BOOL)                                     \
    X(LOCUS_EL_FLOGICAL2, int16_t, CL_BOOL)                                    \
    X(LOCUS_EL_FLOGICAL4, int32_t, CL_BOOL)                                    \
    X(LOCUS_EL_FLOGICAL8, int64_t, CL_BOOL)                                    \
    T_LOGICAL16(X)                                                             \
    X(LOCUS_EL_AINT, intptr_t, CL_ML)                                          \
    X(LOCUS_EL_OFFSET, long long, CL_ML)                                       \
    X(LOCUS_EL_COUNT, long long, CL_ML)

/* Complex kinds, reduced in long double complex here. */
#define CKINDS(X)                                                              \
    X(LOCUS_EL_CFLOAT, float complex) X(LOCUS_EL_CDOUBLE, double complex)      \
    X(LOCUS_EL_CLDOUBLE, long double complex) T_C16(X) T_C128(X)

static int kind_class(locus_elem_t el)
{
#define X(k, T, c) if (el == k) return c;
    KINDS(X)
#undef X
#define X(k, T) if (el == k) return CL_COMPLEX;
    CKINDS(X)
#undef X
    return locus_elem_is_pair(el) ? CL_PAIR : CL_TEXT;
}

/* Element i of an array of kind el, as a wide value; and the reverse. */
static long double get(locus_elem_t el, const void *p, size_t i)
{
#define X(k, T, c) if (el == k) return (long double)((const T *)p)[i];
    KINDS(X)
#undef X
    abort();
}

static void set(locus_elem_t el, void *p, size_t i, long double v)
{
#define X(k, T, c) if (el == k) { ((T *)p)[i] = (T)v; return; }
    KINDS(X)
#undef X
    abort();
}

/* Pair access: value and index of element i. */
#define PAIRS(X)                                                               \
    X(LOCUS_EL_FLOAT_INT, float, int) X(LOCUS_EL_DOUBLE_INT, double, int)      \
    X(LOCUS_EL_LONG_INT, long, int) X(LOCUS_EL_2INT, int, int)                 \
    X(LOCUS_EL_SHORT_INT, short, int) X(LOCUS_EL_LDOUBLE_INT, long double, int) \
    X(LOCUS_EL_2FLOAT, float, float) X(LOCUS_EL_2DOUBLE, double, double)

static void pget(locus_elem_t el, const void *p, size_t i, long double *v, int *idx)
{
#define X(k, T, IT)                                                            \
    if ((int)el == (int)k) {                                                   \
        const struct { T v; IT i; } *a = p;                                    \
        *v = a[i].v;                                                           \
        *idx = (int)a[i].i;                                                    \
        return;                                                                \
    }
    PAIRS(X)
#undef X
    abort();
}

static void pset(locus_elem_t el, void *p, size_t i, long double v, int idx)
{
#define X(k, T, IT)                                                            \
    if ((int)el == (int)k) {                                                   \
        struct { T v; IT i; } *a = p;                                          \
        a[i].v = (T)v;                                                         \
        a[i].i = (IT)idx;                                                      \
        return;                                                                \
    }
    PAIRS(X)
#undef X
    abort();
}

/* What MPI allows, spelled out independently of the engine's table. */
static int expect_valid(int op, locus_elem_t el)
{
    int c = kind_class(el);
    int integer = c == CL_INT || c == CL_UINT;
    switch (op) {
    case LOCUS_OP_MAX: case LOCUS_OP_MIN:
        return integer || c == CL_FLOAT || c == CL_ML;
    case LOCUS_OP_SUM: case LOCUS_OP_PROD:
        return integer || c == CL_FLOAT || c == CL_ML || c == CL_COMPLEX;
    case LOCUS_OP_LAND: case LOCUS_OP_LOR: case LOCUS_OP_LXOR:
        return integer || c == CL_BOOL;
    case LOCUS_OP_BAND: case LOCUS_OP_BOR: case LOCUS_OP_BXOR:
        return integer || c == CL_BYTE || c == CL_ML;
    case LOCUS_OP_MINLOC: case LOCUS_OP_MAXLOC:
        return c == CL_PAIR;
    default:
        return 0;
    }
}

static long double rand_val(int c)
{
    switch (c) {
    case CL_INT: case CL_ML: return rand() % 11 - 5;
    case CL_UINT: return rand() % 11;
    case CL_BOOL: return rand() % 3 == 0 ? 0 : rand() % 4 - 1;   /* any non-zero is true */
    case CL_BYTE: return rand() % 256;
    case CL_FLOAT: return (rand() % 2001 - 1000) / 8.0L;
    case CL_PAIR: return rand() % 3 - 1;   /* ties on purpose */
    default: return rand() % 100;
    }
}

static long double expect(int op, long double x, long double y)
{
    long long a = (long long)x, b = (long long)y;
    switch (op) {
    case LOCUS_OP_MAX: return x > y ? x : y;
    case LOCUS_OP_MIN: return x < y ? x : y;
    case LOCUS_OP_SUM: return x + y;
    case LOCUS_OP_PROD: return x * y;
    case LOCUS_OP_LAND: return (x != 0) && (y != 0);
    case LOCUS_OP_LOR: return (x != 0) || (y != 0);
    case LOCUS_OP_LXOR: return (x != 0) != (y != 0);
    case LOCUS_OP_BAND: return (long double)(a & b);
    case LOCUS_OP_BOR: return (long double)(a | b);
    case LOCUS_OP_BXOR: return (long double)(a ^ b);
    default: abort();
    }
}

enum { N = 257 };

static void test_pair(int op, locus_elem_t el)
{
    size_t ext = locus_elem_extent(el);
    char *in = calloc(N, ext), *io = calloc(N, ext), *want = calloc(N, ext);
    for (size_t i = 0; i < N; i++) {
        pset(el, in, i, rand_val(CL_PAIR), rand() % 100);
        pset(el, io, i, rand_val(CL_PAIR), rand() % 100);
    }
    for (size_t i = 0; i < N; i++) {
        long double x, y;
        int ix, iy;
        pget(el, in, i, &x, &ix);
        pget(el, io, i, &y, &iy);
        int take_in = op == LOCUS_OP_MINLOC ? x < y : x > y;
        long double v = take_in ? x : y;
        int idx = take_in ? ix : (x == y ? (ix < iy ? ix : iy) : iy);
        pset(el, want, i, v, idx);
    }
    CHECK(locus_op_apply(op, el, in, io, N) == 0);
    for (size_t i = 0; i < N; i++) {
        long double a, b;
        int ia, ib;
        pget(el, io, i, &a, &ia);
        pget(el, want, i, &b, &ib);
        if (a != b || ia != ib) {
            fprintf(stderr, "%s on pair kind %d element %zu wrong\n", locus_op_name(op), el, i);
            failures++;
            break;
        }
    }
    free(in);
    free(io);
    free(want);
}

/* Complex element i of kind el, as a long double complex; and back. */
static long double complex cget(locus_elem_t el, const void *p, size_t i)
{
#define X(k, T) if (el == k) return (long double complex)((const T *)p)[i];
    CKINDS(X)
#undef X
    abort();
}

static void cset(locus_elem_t el, void *p, size_t i, long double complex v)
{
#define X(k, T) if (el == k) { ((T *)p)[i] = (T)v; return; }
    CKINDS(X)
#undef X
    abort();
}

static void test_complex(int op, locus_elem_t el)
{
    size_t ext = locus_elem_extent(el);
    char *in = calloc(N, ext), *io = calloc(N, ext), *want = calloc(N, ext);
    for (size_t i = 0; i < N; i++) {
        /* Small parts: exact in every complex kind, products included. */
        long double complex x = (rand() % 9 - 4) + (rand() % 9 - 4) * I;
        long double complex y = (rand() % 9 - 4) + (rand() % 9 - 4) * I;
        cset(el, in, i, x);
        cset(el, io, i, y);
        cset(el, want, i, op == LOCUS_OP_SUM ? x + y : x * y);
    }
    CHECK(locus_op_apply(op, el, in, io, N) == 0);
    for (size_t i = 0; i < N; i++)
        if (cget(el, io, i) != cget(el, want, i)) {
            fprintf(stderr, "%s on complex kind %d element %zu: got %Lg%+Lgi want %Lg%+Lgi\n",
                    locus_op_name(op), el, i, creall(cget(el, io, i)), cimagl(cget(el, io, i)),
                    creall(cget(el, want, i)), cimagl(cget(el, want, i)));
            failures++;
            break;
        }
    free(in);
    free(io);
    free(want);
}

static void test_one(int op, locus_elem_t el)
{
    int c = kind_class(el);
    int valid = expect_valid(op, el);
    if (locus_op_valid(op, el) != valid) {
        fprintf(stderr, "valid(%s, kind %d) = %d, want %d\n", locus_op_name(op), el,
                locus_op_valid(op, el), valid);
        failures++;
        return;
    }
    size_t ext = locus_elem_extent(el);
    if (!valid) {
        char in[64] = {1}, io[64], before[64];
        memset(io, 0x5a, sizeof(io));
        memcpy(before, io, sizeof(io));
        CHECK(locus_op_apply(op, el, in, io, 64 / ext) == -1);
        CHECK(memcmp(io, before, sizeof(io)) == 0);
        return;
    }
    if (c == CL_PAIR) {
        test_pair(op, el);
        return;
    }
    if (c == CL_COMPLEX) {
        test_complex(op, el);
        return;
    }
    char *in = calloc(N, ext), *io = calloc(N, ext);
    long double *want = calloc(N, sizeof(long double));
    for (size_t i = 0; i < N; i++) {
        set(el, in, i, rand_val(c));
        set(el, io, i, rand_val(c));
        long double r = expect(op, get(el, in, i), get(el, io, i));
        /* Narrow the wide result through the kind, as the engine stores it. */
        char tmp[32];
        set(el, tmp, 0, r);
        want[i] = get(el, tmp, 0);
    }
    CHECK(locus_op_apply(op, el, in, io, N) == 0);
    for (size_t i = 0; i < N; i++)
        if (get(el, io, i) != want[i]) {
            fprintf(stderr, "%s on kind %d element %zu: got %Lg want %Lg\n", locus_op_name(op),
                    el, i, get(el, io, i), want[i]);
            failures++;
            break;
        }
    free(in);
    free(io);
    free(want);
}

int main(void)
{
    srand(4242);
    int tested = 0;
    for (int op = LOCUS_OP_MAX; op <= LOCUS_OP_MAXLOC; op++)
        for (int el = 0; el < LOCUS_EL_NKINDS; el++) {
            test_one(op, (locus_elem_t)el);
            tested++;
        }
    CHECK(tested == 12 * LOCUS_EL_NKINDS);
    /* Fortran LOGICAL: any non-zero value is true, results are .TRUE. = 1. */
    {
        int32_t a4[4] = {2, 0, -1, 7}, b4[4] = {-3, 5, 0, 1};
        CHECK(locus_op_apply(LOCUS_OP_LAND, LOCUS_EL_FLOGICAL4, a4, b4, 4) == 0);
        CHECK(b4[0] == 1 && b4[1] == 0 && b4[2] == 0 && b4[3] == 1);
        int64_t a8[2] = {0, 4}, b8[2] = {0, 0};
        CHECK(locus_op_apply(LOCUS_OP_LOR, LOCUS_EL_FLOGICAL8, a8, b8, 2) == 0);
        CHECK(b8[0] == 0 && b8[1] == 1);
        CHECK(!locus_op_valid(LOCUS_OP_SUM, LOCUS_EL_FLOGICAL4));
        CHECK(!locus_op_valid(LOCUS_OP_BAND, LOCUS_EL_FLOGICAL4));
    }
    /* Complex: no ordering, no logic. */
    CHECK(!locus_op_valid(LOCUS_OP_MAX, LOCUS_EL_CDOUBLE));
    CHECK(!locus_op_valid(LOCUS_OP_LAND, LOCUS_EL_CFLOAT));
    /* REPLACE on a padded pair (RMA accumulate): data bytes only, never
     * the padding. */
    {
        struct { short v; int i; } x = {7, 9}, y;
        memset(&y, 0xab, sizeof y);
        CHECK(locus_op_apply(LOCUS_OP_REPLACE, LOCUS_EL_SHORT_INT, &x, &y, 1) == 0);
        CHECK(y.v == 7 && y.i == 9 && ((unsigned char *)&y)[2] == 0xab);
    }
    /* Ops that are not predefined and kinds that are not kinds. */
    int a = 1, b = 2;
    CHECK(!locus_op_valid(LOCUS_OP_NULL, LOCUS_EL_INT));
    CHECK(!locus_op_valid(LOCUS_OP_USER, LOCUS_EL_INT));
    CHECK(!locus_op_valid(99, LOCUS_EL_INT));
    CHECK(!locus_op_valid(LOCUS_OP_SUM, LOCUS_EL_MIXED));
    CHECK(locus_op_apply(LOCUS_OP_SUM, LOCUS_EL_MIXED, &a, &b, 1) == -1 && b == 2);
    /* REPLACE and NO_OP (one-sided) on any kind, pairs included. */
    CHECK(locus_op_apply(LOCUS_OP_NO_OP, LOCUS_EL_INT, &a, &b, 1) == 0 && b == 2);
    CHECK(locus_op_apply(LOCUS_OP_REPLACE, LOCUS_EL_INT, &a, &b, 1) == 0 && b == 1);
    struct { short v; int i; } p = {3, 4}, q = {0, 0};
    CHECK(locus_op_apply(LOCUS_OP_REPLACE, LOCUS_EL_SHORT_INT, &p, &q, 1) == 0 && q.v == 3 &&
          q.i == 4);
    /* Pairs: only data bytes are written, so a buffer that ends where the
     * last element's data ends (3 x {long, int}: 44 of 48 bytes) is not
     * overrun (checked under AddressSanitizer). */
    {
        struct lp { long v; int i; };
        size_t span = 2 * sizeof(struct lp) + offsetof(struct lp, i) + sizeof(int);
        struct lp src[3] = {{1, 1}, {9, 1}, {5, 1}};
        char *dst = malloc(span);
        memcpy(dst, src, span);
        struct lp lo[3] = {{0, 2}, {0, 2}, {7, 2}};
        for (int op = LOCUS_OP_MINLOC; op <= LOCUS_OP_REPLACE; op++)
            CHECK(locus_op_apply(op, LOCUS_EL_LONG_INT, lo, dst, 3) == 0);
        struct lp last;
        memcpy(&last, dst + 2 * sizeof(struct lp), offsetof(struct lp, i) + sizeof(int));
        CHECK(last.v == 7 && last.i == 2);
        free(dst);
    }
    /* Wrap-around instead of undefined overflow (checked under UBSan). */
    int big = 0x7fffffff, one = 1;
    CHECK(locus_op_apply(LOCUS_OP_SUM, LOCUS_EL_INT, &big, &one, 1) == 0 && one == (int)0x80000000);
    CHECK(strcmp(locus_op_name(LOCUS_OP_BXOR), "MPI_BXOR") == 0);
    CHECK(strcmp(locus_op_name(40), "user op") == 0);
    if (failures) {
        printf(" Found %d errors\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
