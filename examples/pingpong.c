/* pingpong: one-way latency between ranks 0 and 1.
 *   pingpong [iterations=100000] [bytes=8]   (run on 2 ranks) */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 100000, sz = argc > 2 ? atoi(argv[2]) : 8;
    char *buf = calloc(1, (size_t)sz + 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                MPI_Send(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, sz, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, sz, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("%d bytes: %.3f us one-way\n", sz, 1e6 * (MPI_Wtime() - t0) / n / 2);
    }
    MPI_Finalize();
    free(buf);
    return 0;
}
