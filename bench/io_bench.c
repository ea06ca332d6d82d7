/*
 * io_bench — collective MPI-IO bandwidth of a 2-D block-distributed array
 * of doubles, the layout of a simulation's checkpoint: the ranks form a
 * px x py grid (MPI_Dims_create), each owns one block, and the file holds
 * the whole array in row-major order, so every rank's part of the file is
 * non-contiguous (one run per row of its block) and the MPI's collective
 * buffering decides how the pieces reach the file.
 *
 * Per size (total bytes of the array, MIN to MAX by factors of 4):
 *   write: the file is deleted, then open + MPI_File_write_all + close is
 *          timed; afterwards the file is read back and every value checked;
 *   read:  the file is written once untimed, then open + MPI_File_read_all
 *          + close is timed and every value checked.
 * MB/s = bytes / 1e6 / the slowest rank's time, the mean over iterations
 * (fewer for large sizes: ITERS up to 64 MiB, then 256 MiB of I/O per
 * size). Hints (-H key=value, repeatable) go to MPI_File_open.
 *
 *   io_bench [-d DIR] [-t write|read] [-m [MIN:]MAX] [-i ITERS] [-H k=v]... [--json]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "osu.h"

#define IO_MAX_HINTS 16

typedef struct {
    osu_opts_t o;
    const char *dir;
    int write;
    int nhints;
    char *hints[IO_MAX_HINTS];
} io_opts_t;

static void io_opts_parse(int argc, char **argv, int rank, io_opts_t *io)
{
    static const struct option longs[] = {
        {"dir", required_argument, 0, 'd'}, {"type", required_argument, 0, 't'},
        {"message-size", required_argument, 0, 'm'}, {"iterations", required_argument, 0, 'i'},
        {"hint", required_argument, 0, 'H'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *prog = io->o.prog;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "d:t:m:i:H:jh", longs, NULL)) != -1) {
        long v;
        switch (c) {
        case 'd': io->dir = optarg; break;
        case 't':
            if (strcmp(optarg, "write") && strcmp(optarg, "read"))
                bench_usage_exit(prog, rank, "bad -t '%s' (want write or read)", optarg);
            io->write = !strcmp(optarg, "write");
            break;
        case 'm':
            if (bench_range_parse(optarg, &io->o.min, &io->o.max) || io->o.max > (1L << 30) ||
                io->o.min < 4096)
                bench_usage_exit(prog, rank, "bad -m '%s' (want [MIN:]MAX, 4k to 1G)", optarg);
            break;
        case 'i':
            if (bench_int_parse(optarg, &v))
                bench_usage_exit(prog, rank, "bad -i '%s' (want a positive integer)", optarg);
            io->o.iters = v;
            break;
        case 'H':
            if (!strchr(optarg, '=') || *optarg == '=' || io->nhints == IO_MAX_HINTS)
                bench_usage_exit(prog, rank, "bad -H '%s' (want key=value, at most %d)", optarg,
                                 IO_MAX_HINTS);
            io->hints[io->nhints++] = optarg;
            break;
        case 'j': io->o.json = 1; break;
        case 'h':
            if (rank == 0)
                printf("usage: %s [-d DIR] [-t write|read] [-m [MIN:]MAX] [-i ITERS] "
                       "[-H key=value]... [--json]\n", prog);
            MPI_Finalize();
            exit(0);
        default:
            bench_usage_exit(prog, rank, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        bench_usage_exit(prog, rank, "unexpected argument '%s'", argv[optind]);
    if (access(io->dir, W_OK) != 0)
        bench_usage_exit(prog, rank, "cannot write in -d %s", io->dir);
}

/* The array of one size: rows x cols doubles, this rank's block. */
typedef struct {
    int gsize[2], lsize[2], start[2];
    MPI_Datatype filetype;
    double *block;
    size_t count;
} io_layout_t;

/* Splits n into parts as even as possible: part i's start and length. */
static void split(int n, int parts, int i, int *start, int *len)
{
    int base = n / parts, extra = n % parts;
    *len = base + (i < extra);
    *start = i * base + (i < extra ? i : extra);
}

static void layout_make(io_layout_t *l, long bytes, const int dims[2], const int coords[2])
{
    long doubles = bytes / 8, rows = 1;
    while (rows * rows * 4 <= doubles)   /* a power of two near the square root */
        rows *= 2;
    l->gsize[0] = (int)rows;
    l->gsize[1] = (int)(doubles / rows);
    for (int d = 0; d < 2; d++)
        split(l->gsize[d], dims[d], coords[d], &l->start[d], &l->lsize[d]);
    l->count = (size_t)l->lsize[0] * (size_t)l->lsize[1];
    MPI_Type_create_subarray(2, l->gsize, l->lsize, l->start, MPI_ORDER_C, MPI_DOUBLE,
                             &l->filetype);
    MPI_Type_commit(&l->filetype);
}

/* The value at global (row, col): its index in the file, exact in a double. */
static double value_at(const io_layout_t *l, long i)
{
    long r = l->start[0] + i / l->lsize[1], c = l->start[1] + i % l->lsize[1];
    return (double)(r * l->gsize[1] + c);
}

