/*
 * io_indep: independent access -- explicit offsets, the individual
 * pointer (seek, get_position, get_byte_offset), views with vector,
 * subarray and struct filetypes, non-contiguous memory types, statuses at
 * the end of file, data sieving on and off, and the errors of access and
 * of views (a filetype whose displacements decrease or are negative).
 * Every byte written is checked by reading the file back plainly.
 */
#include "iotest.h"

static int rank, size;

/* Opens name on WORLD with one hint (key NULL: none). */
static MPI_File open_with(const char *name, int amode, const char *key, const char *val)
{
    MPI_Info info = MPI_INFO_NULL;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, val);
    }
    MPI_File fh = MPI_FILE_NULL;
    int err = MPI_File_open(MPI_COMM_WORLD, iot_path(name), amode, info, &fh);
    CHECK(err == MPI_SUCCESS, "open %s: %d", name, err);
    if (key)
        MPI_Info_free(&info);
    return fh;
}

/* Explicit offsets in the default (byte) view. */
static void test_at(void)
{
    MPI_File fh = open_with("at", MPI_MODE_CREATE | MPI_MODE_RDWR, NULL, NULL);
    enum { N = 1000 };
    char buf[N], back[N];
    for (int i = 0; i < N; i++)
        buf[i] = (char)(rank * 7 + i);
    MPI_Status st;
    CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * N, buf, N, MPI_CHAR, &st) == MPI_SUCCESS,
          "write_at");
    int cnt = -1;
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    CHECK(cnt == N, "write count %d", cnt);
    MPI_File_sync(fh);
    int peer = (rank + 1) % size;
    MPI_File_read_at(fh, (MPI_Offset)peer * N, back, N, MPI_CHAR, &st);
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    CHECK(cnt == N, "read count %d", cnt);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += back[i] != (char)(peer * 7 + i);
    CHECK(!bad, "%d bytes differ", bad);
    /* past the end: a short count, then zero */
    MPI_File_read_at(fh, (MPI_Offset)size * N - 10, back, 100, MPI_CHAR, &st);
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    CHECK(cnt == 10, "short read count %d", cnt);
    MPI_File_read_at(fh, (MPI_Offset)size * N + 5, back, 100, MPI_CHAR, &st);
    MPI_Get_count(&st, MPI_CHAR, &cnt);
    CHECK(cnt == 0, "read beyond the end %d", cnt);
    /* ints: a partial last int gives MPI_UNDEFINED */
    int iv[4];
    MPI_File_read_at(fh, (MPI_Offset)size * N - 6, iv, 4, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == MPI_UNDEFINED, "partial int count %d", cnt);
    MPI_Get_elements(&st, MPI_BYTE, &cnt);
    CHECK(cnt == 6, "bytes %d", cnt);
    /* the large-count forms */
    MPI_Count ccnt = -1;
    MPI_File_write_at_c(fh, (MPI_Offset)rank * N, buf, (MPI_Count)N, MPI_CHAR, &st);
    MPI_Get_count_c(&st, MPI_CHAR, &ccnt);
    CHECK(ccnt == N, "write_at_c count %lld", (long long)ccnt);
    MPI_File_read_at_c(fh, (MPI_Offset)rank * N, back, (MPI_Count)N, MPI_CHAR, &st);
    MPI_Get_count_c(&st, MPI_CHAR, &ccnt);
    CHECK(ccnt == N && memcmp(buf, back, N) == 0, "read_at_c count %lld", (long long)ccnt);
    MPI_File_close(&fh);
}

