/*
 * idle_sleep: a rank that yields while it waits sleeps once it has seen no
 * event for LOCUS_IDLE_SLEEP_AFTER_US, so it leaves the CPU to those that
 * work. Rank 1 sleeps a second outside MPI, then sends; rank 0 waits in
 * MPI_Recv and measures the CPU time it used meanwhile.
 *
 * usage: idle_sleep MAX_CPU_SHARE   (run with LOCUS_YIELD=always)
 *   passes when rank 0's CPU time over the wait is at most MAX_CPU_SHARE
 *   of the wait's length (a rank yielding without sleeping takes what the
 *   scheduler gives it, a whole CPU on an idle machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double max_share = argc > 1 ? atof(argv[1]) : 0.25;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "idle_sleep: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int token = 0, errors = 0;
    if (rank == 1) {
        sleep(1);
        token = 42;
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else {
        double wall = seconds(CLOCK_MONOTONIC), cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        wall = seconds(CLOCK_MONOTONIC) - wall;
        cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
        printf("rank 0 waited %.3f s in MPI_Recv using %.3f s of CPU (%.0f%%, at most %.0f%%)\n",
               wall, cpu, 100 * cpu / wall, 100 * max_share);
        if (token != 42) {
            printf("FAIL: received %d, want 42\n", token);
            errors++;
        }
        if (wall < 0.9) {
            printf("FAIL: the wait took %.3f s, less than rank 1's sleep\n", wall);
            errors++;
        }
        if (cpu > max_share * wall) {
            printf("FAIL: the waiting rank used more CPU than it may\n");
            errors++;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && errors == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errors != 0;
}
