/*
 * io_coll: collective access. A 2-D array of doubles distributed in
 * blocks over a 2-D process grid is written with write_all through a
 * subarray view, then read back with read_all by a different
 * decomposition (row blocks, then a cyclic darray of columns) and checked
 * element by element; explicit-offset collectives with a rank that has no
 * data; an error on one rank reaching every rank. argv[1] may be a hint
 * "key=value" given at open (the ctest cases force two-phase on or off,
 * one aggregator per rank, small blocks), and MPI_File_get_info must
 * report it.
 */
#include "iotest.h"

enum { NR = 37, NC = 29 }; /* odd sizes: uneven blocks */

static int rank, size;
static MPI_Info hints = MPI_INFO_NULL;

static double val(int r, int c)
{
    return r * 1000.0 + c;
}

static void block(int n, int parts, int i, int *start, int *len)
{
    int q = n / parts, rem = n % parts;
    *start = i * q + (i < rem ? i : rem);
    *len = q + (i < rem);
}

static void test_2d(void)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, iot_path("a2d"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                            hints, &fh);
    CHECK(err == MPI_SUCCESS, "open: %d", err);
    int dims[2] = { 0, 0 };
    MPI_Dims_create(size, 2, dims);
    int pr = rank / dims[1], pc = rank % dims[1], r0, nr, c0, nc;
    block(NR, dims[0], pr, &r0, &nr);
    block(NC, dims[1], pc, &c0, &nc);
    int gs[2] = { NR, NC }, ss[2] = { nr, nc }, st[2] = { r0, c0 };
    MPI_Datatype ft;
    MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
    /* the local block with a halo of one in memory: a subarray memory type */
    int ms[2] = { nr + 2, nc + 2 }, mss[2] = { nr, nc }, mst[2] = { 1, 1 };
    MPI_Datatype mt;
    MPI_Type_create_subarray(2, ms, mss, mst, MPI_ORDER_C, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    double *mem = malloc(sizeof(double) * (nr + 2) * (nc + 2));
    for (int i = 0; i < (nr + 2) * (nc + 2); i++)
        mem[i] = -1;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++)
            mem[(i + 1) * (nc + 2) + j + 1] = val(r0 + i, c0 + j);
    MPI_Status s;
    err = MPI_File_write_all(fh, mem, 1, mt, &s);
    CHECK(err == MPI_SUCCESS, "write_all: %d", err);
    int cnt;
    MPI_Get_count(&s, MPI_DOUBLE, &cnt);
    CHECK(cnt == nr * nc, "write_all count %d", cnt);
    MPI_Offset fsz;
    MPI_File_get_size(fh, &fsz);
    CHECK(fsz == (MPI_Offset)NR * NC * sizeof(double), "file size %lld", (long long)fsz);

    /* back by row blocks: contiguous views, read_all */
    int rr0, rnr;
    block(NR, size, rank, &rr0, &rnr);
    MPI_File_set_view(fh, (MPI_Offset)rr0 * NC * sizeof(double), MPI_DOUBLE, MPI_DOUBLE, "native",
                      MPI_INFO_NULL);
    double *rows = malloc(sizeof(double) * (rnr * NC + 1));
    err = MPI_File_read_all(fh, rows, rnr * NC, MPI_DOUBLE, &s);
    CHECK(err == MPI_SUCCESS, "read_all rows: %d", err);
    MPI_Get_count(&s, MPI_DOUBLE, &cnt);
    CHECK(cnt == rnr * NC, "read_all count %d", cnt);
    int bad = 0;
    for (int i = 0; i < rnr; i++)
        for (int j = 0; j < NC; j++)
            bad += rows[i * NC + j] != val(rr0 + i, j);
    CHECK(!bad, "rows: %d values differ", bad);

    /* back by a cyclic distribution of columns (darray over a 1 x size grid) */
    int gsz[2] = { NR, NC }, dist[2] = { MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC };
    int darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 1 }, psz[2] = { 1, size };
    MPI_Datatype dt;
    MPI_Type_create_darray(size, rank, 2, gsz, dist, darg, psz, MPI_ORDER_C, MPI_DOUBLE, &dt);
    MPI_Type_commit(&dt);
    MPI_File_set_view(fh, 0, MPI_DOUBLE, dt, "native", MPI_INFO_NULL);
    int mycols = 0;
    for (int j = rank; j < NC; j += size)
        mycols++;
    double *cyc = malloc(sizeof(double) * (NR * mycols + 1));
    err = MPI_File_read_at_all(fh, 0, cyc, NR * mycols, MPI_DOUBLE, &s);
    CHECK(err == MPI_SUCCESS, "read darray: %d", err);
    bad = 0;
    for (int i = 0; i < NR; i++)
        for (int k = 0; k < mycols; k++)
            bad += cyc[i * mycols + k] != val(i, rank + k * size);
    CHECK(!bad, "darray columns: %d values differ", bad);
    free(cyc);
    free(rows);
    free(mem);
    MPI_Type_free(&dt);
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    MPI_File_close(&fh);
}

