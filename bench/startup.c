/*
 * startup.c — how long an MPI takes to start a job: wall-clock stamps
 * (CLOCK_REALTIME, which every process of this machine, and every node of
 * a cluster with synchronised clocks, reads alike) at main's entry, at the
 * end of MPI_Init, after one MPI_Alltoall of an int (every pair of ranks
 * has talked: connections made lazily are made by then), and at the end of
 * MPI_Finalize. Rank 0 prints the earliest entry and the latest of each
 * other stamp over the ranks:
 *
 *   startup: ranks P main_first T init_done T connected T
 *   startup: finalize_done T          (rank 0's own, after MPI_Finalize)
 *
 * The caller subtracts its own stamp from before it ran the launcher
 * (locus bench startup). Usage: startup [--no-connect]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double t_main = wall();
    int connect = !(argc > 1 && strcmp(argv[1], "--no-connect") == 0);
    MPI_Init(&argc, &argv);
    double t_init = wall();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t_conn = t_init;
    if (connect) {
        int *out = malloc((size_t)size * sizeof *out), *in = malloc((size_t)size * sizeof *in);
        if (!out || !in)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int r = 0; r < size; r++)
            out[r] = rank * size + r;
        MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            if (in[r] != r * size + rank) {
                fprintf(stderr, "startup: rank %d got %d from rank %d, not %d\n", rank, in[r],
                        r, r * size + rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        free(out);
        free(in);
        t_conn = wall();
    }
    /* The earliest entry is the latest of the negated stamps. */
    double mine[3] = { -t_main, t_init, t_conn }, last[3];
    MPI_Reduce(mine, last, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("startup: ranks %d main_first %.6f init_done %.6f connected %.6f\n", size,
               -last[0], last[1], last[2]);
        fflush(stdout);
    }
    MPI_Finalize();
    if (rank == 0) {
        printf("startup: finalize_done %.6f\n", wall());
        fflush(stdout);
    }
    return 0;
}
