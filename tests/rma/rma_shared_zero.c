/*
 * Windows where some ranks bring no memory: MPI_Win_allocate_shared with
 * size 0 at rank 0 and at the last rank (and, in another window, at every
 * rank), in both layouts, and MPI_Win_allocate / MPI_Win_create with
 * size 0 at the same ranks. MPI_Win_shared_query gives size 0 for them,
 * MPI_PROC_NULL gives the lowest rank with memory (size 0 when none has
 * any); the others' memory works as usual, 0-byte accesses to an empty
 * rank succeed and a 1-byte one fails with MPI_ERR_RMA_RANGE.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mtest.h"

#define N 10

static int rank, size;

/* Ints rank r brings: none at rank 0 and the last rank (all_zero: none
 * anywhere). */
static int count_of(int r, int all_zero)
{
    return all_zero || r == 0 || r == size - 1 ? 0 : N + r;
}

static void check_query(MPI_Win win, int all_zero, int noncontig, const char *what)
{
    int first = -1;   /* lowest rank with memory */
    int **base = malloc((size_t)size * sizeof *base);
    for (int r = size - 1; r >= 0; r--)
        if (count_of(r, all_zero) > 0)
            first = r;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz = -1;
        int du = 0;
        int err = MPI_Win_shared_query(win, r, &sz, &du, &base[r]);
        CHECK(err == MPI_SUCCESS, "%s: query of %d: %d", what, r, err);
        CHECK(sz == (MPI_Aint)(count_of(r, all_zero) * sizeof(int)), "%s: rank %d size %ld",
              what, r, (long)sz);
        CHECK(du == (int)sizeof(int), "%s: rank %d disp unit %d", what, r, du);
        CHECK(sz == 0 || (noncontig ? (uintptr_t)base[r] % 64 == 0 : (uintptr_t)base[r] %
                                                                        sizeof(int) == 0),
              "%s: rank %d base %p misaligned", what, r, (void *)base[r]);
    }
    /* the default layout is one array: the next rank starts where one ends */
    for (int r = 0; r + 1 < size && !noncontig; r++)
        if (count_of(r, all_zero) > 0 && base[r + 1] && count_of(r + 1, all_zero) > 0)
            CHECK(base[r] + count_of(r, all_zero) == base[r + 1],
                  "%s: segments %d and %d not contiguous", what, r, r + 1);
    MPI_Aint sz = -1;
    int du = 0, *b = NULL;
    int err = MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &b);
    CHECK(err == MPI_SUCCESS, "%s: MPI_PROC_NULL query: %d", what, err);
    if (first >= 0)
        CHECK(b == base[first] && sz == (MPI_Aint)(count_of(first, all_zero) * sizeof(int)),
              "%s: MPI_PROC_NULL query gave %p/%ld, not rank %d's segment", what, (void *)b,
              (long)sz, first);
    else
        CHECK(sz == 0, "%s: MPI_PROC_NULL query of an empty window: size %ld", what, (long)sz);
    free(base);
}

/* Every rank puts its number into each non-empty neighbour and reads it
 * back; 0-byte accesses to empty ranks succeed, 1-byte ones do not. */
static void touch_all(MPI_Win win, int *mine, int all_zero, const char *what)
{
    int n = count_of(rank, all_zero);
    for (int i = 0; i < n; i++)
        mine[i] = -1;
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++) {
        int v = rank, err;
        if (count_of(t, all_zero) > rank) {
            err = MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win);
            CHECK(err == MPI_SUCCESS, "%s: put to %d: %d", what, t, err);
        } else if (count_of(t, all_zero) == 0) {
            err = MPI_Put(&v, 0, MPI_INT, t, 0, 0, MPI_INT, win);
            CHECK(err == MPI_SUCCESS, "%s: 0-byte put to empty %d: %d", what, t, err);
            err = MPI_Get(&v, 0, MPI_INT, t, 0, 0, MPI_INT, win);
            CHECK(err == MPI_SUCCESS, "%s: 0-byte get from empty %d: %d", what, t, err);
            err = MPI_Put(&v, 1, MPI_BYTE, t, 0, 1, MPI_BYTE, win);
            int cls = MPI_SUCCESS;
            MPI_Error_class(err, &cls);
            CHECK(cls == MPI_ERR_RMA_RANGE, "%s: 1-byte put to empty %d: class %d", what, t,
                  cls);
        }
    }
    MPI_Win_fence(0, win);
    for (int i = 0; i < n && i < size; i++)
        CHECK(mine[i] == i, "%s: [%d]=%d want %d", what, i, mine[i], i);
    MPI_Win_fence(0, win);
}

static void shared(int all_zero, int noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    int *mine = NULL;
    MPI_Win win;
    int err = MPI_Win_allocate_shared((MPI_Aint)count_of(rank, all_zero) * sizeof(int),
                                      sizeof(int), info, MPI_COMM_WORLD, &mine, &win);
    CHECK(err == MPI_SUCCESS, "allocate_shared (all_zero %d noncontig %d): %d", all_zero,
          noncontig, err);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (err != MPI_SUCCESS)
        return;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    const char *what = noncontig ? "shared noncontig" : "shared";
    check_query(win, all_zero, noncontig, what);
    touch_all(win, mine, all_zero, what);
    MPI_Win_free(&win);
}

static void allocate(int all_zero)
{
    int *mine = NULL;
    MPI_Win win;
    int err = MPI_Win_allocate((MPI_Aint)count_of(rank, all_zero) * sizeof(int), sizeof(int),
                               MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    CHECK(err == MPI_SUCCESS, "allocate (all_zero %d): %d", all_zero, err);
    if (err != MPI_SUCCESS)
        return;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    void *b = NULL;
    MPI_Aint *sz = NULL;
    int flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag);
    CHECK(flag && *sz == (MPI_Aint)(count_of(rank, all_zero) * sizeof(int)),
          "allocate: MPI_WIN_SIZE %ld", flag ? (long)*sz : -1L);
    MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag);
    CHECK(flag && b == mine, "allocate: MPI_WIN_BASE %p is not the memory %p", b, (void *)mine);
    touch_all(win, mine, all_zero, "allocate");
    MPI_Win_free(&win);
}

static void create(int all_zero)
{
    int n = count_of(rank, all_zero);
    int *mine = n ? malloc((size_t)n * sizeof(int)) : NULL;
    MPI_Win win;
    int err = MPI_Win_create(mine, (MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win);
    CHECK(err == MPI_SUCCESS, "create (all_zero %d): %d", all_zero, err);
    if (err == MPI_SUCCESS) {
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        touch_all(win, mine, all_zero, "create");
        MPI_Win_free(&win);
    }
    free(mine);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int all_zero = 0; all_zero < 2; all_zero++) {
        shared(all_zero, 0);
        shared(all_zero, 1);
        allocate(all_zero);
        create(all_zero);
    }
    return mtest_finish();
}
