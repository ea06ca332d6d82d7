/*
 * Dynamic windows: one access may span regions attached back to back (the
 * standard asks only that it lie in the union of attached memory). Every
 * rank attaches the two halves of one array separately (the upper half
 * first), plus a third array in three pieces, and every rank puts, gets,
 * accumulates and get-accumulates across the seams at its right
 * neighbour and at itself, with contiguous and strided target types. An
 * access over a gap between regions still fails with MPI_ERR_RMA_RANGE;
 * a strided one whose hole covers the gap touches attached memory only
 * and succeeds on every path.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 16          /* longs per array; the seam is at N/2 */
#define GAP 4         /* longs left unattached in the middle of gapped[] */

static int rank, size;

/* The error class of an access that failed at the call or at the unlock
 * (a target reached by message reports it there). */
static int class_of(int err, int err2)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(err != MPI_SUCCESS ? err : err2, &cls);
    return cls;
}

/* Put / get / accumulate / get_accumulate over the seam of target t's
 * halves[] at address a, and over both seams of its thirds[] at b. */
static void span_ops(MPI_Win win, int t, MPI_Aint a, MPI_Aint b)
{
    long v[N], got[N], old[N];
    for (int i = 0; i < N; i++)
        v[i] = 1000 * rank + i;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    /* halves[2..14) <- v[0..12) */
    int err = MPI_Put(v, 12, MPI_LONG, t, MPI_Aint_add(a, 2 * sizeof(long)), 12, MPI_LONG, win);
    CHECK(err == MPI_SUCCESS, "put over the seam at %d: %d", t, err);
    MPI_Win_flush(t, win);
    memset(got, 0, sizeof got);
    err = MPI_Get(got, N, MPI_LONG, t, a, N, MPI_LONG, win);
    CHECK(err == MPI_SUCCESS, "get over the seam at %d: %d", t, err);
    MPI_Win_flush(t, win);
    for (int i = 2; i < 14; i++)
        CHECK(got[i] == v[i - 2], "target %d: halves[%d]=%ld want %ld", t, i, got[i], v[i - 2]);
    /* halves[4..12) += 1, then fetch-and-add 10 to the same */
    long ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, tens[8];
    for (int i = 0; i < 8; i++)
        tens[i] = 10;
    err = MPI_Accumulate(ones, 8, MPI_LONG, t, MPI_Aint_add(a, 4 * sizeof(long)), 8, MPI_LONG,
                         MPI_SUM, win);
    CHECK(err == MPI_SUCCESS, "accumulate over the seam at %d: %d", t, err);
    err = MPI_Get_accumulate(tens, 8, MPI_LONG, old, 8, MPI_LONG, t,
                             MPI_Aint_add(a, 4 * sizeof(long)), 8, MPI_LONG, MPI_SUM, win);
    CHECK(err == MPI_SUCCESS, "get_accumulate over the seam at %d: %d", t, err);
    MPI_Win_flush(t, win);
    for (int i = 0; i < 8; i++)
        CHECK(old[i] == v[i + 2] + 1, "target %d: fetched halves[%d]=%ld want %ld", t, i + 4,
              old[i], v[i + 2] + 1);
    /* every other long of thirds[], across both seams (a strided type) */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &every2);
    MPI_Type_commit(&every2);
    err = MPI_Put(v, N / 2, MPI_LONG, t, b, 1, every2, win);
    CHECK(err == MPI_SUCCESS, "strided put over two seams at %d: %d", t, err);
    MPI_Win_flush(t, win);
    memset(got, 0, sizeof got);
    err = MPI_Get(got, N, MPI_LONG, t, b, N, MPI_LONG, win);
    CHECK(err == MPI_SUCCESS, "get over two seams at %d: %d", t, err);
    MPI_Win_unlock(t, win);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == (i % 2 ? -1 : v[i / 2]), "target %d: thirds[%d]=%ld", t, i, got[i]);
    MPI_Type_free(&every2);
}

/* Accesses that reach into the unattached gap of gapped[] (at address g):
 * one that straddles it, one that starts in it. */
