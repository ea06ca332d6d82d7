/*
 * imb — IMB-MPI1 style benchmarks in one program, benchmark names as
 * arguments (PingPong PingPing Sendrecv Exchange Barrier Bcast Allreduce
 * Reduce Allgather Alltoall; none = all).
 *
 * Keeps IMB's columns (13-character fields), units (usec, 10^6 bytes/s),
 * repetition rule (1000 up to 32 KiB, then 40 MiB / size, at least 1, cut by
 * a 1-iteration probe so a sample stays under -time seconds, never rising
 * with size) and process-group stepping (npmin, 2*npmin, ..., all ranks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt_long, posix_memalign, sched_getcpu under -std=c11 */
#endif
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench_util.h"
#include "imb.h"

#define IMB_MSGSPERSAMPLE 1000
#define IMB_OVERALL_VOL (40L << 20)
#define IMB_SECS_PER_SAMPLE 10.0
#define IMB_WARMUP_PERCENT 10
#define IMB_MIN_WARMUP 10
#define IMB_MAX_BENCHES 32

typedef struct {
    int minlog, maxlog;
    long msgspersample, overall_vol;
    double secs;
    int npmin;
    int json;
    int nbench;
    const imb_bench_t *bench[IMB_MAX_BENCHES];
} imb_opts_t;

/* Statistics of one size over the group, valid on the group's rank 0. */
typedef struct {
    long bytes, reps;
    double tmin, tmax, tavg, mbps;
} imb_row_t;

static void imb_usage(FILE *f)
{
    fprintf(f,
            "usage: imb [-msglog [MIN:]MAX] [-iter N[,VOL]] [-time SECS] [-npmin N] [-json]\n"
            "           [BENCHMARK ...]\n"
            "  sizes 0 and 2^MIN..2^MAX bytes (default 0..22); N repetitions (default 1000,\n"
            "  VOL bytes per sample cap, default 40M); -time caps a sample (default 10 s)\n"
            "  benchmarks:");
    int n;
    const imb_bench_t *t = imb_benches(&n);
    for (int i = 0; i < n; i++)
        fprintf(f, " %s", t[i].name);
    fputc('\n', f);
}

static void imb_opts_parse(int argc, char **argv, int rank, imb_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->maxlog = 22;
    o->msgspersample = IMB_MSGSPERSAMPLE;
    o->overall_vol = IMB_OVERALL_VOL;
    o->secs = IMB_SECS_PER_SAMPLE;
    o->npmin = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        while (a[0] == '-' && a[1] == '-')
            a++;
        int has_val = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "-help")) {
            if (rank == 0)
                imb_usage(stdout);
            MPI_Finalize();
            exit(0);
        } else if (!strcmp(a, "-json")) {
            o->json = 1;
        } else if (!strcmp(a, "-msglog") && has_val) {
            long lo = 0, hi = 0;
            const char *v = argv[++i];
            if (bench_range_parse(v, &lo, &hi) || hi > 30)
                bench_usage_exit("imb", rank, "bad -msglog '%s' (want MAX or MIN:MAX, MAX <= 30)", v);
            o->minlog = strchr(v, ':') ? (int)lo : 0;
            o->maxlog = (int)hi;
        } else if (!strcmp(a, "-iter") && has_val) {
            const char *v = argv[++i];
            char head[64];
            snprintf(head, sizeof head, "%s", v);
            char *comma = strchr(head, ',');
            if (comma)
                *comma++ = '\0';
            if (bench_int_parse(head, &o->msgspersample) ||
                (comma && bench_size_parse(comma, &o->overall_vol)) || o->overall_vol == 0)
                bench_usage_exit("imb", rank, "bad -iter '%s' (want N or N,VOLUME)", v);
        } else if (!strcmp(a, "-time") && has_val) {
            char *end;
            const char *v = argv[++i];
            o->secs = strtod(v, &end);
            if (*end || !(o->secs > 0))
                bench_usage_exit("imb", rank, "bad -time '%s' (want seconds > 0)", v);
        } else if (!strcmp(a, "-npmin") && has_val) {
            long n;
            const char *v = argv[++i];
            if (bench_int_parse(v, &n))
                bench_usage_exit("imb", rank, "bad -npmin '%s'", v);
            o->npmin = (int)n;
        } else if (a[0] == '-') {
            bench_usage_exit("imb", rank, "unknown option or missing value: %s (try -help)", argv[i]);
        } else {
            const imb_bench_t *b = imb_bench_find(a);
            if (!b)
                bench_usage_exit("imb", rank, "unknown benchmark '%s' (try -help)", a);
            if (o->nbench == IMB_MAX_BENCHES)
                bench_usage_exit("imb", rank, "too many benchmark names");
            o->bench[o->nbench++] = b;
        }
    }
    if (o->nbench == 0) {
        int n;
        const imb_bench_t *t = imb_benches(&n);
        for (int i = 0; i < n; i++)
            o->bench[o->nbench++] = &t[i];
    }
}

