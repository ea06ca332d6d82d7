/* Under the default MPI_ERRORS_ARE_FATAL a bad rank kills the job: the
 * test script expects a non-zero exit and the error class on stderr. */
#include <stdio.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Send(&v, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
    printf("MPI_Send with a bad rank returned\n");
    MPI_Finalize();
    return 0;
}