/* The individual pointer in a view of ints. */
static void test_pointer(void)
{
    MPI_File fh = open_with("ptr", MPI_MODE_CREATE | MPI_MODE_RDWR, NULL, NULL);
    MPI_Offset disp = (MPI_Offset)rank * 100 * sizeof(int);
    CHECK(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL) == MPI_SUCCESS,
          "set_view");
    int v[40], w[10];
    for (int i = 0; i < 40; i++)
        v[i] = rank * 1000 + i;
    MPI_File_write(fh, v, 10, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_write(fh, v + 10, 10, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Offset pos, byte;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 20, "position %lld", (long long)pos);
    MPI_File_get_byte_offset(fh, pos, &byte);
    CHECK(byte == disp + 20 * (MPI_Offset)sizeof(int), "byte offset %lld", (long long)byte);
    MPI_File_seek(fh, 5, MPI_SEEK_SET);
    MPI_File_read(fh, w, 3, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(w[0] == v[5] && w[2] == v[7], "read after seek: %d %d", w[0], w[2]);
    MPI_File_seek(fh, -2, MPI_SEEK_CUR);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 6, "seek cur %lld", (long long)pos);
    MPI_File_read(fh, w, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(w[0] == v[6], "read at 6: %d", w[0]);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* the end of file as a position of this view */
    MPI_File_seek(fh, 0, MPI_SEEK_END);
    MPI_File_get_position(fh, &pos);
    MPI_Offset expect = (MPI_Offset)(size - 1) * 100 + 20 - (MPI_Offset)rank * 100;
    CHECK(pos == expect, "seek end %lld, expected %lld", (long long)pos, (long long)expect);
    CHECK(iot_class(MPI_File_seek(fh, -1, MPI_SEEK_SET)) == MPI_ERR_ARG, "seek before start");
    CHECK(iot_class(MPI_File_seek(fh, 0, 12345)) == MPI_ERR_ARG, "bad whence");
    MPI_File_close(&fh);
}

/* A vector filetype interleaving the ranks' blocks of B ints; memory side
 * contiguous, then strided. */
static void test_vector(const char *name, const char *key, const char *val)
{
    enum { B = 3, NB = 50 };
    MPI_File fh = open_with(name, MPI_MODE_CREATE | MPI_MODE_RDWR, key, val);
    MPI_Datatype vec, ft;
    MPI_Type_vector(NB, B, B * size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)NB * B * size * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL);
    /* two tiles from a strided memory type: every other int of mem */
    int mem[2 * 2 * NB * B];
    for (int i = 0; i < 2 * 2 * NB * B; i++)
        mem[i] = (i % 2) ? -1 : rank * 100000 + i / 2;
    MPI_Datatype every_other;
    MPI_Type_vector(2 * NB * B, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Status st;
    CHECK(MPI_File_write_at(fh, 0, mem, 1, every_other, &st) == MPI_SUCCESS, "write vector");
    int cnt;
    MPI_Get_count(&st, every_other, &cnt);
    CHECK(cnt == 1, "count of one strided element: %d", cnt);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    /* plain read of the whole file by everyone */
    int total = 2 * NB * B * size, *all = malloc(sizeof(int) * total);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, 0, all, total, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == total, "file holds %d ints, expected %d", cnt, total);
    int bad = 0;
    for (int i = 0; i < total; i++) {
        int blk = i / B, owner = blk % size, k = (blk / size) * B + i % B;
        bad += all[i] != owner * 100000 + k;
    }
    CHECK(!bad, "%s: %d ints differ", name, bad);
    /* read my part back through the view into a strided memory type */
    MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL);
    for (int i = 0; i < 2 * 2 * NB * B; i++)
        mem[i] = -7;
    MPI_File_read_at(fh, 0, mem, 1, every_other, &st);
    bad = 0;
    for (int i = 0; i < 2 * 2 * NB * B; i++)
        bad += mem[i] != ((i % 2) ? -7 : rank * 100000 + i / 2);
    CHECK(!bad, "%s: read back %d ints differ", name, bad);
    free(all);
    MPI_Type_free(&every_other);
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
}

/* A subarray filetype: rank r owns columns [r*C, r*C+C) of an 6 x (C*size)
 * array of doubles. */
static void test_subarray(void)
{
    enum { R = 6, C = 5 };
    MPI_File fh = open_with("sub", MPI_MODE_CREATE | MPI_MODE_RDWR, NULL, NULL);
    int sizes[2] = { R, C * size }, sub[2] = { R, C }, start[2] = { 0, rank * C };
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
    double a[R * C];
    for (int i = 0; i < R * C; i++)
        a[i] = (i / C) * 1000 + rank * C + i % C;
    MPI_File_write(fh, a, R * C, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    double *all = malloc(sizeof(double) * R * C * size);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, 0, all, R * C * size, MPI_DOUBLE, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < R * C * size; i++)
        bad += all[i] != (i / (C * size)) * 1000 + i % (C * size);
    CHECK(!bad, "subarray: %d doubles differ", bad);
    free(all);
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
}

/* A struct filetype with a hole: {int at 0, double at 8} extent 24, on
 * MPI_COMM_SELF files (one per rank). */
