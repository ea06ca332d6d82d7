/*
 * osu_mbw_mr — multi-pair bandwidth and message rate in the OSU layout.
 * Ranks 0..P/2-1 each stream windows of 64 messages to rank + P/2 (an odd
 * last rank idles); the rate is pairs * iters * window over the senders'
 * mean time, MB/s is that rate times size / 1e6.
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
    osu_opts_t o = {"osu_mbw_mr", "OSU MPI Multiple Bandwidth / Message Rate Test", 1,
                    OSU_MAX_SIZE, 100, 10, 20, 2, 64, 0, 0};
    osu_opts_parse(argc, argv, rank, &o);
    if (np < 2)
        bench_usage_exit(o.prog, rank, "needs at least 2 ranks (got %d)", np);
    int pairs = np / 2;
    o.pairs = pairs;
    int sender = rank < pairs, active = rank < 2 * pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    char *sbuf = bench_buf_alloc((size_t)o.max), *rbuf = bench_buf_alloc((size_t)o.max);
    MPI_Request *rq = calloc((size_t)o.window, sizeof *rq);
    if (!sbuf || !rbuf || !rq) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const char *const cols[] = {"MB/s", "Messages/s"},
                             *const keys[] = {"bandwidth_mb_s", "messages_per_s"};
    char extra[96];
    snprintf(extra, sizeof extra, "# [ pairs: %d ] [ window size: %ld ]", pairs, o.window);
    bench_json_t j;
    if (rank == 0)
        osu_head(&o, &j, extra, 2, cols, keys);
    for (long size = o.min < 1 ? 1 : o.min; size <= o.max; size = osu_size_next(size)) {
        long iters, skip;
        osu_loop_counts(&o, size, &iters, &skip);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = 0, sum = 0;
        if (active)
            t = osu_stream(sbuf, rbuf, size, o.window, iters, skip, peer, sender, rq);
        double mine = sender ? t : 0;
        MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double rate = (double)pairs * (double)iters * (double)o.window / (sum / pairs);
            double v[2] = {rate * (double)size / 1e6, rate};
            osu_row(&o, &j, size, 2, v, keys);
        }
    }
    if (rank == 0)
        osu_tail(&o, &j);
    free(rq);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
