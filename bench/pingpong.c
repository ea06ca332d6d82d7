/*
 * pingpong — the classic least-squares ping-pong (R. Leary, SDSC 1994;
 * MPI version by R. Frost 1995), in C.
 *
 * Rank 0 and rank 1 bounce a message `reps` times for each length; half the
 * mean round trip is the one-way time, and a least-squares line
 * time = a + b * length gives the latency (a) and inverse bandwidth (b).
 * The whole procedure runs `--iter` times (classic: twice, the first acting
 * as a warm-up of the path). Output keeps the classic layout; --json prints
 * one JSON object instead. Ranks above 1 wait in barriers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long, posix_memalign, sched_getcpu under -std=c11 */
#endif
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench_util.h"

typedef struct {
    long start, end, step;   /* message lengths in bytes */
    long reps;               /* round trips per sample (msgspersample) */
    long warmup;             /* untimed round trips before each sample */
    long iter;               /* times the whole procedure runs */
    int json, verbose;
} pp_opts_t;

static void pp_usage(FILE *f)
{
    fprintf(f,
            "usage: pingpong [--start B] [--end B] [--step B] [--reps N] [--warmup N]\n"
            "                [--iter N] [--json] [-v]\n"
            "  lengths start..end by step bytes (default 1000..10000 by 1000; k/M suffixes),\n"
            "  reps round trips per length (default 1000), iter repeats (default 2)\n");
}

static void pp_opts_parse(int argc, char **argv, int rank, pp_opts_t *o)
{
    static const struct option longs[] = {
        {"start", required_argument, 0, 's'}, {"end", required_argument, 0, 'e'},
        {"step", required_argument, 0, 'd'}, {"reps", required_argument, 0, 'r'},
        {"warmup", required_argument, 0, 'w'}, {"iter", required_argument, 0, 'n'},
        {"json", no_argument, 0, 'j'}, {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    *o = (pp_opts_t){1000, 10000, 1000, 1000, 10, 2, 0, 0};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "s:e:d:r:w:n:jvh", longs, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 's': bad = bench_size_parse(optarg, &o->start); break;
        case 'e': bad = bench_size_parse(optarg, &o->end); break;
        case 'd': bad = bench_size_parse(optarg, &o->step) || o->step == 0; break;
        case 'r': bad = bench_int_parse(optarg, &o->reps); break;
        case 'w': bad = bench_count_parse(optarg, &o->warmup); break;
        case 'n': bad = bench_int_parse(optarg, &o->iter); break;
        case 'j': o->json = 1; break;
        case 'v': o->verbose = 1; break;
        case 'h':
            if (rank == 0)
                pp_usage(stdout);
            MPI_Finalize();
            exit(0);
        default:
            bench_usage_exit("pingpong", rank, "unknown option or missing value: %s (try --help)",
                             argv[optind - 1]);
        }
        if (bad)
            bench_usage_exit("pingpong", rank, "bad value '%s' for option -%c", optarg, c);
    }
    if (optind < argc)
        bench_usage_exit("pingpong", rank, "unexpected argument '%s'", argv[optind]);
    if (o->end < o->start)
        bench_usage_exit("pingpong", rank, "--end (%ld) is below --start (%ld)", o->end, o->start);
    if ((o->end - o->start) / o->step + 1 < 2)
        bench_usage_exit("pingpong", rank, "need at least two message lengths for the fit");
    if ((o->end - o->start) / o->step + 1 > 100000)
        bench_usage_exit("pingpong", rank, "too many message lengths (at most 100000)");
}

/* Fortran's e10.5 (the classic clock-resolution line): ".10000E-08". */
static void fortran_e10_5(double v, char *buf, size_t len)
{
    if (v <= 0 || !isfinite(v)) {
        snprintf(buf, len, "%10.3g", v);
        return;
    }
    int e = (int)floor(log10(v)) + 1;
    double m = v / pow(10, e);
    long digits = lround(m * 1e5);
    if (digits >= 100000) {
        digits /= 10;
        e++;
    }
    snprintf(buf, len, ".%05ldE%c%02d", digits % 100000, e < 0 ? '-' : '+', abs(e) % 100);
}

