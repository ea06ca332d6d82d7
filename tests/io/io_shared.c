/*
 * io_shared: the shared file pointer (write/read_shared: every rank's
 * record lands once and whole; write/read_ordered: in rank order;
 * seek_shared, get_position_shared), split collectives, the nonblocking
 * forms (requests complete, statuses counted), and atomic mode
 * (overlapping strided writes from every rank leave one rank's data whole
 * and the gaps untouched).
 */
#include "iotest.h"

static int rank, size;

static MPI_File open_int_view(const char *name)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, iot_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open %s", name);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    return fh;
}

static void test_shared(void)
{
    enum { R = 10 };
    MPI_File fh = open_int_view("shared");
    int rec[R], cnt;
    for (int i = 0; i < R; i++)
        rec[i] = rank * 100 + i;
    MPI_Status st;
    CHECK(MPI_File_write_shared(fh, rec, R, MPI_INT, &st) == MPI_SUCCESS, "write_shared");
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == R, "write_shared count %d", cnt);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == (MPI_Offset)R * size, "shared position %lld", (long long)pos);
    int *all = malloc(sizeof(int) * R * size), *seen = calloc(size, sizeof(int)), bad = 0;
    MPI_File_read_at(fh, 0, all, R * size, MPI_INT, &st);
    for (int k = 0; k < size; k++) {
        int owner = all[k * R] / 100;
        if (owner < 0 || owner >= size) {
            bad++;
            continue;
        }
        seen[owner]++;
        for (int i = 0; i < R; i++)
            bad += all[k * R + i] != owner * 100 + i;
    }
    for (int r = 0; r < size; r++)
        bad += seen[r] != 1;
    CHECK(!bad, "shared records: %d faults", bad);
    /* read_shared after a collective seek: every record read once */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    MPI_File_read_shared(fh, rec, R, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == R && rec[0] % 100 == 0 && rec[R - 1] == rec[0] + R - 1,
          "read_shared a whole record: %d %d", cnt, rec[0]);
    int first = rec[0], firsts[64];
    MPI_Allgather(&first, 1, MPI_INT, firsts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int a = 0; a < size && size <= 64; a++)
        for (int b = a + 1; b < size; b++)
            CHECK(firsts[a] != firsts[b], "two ranks read the same record");
    MPI_File_seek_shared(fh, -3, MPI_SEEK_END);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == (MPI_Offset)R * size - 3, "seek_shared end: %lld", (long long)pos);
    free(all);
    free(seen);
    MPI_File_close(&fh);
}

static void test_ordered(void)
{
    MPI_File fh = open_int_view("ordered");
    int n = rank + 1, v[64];
    for (int i = 0; i < n; i++)
        v[i] = rank;
    MPI_Status st;
    CHECK(MPI_File_write_ordered(fh, v, n, MPI_INT, &st) == MPI_SUCCESS, "write_ordered");
    int total = size * (size + 1) / 2, cnt;
    MPI_Offset pos;
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == total, "position after ordered %lld", (long long)pos);
    int *all = malloc(sizeof(int) * total), bad = 0, at = 0;
    MPI_File_read_at(fh, 0, all, total, MPI_INT, &st);
    for (int r = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            bad += all[at++] != r;
    CHECK(!bad, "ordered layout: %d ints differ", bad);
    /* back in order, split: begin/end */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    for (int i = 0; i < n; i++)
        v[i] = -1;
    CHECK(MPI_File_read_ordered_begin(fh, v, n, MPI_INT) == MPI_SUCCESS, "read_ordered_begin");
    CHECK(MPI_File_read_ordered_end(fh, v, &st) == MPI_SUCCESS, "read_ordered_end");
    MPI_Get_count(&st, MPI_INT, &cnt);
    bad = cnt != n;
    for (int i = 0; i < n; i++)
        bad += v[i] != rank;
    CHECK(!bad, "read_ordered: %d faults", bad);
    /* an end without a begin */
    CHECK(iot_class(MPI_File_read_all_end(fh, v, &st)) == MPI_ERR_OTHER, "end without begin");
    free(all);
    MPI_File_close(&fh);
}

