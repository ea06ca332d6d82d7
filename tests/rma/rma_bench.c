/*
 * rma_bench — one-sided latency and bandwidth between rank 0 (origin) and
 * rank 1 (target), OSU style (osu_put_latency & co, "flush" mode: one lock
 * epoch, MPI_Win_flush after each operation or window of operations):
 *
 *   rma_bench [create|allocate] [--max BYTES] [--iters N] [--json FILE]
 *
 * "create" puts the window on memory the program allocated (node peers
 * reach it with CMA), "allocate" on MPI_Win_allocate memory (shared on the
 * node: loads and stores). LOCUS_RMA_PATH=msg measures the message path.
 * The target sits in MPI_Barrier meanwhile. Every result is also checked
 * (the target's memory holds what was put), so the numbers cannot come
 * from a transfer that did not happen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define WINDOW 64   /* puts per flush in the bandwidth test (osu_put_bw) */

static FILE *json;
static int first_row = 1;

static void row(const char *test, size_t size, double usec, double mbps)
{
    if (mbps > 0)
        printf("%-14s %10zu %12.2f %12.2f\n", test, size, usec, mbps);
    else
        printf("%-14s %10zu %12.2f %12s\n", test, size, usec, "-");
    if (json) {
        fprintf(json, "%s\n    {\"test\": \"%s\", \"bytes\": %zu, \"usec\": %.3f, \"MBps\": %.2f}",
                first_row ? "" : ",", test, size, usec, mbps);
        first_row = 0;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *flavor = "allocate", *json_path = NULL;
    size_t max = 1 << 20;
    int iters = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json_path = argv[++i];
        else if (strcmp(argv[i], "create") == 0 || strcmp(argv[i], "allocate") == 0)
            flavor = argv[i];
        else {
            if (rank == 0)
                fprintf(stderr, "rma_bench: unknown argument '%s'\n"
                        "usage: rma_bench [create|allocate] [--max BYTES] [--iters N] "
                        "[--json FILE]\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2 || iters < 1 || max < 1) {
        if (rank == 0)
            fprintf(stderr, "rma_bench: needs 2 ranks, --iters >= 1, --max >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (max < sizeof(long))
        max = sizeof(long);   /* room for the atomics */
    char *mem, *own = NULL, *src = malloc(max), *dst = malloc(max);
    MPI_Win win;
    if (strcmp(flavor, "create") == 0) {
        MPI_Alloc_mem((MPI_Aint)max, MPI_INFO_NULL, &own);
        mem = own;
        MPI_Win_create(mem, (MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    }
    memset(mem, 0, max);
    for (size_t i = 0; i < max; i++)
        src[i] = (char)(i * 7 + 1);
    const char *path = getenv("LOCUS_RMA_PATH");
    if (rank == 0) {
        printf("# Locus one-sided benchmark: window %s, LOCUS_RMA_PATH=%s, %d iterations\n",
               flavor, path && *path ? path : "auto", iters);
        printf("%-14s %10s %12s %12s\n", "# test", "bytes", "usec", "MB/s");
        if (json_path && !(json = fopen(json_path, "w")))
            fprintf(stderr, "rma_bench: cannot write %s\n", json_path);
        if (json)
            fprintf(json, "{\"benchmark\": \"rma\", \"flavor\": \"%s\", \"path\": \"%s\", "
                    "\"iterations\": %d, \"results\": [", flavor, path && *path ? path : "auto",
                    iters);
    }
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t n = 1; n <= max; n *= 4) {
        int it = n > 65536 ? (iters / 10 > 10 ? iters / 10 : 10) : iters;
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            double t = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Put(src, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double put = (MPI_Wtime() - t) / it;
            t = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Get(dst, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double get = (MPI_Wtime() - t) / it;
            bad += memcmp(dst, src, n) != 0;
            t = MPI_Wtime();
            int rounds = it / WINDOW > 0 ? it / WINDOW : 1;
            for (int i = 0; i < rounds; i++) {
                for (int k = 0; k < WINDOW; k++)
                    MPI_Put(src, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double bw = (double)n * WINDOW * rounds / (MPI_Wtime() - t) / 1e6;
            MPI_Win_unlock(1, win);
            row("put_latency", n, put * 1e6, 0);
            row("get_latency", n, get * 1e6, 0);
            row("put_bw", n, 0, bw);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* atomics and lock round trips on the first 8 bytes, which hold the
     * start of the last (largest) put */
    size_t last = 1;
    while (last * 4 <= max)
        last *= 4;
    long one = 1, old = 0, base = 0;
    memcpy(&base, src, last < sizeof base ? last : sizeof base);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
        double fop = (MPI_Wtime() - t) / iters;
        t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Accumulate(&one, 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
        double acc = (MPI_Wtime() - t) / iters;
        MPI_Win_unlock(1, win);
        t = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Win_unlock(1, win);
        }
        double lock = (MPI_Wtime() - t) / iters;
        row("fetch_and_op", sizeof(long), fop * 1e6, 0);
        row("acc_latency", sizeof(long), acc * 1e6, 0);
        row("lock_unlock", 0, lock * 1e6, 0);
        bad += old != base + iters - 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        long v;
        memcpy(&v, mem, sizeof v);
        bad += v != base + 2L * iters;
        if (v != base + 2L * iters)
            fprintf(stderr, "rma_bench: target holds %ld, want %ld\n", v, base + 2L * iters);
    }
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (json) {
            fprintf(json, "\n  ], \"verified\": %s}\n", total ? "false" : "true");
            fclose(json);
        }
        printf("# data %s\n", total ? "WRONG" : "verified");
    }
    MPI_Win_free(&win);
    if (own)
        MPI_Free_mem(own);
    free(src);
    free(dst);
    MPI_Finalize();
    return total ? 1 : 0;
}