/* One timed sample: returns the one-way time in seconds on rank 0. */
static double pp_sample(char *buf, long len, long reps, long warmup, int rank)
{
    MPI_Status st;
    double t1 = 0, t2 = 0;
    for (long i = -warmup; i < reps; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t1 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(buf, (int)len, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)len, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)len, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Send(buf, (int)len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    t2 = MPI_Wtime();
    return (t2 - t1) * 0.5 / (double)reps;
}

static void pp_print_fit(const pp_opts_t *o, long it, const double *x, const double *y,
                         int n, double a, double b, bench_json_t *j)
{
    if (o->json) {
        bench_json_obj(j, NULL);
        bench_json_int(j, "iter", it);
        bench_json_num(j, "latency_us", a);
        bench_json_num(j, "inv_bandwidth_s_per_mb", b);
        bench_json_num(j, "bandwidth_mb_s", b != 0 ? 1.0 / b : 0);
        bench_json_arr(j, "points");
        for (int i = 0; i < n; i++) {
            bench_json_obj(j, NULL);
            bench_json_num(j, "bytes", x[i]);
            bench_json_num(j, "time_us", y[i] * 1e6);
            bench_json_num(j, "fit_us", a + b * x[i]);
            bench_json_close(j, '}');
        }
        bench_json_close(j, ']');
        bench_json_close(j, '}');
        return;
    }
    printf("\n  iter = %12ld\n\n", it);
    printf("  least squares fit:  time = a + b * (msg length)\n");
    printf("     a = latency = %8.2f microseconds\n", a);
    printf("     b = inverse bandwidth = %8.5f secs/Mbyte\n", b);
    if (b != 0)
        printf("     1/b = bandwidth = %8.2f Mbytes/sec\n", 1.0 / b);
    else
        printf("     1/b = bandwidth = Infinity Mbytes/sec\n");
    printf("\n     message         observed          fitted\n");
    printf("  length(bytes)     time(usec)       time(usec)\n\n");
    for (int i = 0; i < n; i++)
        printf("   %7.0f.     %12.2f     %12.2f\n", x[i], y[i] * 1e6, a + b * x[i]);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pp_opts_t o;
    pp_opts_parse(argc, argv, rank, &o);
    if (size < 2)
        bench_usage_exit("pingpong", rank, "needs at least 2 ranks (got %d)", size);

    int n = (int)((o.end - o.start) / o.step + 1);
    double *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
    char *buf = bench_buf_alloc((size_t)o.end);
    if (!x || !y || !buf) {
        fprintf(stderr, "pingpong: out of memory for %ld-byte buffer\n", o.end);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char lib[256];
    bench_mpi_library(lib, sizeof lib);
    bench_json_t j;
    if (rank == 0) {
        if (o.json) {
            bench_json_begin(&j, stdout);
            bench_json_str(&j, "benchmark", "pingpong");
            bench_json_str(&j, "mpi_library", lib);
            bench_json_int(&j, "ranks", size);
            bench_json_int(&j, "msgspersample", o.reps);
            bench_json_num(&j, "clock_resolution_s", MPI_Wtick());
            bench_json_arr(&j, "iterations");
        } else {
            char tick[64];
            fortran_e10_5(MPI_Wtick(), tick, sizeof tick);
            printf("  MPI pong test\n");
            printf("  samples = %12d\n", n);
            printf("  initsamplesize = %12ld\n", o.start);
            printf("  samplesizeinc = %12ld\n", o.step);
            printf("  msgspersample = %12ld\n", o.reps);
            printf("  ibufcount = %12ld\n", o.end);
            printf(" clock resolution = %s\n", tick);
            printf("  MPI library = %s (lengths in bytes)\n\n", lib);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 1; it <= o.iter; it++) {
        for (int s = 0; s < n; s++) {
            long len = o.start + s * o.step;
            if (o.verbose && rank < 2)
                fprintf(stderr, " PE = %d, iter = %ld, sample = %3d, num = %5ld\n", rank, it,
                        s + 1, len);
            x[s] = (double)len;
            y[s] = pp_sample(buf, len, o.reps, o.warmup, rank);
        }
        if (rank == 0) {
            double a, b;
            if (bench_fit_linear(x, y, n, &a, &b) != 0)
                a = b = 0;
            /* The classic scales by 1e6: a in us, b in us/byte == s/MB. */
            pp_print_fit(&o, it, x, y, n, a * 1e6, b * 1e6, &j);
        }
    }
    if (rank == 0 && o.json) {
        bench_json_close(&j, ']');
        bench_json_end(&j);
    }
    free(x);
    free(y);
    free(buf);
    MPI_Finalize();
    return 0;
}