static void fill(const io_layout_t *l, double *b)
{
    for (size_t i = 0; i < l->count; i++)
        b[i] = value_at(l, (long)i);
}

/* Every value of the block as written; a mismatch ends the job. */
static void verify(const io_layout_t *l, const double *b, const char *prog, long bytes)
{
    for (size_t i = 0; i < l->count; i++)
        if (b[i] != value_at(l, (long)i)) {
            fprintf(stderr, "%s: wrong data at %ld bytes: element %zu is %.0f, want %.0f\n", prog,
                    bytes, i, b[i], value_at(l, (long)i));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
}

/* One timed open + collective access + close; the slowest rank's seconds. */
static double access_once(const io_opts_t *io, MPI_Info info, const char *path,
                          const io_layout_t *l, double *buf, int write)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    int err = MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh);
    if (err == MPI_SUCCESS)
        err = MPI_File_set_view(fh, 0, MPI_DOUBLE, l->filetype, "native", info);
    if (err == MPI_SUCCESS) {
        MPI_Status st;
        err = write ? MPI_File_write_all(fh, buf, (int)l->count, MPI_DOUBLE, &st)
                    : MPI_File_read_all(fh, buf, (int)l->count, MPI_DOUBLE, &st);
        int got = 0;
        if (err == MPI_SUCCESS && (MPI_Get_count(&st, MPI_DOUBLE, &got) != MPI_SUCCESS ||
                                   (size_t)got != l->count))
            err = MPI_ERR_IO;
        if (MPI_File_close(&fh) != MPI_SUCCESS && err == MPI_SUCCESS)
            err = MPI_ERR_IO;
    }
    double t = MPI_Wtime() - t0, slowest = 0;
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, msg, &len);
        fprintf(stderr, "%s: %s of %s failed: %s\n", io->o.prog, write ? "write" : "read", path,
                msg);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void delete_file(const char *path, int rank)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL); /* absent the first time: its error is expected */
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    io_opts_t io = {.o = {"io_bench", "Locus MPI-IO Collective Bandwidth Test", 1L << 20,
                          1L << 30, 5, 0, 5, 0, 0, 0, 0},
                    .dir = "/tmp", .write = 1};
    io_opts_parse(argc, argv, rank, &io);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    /* Columns split first (1 x 2, 2 x 2, 2 x 4...): every rank's part of
     * each row is a piece of its own, so no rank's access is contiguous. */
    int split_dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(np, 2, split_dims);
    int dims[2] = {split_dims[1], split_dims[0]};
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_coords(grid, rank, 2, coords);
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < io.nhints; i++) {
        char *eq = strchr(io.hints[i], '=');
        *eq = '\0';
        MPI_Info_set(info, io.hints[i], eq + 1);
        *eq = '=';
    }
    /* One name for the whole run, rank 0's pid: runs side by side never share a file. */
    int tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/io_bench.%d.dat", io.dir, tag);

    char extra[sizeof path + 256];
    snprintf(extra, sizeof extra, "# %s, %d x %d ranks, file %s, %d hint%s, MB/s = bytes / "
             "(slowest rank's open + %s_all + close)", io.write ? "write" : "read", dims[0],
             dims[1], path, io.nhints, io.nhints == 1 ? "" : "s", io.write ? "write" : "read");
    static const char *const cols[] = {"Bandwidth (MB/s)"}, *const keys[] = {"bandwidth_mb_s"};
    bench_json_t j;
    if (rank == 0)
        osu_head(&io.o, &j, extra, 1, cols, keys);
    for (long bytes = io.o.min; bytes <= io.o.max; bytes *= 4) {
        io_layout_t l;
        layout_make(&l, bytes, dims, coords);
        double *data = malloc(l.count * sizeof *data + 8), *back = malloc(l.count * sizeof *back + 8);
        if (!data || !back) {
            fprintf(stderr, "%s: out of memory at %ld bytes\n", io.o.prog, bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fill(&l, data);
        long iters = io.o.iters;
        if (bytes > (64L << 20) && iters > (256L << 20) / bytes)
            iters = (256L << 20) / bytes > 0 ? (256L << 20) / bytes : 1;
        double total = 0;
        if (!io.write) {
            delete_file(path, rank);
            access_once(&io, info, path, &l, data, 1);
        }
        for (long it = 0; it < iters; it++) {
            if (io.write)
                delete_file(path, rank);
            else
                memset(back, 0, l.count * sizeof *back);
            total += access_once(&io, info, path, &l, io.write ? data : back, io.write);
            if (!io.write)
                verify(&l, back, io.o.prog, bytes);
        }
        if (io.write) {
            memset(back, 0, l.count * sizeof *back);
            access_once(&io, info, path, &l, back, 0);
            verify(&l, back, io.o.prog, bytes);
        }
        double bw = (double)l.gsize[0] * l.gsize[1] * 8 / 1e6 / (total / (double)iters);
        if (rank == 0)
            osu_row(&io.o, &j, bytes, 1, &bw, keys);
        free(data);
        free(back);
        MPI_Type_free(&l.filetype);
    }
    delete_file(path, rank);
    if (rank == 0)
        osu_tail(&io.o, &j);
    MPI_Info_free(&info);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
