/*
 * Post-start-complete-wait with groups: every rank exposes its window to
 * its two ring neighbours and accesses theirs (puts, gets, accumulates),
 * with MPI_Win_wait and with an MPI_Win_test loop (bounded in time);
 * groups built with MPI_Group_incl; empty groups; a star pattern where
 * rank 0 is the target of everyone.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int rank, size;

static MPI_Group neighbours(MPI_Group world, int a, int b)
{
    int r[2] = { a, b };
    MPI_Group g;
    MPI_Group_incl(world, a == b ? 1 : 2, r, &g);
    return g;
}

static void ring(MPI_Win win, int *mem, MPI_Group wgroup, int use_test)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Group g = neighbours(wgroup, left, right);
    for (int i = 0; i < 8; i++)
        mem[i] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < 5; round++) {
        MPI_Win_post(g, 0, win);
        MPI_Win_start(g, 0, win);
        /* slot 0: from the left neighbour, slot 1: from the right one */
        int v = rank * 100 + round;
        MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Put(&v, 1, MPI_INT, left, 1, 1, MPI_INT, win);
        int one = 1;
        MPI_Accumulate(&one, 1, MPI_INT, right, 2, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
        if (use_test) {
            int flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 60)
                MPI_Win_test(win, &flag);
            CHECK(flag, "MPI_Win_test never reported completion");
        } else {
            MPI_Win_wait(win);
        }
        int fromleft = left * 100 + round, fromright = right * 100 + round;
        if (size == 2) /* left == right: both puts come from the one peer */
            fromleft = fromright;
        CHECK(mem[0] == fromleft, "round %d: slot 0 = %d want %d", round, mem[0], fromleft);
        CHECK(mem[1] == fromright, "round %d: slot 1 = %d want %d", round, mem[1], fromright);
        /* one accumulate per round from the left neighbour, from -1 */
        CHECK(mem[2] == round, "round %d: accumulated %d", round, mem[2]);
        /* A get of what the right neighbour holds from its left (me). */
        MPI_Win_post(g, MPI_MODE_NOPUT, win);
        MPI_Win_start(g, 0, win);
        int back = -9;
        MPI_Get(&back, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        int want = rank * 100 + round;
        CHECK(back == want, "round %d: got back %d want %d", round, back, want);
    }
    MPI_Group_free(&g);
}

/* Everyone accesses rank 0; rank 0 exposes to all others. */
static void star(MPI_Win win, int *mem, MPI_Group wgroup)
{
    MPI_Group zero, others;
    int r0 = 0;
    MPI_Group_incl(wgroup, 1, &r0, &zero);
    MPI_Group_excl(wgroup, 1, &r0, &others);
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_post(others, 0, win);
        MPI_Win_wait(win);
        CHECK(mem[3] == size - 1, "star: %d accumulates arrived, want %d", mem[3], size - 1);
    } else {
        MPI_Win_start(zero, 0, win);
        int one = 1;
        MPI_Accumulate(&one, 1, MPI_INT, 0, 3, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
    }
    /* empty groups are allowed and do nothing */
    MPI_Win_post(MPI_GROUP_EMPTY, 0, win);
    MPI_Win_start(MPI_GROUP_EMPTY, 0, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Group_free(&zero);
    MPI_Group_free(&others);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group wgroup;
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    for (int flavor = 0; flavor < 2; flavor++) {
        int *mem, *own = NULL;
        MPI_Win win;
        if (flavor == 0) {
            own = mem = malloc(8 * sizeof(int));
            MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                           &win);
        } else {
            MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                             &win);
        }
        ring(win, mem, wgroup, 0);
        ring(win, mem, wgroup, 1);
        star(win, mem, wgroup);
        MPI_Win_free(&win);
        free(own);
    }
    MPI_Group_free(&wgroup);
    return mtest_finish();
}
