/*
 * osu_bibw — bidirectional bandwidth in the OSU layout: both ranks post a
 * window of 64 receives and 64 sends per iteration; MB/s = 2 * size/1e6 *
 * iters * window / t. 100 iterations (10 warm-up) up to 8 KiB, 20 (2) above.
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
    osu_opts_t o = {"osu_bibw", "OSU MPI Bi-Directional Bandwidth Test", 1, OSU_MAX_SIZE, 100, 10, 20, 2, 64, 0, 0};
    osu_opts_parse(argc, argv, rank, &o);
    if (np != 2)
        bench_usage_exit(o.prog, rank, "needs exactly 2 ranks (got %d)", np);
    char *sbuf = bench_buf_alloc((size_t)o.max), *rbuf = bench_buf_alloc((size_t)o.max);
    MPI_Request *rq = calloc(2 * (size_t)o.window, sizeof *rq);
    if (!sbuf || !rbuf || !rq) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const char *const cols[] = {"Bandwidth (MB/s)"}, *const keys[] = {"bandwidth_mb_s"};
    bench_json_t j;
    if (rank == 0)
        osu_head(&o, &j, NULL, 1, cols, keys);
    for (long size = o.min < 1 ? 1 : o.min; size <= o.max; size = osu_size_next(size)) {
        long iters, skip;
        osu_loop_counts(&o, size, &iters, &skip);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = osu_bistream(sbuf, rbuf, size, o.window, iters, skip, 1 - rank, rq);
        double bw = 2.0 * (double)size / 1e6 * (double)iters * (double)o.window / t;
        if (rank == 0)
            osu_row(&o, &j, size, 1, &bw, keys);
    }
    if (rank == 0)
        osu_tail(&o, &j);
    free(rq);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
