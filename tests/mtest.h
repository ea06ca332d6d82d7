/*
 * mtest.h — tiny helpers for the MPI tests (MPICH's mtest in spirit):
 * CHECK(cond, ...) counts and prints failures; mtest_finish() gathers the
 * error counts at rank 0 with point-to-point only (no collectives needed)
 * on a private duplicate of MPI_COMM_WORLD,
 * prints " No Errors" or " Found N errors", finalizes and returns the
 * exit status.
 */
#ifndef MTEST_H
#define MTEST_H

#include <stdio.h>

#include <mpi.h>

static int mtest_errs;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            int r_;                                                            \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", r_, __FILE__, \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            mtest_errs++;                                                      \
        }                                                                      \
    } while (0)

static int mtest_finish(void)
{
    int rank, size, total = mtest_errs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* A private communicator: a test's own wildcard receives on WORLD
     * (still posted on a rank that is behind) cannot take these. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int e;
            MPI_Recv(&e, 1, MPI_INT, r, 32000, c, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    } else {
        MPI_Send(&mtest_errs, 1, MPI_INT, 0, 32000, c);
    }
    MPI_Comm_free(&c);
    MPI_Finalize();
    return mtest_errs ? 1 : 0;
}

#endif
