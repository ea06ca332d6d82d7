/*
 * osu_latency — ping-pong latency in the OSU layout: one-way time
 * (t_end - t_start) * 1e6 / (2 * iterations), sizes 0 B .. 4 MiB,
 * 10000 iterations (100 warm-up) up to 8 KiB, 1000 (10) above.
 */
#include <stdlib.h>

#include <mpi.h>

#include "osu.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    osu_opts_t o = {"osu_latency", "OSU MPI Latency Test", 0, OSU_MAX_SIZE, 10000, 100, 1000, 10,
                    0, 0, 0};
    osu_opts_parse(argc, argv, rank, &o);
    if (np != 2)
        bench_usage_exit(o.prog, rank, "needs exactly 2 ranks (got %d)", np);
    char *sbuf = bench_buf_alloc((size_t)o.max), *rbuf = bench_buf_alloc((size_t)o.max);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const char *const cols[] = {"Latency (us)"}, *const keys[] = {"latency_us"};
    bench_json_t j;
    if (rank == 0)
        osu_head(&o, &j, NULL, 1, cols, keys);
    for (long size = o.min; size <= o.max; size = osu_size_next(size)) {
        long iters, skip;
        osu_loop_counts(&o, size, &iters, &skip);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        int n = (int)size;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        double lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
        if (rank == 0)
            osu_row(&o, &j, size, 1, &lat, keys);
    }
    if (rank == 0)
        osu_tail(&o, &j);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
