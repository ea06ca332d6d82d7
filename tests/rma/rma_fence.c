/*
 * Fence epochs on windows of every flavor: put, get and accumulate of
 * basic and derived types (vector target, indexed origin, struct-free
 * layouts), values checked after each epoch. Run under every
 * LOCUS_RMA_PATH so the shared-memory, CMA and message paths all pass.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 64

static int rank, size;

/* A window of `flavor` over n ints; *mem is its memory. */
static MPI_Win make_win(int flavor, int n, int **mem, int **own)
{
    MPI_Win win;
    *own = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        *own = malloc((size_t)n * sizeof(int));
        *mem = *own;
        MPI_Win_create(*mem, (MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win);
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        MPI_Win_allocate((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                         mem, &win);
    } else {
        MPI_Win_allocate_shared((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                MPI_COMM_WORLD, mem, &win);
    }
    return win;
}

static void fill(int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        a[i] = v;
}

static void test_flavor(int flavor)
{
    int *mem, *own;
    MPI_Win win = make_win(flavor, N, &mem, &own);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int src[N], got[N];

    /* put of a contiguous block into the right neighbour */
    fill(mem, N, -1);
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i;
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(mem[i] == left * 1000 + i, "flavor %d put: mem[%d]=%d", flavor, i, mem[i]);

    /* get of the left neighbour's block, then of a displaced piece */
    fill(got, N, -7);
    MPI_Get(got, N / 2, MPI_INT, left, N / 4, N / 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    int ll = (left + size - 1) % size;
    for (int i = 0; i < N / 2; i++)
        CHECK(got[i] == ll * 1000 + N / 4 + i, "flavor %d get: got[%d]=%d", flavor, i, got[i]);
    CHECK(got[N / 2] == -7, "flavor %d get wrote past its count", flavor);

    /* derived target: every other int of the right neighbour */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    fill(mem, N, -1);
    MPI_Win_fence(0, win);
    MPI_Put(src, N / 2, MPI_INT, right, 0, 1, every2, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        int want = i % 2 ? -1 : left * 1000 + i / 2;
        CHECK(mem[i] == want, "flavor %d vector put: mem[%d]=%d want %d", flavor, i, mem[i],
              want);
    }
    /* derived origin: an indexed get into scattered places */
    int blen[3] = { 2, 1, 3 }, disp[3] = { 10, 0, 20 };
    MPI_Datatype idx;
    MPI_Type_indexed(3, blen, disp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    fill(got, N, -7);
    MPI_Get(got, 1, idx, left, 0, 6, MPI_INT, win);
    MPI_Win_fence(0, win);
    /* left's memory now holds ll's pattern at even places, -1 at odd ones */
    int lw[6];
    for (int i = 0; i < 6; i++)
        lw[i] = i % 2 ? -1 : ll * 1000 + i / 2;
    CHECK(got[10] == lw[0] && got[11] == lw[1] && got[0] == lw[2] && got[20] == lw[3] &&
              got[21] == lw[4] && got[22] == lw[5] && got[1] == -7 && got[12] == -7,
          "flavor %d indexed get: %d %d %d %d %d %d", flavor, got[10], got[11], got[0],
          got[20], got[21], got[22]);

    /* accumulate: everyone adds into rank 0, on a vector layout too */
    fill(mem, N, 1);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        src[i] = rank + i;
    MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            int want = 1 + size * (size - 1) / 2 + size * i;
            CHECK(mem[i] == want, "flavor %d acc sum: mem[%d]=%d want %d", flavor, i, mem[i],
                  want);
        }
    fill(mem, N, 0);
    MPI_Win_fence(0, win);
    MPI_Accumulate(src, N / 2, MPI_INT, 0, 0, 1, every2, MPI_MAX, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0)
        for (int i = 0; i < N; i++) {
            int want = i % 2 ? 0 : size - 1 + i / 2;
            CHECK(mem[i] == want, "flavor %d vector acc max: mem[%d]=%d want %d", flavor, i,
                  mem[i], want);
        }
    MPI_Type_free(&every2);
    MPI_Type_free(&idx);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    free(own);
}

/* doubles through a struct-of-gaps layout on both sides (resized vector) */
static void test_doubles(void)
{
    double *mem;
    MPI_Win win;
    MPI_Win_allocate(4 * N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
    for (int i = 0; i < 4 * N; i++)
        mem[i] = 0.5;
    MPI_Datatype col, col1;
    MPI_Type_vector(N, 1, 4, MPI_DOUBLE, &col);
    MPI_Type_create_resized(col, 0, sizeof(double), &col1);
    MPI_Type_commit(&col1);
    double src[N];
    for (int i = 0; i < N; i++)
        src[i] = rank + 0.25 * i;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    /* column `rank % 4` of the 4-wide matrix at rank 0 gets a sum */
    MPI_Accumulate(src, N, MPI_DOUBLE, 0, rank % 4, 1, col1, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        for (int c = 0; c < 4; c++)
            for (int i = 0; i < N; i++) {
                double want = 0.5;
                for (int r = 0; r < size; r++)
                    if (r % 4 == c)
                        want += r + 0.25 * i;
                CHECK(mem[i * 4 + c] == want, "doubles: [%d][%d]=%g want %g", i, c,
                      mem[i * 4 + c], want);
            }
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Type_free(&col);
    MPI_Type_free(&col1);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_flavor(MPI_WIN_FLAVOR_CREATE);
    test_flavor(MPI_WIN_FLAVOR_ALLOCATE);
    test_flavor(MPI_WIN_FLAVOR_SHARED);
    test_doubles();
    return mtest_finish();
}