static void gap_ops(MPI_Win win, int t, MPI_Aint g)
{
    long v[N] = { 0 }, got[N];
    int lo = (N - GAP) / 2;   /* first unattached long */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    int err = MPI_Put(v, N, MPI_LONG, t, g, N, MPI_LONG, win);
    int err2 = MPI_Win_unlock(t, win);
    CHECK(class_of(err, err2) == MPI_ERR_RMA_RANGE, "put over a gap at %d: class %d", t,
          class_of(err, err2));
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    err = MPI_Get(got, 2, MPI_LONG, t, MPI_Aint_add(g, (MPI_Aint)(lo + 1) * sizeof(long)), 2,
                  MPI_LONG, win);
    err2 = MPI_Win_unlock(t, win);
    CHECK(class_of(err, err2) == MPI_ERR_RMA_RANGE, "get inside a gap at %d: class %d", t,
          class_of(err, err2));
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    long one = 1;
    err = MPI_Accumulate(&one, 1, MPI_LONG, t, MPI_Aint_add(g, (MPI_Aint)lo * sizeof(long)), 1,
                         MPI_LONG, MPI_SUM, win);
    err2 = MPI_Win_unlock(t, win);
    CHECK(class_of(err, err2) == MPI_ERR_RMA_RANGE, "accumulate in a gap at %d: class %d", t,
          class_of(err, err2));
    /* a strided type whose hole spans the gap touches attached memory only */
    MPI_Datatype ends;
    MPI_Type_vector(2, 2, N - 4, MPI_LONG, &ends);   /* longs 0, 1, N-4, N-3 */
    MPI_Type_commit(&ends);
    long four[4] = { 10 * rank + 1, 10 * rank + 2, 10 * rank + 3, 10 * rank + 4 };
    long back[4] = { 0, 0, 0, 0 };
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    err = MPI_Put(four, 4, MPI_LONG, t, g, 1, ends, win);
    CHECK(err == MPI_SUCCESS, "strided put around a gap at %d: %d", t, err);
    MPI_Win_flush(t, win);
    err = MPI_Get(back, 4, MPI_LONG, t, g, 1, ends, win);
    CHECK(err == MPI_SUCCESS, "strided get around a gap at %d: %d", t, err);
    err2 = MPI_Win_unlock(t, win);
    CHECK(err2 == MPI_SUCCESS, "unlock after strided access around a gap at %d: %d", t, err2);
    for (int i = 0; i < 4; i++)
        CHECK(back[i] == four[i], "target %d: around the gap [%d]=%ld want %ld", t, i, back[i],
              four[i]);
    MPI_Type_free(&ends);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    long *halves = malloc(N * sizeof(long)), *thirds = malloc(N * sizeof(long));
    long *gapped = malloc(N * sizeof(long));
    for (int i = 0; i < N; i++)
        halves[i] = thirds[i] = gapped[i] = -1;
    int lo = (N - GAP) / 2;
    MPI_Win_attach(win, halves + N / 2, N / 2 * sizeof(long));
    MPI_Win_attach(win, halves, N / 2 * sizeof(long));
    MPI_Win_attach(win, thirds + 11, 5 * sizeof(long));
    MPI_Win_attach(win, thirds, 5 * sizeof(long));
    MPI_Win_attach(win, thirds + 5, 6 * sizeof(long));
    MPI_Win_attach(win, gapped, (size_t)lo * sizeof(long));
    MPI_Win_attach(win, gapped + lo + GAP, (size_t)(N - lo - GAP) * sizeof(long));
    MPI_Aint mine[3], *addr = malloc((size_t)size * 3 * sizeof *addr);
    MPI_Get_address(halves, &mine[0]);
    MPI_Get_address(thirds, &mine[1]);
    MPI_Get_address(gapped, &mine[2]);
    MPI_Allgather(mine, 3, MPI_AINT, addr, 3, MPI_AINT, MPI_COMM_WORLD);

    /* one rank at a time works on its right neighbour, then on itself, so
     * the expected contents do not depend on other ranks' timing */
    int right = (rank + 1) % size;
    for (int turn = 0; turn < size; turn++) {
        if (turn == rank) {
            span_ops(win, right, addr[3 * right], addr[3 * right + 1]);
            gap_ops(win, right, addr[3 * right + 2]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int i = 0; i < N; i++)
        halves[i] = thirds[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    span_ops(win, rank, mine[0], mine[1]);
    gap_ops(win, rank, mine[2]);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_detach(win, halves);
    MPI_Win_detach(win, halves + N / 2);
    MPI_Win_detach(win, thirds);
    MPI_Win_detach(win, thirds + 5);
    MPI_Win_detach(win, thirds + 11);
    MPI_Win_detach(win, gapped);
    MPI_Win_detach(win, gapped + lo + GAP);
    MPI_Win_free(&win);
    free(halves);
    free(thirds);
    free(gapped);
    free(addr);
    return mtest_finish();
}
