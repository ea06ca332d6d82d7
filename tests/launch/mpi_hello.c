/* Built with Debian's MPICH (mpicc.mpich) and Open MPI (mpicc.openmpi) by
 * the launcher tests: proves that a program of another MPI runs under
 * locusrun's PMI-1 (MPICH) or PMIx (Open MPI, --mpi pmix) server, with
 * locusrun's binding. "abort" as argument: rank 1 calls MPI_Abort(3). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("hello rank %d of %d sum %d\n", rank, size, sum);
    cpu_set_t set;
    char cpus[512] = "";
    size_t n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && n + 8 < sizeof cpus; c++)
            if (CPU_ISSET(c, &set))
                n += (size_t)snprintf(cpus + n, sizeof cpus - n, "%s%d", n ? "," : "", c);
    printf("affinity rank %d cpus %s\n", rank, cpus);
    MPI_Finalize();
    return 0;
}
