/*
 * A peer that dies under a launcher that does not end the job (here the
 * minimal PMI server, tests/mpi/mini_pmi.py) is reported to the survivors
 * as an error from the call that waits on it, under MPI_ERRORS_RETURN:
 * the shared-memory barrier and a blocking receive, never a hang.
 * Rank 2 leaves without MPI_Finalize; ranks 0 and 1 then call MPI_Barrier
 * (or MPI_Recv from rank 2) until it fails, at most 30 s, and exit without
 * finalizing (the job cannot fence any more). Needs 3 ranks.
 *   dead_peer barrier|recv
 */
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int use_recv = argc > 1 && strcmp(argv[1], "recv") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);   /* sets up the shared segment on all three */
    if (rank == 2) {
        fflush(stdout);
        _exit(0);
    }
    double t0 = MPI_Wtime();
    int rc = MPI_SUCCESS, calls = 0;
    while (rc == MPI_SUCCESS && MPI_Wtime() - t0 < 30) {
        if (use_recv) {
            int v;
            rc = MPI_Recv(&v, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Barrier(MPI_COMM_WORLD);
        }
        calls++;
    }
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS)
        printf("rank %d: %s failed after %d call(s), %.1f s, class %d: dead peer reported\n",
               rank, use_recv ? "MPI_Recv" : "MPI_Barrier", calls, MPI_Wtime() - t0, cls);
    else
        printf("rank %d: still waiting after 30 s: the dead peer was not reported\n", rank);
    fflush(stdout);
    _exit(rc != MPI_SUCCESS ? 0 : 1);
}
