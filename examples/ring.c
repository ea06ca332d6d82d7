/* ring: a token travels around all ranks `laps` times (default 3); each
 * rank adds one. Build: mpicc ring.c -o ring; run: locusrun -n 4 ./ring */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, laps = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int token = 0;
    double t0 = MPI_Wtime();
    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("token = %d after %d laps of %d ranks (expected %d), %.1f us per hop\n", token,
               laps, size, laps * (size - 1), 1e6 * (MPI_Wtime() - t0) / (laps * size));
    MPI_Finalize();
    return token == laps * (size - 1) || rank != 0 ? 0 : 1;
}
