/*
 * io_datarep: data representations. "external32" writes big-endian
 * (checked byte by byte) and converts back, also through a strided view;
 * "internal" is native; a representation registered with
 * MPI_Register_datarep has its conversion functions called on write and
 * read; a second registration of a name is MPI_ERR_DUP_DATAREP;
 * MPI_File_get_type_extent follows the representation.
 */
#include <stdint.h>

#include "iotest.h"

static int rank, size, conv_calls;

/* "plus1000": an int is stored as its value + 1000, in native order. */
static int wr_fn(void *user, MPI_Datatype dt, int count, void *file, MPI_Offset pos, void *st)
{
    (void)dt, (void)st;
    conv_calls++;
    for (int i = 0; i < count; i++)
        ((int *)file)[i] = ((int *)user)[pos + i] + 1000;
    return MPI_SUCCESS;
}
static int rd_fn(void *user, MPI_Datatype dt, int count, void *file, MPI_Offset pos, void *st)
{
    (void)dt, (void)st;
    conv_calls++;
    for (int i = 0; i < count; i++)
        ((int *)user)[pos + i] = ((int *)file)[i] - 1000;
    return MPI_SUCCESS;
}
static int ext_fn(MPI_Datatype dt, MPI_Aint *extent, void *st)
{
    (void)st;
    MPI_Aint lb;
    return MPI_Type_get_extent(dt, &lb, extent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    iot_setup("datarep");
    enum { N = 16 };
    MPI_File fh;
    char name[32];
    snprintf(name, sizeof name, "ext.%d", rank);
    MPI_File_open(MPI_COMM_SELF, iot_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                  &fh);
    /* external32 ints: big-endian in the file */
    int v[N], w[N];
    for (int i = 0; i < N; i++)
        v[i] = 0x01020304 * (i + 1) + rank;
    int err = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
    CHECK(err == MPI_SUCCESS, "external32 view: %d", err);
    MPI_Aint ext;
    MPI_File_get_type_extent(fh, MPI_LONG, &ext);
    CHECK(ext == 4, "external32 MPI_LONG extent %ld", (long)ext);
    MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
    CHECK(ext == 8, "external32 MPI_DOUBLE extent %ld", (long)ext);
    MPI_Count cext = 0;
    MPI_Datatype three_longs;
    MPI_Type_contiguous(3, MPI_LONG, &three_longs);
    MPI_Type_commit(&three_longs);
    MPI_File_get_type_extent_c(fh, three_longs, &cext);
    CHECK(cext == 12, "external32 extent of 3 longs %lld", (long long)cext);
    MPI_Type_free(&three_longs);
    MPI_File_write_at(fh, 0, v, N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Status st;
    MPI_File_read_at(fh, 0, w, N, MPI_INT, &st);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N && memcmp(v, w, sizeof v) == 0, "external32 round trip (%d)", cnt);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    unsigned char raw[4 * N];
    MPI_File_read_at(fh, 0, raw, 4 * N, MPI_BYTE, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        uint32_t x = (uint32_t)raw[4 * i] << 24 | (uint32_t)raw[4 * i + 1] << 16 |
                     (uint32_t)raw[4 * i + 2] << 8 | raw[4 * i + 3];
        bad += x != (uint32_t)v[i];
    }
    CHECK(!bad, "external32 bytes: %d ints not big-endian", bad);
    MPI_File_get_type_extent(fh, MPI_LONG, &ext);
    CHECK(ext == sizeof(long), "native MPI_LONG extent %ld", (long)ext);

    /* external32 doubles through a strided view: every other double */
    double d[N], e[N];
    for (int i = 0; i < N; i++)
        d[i] = 1.5 * i - rank;
    MPI_Datatype one, ft;
    MPI_Type_contiguous(1, MPI_DOUBLE, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(double), &ft);
    MPI_Type_commit(&ft);
    err = MPI_File_set_view(fh, 8, MPI_DOUBLE, ft, "external32", MPI_INFO_NULL);
    CHECK(err == MPI_SUCCESS, "strided external32 view: %d", err);
    MPI_File_write_at(fh, 0, d, N, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_read_at(fh, 0, e, N, MPI_DOUBLE, MPI_STATUS_IGNORE);
    CHECK(memcmp(d, e, sizeof d) == 0, "strided external32 round trip");
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    unsigned char r8[8];
    MPI_File_read_at(fh, 8 + 16 * 3, r8, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    uint64_t bits = 0, want;
    for (int k = 0; k < 8; k++)
        bits = bits << 8 | r8[k];
    memcpy(&want, &d[3], 8);
    CHECK(bits == want, "the 4th double big-endian at byte 56");
    MPI_Type_free(&one);
    MPI_Type_free(&ft);

    /* internal = native */
    err = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL);
    CHECK(err == MPI_SUCCESS, "internal view");
    MPI_File_write_at(fh, 0, v, N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, 0, w, N, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(memcmp(v, w, sizeof v) == 0, "internal is native");

    /* a user representation */
    err = MPI_Register_datarep("plus1000", rd_fn, wr_fn, ext_fn, NULL);
    CHECK(err == MPI_SUCCESS, "register: %d", err);
    err = MPI_Register_datarep("plus1000", rd_fn, wr_fn, ext_fn, NULL);
    CHECK(iot_class(err) == MPI_ERR_DUP_DATAREP, "second registration: %d", err);
    err = MPI_Register_datarep("external32", rd_fn, wr_fn, ext_fn, NULL);
    CHECK(iot_class(err) == MPI_ERR_DUP_DATAREP, "predefined name: %d", err);
    err = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plus1000", MPI_INFO_NULL);
    CHECK(err == MPI_SUCCESS, "user view: %d", err);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ftype;
    MPI_File_get_view(fh, &disp, &et, &ftype, rep);
    CHECK(strcmp(rep, "plus1000") == 0 && et == MPI_INT && ftype == MPI_INT, "get_view %s", rep);
    MPI_File_write_at(fh, 0, v, N, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(conv_calls == 1, "write conversion called %d", conv_calls);
    for (int i = 0; i < N; i++)
        w[i] = 0;
    MPI_File_read_at(fh, 0, w, N, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(conv_calls == 2 && cnt == N, "read conversion called %d, count %d", conv_calls, cnt);
    CHECK(memcmp(v, w, sizeof v) == 0, "user representation round trip");
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, 0, w, N, MPI_INT, MPI_STATUS_IGNORE);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += w[i] != v[i] + 1000;
    CHECK(!bad, "stored as value + 1000: %d differ", bad);
    MPI_File_close(&fh);

    /* get_view of a derived filetype: a new handle with the same layout */
    MPI_File_open(MPI_COMM_SELF, iot_path(name), MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_File_set_view(fh, 4, MPI_INT, vec, "native", MPI_INFO_NULL);
    MPI_File_get_view(fh, &disp, &et, &ftype, rep);
    int tsz;
    MPI_Type_size(ftype, &tsz);
    CHECK(disp == 4 && tsz == 12 && ftype != vec, "get_view derived: disp %lld size %d",
          (long long)disp, tsz);
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    MPI_File_close(&fh);
    iot_cleanup();
    return mtest_finish();
}
