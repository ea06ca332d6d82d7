/*
 * stream — McCalpin's STREAM (copy, scale, add, triad) as an MPI program with
 * OpenMP threads, in STREAM 5.10's layout.
 *
 * Every rank runs the kernels on its own arrays at the same time (a barrier
 * before each kernel); rates add up over ranks. Each rank reports the CPU it
 * runs on and the NUMA node its array pages sit on, so a run placed with
 * `locusrun -n 1 --bind-to core --mem-on N ./stream` shows local against
 * remote memory. Arrays are first touched by the threads that use them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long, posix_memalign, sched_getcpu under -std=c11 */
#endif
#include <float.h>
#include <glob.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mpi.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"

#define ST_KERNELS 4
#define ST_INFO_LEN 160

typedef struct {
    long n, ntimes;
    int json;
} st_opts_t;

static void st_opts_parse(int argc, char **argv, int rank, st_opts_t *o)
{
    o->n = 10000000;
    o->ntimes = 10;
    o->json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--json") || !strcmp(a, "-json")) {
            o->json = 1;
        } else if ((!strcmp(a, "-n") || !strcmp(a, "--size")) && has) {
            if (bench_size_parse(argv[++i], &o->n) || o->n < 1000)
                bench_usage_exit("stream", rank, "bad array size '%s' (elements, >= 1000; k/M ok)", argv[i]);
        } else if ((!strcmp(a, "-t") || !strcmp(a, "--ntimes")) && has) {
            if (bench_int_parse(argv[++i], &o->ntimes) || o->ntimes < 2)
                bench_usage_exit("stream", rank, "bad --ntimes '%s' (want >= 2)", argv[i]);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            if (rank == 0)
                printf("usage: stream [-n ELEMENTS] [-t NTIMES] [--json]\n"
                       "  arrays of ELEMENTS doubles per rank (default 10M), NTIMES runs (default 10)\n");
            MPI_Finalize();
            exit(0);
        } else {
            bench_usage_exit("stream", rank, "unknown option or missing value: %s (try --help)", a);
        }
    }
}

/* NUMA node of a CPU, from sysfs; -1 when unknown. */
static int st_cpu_node(int cpu)
{
    char pat[96];
    snprintf(pat, sizeof pat, "/sys/devices/system/cpu/cpu%d/node*", cpu);
    glob_t g;
    int node = -1;
    if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        const char *p = strrchr(g.gl_pathv[0], 'e');
        node = p ? atoi(p + 1) : -1;
    }
    globfree(&g);
    return node;
}

