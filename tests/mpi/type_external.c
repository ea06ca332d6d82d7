/*
 * type_external.c — MPI_Pack_external/MPI_Unpack_external/
 * MPI_Pack_external_size (int and _c forms) with "external32": streams
 * byte-exact against buffers encoded here by hand (big-endian, MPI_LONG 4
 * bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE binary128, complex as two reals), a
 * derived type, positions advancing over several calls, round trips of
 * every predefined type, and the error classes (unknown data
 * representation, truncation, a value that does not fit).
 */
#include <complex.h>
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

#define EXT "external32"

static void bytes_are(const char *what, const unsigned char *got, const unsigned char *want,
                      size_t n)
{
    if (memcmp(got, want, n) == 0)
        return;
    char hex[200];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < sizeof hex; i++)
        k += (size_t)snprintf(hex + k, sizeof hex - k, " %02x", got[i]);
    CHECK(0, "%s: got%s", what, hex);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char buf[256];
    MPI_Aint pos, size;

    /* Several calls into one buffer: int, long (4 bytes), wchar (2). */
    int i = -2;
    long l = 0x01020304;
    wchar_t w = 0x263a;
    pos = 0;
    CHECK(MPI_Pack_external(EXT, &i, 1, MPI_INT, buf, sizeof buf, &pos) == MPI_SUCCESS && pos == 4,
          "pack int");
    CHECK(MPI_Pack_external(EXT, &l, 1, MPI_LONG, buf, sizeof buf, &pos) == MPI_SUCCESS && pos == 8,
          "pack long");
    CHECK(MPI_Pack_external(EXT, &w, 1, MPI_WCHAR, buf, sizeof buf, &pos) == MPI_SUCCESS &&
          pos == 10, "pack wchar");
    bytes_are("int,long,wchar", buf,
              (unsigned char[]){0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4, 0x26, 0x3a}, 10);
    int i2 = 0;
    long l2 = 0;
    wchar_t w2 = 0;
    pos = 0;
    MPI_Unpack_external(EXT, buf, 10, &pos, &i2, 1, MPI_INT);
    MPI_Unpack_external(EXT, buf, 10, &pos, &l2, 1, MPI_LONG);
    MPI_Unpack_external(EXT, buf, 10, &pos, &w2, 1, MPI_WCHAR);
    CHECK(pos == 10 && i2 == i && l2 == l && w2 == w, "unpack in three calls");

    /* Floating point and complex. */
    double complex z = 1.0 - 2.0 * I;
    long double ld = -1.5L;
    MPI_Count cpos = 0;
    CHECK(MPI_Pack_external_c(EXT, &z, 1, MPI_C_DOUBLE_COMPLEX, buf, sizeof buf, &cpos) ==
          MPI_SUCCESS && cpos == 16, "pack double complex");
    CHECK(MPI_Pack_external_c(EXT, &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &cpos) ==
          MPI_SUCCESS && cpos == 32, "pack long double");
    bytes_are("double complex, long double", buf,
              (unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0,
                                0xbf, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 32);

    /* A derived type: vector of {short, int} pairs with a gap; LOGICAL. */
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_SHORT_INT, &v);
    MPI_Type_commit(&v);
    struct { short s; int i; } si[3] = {{1, 2}, {99, 99}, {-1, 65536}};
    CHECK(MPI_Pack_external_size(EXT, 1, v, &size) == MPI_SUCCESS && size == 12,
          "external size of the vector: %ld", (long)size);
    pos = 0;
    CHECK(MPI_Pack_external(EXT, si, 1, v, buf, sizeof buf, &pos) == MPI_SUCCESS && pos == 12,
          "pack vector");
    bytes_are("vector of short_int", buf,
              (unsigned char[]){0, 1, 0, 0, 0, 2, 0xff, 0xff, 0, 1, 0, 0}, 12);
    memset(si, 0, sizeof si);
    pos = 0;
    CHECK(MPI_Unpack_external(EXT, buf, 12, &pos, si, 1, v) == MPI_SUCCESS && si[0].s == 1 &&
          si[0].i == 2 && si[2].s == -1 && si[2].i == 65536 && si[1].s == 0, "unpack vector");
    MPI_Type_free(&v);
    int32_t logical[2] = {1, 0};
    pos = 0;
    MPI_Pack_external(EXT, logical, 2, MPI_LOGICAL, buf, sizeof buf, &pos);
    bytes_are("LOGICAL", buf, (unsigned char[]){0, 0, 0, 1, 0, 0, 0, 0}, 8);

    /* Sizes per the standard's table. */
    struct { MPI_Datatype t; MPI_Aint size; } sizes[] = {
        {MPI_CHAR, 1}, {MPI_WCHAR, 2}, {MPI_SHORT, 2}, {MPI_INT, 4}, {MPI_LONG, 4},
        {MPI_UNSIGNED_LONG, 4}, {MPI_LONG_LONG, 8}, {MPI_FLOAT, 4}, {MPI_DOUBLE, 8},
        {MPI_LONG_DOUBLE, 16}, {MPI_C_BOOL, 1}, {MPI_AINT, 8}, {MPI_COUNT, 8}, {MPI_OFFSET, 8},
        {MPI_C_FLOAT_COMPLEX, 8}, {MPI_C_LONG_DOUBLE_COMPLEX, 32}, {MPI_LOGICAL, 4},
        {MPI_INTEGER, 4}, {MPI_REAL, 4}, {MPI_DOUBLE_PRECISION, 8}, {MPI_COMPLEX, 8},
        {MPI_DOUBLE_COMPLEX, 16}, {MPI_INTEGER16, 16}, {MPI_REAL16, 16}, {MPI_REAL2, 2},
        {MPI_COMPLEX32, 32}, {MPI_LONG_INT, 8}, {MPI_LONG_DOUBLE_INT, 20}, {MPI_2REAL, 8},
        {MPI_CXX_BOOL, 1}, {MPI_BYTE, 1}, {MPI_PACKED, 1},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        MPI_Aint s = -1;
        MPI_Count sc = -1;
        MPI_Pack_external_size(EXT, 3, sizes[k].t, &s);
        MPI_Pack_external_size_c(EXT, 3, sizes[k].t, &sc);
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_get_name(sizes[k].t, name, &len);
        CHECK(s == 3 * sizes[k].size && sc == s, "external size of %s: %ld", name, (long)s);
    }

    /* Every predefined type round-trips (small values, valid everywhere). */
    MPI_Datatype all[] = {MPI_INT, MPI_LONG, MPI_UNSIGNED_LONG, MPI_SHORT, MPI_CHAR,
                          MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_WCHAR, MPI_LONG_LONG,
                          MPI_FLOAT, MPI_DOUBLE, MPI_C_BOOL, MPI_INT8_T, MPI_UINT64_T,
                          MPI_INTEGER2, MPI_LOGICAL8, MPI_REAL8, MPI_COMPLEX8, MPI_AINT,
                          MPI_2INT, MPI_DOUBLE_INT, MPI_2DOUBLE_PRECISION, MPI_INTEGER16};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        MPI_Aint lb, ext, es;
        MPI_Type_get_extent(all[k], &lb, &ext);
        MPI_Pack_external_size(EXT, 4, all[k], &es);
        unsigned char *a = calloc(4, (size_t)ext), *b = calloc(4, (size_t)ext), *x = malloc((size_t)es);
        for (MPI_Aint j = 0; j < 4; j++)
            a[j * ext] = (unsigned char)(j + 1);   /* low byte of the first field */
        pos = 0;
        int rc = MPI_Pack_external(EXT, a, 4, all[k], x, es, &pos);
        MPI_Aint pos2 = 0;
        int rc2 = MPI_Unpack_external(EXT, x, es, &pos2, b, 4, all[k]);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && pos == es && pos2 == es &&
              memcmp(a, b, 4 * (size_t)ext) == 0, "round trip of predefined type %zu", k);
        free(a); free(b); free(x);
    }

    /* Errors. */
    pos = 0;
    CHECK(ecls(MPI_Pack_external("native", &i, 1, MPI_INT, buf, sizeof buf, &pos)) ==
          MPI_ERR_UNSUPPORTED_DATAREP, "datarep native");
    CHECK(ecls(MPI_Pack_external_size("internal", 1, MPI_INT, &size)) == MPI_ERR_UNSUPPORTED_DATAREP,
          "datarep internal");
    CHECK(ecls(MPI_Pack_external(NULL, &i, 1, MPI_INT, buf, sizeof buf, &pos)) == MPI_ERR_ARG,
          "NULL datarep");
    CHECK(ecls(MPI_Pack_external(EXT, &i, 1, MPI_INT, buf, 3, &pos)) == MPI_ERR_TRUNCATE && pos == 0,
          "pack into 3 bytes");
    pos = 2;
    CHECK(ecls(MPI_Unpack_external(EXT, buf, 5, &pos, &i2, 1, MPI_INT)) == MPI_ERR_TRUNCATE,
          "unpack past the end");
    long big = 1L << 40;
    pos = 0;
    CHECK(ecls(MPI_Pack_external(EXT, &big, 1, MPI_LONG, buf, sizeof buf, &pos)) == MPI_ERR_CONVERSION
          && pos == 0, "a long beyond 32 bits");
    CHECK(ecls(MPI_Pack_external(EXT, &i, -1, MPI_INT, buf, sizeof buf, &pos)) == MPI_ERR_COUNT,
          "negative count");
    CHECK(ecls(MPI_Pack_external(EXT, &i, 1, MPI_DATATYPE_NULL, buf, sizeof buf, &pos)) == MPI_ERR_TYPE,
          "null type");
    MPI_Type_contiguous(2, MPI_INT, &v);
    CHECK(ecls(MPI_Pack_external(EXT, &i, 1, v, buf, sizeof buf, &pos)) == MPI_ERR_TYPE,
          "uncommitted type");
    MPI_Type_free(&v);
    return mtest_finish();
}
