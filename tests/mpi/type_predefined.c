/*
 * type_predefined.c — every predefined datatype of the ABI: its size,
 * extent and name, a message of it around a ring (values intact), and the
 * reductions MPI defines on it, checked against values computed here:
 * SUM on every integer, floating and complex type, PROD on complex,
 * LAND/LOR/LXOR on C bool and Fortran LOGICAL (non-zero inputs are true,
 * results are .TRUE. = 1), BAND/BOR/BXOR on Fortran integers and
 * MPI_BYTE, MINLOC/MAXLOC on every pair type; MPI_Type_get_value_index
 * names the pair types; combinations MPI forbids fail with MPI_ERR_OP.
 * Also MPI_Type_match_size and the f90 type constructors.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mtest.h"

/* The error class of a return code (an MPI may return codes, not classes). */
static int ecls(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

typedef struct {
    MPI_Datatype t;
    const char *name;
    size_t size, extent;
} predef_t;

#define P(t, ctype) {t, #t, sizeof(ctype), sizeof(ctype)}
#define PS(t, n) {t, #t, n, n}   /* kinds C has only as compiler extensions */
#define PAIR(t, vt, it) {t, #t, sizeof(vt) + sizeof(it), sizeof(struct { vt v; it i; })}
static const predef_t all[] = {
    P(MPI_CHAR, char), P(MPI_SIGNED_CHAR, signed char), P(MPI_UNSIGNED_CHAR, unsigned char),
    P(MPI_BYTE, char), P(MPI_PACKED, char), P(MPI_WCHAR, wchar_t), P(MPI_SHORT, short),
    P(MPI_UNSIGNED_SHORT, unsigned short), P(MPI_INT, int), P(MPI_UNSIGNED, unsigned),
    P(MPI_LONG, long), P(MPI_UNSIGNED_LONG, unsigned long), P(MPI_LONG_LONG, long long),
    P(MPI_UNSIGNED_LONG_LONG, unsigned long long), P(MPI_FLOAT, float), P(MPI_DOUBLE, double),
    P(MPI_LONG_DOUBLE, long double), P(MPI_C_BOOL, bool), P(MPI_CXX_BOOL, bool),
    P(MPI_INT8_T, int8_t), P(MPI_INT16_T, int16_t), P(MPI_INT32_T, int32_t),
    P(MPI_INT64_T, int64_t), P(MPI_UINT8_T, uint8_t), P(MPI_UINT16_T, uint16_t),
    P(MPI_UINT32_T, uint32_t), P(MPI_UINT64_T, uint64_t), P(MPI_AINT, MPI_Aint),
    P(MPI_COUNT, MPI_Count), P(MPI_OFFSET, MPI_Offset),
    P(MPI_C_FLOAT_COMPLEX, float complex), P(MPI_C_DOUBLE_COMPLEX, double complex),
    P(MPI_C_LONG_DOUBLE_COMPLEX, long double complex),
    P(MPI_CXX_FLOAT_COMPLEX, float complex), P(MPI_CXX_DOUBLE_COMPLEX, double complex),
    P(MPI_CXX_LONG_DOUBLE_COMPLEX, long double complex),
    P(MPI_CHARACTER, char), P(MPI_LOGICAL, int32_t), P(MPI_INTEGER, int32_t),
    P(MPI_REAL, float), P(MPI_DOUBLE_PRECISION, double), P(MPI_COMPLEX, float complex),
    P(MPI_DOUBLE_COMPLEX, double complex),
    P(MPI_LOGICAL1, int8_t), P(MPI_LOGICAL2, int16_t), P(MPI_LOGICAL4, int32_t),
    P(MPI_LOGICAL8, int64_t), PS(MPI_LOGICAL16, 16),
    P(MPI_INTEGER1, int8_t), P(MPI_INTEGER2, int16_t), P(MPI_INTEGER4, int32_t),
    P(MPI_INTEGER8, int64_t), PS(MPI_INTEGER16, 16),
    PS(MPI_REAL2, 2), P(MPI_REAL4, float), P(MPI_REAL8, double), PS(MPI_REAL16, 16),
    PS(MPI_COMPLEX4, 4), P(MPI_COMPLEX8, float complex),
    P(MPI_COMPLEX16, double complex), PS(MPI_COMPLEX32, 32),
    PAIR(MPI_FLOAT_INT, float, int), PAIR(MPI_DOUBLE_INT, double, int),
    PAIR(MPI_LONG_INT, long, int), PAIR(MPI_2INT, int, int), PAIR(MPI_SHORT_INT, short, int),
    PAIR(MPI_LONG_DOUBLE_INT, long double, int), PAIR(MPI_2REAL, float, float),
    PAIR(MPI_2DOUBLE_PRECISION, double, double), PAIR(MPI_2INTEGER, int32_t, int32_t),
};
#define NALL (sizeof all / sizeof all[0])

static int rank, size;

/* Layout, name, and a ring message of 5 elements of every type. */
static void layouts_and_messages(void)
{
    CHECK(NALL == 70, "the ABI has 70 predefined datatypes, table has %zu", NALL);
    for (size_t k = 0; k < NALL; k++) {
        const predef_t *p = &all[k];
        int s;
        MPI_Aint lb, ext;
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        CHECK(MPI_Type_size(p->t, &s) == MPI_SUCCESS && (size_t)s == p->size, "%s size %d",
              p->name, s);
        CHECK(MPI_Type_get_extent(p->t, &lb, &ext) == MPI_SUCCESS && lb == 0 &&
              (size_t)ext == p->extent, "%s extent %ld", p->name, (long)ext);
        CHECK(MPI_Type_get_name(p->t, name, &len) == MPI_SUCCESS && strcmp(name, p->name) == 0 &&
              len == (int)strlen(p->name), "%s named %s", p->name, name);
        CHECK(ecls(MPI_Type_free((MPI_Datatype[]){p->t})) == MPI_ERR_TYPE, "%s freed", p->name);
        CHECK(MPI_Type_commit((MPI_Datatype[]){p->t}) == MPI_SUCCESS, "%s commit", p->name);
        /* Ring: every rank sends 5 elements of bytes rank*16+i; data bytes
         * (not a pair's padding) arrive intact. */
        size_t n = 5 * p->extent;
        unsigned char *out = malloc(n), *in = malloc(n), *want = malloc(n);
        int from = (rank + size - 1) % size, to = (rank + 1) % size;
        for (size_t i = 0; i < n; i++) {
            out[i] = (unsigned char)(rank * 16 + i);
            want[i] = (unsigned char)(from * 16 + i);
        }
        /* Valid values for C bool (0/1) in a bool type. */
        if (p->t == MPI_C_BOOL || p->t == MPI_CXX_BOOL)
            for (size_t i = 0; i < n; i++) {
                out[i] = (unsigned char)((rank + i) & 1);
                want[i] = (unsigned char)((from + i) & 1);
            }
        memset(in, 0, n);
        MPI_Status st;
        CHECK(MPI_Sendrecv(out, 5, p->t, to, 7, in, 5, p->t, from, 7, MPI_COMM_WORLD, &st) ==
              MPI_SUCCESS, "%s sendrecv", p->name);
        /* Compare data bytes only (a pair's padding is not sent). */
        int ps = 0, p1 = 0, p2 = 0;
        MPI_Pack_size(5, p->t, MPI_COMM_SELF, &ps);
        unsigned char *g1 = malloc((size_t)ps), *g2 = malloc((size_t)ps);
        MPI_Pack(in, 5, p->t, g1, ps, &p1, MPI_COMM_SELF);
        MPI_Pack(want, 5, p->t, g2, ps, &p2, MPI_COMM_SELF);
        CHECK(p1 == (int)(5 * p->size) && p1 == p2 && memcmp(g1, g2, (size_t)p1) == 0,
              "%s: the message differs", p->name);
        free(g1);
        free(g2);
        int cnt = -1;
        MPI_Get_count(&st, p->t, &cnt);
        CHECK(cnt == 5, "%s count %d", p->name, cnt);
        free(out); free(in); free(want);
    }
}

/* Allreduce of one element per rank of C type T with op; the result must
 * equal `want` (computed here over ranks 0..size-1). */
#define REDUCE(T, dt, op, val, wantexpr, fmt)                                 \
    do {                                                                       \
        T x_ = (val), r_;                                                      \
        memset(&r_, 0, sizeof r_);                                             \
        int rc_ = MPI_Allreduce(&x_, &r_, 1, dt, op, MPI_COMM_WORLD);          \
        T w_ = (wantexpr);                                                     \
        CHECK(rc_ == MPI_SUCCESS && r_ == w_, /* values: long double has padding */ \
              "%s on %s: rc %d", #op, #dt, rc_);                              \
    } while (0)

static void reductions(void)
{
    /* SUM over ranks of (rank+1): size*(size+1)/2, in every arithmetic type. */
    int tri = size * (size + 1) / 2;
    REDUCE(int32_t, MPI_INTEGER, MPI_SUM, rank + 1, tri, "%d");
    REDUCE(int8_t, MPI_INTEGER1, MPI_SUM, (int8_t)(rank + 1), (int8_t)tri, "%d");
    REDUCE(int64_t, MPI_INTEGER8, MPI_SUM, rank + 1, tri, "%lld");
#ifdef __SIZEOF_INT128__
    REDUCE(__int128, MPI_INTEGER16, MPI_SUM, (__int128)(rank + 1) << 70, (__int128)tri << 70, "");
#endif
    REDUCE(float, MPI_REAL, MPI_SUM, rank + 1.0f, (float)tri, "%g");
    REDUCE(double, MPI_DOUBLE_PRECISION, MPI_SUM, rank + 1.0, (double)tri, "%g");
#ifdef __FLT16_MAX__
    REDUCE(_Float16, MPI_REAL2, MPI_SUM, (_Float16)(rank + 1), (_Float16)tri, "");
#endif
#ifdef __FLT128_MAX__
    REDUCE(_Float128, MPI_REAL16, MPI_SUM, (_Float128)(rank + 1), (_Float128)tri, "");
#endif
    REDUCE(long double, MPI_LONG_DOUBLE, MPI_SUM, rank + 1.0L, (long double)tri, "");
    REDUCE(MPI_Count, MPI_COUNT, MPI_SUM, rank + 1, tri, "");
    /* Complex SUM and PROD: prod of (1+i) over size ranks = (1+i)^size. */
    float complex cf = 1.0f, cfs = 0;
    for (int r = 0; r < size; r++) {
        cf *= 1.0f + 1.0f * I;
        cfs += (float)r + 1.0f * I;
    }
    REDUCE(float complex, MPI_C_FLOAT_COMPLEX, MPI_PROD, 1.0f + 1.0f * I, cf, "");
    REDUCE(float complex, MPI_COMPLEX, MPI_SUM, (float)rank + 1.0f * I, cfs, "");
    double complex cd = 1.0;
    for (int r = 0; r < size; r++)
        cd *= (r + 1.0) - 1.0 * I;
    REDUCE(double complex, MPI_DOUBLE_COMPLEX, MPI_PROD, (rank + 1.0) - 1.0 * I, cd, "");
    REDUCE(double complex, MPI_COMPLEX16, MPI_PROD, (rank + 1.0) - 1.0 * I, cd, "");
    long double complex cl = 1.0L;
    for (int r = 0; r < size; r++)
        cl *= 2.0L * I;
    REDUCE(long double complex, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, 2.0L * I, cl, "");
#ifdef __FLT128_MAX__
    _Complex _Float128 cq = 0;
    for (int r = 0; r < size; r++)
        cq += (_Float128)r - (_Float128)r * I;
    REDUCE(_Complex _Float128, MPI_COMPLEX32, MPI_SUM, (_Float128)rank - (_Float128)rank * I, cq,
           "");
#endif
#ifdef __FLT16_MAX__
    _Complex _Float16 ch = 0;
    for (int r = 0; r < size; r++)
        ch += (_Float16)1 + (_Float16)r * I;
    REDUCE(_Complex _Float16, MPI_COMPLEX4, MPI_SUM, (_Float16)1 + (_Float16)rank * I, ch, "");

#endif

    /* Fortran LOGICAL: true is any non-zero value, the result's true is 1. */
    REDUCE(int32_t, MPI_LOGICAL, MPI_LAND, rank + 7, 1, "%d");
    REDUCE(int32_t, MPI_LOGICAL, MPI_LAND, rank == size - 1 ? 0 : -1, 0, "%d");
    REDUCE(int32_t, MPI_LOGICAL, MPI_LOR, rank == 0 ? 5 : 0, 1, "%d");
    REDUCE(int8_t, MPI_LOGICAL1, MPI_LXOR, 3, size % 2, "%d");
    REDUCE(int64_t, MPI_LOGICAL8, MPI_LOR, 0, 0, "%d");
#ifdef __SIZEOF_INT128__
    REDUCE(__int128, MPI_LOGICAL16, MPI_LAND, (__int128)1 << 100, 1, "");
#endif
    REDUCE(bool, MPI_C_BOOL, MPI_LOR, rank == 1, size > 1, "%d");
    /* Bitwise on Fortran integers and bytes. */
    REDUCE(int32_t, MPI_INTEGER4, MPI_BOR, 1 << rank, (1 << size) - 1, "%d");
    unsigned char bx = 0;
    for (int r = 0; r < size; r++)
        bx ^= (unsigned char)(1 << (r % 8));
    REDUCE(unsigned char, MPI_BYTE, MPI_BXOR, (unsigned char)(1 << (rank % 8)), bx, "%d");
    /* AND over ranks of (0x7f0 | rank): rank 0 clears the low bits. */
    REDUCE(int16_t, MPI_INTEGER2, MPI_BAND, (int16_t)(0x7f0 | rank), (int16_t)0x7f0, "%d");
    /* MINLOC/MAXLOC on the Fortran pairs: values (rank % 2), index rank. */
    struct { float v, i; } r2 = {(float)(rank % 2), (float)rank}, o2;
    CHECK(MPI_Allreduce(&r2, &o2, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD) == MPI_SUCCESS &&
          o2.v == (size > 1 ? 1.0f : 0.0f) && o2.i == (size > 1 ? 1.0f : 0.0f), "2REAL MAXLOC");
    struct { double v, i; } d2 = {-(double)rank, (double)rank}, od2;
    CHECK(MPI_Allreduce(&d2, &od2, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD) ==
          MPI_SUCCESS && od2.v == -(size - 1.0) && od2.i == size - 1.0, "2DOUBLE_PRECISION MINLOC");
    struct { int32_t v, i; } i2 = {5, size - rank}, oi2;
    CHECK(MPI_Allreduce(&i2, &oi2, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD) == MPI_SUCCESS &&
          oi2.v == 5 && oi2.i == 1, "2INTEGER MINLOC ties take the lowest index");
    /* Only the named pairs exist (as in MPICH and Open MPI): any other
     * combination is MPI_DATATYPE_NULL, not an error. */
    MPI_Datatype vi;
    CHECK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_UINT64_T, &vi) == MPI_SUCCESS &&
          vi == MPI_DATATYPE_NULL, "(double, uint64_t): no pair type");
    MPI_Datatype named;
    MPI_Type_get_value_index(MPI_FLOAT, MPI_INT, &named);
    CHECK(named == MPI_FLOAT_INT, "(float, int) is MPI_FLOAT_INT");
    MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &named);
    CHECK(named == MPI_2REAL, "(REAL, REAL) is MPI_2REAL");
    MPI_Type_get_value_index(MPI_FLOAT, MPI_FLOAT, &named);
    CHECK(named == MPI_DATATYPE_NULL, "(float, float): no pair type");
    MPI_Type_get_value_index(MPI_C_DOUBLE_COMPLEX, MPI_INT, &named);
    CHECK(named == MPI_DATATYPE_NULL, "(complex, int): no pair type");

    /* What MPI forbids. */
    int32_t lg = 1, lr;
    CHECK(ecls(MPI_Allreduce(&lg, &lr, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_OP,
          "SUM on LOGICAL");
    double complex z = 1, zr;
    CHECK(ecls(MPI_Allreduce(&z, &zr, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD)) == MPI_ERR_OP,
          "MAX on complex");
    float f = 1, fr;
    CHECK(ecls(MPI_Allreduce(&f, &fr, 1, MPI_REAL, MPI_BAND, MPI_COMM_WORLD)) == MPI_ERR_OP,
          "BAND on REAL");
    wchar_t wc = 1, wr;
    CHECK(ecls(MPI_Allreduce(&wc, &wr, 1, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_OP,
          "SUM on WCHAR");
}

static void matching(void)
{
    struct { int cls, size; MPI_Datatype want; } m[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8}, {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4}, {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16}, {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int s = 0;
        CHECK(MPI_Type_match_size(m[k].cls, m[k].size, &t) == MPI_SUCCESS && t == m[k].want,
              "match_size(%d, %d)", m[k].cls, m[k].size);
        MPI_Type_size(t, &s);
        CHECK(s == m[k].size, "matched size %d", s);
    }
    MPI_Datatype t;
    CHECK(ecls(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t)) == MPI_ERR_ARG, "no 3-byte integer");
    CHECK(ecls(MPI_Type_match_size(MPI_TYPECLASS_REAL, 32, &t)) == MPI_ERR_ARG, "no 32-byte real");
    CHECK(ecls(MPI_Type_match_size(12345, 4, &t)) == MPI_ERR_ARG, "bad typeclass");
    /* f90 kinds: SELECTED_*_KIND semantics. */
    struct { int p, r, size, cplx; } f[] = {
        {6, 30, 4, 0}, {7, MPI_UNDEFINED, 8, 0}, {MPI_UNDEFINED, 300, 8, 0}, {15, 307, 8, 0},
        {16, MPI_UNDEFINED, 16, 0}, {MPI_UNDEFINED, 400, 16, 0}, {6, 30, 8, 1}, {15, 300, 16, 1},
        {30, MPI_UNDEFINED, 32, 1},
    };
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
        int s = 0;
        int rc = f[k].cplx ? MPI_Type_create_f90_complex(f[k].p, f[k].r, &t)
                           : MPI_Type_create_f90_real(f[k].p, f[k].r, &t);
        MPI_Type_size(t, &s);
        CHECK(rc == MPI_SUCCESS && s == f[k].size, "f90 (%d, %d): size %d", f[k].p, f[k].r, s);
    }
    int ir[][2] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}, {19, 16},
                   {38, 16}};
    for (size_t k = 0; k < sizeof ir / sizeof ir[0]; k++) {
        int s = 0;
        CHECK(MPI_Type_create_f90_integer(ir[k][0], &t) == MPI_SUCCESS, "f90_integer(%d)", ir[k][0]);
        MPI_Type_size(t, &s);
        CHECK(s == ir[k][1], "f90_integer(%d) size %d", ir[k][0], s);
    }
    CHECK(ecls(MPI_Type_create_f90_integer(39, &t)) == MPI_ERR_ARG, "no integer of range 39");
    CHECK(ecls(MPI_Type_create_f90_real(34, MPI_UNDEFINED, &t)) == MPI_ERR_ARG, "no real of 34 digits");
    CHECK(ecls(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t)) == MPI_ERR_ARG,
          "f90_real without p or r");
    /* An f90 type reduces like its kind. */
    MPI_Type_create_f90_real(15, MPI_UNDEFINED, &t);
    double d = rank + 1.0, dr = 0;
    CHECK(MPI_Allreduce(&d, &dr, 1, t, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
          dr == size * (size + 1) / 2.0, "SUM on an f90 real");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    layouts_and_messages();
    reductions();
    matching();
    return mtest_finish();
}
