/*
 * test_dtype_ext.c — the element kinds (layout of every kind, complex and
 * Fortran kinds, value-index pairs made at run time), element counting,
 * and the external32 encoding: byte-exact against buffers encoded by hand
 * from the standard's rules, conversion errors, and round trips of every
 * kind and of derived types across the encoder's chunk boundaries.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "locus_dtype.h"

static int failures;
#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            failures++;                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                      \
    } while (0)

/* Encodes n elements of kind el at v; compares with the hand-made bytes. */
static void enc(const char *what, locus_elem_t el, const void *v, size_t n,
                const unsigned char *want, size_t wlen)
{
    locus_dtype_t *t = locus_dtype_basic(el);
    unsigned char out[128];
    memset(out, 0xee, sizeof out);
    CHECK(locus_dtype_external_size(t) * n == wlen);
    int rc = locus_dtype_pack_external(v, n, t, out);
    if (rc != 0 || memcmp(out, want, wlen) != 0 || out[wlen] != 0xee) {
        fprintf(stderr, "FAIL external32 of %s:", what);
        for (size_t i = 0; i < wlen; i++)
            fprintf(stderr, " %02x", out[i]);
        fprintf(stderr, "\n");
        failures++;
    }
    /* And back. */
    unsigned char back[128], pv[128], pb[128];
    memset(back, 0, sizeof back);
    CHECK(locus_dtype_unpack_external(want, back, n, t) == 0);
    /* Data bytes only (a pair's padding is not data). */
    size_t bytes = n * locus_elem_size(el);
    locus_dtype_pack(v, n, t, 0, pv, bytes);
    locus_dtype_pack(back, n, t, 0, pb, bytes);
    if (el != LOCUS_EL_LDOUBLE && memcmp(pv, pb, bytes) != 0) {
        fprintf(stderr, "FAIL external32 decode of %s\n", what);
        failures++;
    }
}

