/*
 * MPI_Win_allocate_shared + MPI_Win_shared_query: every rank stores into
 * its own segment with plain stores and loads its neighbours' segments
 * through the queried pointers, ordered by MPI_Win_sync and barriers
 * inside a lock_all epoch (the usual MPI-3 shared-memory idiom); the
 * default layout is contiguous across ranks, alloc_shared_noncontig is
 * honoured, MPI_PROC_NULL queries the first non-empty segment, ranks with
 * size 0 take part; one-sided puts into the same memory are seen by loads;
 * MPI_Win_allocate memory can be queried as well (MPI-4.1).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 100

static int rank, size;

static void idiom(int noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    int n = rank == 1 ? 0 : N + rank;   /* rank 1 brings no memory */
    int *mine;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)n * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mine,
                            &win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    int **base = malloc((size_t)size * sizeof *base);
    MPI_Aint *sz = malloc((size_t)size * sizeof *sz);
    for (int r = 0; r < size; r++) {
        int du = 0;
        MPI_Win_shared_query(win, r, &sz[r], &du, &base[r]);
        CHECK(sz[r] == (MPI_Aint)((r == 1 ? 0 : N + r) * sizeof(int)), "rank %d size %ld", r,
              (long)sz[r]);
        CHECK(du == (int)sizeof(int), "rank %d disp unit %d", r, du);
    }
    CHECK(base[rank] == mine, "my queried base %p is not my base %p", (void *)base[rank],
          (void *)mine);
    if (!noncontig)
        for (int r = 0; r + 1 < size; r++)
            CHECK((char *)base[r] + sz[r] == (char *)base[r + 1],
                  "segments of %d and %d are not contiguous", r, r + 1);
    else
        for (int r = 0; r < size; r++)
            CHECK(sz[r] == 0 || (uintptr_t)base[r] % 64 == 0, "noncontig base %d unaligned", r);
    {
        MPI_Aint s0;
        int du0;
        int *b0;
        MPI_Win_shared_query(win, MPI_PROC_NULL, &s0, &du0, &b0);
        CHECK(b0 == base[0] && s0 == sz[0], "MPI_PROC_NULL query is not rank 0's segment");
    }

    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < n; i++)
            mine[i] = rank * 10000 + round * 100 + i % 100;
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
        for (int r = 0; r < size; r++) {
            int rn = r == 1 ? 0 : N + r, bad = 0;
            for (int i = 0; i < rn; i++)
                bad += base[r][i] != r * 10000 + round * 100 + i % 100;
            CHECK(bad == 0, "round %d: %d stale values in rank %d's segment", round, bad, r);
        }
        MPI_Barrier(MPI_COMM_WORLD);   /* nobody overwrites before all have read */
    }
    /* one-sided access to the same memory: a put seen by a load */
    int right = (rank + 1) % size;
    if (right != 1) {
        int v = -rank - 1;
        MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    }
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    int left = (rank + size - 1) % size;
    if (rank != 1)
        CHECK(mine[0] == -left - 1, "put seen as %d want %d", mine[0], -left - 1);
    MPI_Win_unlock_all(win);
    free(base);
    free(sz);
    MPI_Win_free(&win);
}

/* A node-local communicator's window, as codes split one. */
static void split_type(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    double *all;
    MPI_Win win;
    /* the whole array lives in rank 0's segment; the others bring 0 */
    MPI_Win_allocate_shared(nrank == 0 ? nsize * sizeof(double) : 0, sizeof(double),
                            MPI_INFO_NULL, node, &all, &win);
    MPI_Aint s;
    int du;
    MPI_Win_shared_query(win, 0, &s, &du, &all);
    MPI_Win_fence(0, win);
    all[nrank] = nrank + 0.5;
    MPI_Win_fence(0, win);
    double sum = 0;
    for (int i = 0; i < nsize; i++)
        sum += all[i];
    CHECK(sum == nsize * (nsize - 1) / 2.0 + 0.5 * nsize, "shared array sum %g", sum);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

/* MPI-4.1: a window from MPI_Win_allocate can be queried too; Locus puts
 * its memory in shared memory, so node peers get real addresses. */
static void allocate_query(void)
{
    long *mine;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
    MPI_Win_lock_all(0, win);
    mine[0] = 1000 + rank;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    int right = (rank + 1) % size, du;
    MPI_Aint sz;
    long *theirs;
    MPI_Win_shared_query(win, right, &sz, &du, &theirs);
    CHECK(sz == 4 * sizeof(long) && du == sizeof(long) && theirs, "allocate query: %ld %d %p",
          (long)sz, du, (void *)theirs);
    if (theirs)
        CHECK(theirs[0] == 1000 + right, "allocate query: loaded %ld want %d", theirs[0],
              1000 + right);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    idiom(0);
    idiom(1);
    split_type();
    allocate_query();
    return mtest_finish();
}
