/*
 * mt_rate — message rate with several threads per rank (MPI_THREAD_MULTIPLE):
 * ranks pair up (r with r + np/2); thread i of each sender streams windows
 * of W messages to thread i of its receiver on a communicator of its own,
 * which acknowledges each window (osu_mbw_mr's pattern, once per thread).
 * For each thread count T: messages/s = pairs * T * iters * W / the
 * slowest thread's time. Whether the rate grows with T says whether the
 * MPI's threads run in parallel, where the cores allow it.
 *
 *   mt_rate [-t T1,T2,...] [-m SIZE] [-i ITERS] [-x WARMUP] [-W WINDOW] [--json]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "osu.h"

#define MT_MAX_THREADS 64
#define MT_MAX_COUNTS 16

typedef struct {
    MPI_Comm comm;
    int peer, sender;
    long size, window, iters, skip;
    pthread_barrier_t *start;
    double secs;
} mt_thread_t;

static void *mt_stream(void *arg)
{
    mt_thread_t *t = arg;
    char *buf = bench_buf_alloc((size_t)t->size * (size_t)t->window);
    MPI_Request *rq = calloc((size_t)t->window, sizeof *rq);
    MPI_Status *st = calloc((size_t)t->window, sizeof *st);
    if (!buf || !rq || !st) {
        fprintf(stderr, "mt_rate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char ack = 0;
    pthread_barrier_wait(t->start);
    double t0 = MPI_Wtime();
    for (long i = 0; i < t->iters + t->skip; i++) {
        if (i == t->skip)
            t0 = MPI_Wtime();
        for (long w = 0; w < t->window; w++) {
            char *b = buf + w * t->size;
            if (t->sender)
                MPI_Isend(b, (int)t->size, MPI_CHAR, t->peer, 1, t->comm, &rq[w]);
            else
                MPI_Irecv(b, (int)t->size, MPI_CHAR, t->peer, 1, t->comm, &rq[w]);
        }
        MPI_Waitall((int)t->window, rq, st);
        if (t->sender)
            MPI_Recv(&ack, 1, MPI_CHAR, t->peer, 2, t->comm, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_CHAR, t->peer, 2, t->comm);
    }
    t->secs = MPI_Wtime() - t0;
    free(buf);
    free(rq);
    free(st);
    return NULL;
}

/* Parses "1,2,4" into counts[]; returns how many, or -1. */
static int parse_counts(const char *s, long *counts)
{
    int n = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (n == MT_MAX_COUNTS || bench_int_parse(tok, &v) || v > MT_MAX_THREADS) {
            n = -1;
            break;
        }
        counts[n++] = v;
    }
    free(copy);
    return n > 0 ? n : -1;
}

int main(int argc, char **argv)
{
    int provided, rank, np;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *prog = "mt_rate";
    long counts[MT_MAX_COUNTS] = {1, 2, 4}, size = 8, iters = 200, skip = 20, window = 64;
    int ncounts = 3, json = 0;
    static const struct option longs[] = {
        {"threads", required_argument, 0, 't'}, {"message-size", required_argument, 0, 'm'},
        {"iterations", required_argument, 0, 'i'}, {"warmup", required_argument, 0, 'x'},
        {"window-size", required_argument, 0, 'W'}, {"json", no_argument, 0, 'j'},
        {0, 0, 0, 0}};
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "t:m:i:x:W:j", longs, NULL)) != -1) {
        switch (c) {
        case 't':
            if ((ncounts = parse_counts(optarg, counts)) < 0)
                bench_usage_exit(prog, rank, "bad -t '%s' (want thread counts 1..%d, a comma list)",
                                 optarg, MT_MAX_THREADS);
            break;
        case 'm':
            if (bench_size_parse(optarg, &size) || size < 1 || size > (1L << 20))
                bench_usage_exit(prog, rank, "bad -m '%s' (want 1 to 1M bytes)", optarg);
            break;
        case 'i':
            if (bench_int_parse(optarg, &iters))
                bench_usage_exit(prog, rank, "bad -i '%s' (want a positive integer)", optarg);
            break;
        case 'x':
            if (bench_count_parse(optarg, &skip))
                bench_usage_exit(prog, rank, "bad -x '%s' (want an integer >= 0)", optarg);
            break;
        case 'W':
            if (bench_int_parse(optarg, &window) || window > 4096)
                bench_usage_exit(prog, rank, "bad -W '%s' (window 1..4096)", optarg);
            break;
        case 'j': json = 1; break;
        default:
            bench_usage_exit(prog, rank, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        bench_usage_exit(prog, rank, "unexpected argument '%s'", argv[optind]);
    if (provided < MPI_THREAD_MULTIPLE)
        bench_usage_exit(prog, rank, "needs MPI_THREAD_MULTIPLE (the MPI granted level %d)",
                         provided);
    if (np < 2 || np % 2)
        bench_usage_exit(prog, rank, "needs an even number of ranks (got %d)", np);

    int pairs = np / 2, sender = rank < pairs, peer = sender ? rank + pairs : rank - pairs;
    osu_opts_t o = {prog, "Locus Multi-threaded Message Rate Test", size, size, iters, skip,
                    iters, skip, window, json, pairs};
    char extra[160];
    snprintf(extra, sizeof extra, "# pairs: %d, window size: %ld, message size: %ld bytes, "
             "one communicator per thread", pairs, window, size);
    static const char *const cols[] = {"Messages/s"}, *const keys[] = {"messages_per_s"};
    bench_json_t j;
    if (rank == 0) {
        if (json)
            osu_head(&o, &j, NULL, 1, cols, keys);
        else
            printf("# %s (locus bench)\n%s\n%-10s%*s\n", o.title, extra, "# Threads",
                   OSU_FIELD_WIDTH, cols[0]);
        fflush(stdout);
    }
    for (int k = 0; k < ncounts; k++) {
        int nt = (int)counts[k];
        mt_thread_t th[MT_MAX_THREADS];
        pthread_t tid[MT_MAX_THREADS];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)nt);
        for (int i = 0; i < nt; i++) {
            th[i] = (mt_thread_t){.peer = peer, .sender = sender, .size = size, .window = window,
                                  .iters = iters, .skip = skip, .start = &start};
            MPI_Comm_dup(MPI_COMM_WORLD, &th[i].comm);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < nt; i++)
            if (pthread_create(&tid[i], NULL, mt_stream, &th[i]) != 0) {
                fprintf(stderr, "%s: cannot start thread %d\n", prog, i);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        double slowest = 0, all = 0;
        for (int i = 0; i < nt; i++) {
            pthread_join(tid[i], NULL);
            if (th[i].secs > slowest)
                slowest = th[i].secs;
            MPI_Comm_free(&th[i].comm);
        }
        pthread_barrier_destroy(&start);
        MPI_Allreduce(&slowest, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double rate = (double)pairs * nt * (double)iters * (double)window / all;
        if (rank == 0)
            osu_row(&o, &j, nt, 1, &rate, keys);
    }
    if (rank == 0)
        osu_tail(&o, &j);
    MPI_Finalize();
    return 0;
}
