/*
 * Dynamic windows: memory attached and detached while the window lives,
 * addresses taken with MPI_Get_address and exchanged, puts / gets /
 * accumulates at those addresses from every rank, more regions than a
 * node peer can see in shared memory (the message fallback), and an
 * access to memory that is not attached: MPI_ERR_RMA_RANGE.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NREG 40   /* more than the 32 regions published for node peers */

static int rank, size;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int phase = 0; phase < 2; phase++) {
        /* phase 0: one region; phase 1: NREG regions, the last one used */
        int nreg = phase ? NREG : 1;
        long *reg[NREG];
        for (int k = 0; k < nreg; k++) {
            reg[k] = calloc(16, sizeof(long));
            MPI_Win_attach(win, reg[k], 16 * sizeof(long));
        }
        long *buf = reg[nreg - 1];
        for (int i = 0; i < 16; i++)
            buf[i] = -1;
        MPI_Aint mine, *addr = malloc((size_t)size * sizeof *addr);
        MPI_Get_address(buf, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);

        MPI_Win_lock_all(0, win);
        long v[4] = { rank, rank + 1, rank + 2, rank + 3 };
        int err = MPI_Put(v, 4, MPI_LONG, right, addr[right], 4, MPI_LONG, win);
        CHECK(err == MPI_SUCCESS, "phase %d: put at an attached address failed: %d", phase, err);
        long one = 1;
        MPI_Accumulate(&one, 1, MPI_LONG, 0, MPI_Aint_add(addr[0], 8 * sizeof(long)), 1,
                       MPI_LONG, MPI_SUM, win);
        err = MPI_Win_flush_all(win);
        CHECK(err == MPI_SUCCESS, "phase %d: flush_all: %d", phase, err);
        MPI_Barrier(MPI_COMM_WORLD);
        long got[4] = { 0, 0, 0, 0 };
        MPI_Get(got, 4, MPI_LONG, left, addr[left], 4, MPI_LONG, win);
        MPI_Win_flush(left, win);
        int ll = (left + size - 1) % size;
        for (int i = 0; i < 4; i++)
            CHECK(got[i] == ll + i, "phase %d: get [%d]=%ld want %d", phase, i, got[i], ll + i);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < 4; i++)
            CHECK(buf[i] == left + i, "phase %d: buf[%d]=%ld want %d", phase, i, buf[i],
                  left + i);
        if (rank == 0)
            CHECK(buf[8] == size - 1, "phase %d: accumulated %ld want %d", phase, buf[8] + 1,
                  size);

        /* An address nobody attached: the error comes at the call (memory
         * path) or at the flush (the target refuses a message). */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
        long stray = 5;
        err = MPI_Put(&stray, 1, MPI_LONG, right, addr[right] + 4096 * 1024, 1, MPI_LONG, win);
        int err2 = MPI_Win_unlock(right, win);
        int cls = MPI_SUCCESS;
        MPI_Error_class(err != MPI_SUCCESS ? err : err2, &cls);
        CHECK(cls == MPI_ERR_RMA_RANGE, "phase %d: put outside attached memory: class %d",
              phase, cls);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < nreg; k++) {
            MPI_Win_detach(win, reg[k]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* detached: the old address is out of the window now */
        MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
        err = MPI_Get(got, 1, MPI_LONG, right, addr[right], 1, MPI_LONG, win);
        err2 = MPI_Win_unlock(right, win);
        MPI_Error_class(err != MPI_SUCCESS ? err : err2, &cls);
        CHECK(cls == MPI_ERR_RMA_RANGE, "phase %d: get from detached memory: class %d", phase,
              cls);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < nreg; k++)
            free(reg[k]);
        free(addr);
    }
    /* attach/detach misuse */
    long x[4];
    MPI_Win_attach(win, x, sizeof x);
    int err = MPI_Win_attach(win, x + 1, sizeof(long)), cls;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_RMA_ATTACH, "overlapping attach: class %d", cls);
    MPI_Win_detach(win, x);
    err = MPI_Win_detach(win, x);
    CHECK(err != MPI_SUCCESS, "detaching twice succeeded");
    MPI_Win_free(&win);
    return mtest_finish();
}
