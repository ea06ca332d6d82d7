/* Options and output shared by the OSU-style programs (see osu.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long, posix_memalign, sched_getcpu under -std=c11 */
#endif
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "osu.h"

void osu_opts_parse(int argc, char **argv, int rank, osu_opts_t *o)
{
    static const struct option longs[] = {
        {"message-size", required_argument, 0, 'm'}, {"iterations", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, 'x'}, {"window-size", required_argument, 0, 'W'},
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "m:i:x:W:jh", longs, NULL)) != -1) {
        long v;
        switch (c) {
        case 'm':
            if (bench_range_parse(optarg, &o->min, &o->max) || o->max > (1L << 30))
                bench_usage_exit(o->prog, rank, "bad -m '%s' (want [MIN:]MAX, at most 1G)", optarg);
            break;
        case 'i':
            if (bench_int_parse(optarg, &v))
                bench_usage_exit(o->prog, rank, "bad -i '%s' (want a positive integer)", optarg);
            o->iters = o->iters_large = v;
            break;
        case 'x':
            if (bench_count_parse(optarg, &v))
                bench_usage_exit(o->prog, rank, "bad -x '%s' (want an integer >= 0)", optarg);
            o->skip = o->skip_large = v;
            break;
        case 'W':
            if (!o->window || bench_int_parse(optarg, &v) || v > 4096)
                bench_usage_exit(o->prog, rank, "bad -W '%s' (window 1..4096, bw programs only)", optarg);
            o->window = v;
            break;
        case 'j': o->json = 1; break;
        case 'h':
            if (rank == 0)
                printf("usage: %s [-m [MIN:]MAX] [-i ITERS] [-x WARMUP]%s [--json]\n", o->prog,
                       o->window ? " [-W WINDOW]" : "");
            MPI_Finalize();
            exit(0);
        default:
            bench_usage_exit(o->prog, rank, "unknown option or missing value: %s (try -h)",
                             argv[optind - 1]);
        }
    }
    if (optind < argc)
        bench_usage_exit(o->prog, rank, "unexpected argument '%s'", argv[optind]);
}

long osu_size_next(long size)
{
    return size ? size * 2 : 1;
}

void osu_loop_counts(const osu_opts_t *o, long size, long *iters, long *skip)
{
    int large = size > OSU_LARGE_MESSAGE_SIZE;
    *iters = large ? o->iters_large : o->iters;
    *skip = large ? o->skip_large : o->skip;
}

void osu_head(const osu_opts_t *o, bench_json_t *j, const char *extra, int ncols,
              const char *const *cols, const char *const *keys)
{
    (void)keys;
    if (o->json) {
        char lib[256];
        bench_mpi_library(lib, sizeof lib);
        bench_json_begin(j, stdout);
        bench_json_str(j, "benchmark", o->prog);
        bench_json_str(j, "mpi_library", lib);
        if (o->window)
            bench_json_int(j, "window", o->window);
        if (o->pairs)
            bench_json_int(j, "pairs", o->pairs);
        bench_json_arr(j, "rows");
        return;
    }
    printf("# %s (locus bench, OMB 5.3 layout)\n", o->title);
    if (extra)
        printf("%s\n", extra);
    printf("%-10s", "# Size");
    for (int i = 0; i < ncols; i++)
        printf("%*s", OSU_FIELD_WIDTH, cols[i]);
    printf("\n");
    fflush(stdout);
}

void osu_row(const osu_opts_t *o, bench_json_t *j, long size, int ncols, const double *v,
             const char *const *keys)
{
    if (o->json) {
        bench_json_obj(j, NULL);
        bench_json_int(j, "bytes", size);
        for (int i = 0; i < ncols; i++)
            bench_json_num(j, keys[i], v[i]);
        bench_json_close(j, '}');
        return;
    }
    printf("%-10ld", size);
    for (int i = 0; i < ncols; i++)
        printf("%*.2f", OSU_FIELD_WIDTH, v[i]);
    printf("\n");
    fflush(stdout);
}

void osu_tail(const osu_opts_t *o, bench_json_t *j)
{
    if (o->json) {
        bench_json_close(j, ']');
        bench_json_end(j);
    }
}

double osu_stream(char *sbuf, char *rbuf, long size, long window, long iters, long skip,
                  int peer, int sender, void *reqs)
{
    MPI_Request *rq = reqs;
    int n = (int)size;
    char ack[4] = {0};
    double t0 = 0;
    /* Real status arrays: GCC flags MPI_STATUSES_IGNORE in MPICH's header. */
    MPI_Status *st = calloc((size_t)window, sizeof *st);
    if (!st)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (sender) {
            for (long w = 0; w < window; w++)
                MPI_Isend(sbuf, n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &rq[w]);
            MPI_Waitall((int)window, rq, st);
            MPI_Recv(ack, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            /* One receive buffer for the whole window, as OMB does: the data
             * is never read, and it keeps 64 x 4 MiB out of memory. */
            for (long w = 0; w < window; w++)
                MPI_Irecv(rbuf, n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &rq[w]);
            MPI_Waitall((int)window, rq, st);
            MPI_Send(ack, 4, MPI_CHAR, peer, 101, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    free(st);
    return t;
}

double osu_bistream(char *sbuf, char *rbuf, long size, long window, long iters, long skip,
                    int peer, void *reqs)
{
    MPI_Request *rq = reqs;
    int n = (int)size;
    double t0 = 0;
    MPI_Status *st = calloc(2 * (size_t)window, sizeof *st);
    if (!st)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        for (long w = 0; w < window; w++)
            MPI_Irecv(rbuf, n, MPI_CHAR, peer, 102, MPI_COMM_WORLD, &rq[w]);
        for (long w = 0; w < window; w++)
            MPI_Isend(sbuf, n, MPI_CHAR, peer, 102, MPI_COMM_WORLD, &rq[window + w]);
        MPI_Waitall((int)(2 * window), rq, st);
    }
    double t = MPI_Wtime() - t0;
    free(st);
    return t;
}
