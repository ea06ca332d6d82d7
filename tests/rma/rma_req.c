/*
 * Request-based one-sided operations: MPI_Rput, MPI_Rget, MPI_Raccumulate,
 * MPI_Rget_accumulate (and their large-count forms) inside lock_all
 * epochs, completed with MPI_Wait, MPI_Waitall and an MPI_Test loop;
 * values checked; outside a passive-target epoch they are
 * MPI_ERR_RMA_SYNC.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define N 256

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int flavor = 0; flavor < 2; flavor++) {
        double *mem, *own = NULL;
        MPI_Win win;
        if (flavor == 0) {
            own = mem = malloc(2 * N * sizeof(double));
            MPI_Win_create(mem, 2 * N * sizeof(double), sizeof(double), MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate(2 * N * sizeof(double), sizeof(double), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &mem, &win);
        }
        for (int i = 0; i < 2 * N; i++)
            mem[i] = 0;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        double src[N], got[N], old[N];
        for (int i = 0; i < N; i++)
            src[i] = rank + i * 0.5;
        MPI_Barrier(MPI_COMM_WORLD);

        MPI_Win_lock_all(0, win);
        MPI_Request rq[4];
        MPI_Rput(src, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win, &rq[0]);
        MPI_Raccumulate(src, N, MPI_DOUBLE, 0, N, N, MPI_DOUBLE, MPI_SUM, win, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests not freed");
        MPI_Win_flush_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Rget(got, N, MPI_DOUBLE, left, 0, N, MPI_DOUBLE, win, &rq[2]);
        MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
        int ll = (left + size - 1) % size, bad = 0;
        for (int i = 0; i < N; i++)
            bad += got[i] != ll + i * 0.5;
        CHECK(bad == 0, "flavor %d: Rget saw %d wrong values", flavor, bad);
        MPI_Barrier(MPI_COMM_WORLD);
        /* fetch-and-add one to rank 0's second half, by everyone */
        double ones[N];
        for (int i = 0; i < N; i++)
            ones[i] = 1;
        MPI_Rget_accumulate_c(ones, N, MPI_DOUBLE, old, N, MPI_DOUBLE, 0, N, N, MPI_DOUBLE,
                              MPI_SUM, win, &rq[3]);
        int flag = 0;
        double t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 60)
            MPI_Test(&rq[3], &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "Rget_accumulate never completed");
        double base = size * (size - 1) / 2.0;
        CHECK(old[0] >= base && old[0] <= base + size - 1, "fetched %g", old[0]);
        for (int i = 1; i < N; i++)
            CHECK(old[i] - i * 0.5 * size == old[0], "fetched a torn array at %d", i);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < N; i++)
                CHECK(mem[N + i] == base + i * 0.5 * size + size, "accumulated [%d]=%g", i,
                      mem[N + i]);

        /* outside a passive epoch: erroneous */
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        MPI_Request r = MPI_REQUEST_NULL;
        int err = MPI_Rput(src, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win, &r), cls;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_RMA_SYNC, "Rput outside an epoch: class %d", cls);
        MPI_Win_fence(0, win);
        err = MPI_Rget(got, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win, &r);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_RMA_SYNC, "Rget in a fence epoch: class %d", cls);
        MPI_Win_fence(0, win);
        MPI_Win_free(&win);
        free(own);
    }
    return mtest_finish();
}
