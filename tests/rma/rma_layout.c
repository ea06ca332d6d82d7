/*
 * Target datatypes of every constructor on a window of user memory (node
 * peers reach it with CMA, or by message under LOCUS_RMA_PATH=msg, both
 * of which need the type's layout as runs): a matrix column spanning 4 MiB,
 * resized columns, C and Fortran subarrays, a struct with pieces out of
 * order, hindexed blocks, a large-count vector, a dup, a darray, padded
 * MPI_SHORT_INT pairs. The reference is the point-to-point engine: a
 * send-receive to oneself with the same types places the data where the
 * put must.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 1024   /* the window is an N x N matrix of ints */

static int rank, size;

/* Puts cnt ints into the right neighbour through (1 x t), gets them back,
 * accumulates them once more; checks the window against the reference. */
static void check_type(MPI_Win win, int *mem, MPI_Datatype t, const char *name)
{
    int tsize;
    MPI_Type_size(t, &tsize);
    int cnt = tsize / (int)sizeof(int);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *src = malloc(cnt * sizeof(int)), *back = malloc(cnt * sizeof(int));
    int *ref = malloc((size_t)N * N * sizeof(int));
    for (int i = 0; i < cnt; i++)
        src[i] = rank * 100000 + i + 1;
    for (size_t i = 0; i < (size_t)N * N; i++)
        mem[i] = ref[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src, cnt, MPI_INT, right, 0, 1, t, win);
    MPI_Win_flush(right, win);
    for (int i = 0; i < cnt; i++)
        back[i] = -7;
    MPI_Get(back, cnt, MPI_INT, right, 0, 1, t, win);
    MPI_Win_unlock(right, win);
    int bad = 0;
    for (int i = 0; i < cnt; i++)
        bad += back[i] != src[i];
    CHECK(bad == 0, "%s: %d of %d values got back wrong", name, bad, cnt);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the reference: the left neighbour's data through the same type */
    int *lsrc = malloc(cnt * sizeof(int));
    for (int i = 0; i < cnt; i++)
        lsrc[i] = left * 100000 + i + 1;
    MPI_Sendrecv(lsrc, cnt, MPI_INT, 0, 5, ref, 1, t, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < (size_t)N * N; i++)
        if (mem[i] != ref[i] && diff++ == 0)
            first = i;
    CHECK(diff == 0, "%s: %zu ints differ from the reference, first at %zu (%d want %d)", name,
          diff, first, mem[first], ref[first]);

    /* an accumulate through the same layout doubles the values */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Accumulate(src, cnt, MPI_INT, right, 0, 1, t, MPI_SUM, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    diff = 0;
    for (size_t i = 0; i < (size_t)N * N; i++) {
        int want = ref[i] == -1 ? -1 : 2 * ref[i];
        diff += mem[i] != want;
    }
    CHECK(diff == 0, "%s: accumulate left %zu ints wrong", name, diff);
    MPI_Barrier(MPI_COMM_WORLD);
    free(src);
    free(back);
    free(ref);
    free(lsrc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *mem = malloc((size_t)N * N * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)N * N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    MPI_Datatype t, t2;

    MPI_Type_vector(N, 1, N, MPI_INT, &t);                       /* a column */
    MPI_Type_commit(&t);
    check_type(win, mem, t, "column");
    MPI_Type_dup(t, &t2);
    MPI_Type_commit(&t2);
    check_type(win, mem, t2, "dup of a column");
    MPI_Type_free(&t2);
    MPI_Datatype col1, cols;
    MPI_Type_create_resized(t, 0, sizeof(int), &col1);          /* columns 0..2 */
    MPI_Type_contiguous(3, col1, &cols);
    MPI_Type_commit(&cols);
    check_type(win, mem, cols, "three resized columns");
    MPI_Type_free(&cols);
    MPI_Type_free(&col1);
    MPI_Type_free(&t);

    int sizes[2] = { N, N }, sub[2] = { 3, 5 }, start[2] = { 7, 11 };
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "C subarray");
    MPI_Type_free(&t);
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "Fortran subarray");
    MPI_Type_free(&t);

    int bl[3] = { 2, 3, 1 };
    MPI_Aint disp[3] = { 0, 4000, 400 };
    MPI_Datatype types[3] = { MPI_INT, MPI_INT, MPI_INT };
    MPI_Type_create_struct(3, bl, disp, types, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "struct out of order");
    MPI_Type_free(&t);

    MPI_Aint hd[4] = { 800, 0, 1600, 40 };
    MPI_Type_create_hindexed_block(4, 2, hd, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "hindexed_block");
    MPI_Type_free(&t);

    MPI_Type_vector_c(10, 2, 100, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "large-count vector");
    MPI_Type_free(&t);

    int gs[2] = { N, N }, dist[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
        darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 64 }, ps[2] = { 2, 2 };
    MPI_Type_create_darray(4, 3, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_type(win, mem, t, "darray");
    MPI_Type_free(&t);

    MPI_Win_free(&win);
    free(mem);

    /* padded pairs: {short; int} with a hole after the short */
    struct si { short s; int i; } *pm, src[8], back[8];
    MPI_Win_allocate(64 * sizeof *pm, sizeof *pm, MPI_INFO_NULL, MPI_COMM_WORLD, &pm, &win);
    memset(pm, 0x55, 64 * sizeof *pm);
    memset(src, 0, sizeof src);
    for (int i = 0; i < 8; i++) {
        src[i].s = (short)(rank * 10 + i);
        src[i].i = rank * 1000 + i;
    }
    MPI_Type_vector(8, 1, 3, MPI_SHORT_INT, &t);
    MPI_Type_commit(&t);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src, 8, MPI_SHORT_INT, right, 2, 1, t, win);
    MPI_Win_flush(right, win);
    memset(back, 0, sizeof back);
    MPI_Get(back, 8, MPI_SHORT_INT, right, 2, 1, t, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++) {
        CHECK(back[i].s == src[i].s && back[i].i == src[i].i, "short_int get [%d]", i);
        CHECK(pm[2 + 3 * i].s == left * 10 + i && pm[2 + 3 * i].i == left * 1000 + i,
              "short_int put [%d]: (%d,%d)", i, pm[2 + 3 * i].s, pm[2 + 3 * i].i);
        CHECK(pm[3 + 3 * i].i == 0x55555555, "short_int put wrote between elements");
    }
    MPI_Type_free(&t);
    MPI_Win_free(&win);
    return mtest_finish();
}