static void test_struct(void)
{
    char name[32];
    snprintf(name, sizeof name, "struct.%d", rank);
    MPI_File fh;
    MPI_File_open(MPI_COMM_SELF, iot_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                  &fh);
    int bl[2] = { 1, 1 };
    MPI_Aint d[2] = { 0, 8 };
    MPI_Datatype ty[2] = { MPI_INT, MPI_DOUBLE }, s, ft;
    MPI_Type_create_struct(2, bl, d, ty, &s);
    MPI_Type_create_resized(s, 0, 24, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL);
    /* memory: packed int,double pairs as bytes */
    char mem[3 * 12];
    for (int k = 0; k < 3; k++) {
        int i = 10 + k;
        double x = 0.5 + k;
        memcpy(mem + 12 * k, &i, 4);
        memcpy(mem + 12 * k + 4, &x, 8);
    }
    MPI_File_write_at(fh, 0, mem, 36, MPI_BYTE, MPI_STATUS_IGNORE);
    char file[72];
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Status st;
    MPI_File_read_at(fh, 0, file, 72, MPI_BYTE, &st);
    int cnt;
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == 24 * 2 + 16, "struct file size %d", cnt);
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        int i;
        double x;
        memcpy(&i, file + 24 * k, 4);
        memcpy(&x, file + 24 * k + 8, 8);
        bad += i != 10 + k || x != 0.5 + k;
    }
    CHECK(!bad, "struct: %d records differ", bad);
    MPI_Type_free(&s);
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
}

/* The errors of views and accesses. */
static void test_errors(void)
{
    MPI_File fh = open_with("err", MPI_MODE_CREATE | MPI_MODE_RDWR, NULL, NULL);
    int bl[2] = { 1, 1 };
    MPI_Aint dec[2] = { 8, 0 }, neg[2] = { -4, 8 };
    MPI_Datatype t1, t2;
    MPI_Type_create_hindexed(2, bl, dec, MPI_INT, &t1);
    MPI_Type_create_hindexed(2, bl, neg, MPI_INT, &t2);
    MPI_Type_commit(&t1);
    MPI_Type_commit(&t2);
    int err = MPI_File_set_view(fh, 0, MPI_INT, t1, "native", MPI_INFO_NULL);
    CHECK(iot_class(err) == MPI_ERR_TYPE, "decreasing filetype: %d", err);
    err = MPI_File_set_view(fh, 0, MPI_INT, t2, "native", MPI_INFO_NULL);
    CHECK(iot_class(err) == MPI_ERR_TYPE, "negative filetype: %d", err);
    err = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL);
    CHECK(iot_class(err) == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: %d", err);
    err = MPI_File_set_view(fh, -5, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    CHECK(iot_class(err) == MPI_ERR_ARG, "negative disp: %d", err);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    err = MPI_File_set_view(fh, 0, MPI_INT, unc, "native", MPI_INFO_NULL);
    CHECK(iot_class(err) == MPI_ERR_TYPE, "uncommitted filetype: %d", err);
    int x[2] = { 0, 0 };
    CHECK(iot_class(MPI_File_write_at(fh, 0, x, 1, unc, MPI_STATUS_IGNORE)) == MPI_ERR_TYPE,
          "uncommitted memory type");
    CHECK(iot_class(MPI_File_write_at(fh, 0, x, -1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_COUNT,
          "negative count");
    CHECK(iot_class(MPI_File_write_at(fh, -1, x, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_ARG,
          "negative offset");
    MPI_Type_free(&unc);
    MPI_Type_free(&t1);
    MPI_Type_free(&t2);
    MPI_File_close(&fh);
    /* read-only and write-only handles */
    fh = open_with("err", MPI_MODE_RDONLY, NULL, NULL);
    err = MPI_File_write_at(fh, 0, x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(iot_class(err) == MPI_ERR_READ_ONLY, "write on RDONLY: %d", err);
    MPI_File_close(&fh);
    fh = open_with("err", MPI_MODE_WRONLY, NULL, NULL);
    err = MPI_File_read_at(fh, 0, x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(iot_class(err) == MPI_ERR_ACCESS, "read on WRONLY: %d", err);
    MPI_File_close(&fh);
    /* sequential files: no explicit offsets, no individual pointer */
    fh = open_with("err", MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, NULL, NULL);
    err = MPI_File_write_at(fh, 0, x, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(iot_class(err) == MPI_ERR_UNSUPPORTED_OPERATION, "write_at sequential: %d", err);
    CHECK(iot_class(MPI_File_seek(fh, 0, MPI_SEEK_SET)) == MPI_ERR_UNSUPPORTED_OPERATION,
          "seek sequential");
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    iot_setup("indep");
    test_at();
    test_pointer();
    test_vector("vec", NULL, NULL);
    test_vector("vec_nosieve", "romio_ds_write", "disable");
    test_vector("vec_smallsieve", "ind_wr_buffer_size", "40");
    test_subarray();
    test_struct();
    test_errors();
    iot_cleanup();
    return mtest_finish();
}