/* Where the array pages are: "node 0", "nodes 0,1 (mixed)" or "unknown". */
static void st_pages_where(const double *arr, long n, char *buf, size_t len)
{
    enum { SAMPLES = 64 };
    void *pages[SAMPLES];
    int status[SAMPLES];
    long bytes = n * (long)sizeof(double), step = bytes / SAMPLES;
    for (int i = 0; i < SAMPLES; i++)
        pages[i] = (char *)arr + i * step;
    /* move_pages with no target nodes only reports where each page is. */
    if (syscall(SYS_move_pages, 0, SAMPLES, pages, NULL, status, 0) != 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    unsigned long seen = 0;
    for (int i = 0; i < SAMPLES; i++)
        if (status[i] >= 0 && status[i] < 64)
            seen |= 1UL << status[i];
    if (!seen) {
        snprintf(buf, len, "unknown");
        return;
    }
    size_t off = 0;
    int count = __builtin_popcountl(seen), first = 1;
    off += (size_t)snprintf(buf + off, len - off, count > 1 ? "nodes " : "node ");
    for (int b = 0; b < 64 && off < len; b++) {
        if (!(seen & (1UL << b)))
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%d", first ? "" : ",", b);
        first = 0;
    }
    if (count > 1 && off < len)
        snprintf(buf + off, len - off, " (mixed)");
}

/* STREAM's check: replays the kernels on scalars. Returns 0 when valid. */
static int st_validate(const double *a, const double *b, const double *c, long n, long ntimes)
{
    double aj = 1.0, bj = 2.0, cj = 0.0, scalar = 3.0;
    aj = 2.0 * aj;
    for (long k = 0; k < ntimes; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    double ea = 0, eb = 0, ec = 0;
    for (long j = 0; j < n; j++) {
        ea += fabs(a[j] - aj);
        eb += fabs(b[j] - bj);
        ec += fabs(c[j] - cj);
    }
    double eps = 1e-13;
    return (ea / n / fabs(aj) > eps || eb / n / fabs(bj) > eps || ec / n / fabs(cj) > eps) ? -1 : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    st_opts_t o;
    st_opts_parse(argc, argv, rank, &o);
    long n = o.n;
    double *a = NULL, *b = NULL, *c = NULL;
    size_t bytes = (size_t)n * sizeof(double);
    if (posix_memalign((void **)&a, 4096, bytes) || posix_memalign((void **)&b, 4096, bytes) ||
        posix_memalign((void **)&c, 4096, bytes)) {
        fprintf(stderr, "stream: out of memory for 3 x %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int threads = 1;
#pragma omp parallel
    {
#ifdef _OPENMP
#pragma omp master
        threads = omp_get_num_threads();
#endif
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++) {
        a[j] = 1.0;
        b[j] = 2.0;
        c[j] = 0.0;
    }
#pragma omp parallel for schedule(static)
    for (long j = 0; j < n; j++)
        a[j] = 2.0 * a[j];

    double scalar = 3.0;
    double *t = calloc((size_t)(ST_KERNELS * o.ntimes), sizeof *t);
    double *tmax = calloc((size_t)(ST_KERNELS * o.ntimes), sizeof *tmax);
    for (long k = 0; k < o.ntimes; k++) {
        double t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            c[j] = a[j];
        t[0 * o.ntimes + k] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            b[j] = scalar * c[j];
        t[1 * o.ntimes + k] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            c[j] = a[j] + b[j];
        t[2 * o.ntimes + k] = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
#pragma omp parallel for schedule(static)
        for (long j = 0; j < n; j++)
            a[j] = b[j] + scalar * c[j];
        t[3 * o.ntimes + k] = MPI_Wtime() - t0;
    }
    /* Ranks run each kernel together; the slowest one sets the pace. */
    MPI_Reduce(t, tmax, ST_KERNELS * (int)o.ntimes, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int bad = st_validate(a, b, c, n, o.ntimes), anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);

    char info[ST_INFO_LEN], where[96], *all = NULL;
    int cpu = sched_getcpu();
    st_pages_where(a, n, where, sizeof where);
    snprintf(info, sizeof info, "Rank %d: cpu %d (NUMA node %d), %d threads, arrays on %s", rank,
             cpu, st_cpu_node(cpu), threads, where);
    if (rank == 0)
        all = calloc((size_t)np, ST_INFO_LEN);
    MPI_Gather(info, ST_INFO_LEN, MPI_CHAR, all, ST_INFO_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        static const char *label[ST_KERNELS] = {"Copy:      ", "Scale:     ", "Add:       ",
                                                "Triad:     "};
        static const char *key[ST_KERNELS] = {"copy", "scale", "add", "triad"};
        static const double words[ST_KERNELS] = {2, 2, 3, 3};
        double best[ST_KERNELS], avg[ST_KERNELS], mn[ST_KERNELS], mx[ST_KERNELS];
        for (int q = 0; q < ST_KERNELS; q++) {
            mn[q] = FLT_MAX;
            mx[q] = avg[q] = 0;
            for (long k = 1; k < o.ntimes; k++) { /* the first run is a warm-up */
                double v = tmax[q * o.ntimes + k];
                avg[q] += v;
                mn[q] = v < mn[q] ? v : mn[q];
                mx[q] = v > mx[q] ? v : mx[q];
            }
            avg[q] /= (double)(o.ntimes - 1);
            best[q] = 1e-6 * words[q] * (double)bytes * np / mn[q];
        }
        const char *hr = "-------------------------------------------------------------";
        if (o.json) {
            bench_json_t j;
            char lib[256];
            bench_mpi_library(lib, sizeof lib);
            bench_json_begin(&j, stdout);
            bench_json_str(&j, "benchmark", "stream");
            bench_json_str(&j, "mpi_library", lib);
            bench_json_int(&j, "ranks", np);
            bench_json_int(&j, "threads_per_rank", threads);
            bench_json_int(&j, "array_elements", n);
            bench_json_int(&j, "ntimes", o.ntimes);
            bench_json_str(&j, "validates", anybad ? "no" : "yes");
            bench_json_arr(&j, "placement");
            for (int r = 0; r < np; r++)
                bench_json_str(&j, NULL, all + (size_t)r * ST_INFO_LEN);
            bench_json_close(&j, ']');
            bench_json_arr(&j, "rows");
            for (int q = 0; q < ST_KERNELS; q++) {
                bench_json_obj(&j, NULL);
                bench_json_str(&j, "function", key[q]);
                bench_json_num(&j, "best_rate_mb_s", best[q]);
                bench_json_num(&j, "avg_time_s", avg[q]);
                bench_json_num(&j, "min_time_s", mn[q]);
                bench_json_num(&j, "max_time_s", mx[q]);
                bench_json_close(&j, '}');
            }
            bench_json_close(&j, ']');
            bench_json_end(&j);
        } else {
            printf("%s\nSTREAM (locus bench, STREAM 5.10 layout)\n%s\n", hr, hr);
            printf("This system uses 8 bytes per array element.\n%s\n", hr);
            printf("Array size = %ld (elements), Offset = 0 (elements)\n", n);
            printf("Memory per array = %.1f MiB (= %.1f GiB).\n", bytes / 1048576.0,
                   bytes / 1073741824.0);
            printf("Total memory required = %.1f MiB (= %.1f GiB).\n", 3.0 * bytes / 1048576.0,
                   3.0 * bytes / 1073741824.0);
            printf("Each kernel will be executed %ld times.\n", o.ntimes);
            printf(" The *best* time for each kernel (excluding the first iteration)\n");
            printf(" will be used to compute the reported bandwidth.\n%s\n", hr);
            printf("MPI ranks = %d (rates are summed over ranks)\n", np);
            printf("Number of Threads requested = %d\n", threads);
            for (int r = 0; r < np; r++)
                printf("%s\n", all + (size_t)r * ST_INFO_LEN);
            printf("%s\nFunction    Best Rate MB/s  Avg time     Min time     Max time\n", hr);
            for (int q = 0; q < ST_KERNELS; q++)
                printf("%s%12.1f  %11.6f  %11.6f  %11.6f\n", label[q], best[q], avg[q], mn[q], mx[q]);
            printf("%s\n", hr);
            if (anybad)
                printf("Failed Validation on at least one rank\n");
            else
                printf("Solution Validates: avg error less than %e on all three arrays\n", 1e-13);
            printf("%s\n", hr);
        }
    }
    free(all);
    free(t);
    free(tmax);
    free(a);
    free(b);
    free(c);
    MPI_Finalize();
    return anybad && rank == 0 ? 1 : 0;
}
