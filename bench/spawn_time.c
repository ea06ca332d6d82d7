/*
 * spawn_time — what MPI_Comm_spawn costs: the parents spawn N copies of
 * this program, the root exchanges an 8-byte round trip with every child,
 * and both sides disconnect; repeated R times. Prints, per repetition's
 * median, the time MPI_Comm_spawn took (until the children's
 * MPI_Init connected them), the round trips, and the whole cycle (spawn,
 * round trips, disconnect), in milliseconds at the root.
 *
 *   spawn_time [-n CHILDREN] [-r REPEATS] [--json]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void child(MPI_Comm parent)
{
    long ping;
    MPI_Recv(&ping, 1, MPI_LONG, 0, 1, parent, MPI_STATUS_IGNORE);
    MPI_Send(&ping, 1, MPI_LONG, 0, 2, parent);
    MPI_Comm_disconnect(&parent);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        child(parent);
        MPI_Finalize();
        return 0;
    }
    int n = 2, reps = 5, json = 0;
    static const struct option longopts[] = { { "json", no_argument, NULL, 'j' },
                                              { NULL, 0, NULL, 0 } };
    for (int c; (c = getopt_long(argc, argv, "n:r:", longopts, NULL)) != -1;) {
        if (c == 'n')
            n = atoi(optarg);
        else if (c == 'r')
            reps = atoi(optarg);
        else if (c == 'j')
            json = 1;
        else {
            fprintf(stderr, "usage: spawn_time [-n CHILDREN] [-r REPEATS] [--json]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (n < 1 || n > 1024 || reps < 1 || reps > 1000) {
        fprintf(stderr, "spawn_time: -n 1..1024 and -r 1..1000\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *sp = calloc((size_t)reps, sizeof *sp), *rt = calloc((size_t)reps, sizeof *rt),
           *all = calloc((size_t)reps, sizeof *all);
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
        double t1 = MPI_Wtime();
        for (int c = 0; rank == 0 && c < n; c++) {
            long ping = c, pong = -1;
            MPI_Send(&ping, 1, MPI_LONG, c, 1, inter);
            MPI_Recv(&pong, 1, MPI_LONG, c, 2, inter, MPI_STATUS_IGNORE);
            if (pong != ping) {
                fprintf(stderr, "spawn_time: child %d answered %ld\n", c, pong);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        double t2 = MPI_Wtime();
        MPI_Comm_disconnect(&inter);
        double t3 = MPI_Wtime();
        sp[r] = (t1 - t0) * 1e3;
        rt[r] = (t2 - t1) * 1e3;
        all[r] = (t3 - t0) * 1e3;
    }
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        double msp = median(sp, reps), mrt = median(rt, reps), mall = median(all, reps);
        if (json)
            printf("{\"bench\": \"spawn_time\", \"children\": %d, \"repeats\": %d, "
                   "\"spawn_ms\": %.3f, \"round_trips_ms\": %.3f, \"cycle_ms\": %.3f, "
                   "\"library\": \"%.60s\"}\n", n, reps, msp, mrt, mall, lib);
        else
            printf("# spawn_time: %d children, median of %d\n# %.60s\n"
                   "spawn %.3f ms  round trips %.3f ms  cycle %.3f ms\n", n, reps, lib, msp,
                   mrt, mall);
    }
    free(sp);
    free(rt);
    free(all);
    MPI_Finalize();
    return 0;
}