static void test_encodings(void)
{
    int i = 0x01020304;
    enc("int", LOCUS_EL_INT, &i, 1, (unsigned char[]){1, 2, 3, 4}, 4);
    short s = -2;
    enc("short", LOCUS_EL_SHORT, &s, 1, (unsigned char[]){0xff, 0xfe}, 2);
    /* MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes in external32. */
    long l[2] = {-5, 0x7fffffff};
    enc("long", LOCUS_EL_LONG, l, 2, (unsigned char[]){0xff, 0xff, 0xff, 0xfb, 0x7f, 0xff, 0xff, 0xff},
        8);
    unsigned long ul = 0xdeadbeefUL;
    enc("unsigned long", LOCUS_EL_ULONG, &ul, 1, (unsigned char[]){0xde, 0xad, 0xbe, 0xef}, 4);
    long long ll = -2;
    enc("long long", LOCUS_EL_LLONG, &ll, 1,
        (unsigned char[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, 8);
    wchar_t w[2] = {L'A', 0xe9};
    enc("wchar", LOCUS_EL_WCHAR, w, 2, (unsigned char[]){0, 0x41, 0, 0xe9}, 4);
    float f = 1.0f;
    enc("float", LOCUS_EL_FLOAT, &f, 1, (unsigned char[]){0x3f, 0x80, 0, 0}, 4);
    double d = -2.5;
    enc("double", LOCUS_EL_DOUBLE, &d, 1, (unsigned char[]){0xc0, 0x04, 0, 0, 0, 0, 0, 0}, 8);
    /* long double: IEEE binary128 (sign, 15-bit exponent biased 16383,
     * 112-bit fraction). 1.5 = 0x3fff 8000..., -3 = 0xc000 8000... */
    long double ld[2] = {1.5L, -3.0L};
    enc("long double", LOCUS_EL_LDOUBLE, ld, 2,
        (unsigned char[]){0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0xc0, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 32);
    float complex cf = 1.0f + 2.0f * I;
    enc("float complex", LOCUS_EL_CFLOAT, &cf, 1,
        (unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}, 8);
    double complex cd = -2.5 + 1.0 * I;
    enc("double complex", LOCUS_EL_CDOUBLE, &cd, 1,
        (unsigned char[]){0xc0, 0x04, 0, 0, 0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 16);
    bool b[2] = {true, false};
    enc("bool", LOCUS_EL_BOOL, b, 2, (unsigned char[]){1, 0}, 2);
    int32_t lg = 1;
    enc("LOGICAL", LOCUS_EL_FLOGICAL4, &lg, 1, (unsigned char[]){0, 0, 0, 1}, 4);
    uint16_t u16 = 0x1234;
    enc("uint16", LOCUS_EL_UINT16, &u16, 1, (unsigned char[]){0x12, 0x34}, 2);
    unsigned char i128[16];
    memset(i128, 0, sizeof i128);
    i128[0] = 0x05;   /* 5, native little-endian on this host */
    unsigned char want128[16] = {0};
    want128[15] = 5;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    enc("INTEGER16", LOCUS_EL_INT128, i128, 1, want128, 16);
#endif
    /* A pair: value then index, no padding (MPI_SHORT_INT is 6 bytes). */
    struct { short v; int i; } si = {3, 7};
    enc("short_int", LOCUS_EL_SHORT_INT, &si, 1, (unsigned char[]){0, 3, 0, 0, 0, 7}, 6);
    struct { long v; int i; } li = {-1, 2};
    enc("long_int", LOCUS_EL_LONG_INT, &li, 1, (unsigned char[]){0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2},
        8);
    struct { float v; float i; } ff = {1.0f, 2.0f};
    enc("2real", LOCUS_EL_2FLOAT, &ff, 1, (unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}, 8);
}

/* long double <-> binary128 beyond the easy values. */
static void test_long_double(void)
{
    locus_dtype_t *t = locus_dtype_basic(LOCUS_EL_LDOUBLE);
    unsigned char out[16], want[16];
    long double v;
#if LDBL_MANT_DIG == 64
    /* The smallest x87 denormal, 2^-16445: fraction bit 49 of binary128. */
    v = 0x1p-16445L;
    memset(want, 0, 16);
    want[9] = 0x02;
    CHECK(locus_dtype_pack_external(&v, 1, t, out) == 0 && memcmp(out, want, 16) == 0);
    long double back = 0;
    CHECK(locus_dtype_unpack_external(want, &back, 1, t) == 0 && back == v);
    /* Decoding rounds the 112-bit fraction to 63 bits, to nearest even:
     * 1 + 2^-64 is a tie (stays 1), 1 + 2^-64 + 2^-100 rounds up. */
    unsigned char one[16] = {0x3f, 0xff};
    one[8] = 0x00;
    one[9] = 0x01;   /* fraction bit 48: 2^-64 */
    CHECK(locus_dtype_unpack_external(one, &back, 1, t) == 0 && back == 1.0L);
    one[14] = 0x10;  /* fraction bit 12: 2^-100 */
    CHECK(locus_dtype_unpack_external(one, &back, 1, t) == 0 && back == 1.0L + 0x1p-63L);
    /* A fraction of all ones rounds up into the next binade. */
    unsigned char allones[16];
    memset(allones, 0xff, 16);
    allones[0] = 0x3f;
    allones[1] = 0xff;
    CHECK(locus_dtype_unpack_external(allones, &back, 1, t) == 0 && back == 2.0L);
#endif
    /* Infinities and NaN survive a round trip; the sign of zero too. */
    long double special[4] = {1.0L / 0.0L, -1.0L / 0.0L, 0.0L / 0.0L, -0.0L}, got[4];
    unsigned char ext[64];
    CHECK(locus_dtype_pack_external(special, 4, t, ext) == 0);
    CHECK(ext[0] == 0x7f && ext[1] == 0xff && ext[16] == 0xff && ext[17] == 0xff);
    CHECK(ext[48] == 0x80 && ext[49] == 0);
    CHECK(locus_dtype_unpack_external(ext, got, 4, t) == 0);
    CHECK(got[0] == special[0] && got[1] == special[1] && got[2] != got[2]);
    CHECK(got[3] == 0 && signbit(got[3]));
    /* Exactness of normal values across the range. */
    for (int e = -16000; e <= 16000; e += 997) {
        long double x = ldexpl(1.0L + 0x1p-40L + 0x1p-63L, e), y = 0;
        CHECK(locus_dtype_pack_external(&x, 1, t, out) == 0);
        CHECK(locus_dtype_unpack_external(out, &y, 1, t) == 0 && x == y);
    }
}

static void test_conversion_errors(void)
{
    unsigned char out[16];
    long big = 1L << 40;
    CHECK(locus_dtype_pack_external(&big, 1, locus_dtype_basic(LOCUS_EL_LONG), out) ==
          LOCUS_DTYPE_ECONV);
    long neg = -(1L << 31) - 1;
    CHECK(locus_dtype_pack_external(&neg, 1, locus_dtype_basic(LOCUS_EL_LONG), out) ==
          LOCUS_DTYPE_ECONV);
    unsigned long ubig = 1UL << 32;
    CHECK(locus_dtype_pack_external(&ubig, 1, locus_dtype_basic(LOCUS_EL_ULONG), out) ==
          LOCUS_DTYPE_ECONV);
    wchar_t wbig = 0x1f600;   /* beyond 16 bits */
    CHECK(locus_dtype_pack_external(&wbig, 1, locus_dtype_basic(LOCUS_EL_WCHAR), out) ==
          LOCUS_DTYPE_ECONV);
    /* The limits themselves fit. */
    long lims[2] = {INT32_MIN, INT32_MAX};
    CHECK(locus_dtype_pack_external(lims, 2, locus_dtype_basic(LOCUS_EL_LONG), out) == 0);
    long back[2];
    CHECK(locus_dtype_unpack_external(out, back, 2, locus_dtype_basic(LOCUS_EL_LONG)) == 0);
    CHECK(back[0] == INT32_MIN && back[1] == INT32_MAX);
}

/* Every kind round-trips through external32 (random bits for the kinds
 * where every bit pattern is a value of its own). */
static void test_all_kinds(void)
{
    for (int k = 0; k < LOCUS_EL_NKINDS; k++) {
        locus_elem_t el = (locus_elem_t)k;
        locus_dtype_t *t = locus_dtype_basic(el);
        size_t n = 7, ext = locus_elem_extent(el), esz = locus_dtype_external_size(t);
        CHECK(esz == locus_elem_external_size(el) && esz > 0);
        unsigned char *a = calloc(n, ext), *b = calloc(n, ext), *x = malloc(n * esz);
        for (size_t e = 0; e < n; e++) {
            unsigned char *p = a + e * ext;
            /* Small values every kind can hold exactly. */
            if (el == LOCUS_EL_LDOUBLE || el == LOCUS_EL_CLDOUBLE) {
                long double v = (long double)e * 0.25L;
                memcpy(p, &v, sizeof v);
            } else if (el == LOCUS_EL_BOOL) {
                p[0] = (unsigned char)(e & 1);
            } else {
                for (size_t j = 0; j < locus_elem_size(el); j++)
                    p[j] = (unsigned char)(e * 3 + j);
                if (el == LOCUS_EL_LONG || el == LOCUS_EL_ULONG || el == LOCUS_EL_WCHAR ||
                    locus_elem_is_pair(el))
                    memset(p, 0, ext), p[0] = (unsigned char)e;
            }
        }
        int rc = locus_dtype_pack_external(a, n, t, x);
        CHECK(rc == 0);
        CHECK(locus_dtype_unpack_external(x, b, n, t) == 0);
        /* Compare the data bytes only (not a pair's or long double's padding). */
        unsigned char *pa = malloc(n * locus_elem_size(el)), *pb = malloc(n * locus_elem_size(el));
        locus_dtype_pack(a, n, t, 0, pa, n * locus_elem_size(el));
        locus_dtype_pack(b, n, t, 0, pb, n * locus_elem_size(el));
        int same = memcmp(pa, pb, n * locus_elem_size(el)) == 0;
        if (el == LOCUS_EL_LDOUBLE || el == LOCUS_EL_CLDOUBLE) {
            /* x87: 6 bytes of each 16 are padding; compare values. */
            same = 1;
            for (size_t e = 0; e < n; e++) {
                long double u, v;
                memcpy(&u, a + e * ext, sizeof u);
                memcpy(&v, b + e * ext, sizeof v);
                same &= u == v;
            }
        }
        if (!same) {
            fprintf(stderr, "FAIL external32 round trip of kind %d\n", k);
            failures++;
        }
        free(a); free(b); free(x); free(pa); free(pb);
    }
}

/* A derived type mixing kinds, big enough to cross the encoder's 64 KiB
 * chunks in the middle of elements, against an encoding done here. */
static void test_derived(void)
{
    struct rec { char c; double d; long l; short s; };
    locus_dtype_t *ts[] = {locus_dtype_basic(LOCUS_EL_CHAR), locus_dtype_basic(LOCUS_EL_DOUBLE),
                           locus_dtype_basic(LOCUS_EL_LONG), locus_dtype_basic(LOCUS_EL_SHORT)};
    size_t bl[] = {1, 1, 1, 1};
    ptrdiff_t ds[] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, l),
                      offsetof(struct rec, s)};
    locus_dtype_t *t;
    CHECK(locus_dtype_struct(4, bl, ds, ts, &t) == 0);
    CHECK(locus_dtype_external_size(t) == 1 + 8 + 4 + 2);
    size_t n = 20000;
    struct rec *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    unsigned char *x = malloc(n * 15), *want = malloc(n * 15);
    for (size_t i = 0; i < n; i++) {
        a[i] = (struct rec){(char)i, (double)i / 4, -(long)i, (short)(i * 7)};
        unsigned char *w = want + i * 15;
        w[0] = (unsigned char)(char)i;
        double dv = (double)i / 4;
        uint64_t bits;
        memcpy(&bits, &dv, 8);
        for (int k = 0; k < 8; k++)
            w[1 + k] = (unsigned char)(bits >> (56 - 8 * k));
        uint32_t lv = (uint32_t)(-(int32_t)i);
        for (int k = 0; k < 4; k++)
            w[9 + k] = (unsigned char)(lv >> (24 - 8 * k));
        uint16_t sv = (uint16_t)(i * 7);
        w[13] = (unsigned char)(sv >> 8);
        w[14] = (unsigned char)sv;
    }
    CHECK(locus_dtype_pack_external(a, n, t, x) == 0);
    CHECK(memcmp(x, want, n * 15) == 0);
    CHECK(locus_dtype_unpack_external(x, b, n, t) == 0);
    int same = 1;
    for (size_t i = 0; i < n; i++)
        same &= a[i].c == b[i].c && a[i].d == b[i].d && a[i].l == b[i].l && a[i].s == b[i].s;
    CHECK(same);
    free(a); free(b); free(x); free(want);
    locus_dtype_release(t);
}

static void test_counting(void)
{
    /* A complex number is one element; a pair two. */
    locus_dtype_t *c = locus_dtype_basic(LOCUS_EL_CDOUBLE), *p = locus_dtype_basic(LOCUS_EL_2DOUBLE);
    CHECK(locus_dtype_count_elements(c, 48) == 3 && locus_dtype_count_elements(c, 8) == -1);
    CHECK(locus_dtype_count_elements(p, 24) == 3);
    CHECK(locus_dtype_elements_bytes(c, 3) == 48 && locus_dtype_elements_bytes(p, 3) == 24);
    /* Partial elements of a struct {char, double, int}. */
    locus_dtype_t *t;
    CHECK(locus_dtype_struct(3, (size_t[]){1, 1, 1}, (ptrdiff_t[]){0, 8, 16},
                             (locus_dtype_t *[]){locus_dtype_basic(LOCUS_EL_CHAR),
                                                 locus_dtype_basic(LOCUS_EL_DOUBLE),
                                                 locus_dtype_basic(LOCUS_EL_INT)}, &t) == 0);
    for (size_t e = 0; e <= 7; e++) {
        long long bytes = locus_dtype_elements_bytes(t, e);
        CHECK(bytes >= 0 && locus_dtype_count_elements(t, (size_t)bytes) == (long)e);
    }
    CHECK(locus_dtype_elements_bytes(t, 4) == 13 + 1);
    locus_dtype_release(t);
    locus_dtype_t *empty;
    CHECK(locus_dtype_contiguous(0, locus_dtype_basic(LOCUS_EL_INT), &empty) == 0);
    CHECK(locus_dtype_elements_bytes(empty, 0) == 0 && locus_dtype_elements_bytes(empty, 1) == -1);
    locus_dtype_release(empty);
}

static void test_kinds(void)
{
    /* Layout of the kinds beyond C's core types. */
    CHECK(locus_elem_size(LOCUS_EL_CFLOAT) == 8 && locus_elem_size(LOCUS_EL_CLDOUBLE) ==
                                                       2 * sizeof(long double));
    CHECK(locus_elem_size(LOCUS_EL_FLOAT16) == 2 && locus_elem_size(LOCUS_EL_CFLOAT16) == 4);
    CHECK(locus_elem_size(LOCUS_EL_FLOAT128) == 16 && locus_elem_size(LOCUS_EL_CFLOAT128) == 32);
    CHECK(locus_elem_size(LOCUS_EL_INT128) == 16 && locus_elem_size(LOCUS_EL_FLOGICAL16) == 16);
    CHECK(locus_elem_size(LOCUS_EL_FLOGICAL1) == 1 && locus_elem_size(LOCUS_EL_FLOGICAL8) == 8);
    CHECK(locus_elem_extent(LOCUS_EL_2FLOAT) == 8 && locus_elem_extent(LOCUS_EL_2DOUBLE) == 16);
    CHECK(locus_elem_external_size(LOCUS_EL_LDOUBLE_INT) == 20);
    CHECK(locus_elem_external_size(LOCUS_EL_CLDOUBLE) == 32);
    CHECK(locus_elem_external_size(LOCUS_EL_WCHAR) == 2 && locus_elem_external_size(LOCUS_EL_LONG) == 4);
    CHECK(locus_elem_is_complex(LOCUS_EL_CFLOAT128) && !locus_elem_is_float(LOCUS_EL_CFLOAT));
    CHECK(locus_elem_is_logical(LOCUS_EL_FLOGICAL2) && !locus_elem_is_integer(LOCUS_EL_FLOGICAL2));
    CHECK(locus_elem_is_integer(LOCUS_EL_INT128) && !locus_elem_is_integer(LOCUS_EL_WCHAR));
    /* Value-index pairs: value and index kinds, the index at the C
     * struct's offset. */
    locus_elem_t v, x;
    size_t off;
    CHECK(locus_elem_pair(LOCUS_EL_SHORT_INT, &v, &x, &off) && v == LOCUS_EL_SHORT &&
          x == LOCUS_EL_INT && off == 4);
    CHECK(!locus_elem_pair(LOCUS_EL_INT, &v, &x, &off));
    struct { long double v; int i; } ldi;
    CHECK(locus_elem_pair(LOCUS_EL_LDOUBLE_INT, &v, &x, &off) &&
          off == (size_t)((char *)&ldi.i - (char *)&ldi));
    CHECK(locus_dtype_basic(LOCUS_EL_NKINDS) == NULL);
}

int main(void)
{
    test_kinds();
    test_encodings();
    test_long_double();
    test_conversion_errors();
    test_all_kinds();
    test_derived();
    test_counting();
    if (failures) {
        printf(" Found %d errors\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