static void imb_header_print(const imb_opts_t *o, int argc, char **argv)
{
    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char date[64], lib[256];
    strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y", localtime(&now));
    bench_mpi_library(lib, sizeof lib);
    int ver, sub;
    MPI_Get_version(&ver, &sub);
    const char *rule = "#----------------------------------------------------------------";
    printf("%s\n#    Locus MPI Benchmarks (IMB-MPI1 layout), MPI-1 part\n%s\n", rule, rule);
    printf("# Date                  : %s\n# Machine               : %s\n", date, u.machine);
    printf("# System                : %s\n# Release               : %s\n", u.sysname, u.release);
    printf("# Version               : %s\n# MPI Version           : %d.%d\n", u.version, ver, sub);
    printf("# MPI Library           : %s\n# MPI Thread Environment: \n\n\n", lib);
    printf("# Calling sequence was: \n\n#");
    for (int i = 0; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\n\n# Minimum message length in bytes:   0\n");
    printf("# Maximum message length in bytes:   %ld\n#\n", 1L << o->maxlog);
    printf("# MPI_Datatype                   :   MPI_BYTE \n");
    printf("# MPI_Datatype for reductions    :   MPI_FLOAT\n");
    printf("# MPI_Op                         :   MPI_SUM  \n#\n#\n\n");
    printf("# List of Benchmarks to run:\n\n");
    for (int i = 0; i < o->nbench; i++)
        printf("# %s\n", o->bench[i]->name);
}

static int imb_ncols(const imb_bench_t *b)
{
    switch (b->type) {
    case IMB_SINGLE: return 4;
    case IMB_PARALLEL: return 6;
    case IMB_COLL: return 5;
    default: return 4;
    }
}

static void imb_table_head(const imb_bench_t *b, int np, int idle)
{
    char rule[128];
    int w = 13 * imb_ncols(b);
    rule[0] = '#';
    memset(rule + 1, '-', (size_t)w - 1);
    rule[w] = '\0';
    printf("\n%s\n# Benchmarking %s \n# #processes = %d \n", rule, b->name, np);
    if (idle > 0)
        printf("# ( %d additional processes waiting in MPI_Barrier)\n", idle);
    printf("%s\n", rule);
    if (b->type != IMB_SYNC)
        printf("%13s", "#bytes");
    printf("%13s", "#repetitions");
    if (b->type == IMB_SINGLE)
        printf("%13s", "t[usec]");
    else
        printf("%13s%13s%13s", "t_min[usec]", "t_max[usec]", "t_avg[usec]");
    if (b->type == IMB_SINGLE || b->type == IMB_PARALLEL)
        printf("%13s", "Mbytes/sec");
    printf("\n");
}

static void imb_row_print(const imb_bench_t *b, const imb_row_t *r)
{
    if (b->type != IMB_SYNC)
        printf("%13ld", r->bytes);
    printf("%13ld", r->reps);
    if (b->type == IMB_SINGLE)
        printf("%13.2f", r->tmax);
    else
        printf("%13.2f%13.2f%13.2f", r->tmin, r->tmax, r->tavg);
    if (b->type == IMB_SINGLE || b->type == IMB_PARALLEL)
        printf("%13.2f", r->mbps);
    printf("\n");
    fflush(stdout);
}

/* The repetition count for one size (IMB's imode_dynamic rule). */
static long imb_reps(const imb_opts_t *o, const imb_ctx_t *c, const imb_bench_t *b, long size,
                     long prev)
{
    long n = o->msgspersample;
    if (size > 0 && o->overall_vol / size < n)
        n = o->overall_vol / size;
    if (n < 1)
        n = 1;
    MPI_Barrier(c->comm);
    double probe = b->run(c, size, 1), worst;
    MPI_Allreduce(&probe, &worst, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    if (worst > 0 && 1.0 + o->secs / worst < (double)n)
        n = 1 + (long)(o->secs / worst);
    if (prev > 0 && n > prev)
        n = prev;
    return n;
}

/* Measures one size on the group; the row is complete on the group's rank 0. */
static void imb_measure(const imb_opts_t *o, const imb_ctx_t *c, const imb_bench_t *b, long size,
                        long *prev, imb_row_t *r)
{
    long n = imb_reps(o, c, b, size, *prev);
    *prev = n;
    long warm = n * IMB_WARMUP_PERCENT / 100;
    if (warm < IMB_MIN_WARMUP)
        warm = n < IMB_MIN_WARMUP ? n : IMB_MIN_WARMUP;
    b->run(c, size, warm);
    MPI_Barrier(c->comm);
    double t = b->run(c, size, n) / (double)n * 1e6 * b->scale_time, sum;
    MPI_Reduce(&t, &r->tmin, 1, MPI_DOUBLE, MPI_MIN, 0, c->comm);
    MPI_Reduce(&t, &r->tmax, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm);
    r->bytes = size;
    r->reps = n;
    r->tavg = sum / c->np;
    r->mbps = r->tmax > 0 ? b->scale_bw * (double)size / r->tmax : 0;
}

static void imb_json_row(bench_json_t *j, const imb_bench_t *b, const imb_row_t *r)
{
    bench_json_obj(j, NULL);
    if (b->type != IMB_SYNC)
        bench_json_int(j, "bytes", r->bytes);
    bench_json_int(j, "repetitions", r->reps);
    if (b->type == IMB_SINGLE) {
        bench_json_num(j, "t_us", r->tmax);
    } else {
        bench_json_num(j, "t_min_us", r->tmin);
        bench_json_num(j, "t_max_us", r->tmax);
        bench_json_num(j, "t_avg_us", r->tavg);
    }
    if (b->type == IMB_SINGLE || b->type == IMB_PARALLEL)
        bench_json_num(j, "mbytes_per_sec", r->mbps);
    bench_json_close(j, '}');
}

/* Runs one benchmark on the first np ranks; the others wait in a barrier. */
static void imb_run_group(const imb_opts_t *o, const imb_bench_t *b, int np, int wrank, int wsize,
                          char *sbuf, char *rbuf, bench_json_t *j)
{
    imb_ctx_t c = {MPI_COMM_NULL, 0, np, sbuf, rbuf};
    MPI_Comm_split(MPI_COMM_WORLD, wrank < np ? 0 : MPI_UNDEFINED, wrank, &c.comm);
    if (wrank == 0) {
        if (o->json) {
            bench_json_obj(j, NULL);
            bench_json_str(j, "benchmark", b->name);
            bench_json_int(j, "processes", np);
            bench_json_arr(j, "rows");
        } else {
            imb_table_head(b, np, wsize - np);
        }
    }
    if (c.comm != MPI_COMM_NULL) {
        MPI_Comm_rank(c.comm, &c.rank);
        long prev = 0;
        for (int lg = -1; lg <= o->maxlog; lg++) {
            long size = lg < 0 ? 0 : 1L << lg;
            if (lg >= 0 && (lg < o->minlog || size < b->unit))
                continue;
            if (b->type == IMB_SYNC && lg >= 0)
                break;
            imb_row_t r;
            imb_measure(o, &c, b, size, &prev, &r);
            if (wrank == 0) {
                if (o->json)
                    imb_json_row(j, b, &r);
                else
                    imb_row_print(b, &r);
            }
        }
        MPI_Comm_free(&c.comm);
    }
    if (wrank == 0 && o->json) {
        bench_json_close(j, ']');
        bench_json_close(j, '}');
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    imb_opts_t o;
    imb_opts_parse(argc, argv, rank, &o);
    if (o.npmin > size)
        bench_usage_exit("imb", rank, "-npmin %d exceeds the %d ranks of the job", o.npmin, size);

    /* Alltoall/Allgather need size*np bytes, Exchange 2*size. */
    size_t blen = ((size_t)1 << o.maxlog) * (size_t)(size < 2 ? 2 : size);
    char *sbuf = bench_buf_alloc(blen), *rbuf = bench_buf_alloc(blen);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "imb: out of memory for two %zu-byte buffers\n", blen);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bench_json_t j;
    if (rank == 0) {
        if (o.json) {
            char lib[256];
            bench_mpi_library(lib, sizeof lib);
            bench_json_begin(&j, stdout);
            bench_json_str(&j, "benchmark", "imb");
            bench_json_str(&j, "mpi_library", lib);
            bench_json_int(&j, "ranks", size);
            bench_json_arr(&j, "results");
        } else {
            imb_header_print(&o, argc, argv);
        }
    }
    for (int i = 0; i < o.nbench; i++) {
        const imb_bench_t *b = o.bench[i];
        if (b->pair_only) {
            if (size >= 2)
                imb_run_group(&o, b, 2, rank, size, sbuf, rbuf, &j);
            continue;
        }
        for (int np = o.npmin < 1 ? 1 : o.npmin;; np *= 2) {
            if (np > size)
                np = size;
            imb_run_group(&o, b, np, rank, size, sbuf, rbuf, &j);
            if (np == size)
                break;
        }
    }
    if (rank == 0) {
        if (o.json) {
            bench_json_close(&j, ']');
            bench_json_end(&j);
        } else {
            printf("\n\n# All processes entering MPI_Finalize\n\n");
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