static void test_split_and_nb(void)
{
    MPI_File fh = open_int_view("nb");
    int v[8], w[8], cnt, flag;
    for (int i = 0; i < 8; i++)
        v[i] = rank * 10 + i;
    MPI_Status st;
    /* split explicit-offset write, then a split read of it */
    MPI_File_write_at_all_begin(fh, rank * 8, v, 8, MPI_INT);
    CHECK(iot_class(MPI_File_write_at_all(fh, 0, v, 0, MPI_INT, &st)) == MPI_ERR_OTHER,
          "a collective during a split collective");
    MPI_File_write_at_all_end(fh, v, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 8, "split write count %d", cnt);
    MPI_File_seek(fh, rank * 8, MPI_SEEK_SET);
    MPI_File_read_all_begin(fh, w, 8, MPI_INT);
    MPI_File_read_all_end(fh, w, &st);
    CHECK(memcmp(v, w, sizeof v) == 0, "split read");
    /* nonblocking forms */
    MPI_Request rq[4];
    for (int i = 0; i < 8; i++)
        v[i] = -(rank * 10 + i);
    MPI_File_iwrite_at(fh, rank * 8, v, 4, MPI_INT, &rq[0]);
    MPI_File_seek(fh, rank * 8 + 4, MPI_SEEK_SET);
    MPI_File_iwrite(fh, v + 4, 4, MPI_INT, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_File_iread_at(fh, rank * 8, w, 8, MPI_INT, &rq[0]);
    MPI_Test(&rq[0], &flag, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(flag && cnt == 8 && rq[0] == MPI_REQUEST_NULL, "iread_at complete: %d %d", flag, cnt);
    CHECK(memcmp(v, w, sizeof v) == 0, "iwrite/iread data");
    MPI_File_iwrite_at_all(fh, rank * 8, v, 8, MPI_INT, &rq[0]);
    MPI_Wait(&rq[0], &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 8, "iwrite_at_all count %d", cnt);
    MPI_File_seek(fh, rank * 8, MPI_SEEK_SET);
    MPI_File_iread_all(fh, w, 8, MPI_INT, &rq[0]);
    MPI_File_iread_at_all(fh, rank * 8, w, 8, MPI_INT, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(memcmp(v, w, sizeof v) == 0, "iread_all data");
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == rank * 8 + 8, "pointer after iread_all %lld", (long long)pos);
    /* shared nonblocking */
    MPI_File_seek_shared(fh, 8 * size, MPI_SEEK_SET);
    MPI_File_iwrite_shared(fh, v, 2, MPI_INT, &rq[0]);
    MPI_Wait(&rq[0], &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 2, "iwrite_shared count %d", cnt);
    MPI_File_seek_shared(fh, 8 * size, MPI_SEEK_SET);
    MPI_File_iread_shared(fh, w, 2, MPI_INT, &rq[0]);
    MPI_Wait(&rq[0], &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 2 && w[1] == w[0] - 1 && w[0] % 10 == 0, "iread_shared %d %d", cnt, w[0]);
    MPI_File_close(&fh);
}

static void test_atomic(void)
{
    enum { N = 256 };
    MPI_File fh = open_int_view("atomic");
    int flag;
    CHECK(MPI_File_set_atomicity(fh, 1) == MPI_SUCCESS, "set_atomicity");
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 1, "atomic");
    int init[2 * N];
    for (int i = 0; i < 2 * N; i++)
        init[i] = -1;
    if (rank == 0)
        MPI_File_write_at(fh, 0, init, 2 * N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    /* every rank: every other int, its rank, several times over */
    MPI_Datatype one, ft;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL);
    int mine[N];
    for (int i = 0; i < N; i++)
        mine[i] = rank;
    for (int k = 0; k < 5; k++)
        MPI_File_write_at(fh, 0, mine, N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    int back[2 * N], bad = 0;
    MPI_File_read_at(fh, 0, back, 2 * N, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * N; i++)
        bad += (i % 2) ? back[i] != -1 : back[i] != back[0];
    CHECK(!bad && back[0] >= 0 && back[0] < size, "atomic writes: %d faults", bad);
    MPI_File_set_atomicity(fh, 0);
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 0, "not atomic");
    MPI_Type_free(&one);
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
}

/* A sequential file: shared pointers only, and a view placed at the
 * shared pointer with MPI_DISPLACEMENT_CURRENT. */
static void test_sequential(void)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, iot_path("seq"),
                            MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                            MPI_INFO_NULL, &fh);
    CHECK(err == MPI_SUCCESS, "open sequential: %d", err);
    int v[4] = { rank, rank, rank, rank };
    MPI_File_write_ordered(fh, v, 4, MPI_INT, MPI_STATUS_IGNORE);
    err = MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native",
                            MPI_INFO_NULL);
    CHECK(err == MPI_SUCCESS, "DISPLACEMENT_CURRENT: %d", err);
    MPI_Offset disp, pos;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == (MPI_Offset)(16 * size), "view at the shared pointer: %lld", (long long)disp);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 0, "shared pointer reset by the view: %lld", (long long)pos);
    MPI_File_write_ordered(fh, v, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Offset sz;
    MPI_File_get_size(fh, &sz);
    CHECK(sz == 32 * size, "size %lld", (long long)sz);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    iot_setup("shared");
    test_shared();
    test_ordered();
    test_split_and_nb();
    test_atomic();
    test_sequential();
    iot_cleanup();
    return mtest_finish();
}
