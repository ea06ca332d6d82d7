/*
 * auth_pingpong SECONDS [GOFILE] [--scan] — the MPI job that
 * tests/tcp/auth_stranger.py attacks: two ranks connect (a warm-up), rank
 * 0 prints "ready", waits (progressing, so its listener stays served)
 * until GOFILE exists, then the ranks ping-pong 8-byte messages for
 * SECONDS, each checked, and rank 0 prints the round trips' median, mean,
 * 99th percentile and maximum in microseconds. --scan: every rank checks
 * that its LOCUS_JOB_KEY is locusrun's (64 hex digits) and that no
 * process's command line shows it (ps would).
 */
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int errs;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Whether any process's command line holds `key`. */
static int key_on_a_command_line(const char *key)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    size_t klen = strlen(key);
    while (d && (e = readdir(d)) && !found) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[65536];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (size_t i = 0; i + klen <= n && !found; i++)
            found = memcmp(buf + i, key, klen) == 0;
    }
    if (d)
        closedir(d);
    return found;
}

static void scan(int rank)
{
    const char *key = getenv("LOCUS_JOB_KEY");
    if (!key || strlen(key) != 64 || strspn(key, "0123456789abcdef") != 64) {
        printf("rank %d: LOCUS_JOB_KEY is not locusrun's random key\n", rank);
        errs++;
        return;
    }
    if (key_on_a_command_line(key)) {
        printf("rank %d: the job key is on a command line\n", rank);
        errs++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    const char *go = argc > 2 && strcmp(argv[2], "--scan") != 0 ? argv[2] : NULL;
    if (argc > 1 && strcmp(argv[argc - 1], "--scan") == 0)
        scan(rank);
    if (size != 2) {
        if (rank == 0)
            printf("needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - rank;
    int64_t v = 0, w = 0;
    for (int i = 0; i < 100; i++) { /* connections made, paths warm */
        if (rank == 0) {
            MPI_Send(&v, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
        double t0 = MPI_Wtime();
        int flag;
        while (go && access(go, F_OK) != 0 && MPI_Wtime() - t0 < 60) {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
    }
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    while (!done)
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);

    size_t cap = 4000000, n = 0;
    double *rt = rank == 0 ? malloc(cap * sizeof *rt) : NULL;
    double start = MPI_Wtime();
    for (int64_t i = 1;; i++) {
        if (rank == 0) {
            v = MPI_Wtime() - start < secs && n < cap ? i : -1;
            double t = MPI_Wtime();
            MPI_Send(&v, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (w != v) {
                errs++;
                break;
            }
            if (v < 0)
                break;
            rt[n++] = MPI_Wtime() - t;
        } else {
            MPI_Recv(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (w != i && w != -1)
                errs++;
            MPI_Send(&w, 1, MPI_INT64_T, peer, 0, MPI_COMM_WORLD);
            if (w < 0)
                break;
        }
    }
    if (rank == 0 && n > 0) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += rt[i];
        qsort(rt, n, sizeof *rt, cmp_double);
        printf("latency: %zu round trips: median %.2f us mean %.2f us p99 %.2f us max %.2f us\n",
               n, rt[n / 2] * 1e6, sum / (double)n * 1e6, rt[n * 99 / 100] * 1e6,
               rt[n - 1] * 1e6);
    }
    free(rt);
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