/* Explicit offsets, rank 0 with no data, interleaved ints; then a read at
 * the end of the file. */
static void test_at_all(void)
{
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, iot_path("atall"), MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh);
    enum { K = 100 };
    int v[K], n = rank == 0 && size > 1 ? 0 : K;
    for (int i = 0; i < K; i++)
        v[i] = rank + i * size;
    /* rank r writes ints r, r+size, ...: a strided view */
    MPI_Datatype one, ft;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, (MPI_Aint)size * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL);
    int err = MPI_File_write_at_all(fh, 0, v, n, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS, "write_at_all: %d", err);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    int *all = malloc(sizeof(int) * K * size);
    MPI_Status s;
    err = MPI_File_read_at_all(fh, 0, all, K * size, MPI_INT, &s);
    int cnt, bad = 0;
    MPI_Get_count(&s, MPI_INT, &cnt);
    /* with rank 0 silent the file ends at the last int of the last rank */
    int expect = K * size;
    CHECK(cnt == expect, "read_at_all count %d, expected %d", cnt, expect);
    for (int i = 0; i < cnt; i++) {
        int owner = i % size;
        int want = owner == 0 && size > 1 ? 0 : i;
        bad += all[i] != want;
    }
    CHECK(!bad, "at_all: %d ints differ", bad);
    /* all past the end: count 0 */
    err = MPI_File_read_at_all(fh, K * size + 10, all, 5, MPI_INT, &s);
    MPI_Get_count(&s, MPI_INT, &cnt);
    CHECK(err == MPI_SUCCESS && cnt == 0, "read past the end: %d, count %d", err, cnt);
    /* an error on one rank reaches all */
    err = MPI_File_write_at_all(fh, 0, v, rank == size - 1 ? -1 : 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(err != MPI_SUCCESS, "one rank's bad count fails the collective everywhere");
    free(all);
    MPI_Type_free(&one);
    MPI_Type_free(&ft);
    MPI_File_close(&fh);
}

static void test_info(const char *key, const char *val)
{
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, iot_path("info"), MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh);
    MPI_Info info;
    MPI_File_get_info(fh, &info);
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoi(v) >= 1 && atoi(v) <= size, "cb_nodes %s", flag ? v : "-");
    if (key && strcmp(key, "cb_config_list") == 0)
        CHECK(atoi(v) == size, "one aggregator per rank: cb_nodes %s", v);
    if (key) {
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
        CHECK(flag && strcmp(v, val) == 0, "hint %s=%s reported as %s", key, val, flag ? v : "-");
    }
    MPI_Info_free(&info);
    MPI_File_close(&fh);
}

/* Ranks told different NICs (as locusrun's placement tells them):
 * with two aggregators per node the second comes from the other NIC. */
static void test_nic(void)
{
    int half = (size + 1) / 2;
    setenv("LOCUS_NIC", rank < half ? "mlx5_0" : "mlx5_1", 1);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_config_list", "*:2");
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, iot_path("nic"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    MPI_File_get_info(fh, &info);
    char v[MPI_MAX_INFO_VAL + 1], want[32];
    int flag;
    MPI_Info_get(info, "locus_aggregators", MPI_MAX_INFO_VAL, v, &flag);
    if (size == 1)
        snprintf(want, sizeof want, "0");
    else
        snprintf(want, sizeof want, "0,%d", half);
    CHECK(flag && strcmp(v, want) == 0, "aggregators %s, expected %s", flag ? v : "-", want);
    MPI_Info_free(&info);
    MPI_File_close(&fh);
    unsetenv("LOCUS_NIC");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char key[64] = "", *val = NULL;
    if (argc > 1 && strchr(argv[1], '=')) {
        snprintf(key, sizeof key, "%s", argv[1]);
        *strchr(key, '=') = '\0';
        val = strchr(argv[1], '=') + 1;
        MPI_Info_create(&hints);
        MPI_Info_set(hints, key, val);
    }
    iot_setup("coll");
    test_2d();
    test_at_all();
    test_info(val ? key : NULL, val);
    if (!getenv("LOCUS_MPI_NODES"))
        test_nic();
    if (hints != MPI_INFO_NULL)
        MPI_Info_free(&hints);
    iot_cleanup();
    return mtest_finish();
}
